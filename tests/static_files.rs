//! The binary serves the web app: files at their own paths with the right types, ETags and
//! 304s, `index.html` for the app's pages, the JSON 404 for everything else (traversal
//! included), security headers on every response, HEAD like GET, `server.static_dir`, the
//! operator page under the strict CSP, and what `serve --demo` prints. Real server, real
//! socket; most tests serve a temp folder of their own so they never depend on `static/`.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::{bin, Auth, Reply, TestServer};
use serde_json::Value;

const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
img-src 'self' data:; connect-src 'self'; worker-src 'self'; manifest-src 'self'; \
object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const INDEX: &str =
    "<!doctype html><title>app</title><script type=module src=/app/main.js></script>";

/// A static folder with one file of each kind the app uses, plus files that must never be
/// served (a dotfile, a test file, a file beside the folder).
fn app_folder() -> tempfile::TempDir {
    let outer = tempfile::tempdir().expect("temp dir");
    std::fs::write(outer.path().join("secret.txt"), "outside the static folder").unwrap();
    let dir = outer.path().join("static");
    let files: &[(&str, &[u8])] = &[
        ("index.html", INDEX.as_bytes()),
        ("sw.js", b"self.addEventListener('fetch', () => {});"),
        ("app/main.js", b"import './router.js';"),
        ("app/app.css", b"body { margin: 0 }"),
        ("engine/model.js", b"export class DocModel {}"),
        ("icon.svg", b"<svg xmlns='http://www.w3.org/2000/svg'/>"),
        ("icon.png", b"\x89PNG\r\n\x1a\n"),
        ("manifest.webmanifest", b"{\"name\":\"docsync\"}"),
        ("data.json", b"{}"),
        (".env", b"SECRET=1"),
        ("app/.hidden.js", b"hidden"),
        ("app/model.test.js", b"test"),
    ];
    for (path, bytes) in files {
        let full = dir.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, bytes).unwrap();
    }
    outer
}

fn static_dir(outer: &tempfile::TempDir) -> String {
    outer.path().join("static").display().to_string()
}

fn serve_folder(outer: &tempfile::TempDir) -> TestServer {
    TestServer::start_with(&[("DOCSYNC_SERVER__STATIC_DIR", &static_dir(outer))])
}

fn get(srv: &TestServer, path: &str, headers: &[(&str, &str)]) -> Reply {
    srv.send("GET", path, &Auth::None, headers, None)
}

fn header<'a>(r: &'a Reply, name: &str) -> Option<&'a str> {
    r.headers.get(name).and_then(|v| v.to_str().ok())
}

fn text(r: &Reply) -> String {
    match &r.body {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn assert_json_404(r: &Reply, what: &str) {
    assert_eq!(r.status, 404, "{what}: {}", text(r));
    assert_eq!(r.body["error"]["code"], "not_found", "{what}");
    assert_eq!(
        header(r, "content-type"),
        Some("application/json"),
        "{what}"
    );
}

/// Sends `request` as it is (no client-side path normalisation) and returns everything the
/// server wrote before closing.
fn raw(srv: &TestServer, request: &str) -> String {
    let addr = srv.base.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).expect("read reply");
    String::from_utf8_lossy(&out).into_owned()
}

fn raw_request(srv: &TestServer, method: &str, target: &str) -> String {
    raw(
        srv,
        &format!("{method} {target} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"),
    )
}

/// (status, lower-cased headers, body) of a raw reply.
fn parse_raw(reply: &str) -> (u16, Vec<(String, String)>, String) {
    let (head, body) = reply.split_once("\r\n\r\n").expect("end of headers");
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers, body.to_string())
}

fn raw_header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

#[test]
fn files_are_served_at_their_paths_with_their_types() {
    let outer = app_folder();
    let srv = serve_folder(&outer);
    for (path, content_type, body) in [
        (
            "/app/main.js",
            "text/javascript; charset=utf-8",
            "import './router.js';",
        ),
        (
            "/engine/model.js",
            "text/javascript; charset=utf-8",
            "export class DocModel {}",
        ),
        (
            "/sw.js",
            "text/javascript; charset=utf-8",
            "self.addEventListener('fetch', () => {});",
        ),
        (
            "/app/app.css",
            "text/css; charset=utf-8",
            "body { margin: 0 }",
        ),
        (
            "/icon.svg",
            "image/svg+xml",
            "<svg xmlns='http://www.w3.org/2000/svg'/>",
        ),
        (
            "/manifest.webmanifest",
            "application/manifest+json",
            "{\"name\":\"docsync\"}",
        ),
        ("/index.html", "text/html; charset=utf-8", INDEX),
    ] {
        let r = get(&srv, path, &[]);
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(header(&r, "content-type"), Some(content_type), "{path}");
        assert_eq!(header(&r, "cache-control"), Some("no-cache"), "{path}");
        assert_eq!(text(&r), body, "{path}");
    }
    let png = get(&srv, "/icon.png", &[]);
    assert_eq!(png.status, 200);
    assert_eq!(header(&png, "content-type"), Some("image/png"));
    let json = get(&srv, "/data.json", &[]);
    assert_eq!(header(&json, "content-type"), Some("application/json"));
}

