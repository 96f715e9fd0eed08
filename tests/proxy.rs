//! docsync behind a real nginx (Debian's, `/usr/sbin/nginx`), started by the test with the
//! files in `config/nginx/` (only `@LISTEN@` and `@UPSTREAM@` replaced):
//! - `docsync.conf`: `/sync` and all three wake-up channels work through it;
//! - `blocking.conf`: the WebSocket handshake fails and no SSE event arrives within 5 s (what
//!   a client detects to fall back), while long-polling and `/sync` keep working.
//!
//! `docs/reverse-proxy.md` must show both files verbatim. Without nginx these tests fail
//! (never skip): `.ci/run` installs it.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::channels::*;
use common::*;
use serde_json::{json, Value};

fn repo_file(rel: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
}

fn nginx_bin() -> PathBuf {
    let candidates = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"];
    if let Some(p) = candidates.iter().map(PathBuf::from).find(|p| p.is_file()) {
        return p;
    }
    let in_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("nginx"))
            .find(|p| p.is_file())
    });
    in_path.unwrap_or_else(|| {
        panic!(
            "nginx is not installed: the reverse-proxy tests need Debian's nginx \
             (`apt-get install nginx-light`, as .ci/run does); they never skip"
        )
    })
}

/// A private nginx on a free port in front of `upstream`, killed on drop.
pub(crate) struct Nginx {
    child: Child,
    dir: tempfile::TempDir,
    /// `http://127.0.0.1:PORT`
    pub(crate) base: String,
}

impl Nginx {
    fn start(config: &str, upstream: &str) -> Nginx {
        let upstream = upstream.trim_start_matches("http://");
        Nginx::start_with(config, &[("@UPSTREAM@", upstream)])
    }