#[test]
fn the_app_pages_are_index_html() {
    let outer = app_folder();
    let srv = serve_folder(&outer);
    for path in ["/", "/login", "/d/doc_x", "/index.html"] {
        let r = get(&srv, path, &[]);
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(header(&r, "content-type"), Some("text/html; charset=utf-8"));
        assert_eq!(text(&r), INDEX, "{path}");
    }
}

#[test]
fn etag_and_if_none_match_give_304() {
    let outer = app_folder();
    let srv = serve_folder(&outer);
    let first = get(&srv, "/app/main.js", &[]);
    let etag = header(&first, "etag").expect("etag").to_string();
    // Weak: one validator for the plain, gzip, br and zstd forms of the same file.
    assert!(
        etag.starts_with("W/\"") && etag.ends_with('"') && etag.len() > 20,
        "weak validator: {etag}"
    );
    assert_eq!(
        header(&get(&srv, "/app/main.js", &[]), "etag"),
        Some(etag.as_str()),
        "stable across requests"
    );
    let other = get(&srv, "/engine/model.js", &[]);
    assert_ne!(header(&other, "etag"), Some(etag.as_str()), "per content");

    let strong = etag.trim_start_matches("W/").to_string();
    let list = format!("\"nope\", {etag}");
    for sent in [etag.as_str(), strong.as_str(), list.as_str(), "*"] {
        let r = get(&srv, "/app/main.js", &[("If-None-Match", sent)]);
        assert_eq!(r.status, 304, "If-None-Match: {sent}");
        assert_eq!(text(&r), "", "a 304 has no body");
        assert_eq!(header(&r, "etag"), Some(etag.as_str()));
        assert_eq!(header(&r, "cache-control"), Some("no-cache"));
    }
    let stale = get(
        &srv,
        "/app/main.js",
        &[("If-None-Match", "\"something-else\"")],
    );
    assert_eq!(stale.status, 200);
    assert_eq!(text(&stale), "import './router.js';");

    // The app's pages revalidate the same way.
    let page = get(&srv, "/d/doc_x", &[]);
    let page_tag = header(&page, "etag").unwrap().to_string();
    let again = get(&srv, "/login", &[("If-None-Match", &page_tag)]);
    assert_eq!(again.status, 304);
}

#[test]
fn everything_else_is_the_json_404() {
    let outer = app_folder();
    let srv = serve_folder(&outer);
    for path in [
        "/nope",
        "/app/nope.js",
        "/app/",
        "/engine",
        "/api/v1/nope",
        "/api/v1/index.html",
        "/d/doc_x/extra",
        "/.env",
        "/app/.hidden.js",
        "/app/model.test.js",
    ] {
        assert_json_404(&get(&srv, path, &[]), path);
    }
    // Only GET and HEAD read files.
    let post = srv.send("POST", "/app/main.js", &Auth::None, &[], None);
    assert_json_404(&post, "POST /app/main.js");

    // Traversal, sent byte for byte (HTTP clients would normalise `..` away).
    for target in [
        "/app/../index.html",
        "/../secret.txt",
        "/app/../../secret.txt",
        "/app/%2e%2e/%2e%2e/secret.txt",
        "/%2E%2E/secret.txt",
        "/..%2fsecret.txt",
        "/app/..%5c..%5csecret.txt",
        "//etc/passwd",
    ] {
        let (status, headers, body) = parse_raw(&raw_request(&srv, "GET", target));
        assert_eq!(status, 404, "{target}: {body}");
        assert_eq!(
            raw_header(&headers, "content-type"),
            Some("application/json")
        );
        assert!(body.contains("not_found"), "{target}: {body}");
        assert!(!body.contains("outside"), "{target} leaked a file: {body}");
    }
}

#[test]
fn security_headers_on_every_kind_of_response() {
    let outer = app_folder();
    let srv = serve_folder(&outer);
    let token = srv.add_user("alice");
    let html = get(&srv, "/", &[]);
    let js = get(&srv, "/app/main.js", &[]);
    let json = srv.send("GET", "/api/v1/me", &Auth::Bearer(&token), &[], None);
    let unauthorized = get(&srv, "/api/v1/me", &[]);
    let not_found = get(&srv, "/nope", &[]);
    let health = get(&srv, "/healthz", &[]);
    let not_modified = get(
        &srv,
        "/app/main.js",
        &[("If-None-Match", header(&js, "etag").unwrap())],
    );
    for (what, r, status) in [
        ("html", &html, 200),
        ("js", &js, 200),
        ("json", &json, 200),
        ("401", &unauthorized, 401),
        ("404", &not_found, 404),
        ("healthz", &health, 200),
        ("304", &not_modified, 304),
    ] {
        assert_eq!(r.status, status, "{what}");
        assert_eq!(
            header(r, "x-content-type-options"),
            Some("nosniff"),
            "{what}"
        );
        assert_eq!(header(r, "referrer-policy"), Some("same-origin"), "{what}");
    }
    assert_eq!(header(&html, "content-security-policy"), Some(CSP));
    assert_eq!(header(&html, "x-frame-options"), Some("DENY"));
    for (what, r) in [("js", &js), ("json", &json), ("404", &not_found)] {
        assert_eq!(
            header(r, "content-security-policy"),
            None,
            "{what}: HTML only"
        );
    }
    // A refusal by the cross-origin guard carries them too.
    let refused = srv.send(
        "POST",
        "/api/v1/auth/login",
        &Auth::None,
        &[("Origin", "https://evil.example")],
        Some(&serde_json::json!({"username": "alice", "password": "x"})),
    );
    assert_eq!(refused.status, 403);
    assert_eq!(header(&refused, "x-content-type-options"), Some("nosniff"));
}

#[test]
fn head_answers_like_get_without_a_body() {
    let outer = app_folder();
    let srv = serve_folder(&outer);
    let token = srv.add_user("alice");
    for path in ["/healthz", "/app/main.js", "/", "/d/doc_x"] {
        let (get_status, get_headers, get_body) = parse_raw(&raw_request(&srv, "GET", path));
        let (status, headers, body) = parse_raw(&raw_request(&srv, "HEAD", path));
        assert_eq!(get_status, 200, "GET {path}");
        assert_eq!(status, 200, "HEAD {path}");
        assert_eq!(body, "", "HEAD {path} sent a body");
        assert_eq!(
            raw_header(&headers, "content-length"),
            Some(get_body.len().to_string().as_str()),
            "HEAD {path}: the length GET would send"
        );
        for name in ["content-type", "etag", "x-content-type-options"] {
            assert_eq!(
                raw_header(&headers, name),
                raw_header(&get_headers, name),
                "HEAD {path}: {name}"
            );
        }
    }
    // An API GET route, with credentials, and a path nothing serves.
    let me = srv.send("HEAD", "/api/v1/me", &Auth::Bearer(&token), &[], None);
    assert_eq!(me.status, 200);
    assert_eq!(text(&me), "");
    let nope = srv.send("HEAD", "/nope", &Auth::None, &[], None);
    assert_eq!(nope.status, 404);
    // A streaming GET route answers HEAD at once instead of holding the stream open.
    let doc = srv.create_doc(&token, "streams");
    let events = srv.send(
        "HEAD",
        &format!("/api/v1/docs/{doc}/events"),
        &Auth::Bearer(&token),
        &[],
        None,
    );
    assert_eq!(events.status, 200);
    assert_eq!(header(&events, "content-type"), Some("text/event-stream"));
}

#[test]
fn static_dir_is_read_on_every_request() {
    let outer = app_folder();
    let srv = serve_folder(&outer);
    let before = get(&srv, "/app/main.js", &[]);
    let dir = outer.path().join("static");
    std::fs::write(dir.join("app/main.js"), "console.log('edited');").unwrap();
    std::fs::write(dir.join("app/new.js"), "export const added = 1;").unwrap();
    let after = get(&srv, "/app/main.js", &[]);
    assert_eq!(text(&after), "console.log('edited');");
    assert_ne!(header(&after, "etag"), header(&before, "etag"));
    let stale = get(
        &srv,
        "/app/main.js",
        &[("If-None-Match", header(&before, "etag").unwrap())],
    );
    assert_eq!(stale.status, 200, "an old ETag no longer matches");
    assert_eq!(
        text(&get(&srv, "/app/new.js", &[])),
        "export const added = 1;"
    );
    std::fs::remove_file(dir.join("app/new.js")).unwrap();
    assert_json_404(&get(&srv, "/app/new.js", &[]), "deleted file");
}