    /// `config/nginx/{config}` with `@LISTEN@` and each `(placeholder, value)` replaced.
    pub(crate) fn start_with(config: &str, values: &[(&str, &str)]) -> Nginx {
        let bin = nginx_bin();
        let template = repo_file(&format!("config/nginx/{config}"));
        for _attempt in 0..5 {
            let dir = tempfile::tempdir().expect("temp dir");
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("free port")
                .port();
            let listen = format!("127.0.0.1:{port}");
            let mut conf = template.replace("@LISTEN@", &listen);
            for (placeholder, value) in values {
                conf = conf.replace(placeholder, value);
            }
            assert!(!conf.contains('@'), "placeholder left in {config}");
            let d = dir.path().display().to_string();
            std::fs::write(dir.path().join("nginx.conf"), conf).unwrap();
            let stderr = std::fs::File::create(dir.path().join("stderr.log")).unwrap();
            let mut child = Command::new(&bin)
                .arg("-p")
                .arg(format!("{d}/"))
                .arg("-c")
                .arg(format!("{d}/nginx.conf"))
                .arg("-g")
                .arg(format!(
                    "daemon off; master_process off; error_log {d}/error.log; pid {d}/nginx.pid;"
                ))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(stderr)
                .spawn()
                .unwrap_or_else(|e| panic!("start {}: {e}", bin.display()));
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                if let Some(status) = child.try_wait().unwrap() {
                    let log = std::fs::read_to_string(dir.path().join("error.log"))
                        .unwrap_or_default()
                        + &std::fs::read_to_string(dir.path().join("stderr.log"))
                            .unwrap_or_default();
                    if log.contains("Address already in use") {
                        break; // another process took the port: try another one
                    }
                    panic!("nginx ({config}) exited with {status}:\n{log}");
                }
                if std::net::TcpStream::connect(&listen).is_ok() {
                    return Nginx {
                        child,
                        dir,
                        base: format!("http://{listen}"),
                    };
                }
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("nginx ({config}) did not accept connections on {listen} within 10 s");
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        panic!("nginx ({config}) could not get a free port in 5 attempts");
    }

    pub(crate) fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("error.log")).unwrap_or_default()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn docs_show_both_nginx_configs_verbatim() {
    let doc = repo_file("docs/reverse-proxy.md");
    for name in ["docsync.conf", "blocking.conf"] {
        let conf = repo_file(&format!("config/nginx/{name}"));
        assert!(
            conf.contains("@LISTEN@") && conf.contains("@UPSTREAM@"),
            "{name} must keep its @LISTEN@/@UPSTREAM@ placeholders"
        );
        assert!(
            doc.contains(&format!("```nginx\n{conf}```")),
            "docs/reverse-proxy.md must show config/nginx/{name} verbatim in a ```nginx block"
        );
    }
}

#[test]
fn working_proxy_passes_sync_and_every_channel() {
    // A still clock: the wake-ups are counted exactly, no lease may expire in between.
    let srv = TestServer::start_with(&[STILL_CLOCK]);
    let nginx = Nginx::start("docsync.conf", &srv.base);
    let pb = nginx.base.clone();
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Behind nginx");
    let blk = id("blk_");
    let (ca, cb) = (id("cl_"), id("cl_"));

    // /sync through the proxy (one client alone: private, so the insert grants no lease).
    let r = sync_at(
        &pb,
        &alice,
        &doc,
        &json!({"clientId": ca, "lastSeq": 0, "ops": [insert(&blk, None, "a0", "x")]}),
    );
    assert_eq!(r["results"][0]["status"], "applied", "{r}");
    let r = sync_at(&pb, &alice, &doc, &json!({"clientId": cb, "lastSeq": 0}));
    assert_eq!(r["ops"].as_array().map(Vec::len), Some(1), "{r}");
    assert_eq!(r["mode"], "full");
    let (head, lease) = seqs(&r);

    // WS JOINED, SSE `ready`, a waiting long-poll — all through nginx.
    let mut open = Open::new(&pb, &alice, &doc, &cb, head, lease);
    assert!(
        open.sse
            .header("content-type")
            .is_some_and(|c| c.starts_with("text/event-stream")),
        "{:?}",
        open.sse.headers
    );

    // Another client's op and lease change wake all three (DOC_SEQ, doc_seq, long-poll).
    let r = sync_at(
        &pb,
        &alice,
        &doc,
        &json!({"clientId": ca, "lastSeq": head, "ops": [set_content(&blk, "y", 1)]}),
    );
    assert_eq!(r["results"][0]["status"], "applied", "{r}");
    assert_eq!(r["headSeq"], head + 1);
    open.expect_woken(&pb, &alice, &doc, &cb, &r);
    let r = sync_at(
        &pb,
        &alice,
        &doc,
        &json!({"clientId": ca, "lastSeq": head + 1, "leases": {"hold": [blk]}}),
    );
    assert_eq!(r["leases"]["granted"], json!([blk]), "{r}");
    assert!(r["leaseSeq"].as_i64() > Some(lease), "{r}");
    open.expect_woken(&pb, &alice, &doc, &cb, &r);

    // PING/PONG over the proxied socket; a long-poll with no change ends at `wait`.
    open.ws.send(json!({"type": "PING"}));
    open.ws.wait_for(WAKE, "PONG", |m| m["type"] == "PONG");
    let (h, l) = seqs(&r);
    // (Not before its 1 s, and long before the default 25 s: `finish` gives up after WAKE.)
    let mut lp = LongPoll::start(&pb, &alice, &doc, h, l, 1, Some(&cb));
    assert_eq!(lp.finish(WAKE), (200, json!({"headSeq": h, "leaseSeq": l})));
    let took = lp.started.elapsed();
    assert!(
        took >= Duration::from_secs(1),
        "answered before its wait: {took:?}"
    );
    let log = nginx.error_log();
    assert!(
        !log.contains("[error]") && !log.contains("[crit]"),
        "nginx errors:\n{log}"
    );
}

#[test]
fn blocking_proxy_breaks_ws_and_sse_but_not_long_polls_or_sync() {
    let srv = TestServer::start();
    let nginx = Nginx::start("blocking.conf", &srv.base);
    let pb = nginx.base.clone();
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Behind a hostile proxy");
    let blk = id("blk_");
    let ca = id("cl_");

    // The WebSocket handshake fails.
    match Ws::connect(&pb, Some(&alice)) {
        Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => {
            assert_eq!(resp.status().as_u16(), 403, "{resp:?}")
        }
        Err(e) => panic!("WebSocket failed, but not with the proxy's 403: {e}"),
        Ok(_) => panic!("the blocking proxy let a WebSocket through"),
    }

    // /sync still works.
    let r = sync_at(
        &pb,
        &alice,
        &doc,
        &json!({"clientId": ca, "lastSeq": 0, "ops": [insert(&blk, None, "a0", "x")]}),
    );
    assert_eq!(r["results"][0]["status"], "applied", "{r}");
    let (head, lease) = seqs(&r);

    // SSE: the server sends `ready` at once (seen directly), but through the buffering
    // proxy no `event:` arrives within 5 s, even with a change in between.
    let t0 = Instant::now();
    let mut proxied = Sse::open(&pb, &alice, &doc, Some(&ca));
    let mut direct = Sse::open(&srv.base, &alice, &doc, Some(&ca));
    direct.wait_event(
        "ready",
        &json!({"docId": doc, "headSeq": head, "leaseSeq": lease}),
        WAKE,
    );

    // Meanwhile long-polling through the proxy wakes on a change (and only on it: its
    // answer carries the change's values).
    let mut lp = LongPoll::start(&pb, &alice, &doc, head, lease, 25, Some(&ca));
    let r = sync_at(
        &pb,
        &alice,
        &doc,
        &json!({"clientId": ca, "lastSeq": head, "ops": [set_content(&blk, "y", 1)]}),
    );
    let (head2, lease2) = seqs(&r);
    assert_eq!(head2, head + 1);
    let (s, v) = lp.finish(WAKE);
    assert_eq!(
        (s, &v),
        (200, &json!({"headSeq": head2, "leaseSeq": lease2}))
    );
    direct.wait_event(
        "doc_seq",
        &json!({"docId": doc, "headSeq": head2, "leaseSeq": lease2}),
        WAKE,
    );

    // The 5 s are the browser engine's own rule (static/engine/transport.js: no event
    // within 5 s means a proxy holds the stream back, so it falls back to long-polling);
    // a slower machine only makes an event less likely to get through in time.
    proxied.read_for((t0 + Duration::from_secs(5)).saturating_duration_since(Instant::now()));
    // Held back, not refused: the stream is still open (a closed or failed stream would
    // make "no event" trivially true and is a different failure for the client).
    assert!(
        !proxied.ended(),
        "the buffering proxy ended the SSE stream instead of holding it (status {:?}): {:?}",
        proxied.status,
        proxied.raw
    );
    assert!(
        !proxied.raw.contains("event:"),
        "an SSE event came through the buffering proxy within 5 s (status {:?}, headers {:?}): {:?}",
        proxied.status,
        proxied.headers,
        proxied.raw
    );
    // Compressed bytes would hide an event from the check above: none may have come.
    if proxied
        .header("content-encoding")
        .is_some_and(|e| e != "identity")
    {
        assert!(
            proxied.raw.is_empty(),
            "compressed SSE bytes came through within 5 s"
        );
    }

    // A long-poll with no change ends at `wait` through this proxy too.
    let mut lp = LongPoll::start(&pb, &alice, &doc, head2, lease2, 1, Some(&ca));
    let (s, v): (u16, Value) = lp.finish(WAKE);
    assert_eq!((s, v), (200, json!({"headSeq": head2, "leaseSeq": lease2})));
    assert!(lp.started.elapsed() >= Duration::from_secs(1));
}

/// A browser behind the working proxy: cookie login and cookie writes pass the origin check
/// (nginx must forward the browser's Host, port included, on every location — a location
/// that sets a header of its own silently drops the server-level `Host`).
#[test]
fn cookie_writes_pass_the_origin_check_through_the_proxy() {
    let srv = TestServer::start();
    let nginx = Nginx::start("docsync.conf", &srv.base);
    srv.add_user_with_password("alice", "correct horse battery");
    let client = reqwest::blocking::Client::new();
    let origin = nginx.base.clone();
    let r = client
        .post(format!("{}/api/v1/auth/login", nginx.base))
        .header("Origin", &origin)
        .json(&json!({"username": "alice", "password": "correct horse battery"}))
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 200, "login through nginx");
    let cookie = r
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .expect("session cookie")
        .to_string();
    let r = client
        .post(format!("{}/api/v1/docs", nginx.base))
        .header("Origin", &origin)
        .header("Cookie", &cookie)
        .json(&json!({"title": "From a browser"}))
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 201, "cookie write through nginx");
    let doc: Value = r.json().unwrap();
    let doc = doc["docId"].as_str().unwrap();
    let r = client
        .post(format!("{}/api/v1/docs/{doc}/sync", nginx.base))
        .header("Origin", &origin)
        .header("Cookie", &cookie)
        .json(&json!({"clientId": id("cl_"), "lastSeq": 0}))
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 200, "cookie sync through nginx");
}