/// A `docsync serve` child on a free port with its own database; the lines it printed
/// before "docsync listening on", and the address.
struct Serve {
    child: Child,
    _dir: tempfile::TempDir,
    preamble: Vec<String>,
    addr: String,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve_command(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.arg("serve")
        .args(args)
        .env("DOCSYNC_STORAGE__PATH", dir.join("docsync.db"))
        .env("DOCSYNC_SERVER__BIND", "127.0.0.1:0")
        .env("DOCSYNC_LOGGING__LEVEL", "warn")
        .env("DOCSYNC_SERVER__WORKERS", "1")
        .env("DOCSYNC_ACTORS__ARBITERS", "1")
        .current_dir(dir);
    c
}

fn serve(args: &[&str]) -> Serve {
    let dir = tempfile::tempdir().unwrap();
    let mut child = serve_command(dir.path(), args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start docsync");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut preamble = Vec::new();
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(addr) = line.strip_prefix("docsync listening on http://") {
                let _ = tx.send((std::mem::take(&mut preamble), addr.to_string()));
            } else {
                preamble.push(line);
            }
        }
    });
    let (preamble, addr) = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("server did not report its address");
    Serve {
        child,
        _dir: dir,
        preamble,
        addr,
    }
}

#[test]
fn serve_demo_prints_the_real_url_and_the_logins() {
    let s = serve(&["--demo"]);
    let out = s.preamble.join("\n");
    let url = format!("http://{}/", s.addr);
    assert!(
        out.contains(&format!("open {url} in a browser")),
        "no browser URL in:\n{out}"
    );
    assert!(!out.contains("HOST"), "placeholder host in:\n{out}");
    for (user, password, role) in [
        ("alice", "alice-demo-pw", "owner"),
        ("bob", "bob-demo-pw", "editor"),
        ("carol", "carol-demo-pw", "viewer"),
    ] {
        let line = s
            .preamble
            .iter()
            .find(|l| l.trim_start().starts_with(&format!("{user} ")) && l.contains(password))
            .unwrap_or_else(|| panic!("no login line for {user} in:\n{out}"));
        assert!(line.contains(role), "{user} should be {role}: {line}");
    }
    // The printed login works, and the printed URL serves the page.
    let client = reqwest::blocking::Client::new();
    let login = client
        .post(format!("{url}api/v1/auth/login"))
        .json(&serde_json::json!({"username": "alice", "password": "alice-demo-pw"}))
        .send()
        .unwrap();
    assert_eq!(login.status(), 200);
    let admin = client.get(format!("{url}admin")).send().unwrap();
    assert_eq!(admin.status(), 200);
}

#[test]
fn serve_demo_sample_documents_are_an_introduction_each_of_its_own() {
    let s = serve(&["--demo"]);
    let out = s.preamble.join("\n");
    let token = s
        .preamble
        .iter()
        .find(|l| l.trim_start().starts_with("alice "))
        .and_then(|l| l.split("API token: ").nth(1))
        .unwrap_or_else(|| panic!("no token for alice in:\n{out}"))
        .trim()
        .to_string();
    let client = reqwest::blocking::Client::new();
    let get = |path: &str| {
        let r = client
            .get(format!("http://{}/api/v1{path}", s.addr))
            .bearer_auth(&token)
            .send()
            .unwrap();
        assert_eq!(r.status(), 200, "{path}");
        r
    };
    let list: serde_json::Value = get("/docs").json().unwrap();
    let mut texts = std::collections::BTreeMap::new();
    for d in list["documents"].as_array().unwrap() {
        let id = d["docId"].as_str().unwrap();
        let title = d["title"].as_str().unwrap().to_string();
        texts.insert(title, get(&format!("/docs/{id}/markdown")).text().unwrap());
    }
    assert_eq!(texts.len(), 4, "{texts:#?}");
    let distinct: std::collections::BTreeSet<_> = texts.values().collect();
    assert_eq!(
        distinct.len(),
        4,
        "two sample documents say the same: {texts:#?}"
    );
    let welcome = &texts["Welcome to docsync"];
    for key in [
        "Tab",
        "Share",
        "conflict copy",
        "History and versions",
        "Offline",
    ] {
        assert!(
            welcome.contains(key),
            "the welcome document should explain {key:?}:\n{welcome}"
        );
    }
    assert!(welcome.contains("- [ ] "), "a todo to tick:\n{welcome}");
    let api = &texts["For integrators: the HTTP API"];
    for key in ["/sync", "opId", "openapi.json", "Bearer"] {
        assert!(
            api.contains(key),
            "the integrators' document should name {key:?}:\n{api}"
        );
    }
    assert!(
        texts["Team notes"].contains("- [x] "),
        "{:?}",
        texts["Team notes"]
    );
}

#[test]
fn static_dir_flag_overrides_and_a_missing_folder_stops_the_start() {
    let outer = app_folder();
    let s = serve(&["--static-dir", &static_dir(&outer)]);
    let body = reqwest::blocking::get(format!("http://{}/app/main.js", s.addr))
        .unwrap()
        .text()
        .unwrap();
    assert_eq!(body, "import './router.js';");

    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-folder");
    let out = serve_command(dir.path(), &["--static-dir", missing.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("server.static_dir"), "{err}");
}

#[test]
fn bind_and_data_flags_override_the_settings_and_a_bad_one_names_its_key() {
    // The environment says port 0 and docsync.db (serve_command); the flags win.
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("from-the-flag.db");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let bind = format!("127.0.0.1:{port}");
    let mut child = serve_command(
        dir.path(),
        &["--bind", &bind, "--data", data.to_str().unwrap()],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::inherit())
    .spawn()
    .expect("start docsync");
    let up = (0..300).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        reqwest::blocking::get(format!("http://{bind}/healthz")).is_ok_and(|r| r.status() == 200)
    });
    let _ = child.kill();
    let _ = child.wait();
    assert!(up, "the server listened on the --bind address");
    assert!(data.exists(), "the database is the --data file");
    assert!(!dir.path().join("docsync.db").exists());

    let out = serve_command(dir.path(), &["--bind", "nonsense"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("server.bind"), "{err}");
}

/// The local scripts and style sheets an HTML page loads.
fn local_resources(html: &str) -> Vec<String> {
    let mut refs = Vec::new();
    for attr in ["src=\"", "href=\""] {
        for (i, _) in html.match_indices(attr) {
            let rest = &html[i + attr.len()..];
            let value = &rest[..rest.find('"').unwrap()];
            if value.starts_with('/') && (value.ends_with(".js") || value.ends_with(".css")) {
                refs.push(value.to_string());
            }
        }
    }
    refs
}

#[test]
fn the_embedded_admin_page_loads_its_script_and_style() {
    let srv = TestServer::start();
    let page = get(&srv, "/admin", &[]);
    assert_eq!(page.status, 200);
    assert_eq!(
        header(&page, "content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(header(&page, "content-security-policy"), Some(CSP));
    let html = text(&page);
    let refs = local_resources(&html);
    assert!(refs.contains(&"/admin.js".to_string()), "{refs:?}");
    assert!(refs.contains(&"/admin.css".to_string()), "{refs:?}");
    for r in &refs {
        let asset = get(&srv, r, &[]);
        assert_eq!(asset.status, 200, "{r}");
        let expected = if r.ends_with(".js") {
            "text/javascript; charset=utf-8"
        } else {
            "text/css; charset=utf-8"
        };
        assert_eq!(header(&asset, "content-type"), Some(expected), "{r}");
    }
    let script = text(&get(&srv, "/admin.js", &[]));
    assert!(
        script.contains("/api/v1/admin/actors"),
        "the operator script"
    );
}

/// The engine folder is also an npm package: the binary serves its scripts (the entry point
/// included), never its manifest or type declarations.
#[test]
fn the_engine_package_s_manifest_and_types_are_not_served() {
    let srv = TestServer::start();
    for path in ["/engine/index.js", "/engine/engine.js"] {
        assert_eq!(get(&srv, path, &[]).status, 200, "{path}");
    }
    for path in [
        "/engine/package.json",
        "/engine/index.d.ts",
        "/engine/types.d.ts",
    ] {
        assert_json_404(&get(&srv, path, &[]), path);
    }
}

/// The strict CSP blocks inline script, inline style and event-handler attributes: no page
/// the binary serves may rely on them.
#[test]
fn every_html_page_works_under_the_csp() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("static");
    let mut pages = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "html") {
                pages.push(path);
            }
        }
    }
    assert!(!pages.is_empty());
    for page in pages {
        let html = std::fs::read_to_string(&page).unwrap().to_ascii_lowercase();
        let what = page.display();
        assert!(!html.contains("<style"), "{what}: inline <style>");
        assert!(!html.contains(" style="), "{what}: style attribute");
        for (i, _) in html.match_indices("<script") {
            let tag = &html[i..i + html[i..].find('>').unwrap()];
            assert!(tag.contains("src="), "{what}: inline <script>");
        }
        for handler in [
            " onclick=",
            " onload=",
            " onerror=",
            " onsubmit=",
            " oninput=",
        ] {
            assert!(!html.contains(handler), "{what}: {handler} attribute");
        }
    }
}
