//! Shared by the integration tests: start the real `docsync` binary on a random port
//! against a fresh SQLite file in a temp folder, create users through its CLI, and talk
//! to it over real sockets.
#![allow(dead_code)]

pub mod channels;
pub mod db;
pub mod netns;
pub mod process;
pub mod receiver;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::blocking::Client;
use serde_json::{json, Value};

pub struct TestServer {
    pub dir: tempfile::TempDir,
    pub base: String,
    child: Option<Child>,
    env: Vec<(String, String)>,
    client: Client,
    /// With `DOCSYNC_TEST_BACKEND=postgres`: this server's own PostgreSQL (a one-node
    /// cluster), so the API tests run on the cluster backend too.
    pub pg: Option<std::sync::Arc<docsync_actors::storage::postgres::testing::TempPostgres>>,
    /// The network namespace the server runs in (cluster fault tests), if any.
    netns: Option<String>,
}

/// Whether the API tests run on PostgreSQL (`DOCSYNC_TEST_BACKEND=postgres`) instead of the
/// embedded SQLite.
pub fn on_postgres() -> bool {
    std::env::var("DOCSYNC_TEST_BACKEND").is_ok_and(|b| b == "postgres")
}

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_docsync")
}

pub fn id(prefix: &str) -> String {
    format!("{prefix}{}", uuid::Uuid::new_v4().simple())
}

impl TestServer {
    pub fn start() -> TestServer {
        TestServer::start_with(&[])
    }

    /// Starts a server; `env` adds or overrides `DOCSYNC_*` settings.
    pub fn start_with(env: &[(&str, &str)]) -> TestServer {
        TestServer::start_at("", env)
    }

    /// Starts a server listening on `bind` (`host:port`; empty: a free port).
    pub fn start_at(bind: &str, env: &[(&str, &str)]) -> TestServer {
        TestServer::start_in(None, bind, env)
    }

    /// `start_at`, inside the network namespace `netns` when given (`ip netns exec`, which
    /// execs: the process is the server itself, for signals).
    pub fn start_in(netns: Option<&str>, bind: &str, env: &[(&str, &str)]) -> TestServer {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut s = TestServer {
            dir,
            base: String::new(),
            child: None,
            env: Vec::new(),
            client: Client::builder()
                .timeout(Duration::from_secs(30))
                .build()
                .unwrap(),
            pg: None,
            netns: netns.map(str::to_string),
        };
        let mut bind = bind.to_string();
        let chosen_backend = env.iter().any(|(k, _)| *k == "DOCSYNC_STORAGE__BACKEND");
        if on_postgres() && !chosen_backend {
            let pg =
                std::thread::spawn(docsync_actors::storage::postgres::testing::TempPostgres::start)
                    .join()
                    .expect("a PostgreSQL for this server");
            if bind.is_empty() {
                let port = std::net::TcpListener::bind("127.0.0.1:0")
                    .and_then(|l| l.local_addr())
                    .expect("a free port")
                    .port();
                bind = format!("127.0.0.1:{port}");
            }
            for (k, v) in [
                ("DOCSYNC_STORAGE__BACKEND", "postgres".to_string()),
                ("DOCSYNC_STORAGE__POSTGRES_URL", pg.url()),
                ("DOCSYNC_CLUSTER__NODE_ID", "solo".to_string()),
                ("DOCSYNC_CLUSTER__INTERNAL_ADDR", bind.clone()),
                (
                    "DOCSYNC_CLUSTER__SECRET",
                    "one-node-cluster-secret-0123".to_string(),
                ),
                // Cluster mode seals webhook secrets only with a configured key.
                ("DOCSYNC_WEBHOOKS__KEY", "5e".repeat(32)),
            ] {
                s.env.push((k.to_string(), v));
            }
            s.pg = Some(std::sync::Arc::new(pg));
        }
        s.env
            .extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        if !bind.is_empty() {
            s.base = format!("http://{bind}");
        }
        s.spawn();
        s.wait_joined();
        s
    }

    /// On PostgreSQL: serving once it has joined its (one-node) cluster.
    fn wait_joined(&self) {
        if self.pg.is_some() {
            let deadline = Instant::now() + Duration::from_secs(30);
            while self.get("", "/readyz").0 != 200 {
                assert!(Instant::now() < deadline, "never joined its cluster");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }

    pub fn db_path(&self) -> PathBuf {
        self.dir.path().join("docsync.db")
    }

    fn command(&self) -> Command {
        let mut c = match &self.netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns]).arg(bin());
                c
            }
            None => Command::new(bin()),
        };
        c.env("DOCSYNC_STORAGE__PATH", self.db_path())
            .env("DOCSYNC_LOGGING__LEVEL", "warn")
            .env("DOCSYNC_SERVER__WORKERS", "2")
            .env("DOCSYNC_ACTORS__ARBITERS", "2")
            .current_dir(self.dir.path());
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }

    fn spawn(&mut self) {
        // Reuse the previous port on restart so clients keep their base URL.
        let bind = if self.base.is_empty() {
            "127.0.0.1:0".to_string()
        } else {
            self.base.trim_start_matches("http://").to_string()
        };
        let mut child = self
            .command()
            .arg("serve")
            .env("DOCSYNC_SERVER__BIND", &bind)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start docsync");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(addr) = line.strip_prefix("docsync listening on ") {
                    let _ = tx.send(addr.to_string());
                }
            }
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("server did not report its address");
        self.base = addr;
        self.child = Some(child);
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    /// SIGKILL: no shutdown code runs, exactly like a crash.
    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub fn restart_after_kill(&mut self) {
        self.kill9();
        // The port may take a moment to be free again.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let bind = self.base.trim_start_matches("http://").to_string();
            if std::net::TcpListener::bind(&bind).is_ok() || Instant::now() > deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.spawn();
        self.wait_joined();
    }

    /// Runs `docsync ARGS` against this server's database and returns stdout.
    pub fn cli(&self, args: &[&str]) -> (bool, String, String) {
        let out = self.command().args(args).output().expect("run docsync cli");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Creates a user through the CLI and returns its API token.
    pub fn add_user(&self, name: &str) -> String {
        self.add_user_with(&["user", "add", name])
    }

    /// An administrator (`user add NAME --admin`) and their API token.
    pub fn add_admin(&self, name: &str) -> String {
        self.add_user_with(&["user", "add", name, "--admin"])
    }

    fn add_user_with(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.cli(args);
        assert!(ok, "{args:?} failed: {err}");
        out.lines()
            .find_map(|l| l.strip_prefix("token: "))
            .expect("token line")
            .trim()
            .to_string()
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.base.trim_start_matches("http://"), path)
    }

    pub fn get(&self, token: &str, path: &str) -> (u16, Value) {
        let r = self
            .client
            .get(self.url(path))
            .bearer_auth(token)
            .send()
            .expect("GET");
        let status = r.status().as_u16();
        let text = r.text().unwrap_or_default();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    /// A GET whose answer is not text (a zip): status, content type, bytes.
    pub fn get_bytes(&self, token: &str, path: &str) -> (u16, String, Vec<u8>) {
        let r = self
            .client
            .get(self.url(path))
            .bearer_auth(token)
            .send()
            .expect("GET");
        let status = r.status().as_u16();
        let kind = r
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        (
            status,
            kind,
            r.bytes().map(|b| b.to_vec()).unwrap_or_default(),
        )
    }

    pub fn get_text(&self, token: &str, path: &str) -> (u16, String) {
        let r = self
            .client
            .get(self.url(path))
            .bearer_auth(token)
            .send()
            .expect("GET");
        (r.status().as_u16(), r.text().unwrap_or_default())
    }

    pub fn post(&self, token: &str, path: &str, body: &Value) -> (u16, Value) {
        self.post_raw(
            token,
            path,
            "application/json",
            body.to_string().into_bytes(),
        )
    }

    pub fn post_raw(
        &self,
        token: &str,
        path: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> (u16, Value) {
        let r = self
            .client
            .post(self.url(path))
            .bearer_auth(token)
            .header("Content-Type", content_type)
            .body(body)
            .send()
            .expect("POST");
        let status = r.status().as_u16();
        let text = r.text().unwrap_or_default();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    pub fn delete(&self, token: &str, path: &str) -> u16 {
        self.client
            .delete(self.url(path))
            .bearer_auth(token)
            .send()
            .expect("DELETE")
            .status()
            .as_u16()
    }

    pub fn create_doc(&self, token: &str, title: &str) -> String {
        let (s, v) = self.post(token, "/api/v1/docs", &json!({"title": title}));
        assert_eq!(s, 201, "create doc: {v}");
        v["docId"].as_str().unwrap().to_string()
    }

    pub fn sync(&self, token: &str, doc: &str, body: &Value) -> (u16, Value) {
        self.post(token, &format!("/api/v1/docs/{doc}/sync"), body)
    }

    /// Sync that must succeed; returns the reply.
    pub fn sync_ok(
        &self,
        token: &str,
        doc: &str,
        client: &str,
        last_seq: i64,
        ops: Vec<Value>,
    ) -> Value {
        let (s, v) = self.sync(
            token,
            doc,
            &json!({"clientId": client, "lastSeq": last_seq, "ops": ops}),
        );
        assert_eq!(s, 200, "sync failed: {v}");
        v
    }

    pub fn snapshot(&self, token: &str, doc: &str) -> Value {
        let (s, v) = self.get(token, &format!("/api/v1/docs/{doc}/snapshot"));
        assert_eq!(s, 200, "snapshot: {v}");
        v
    }

    /// Opens the database file read-only for checks that must look at rows directly.
    pub fn db(&self) -> rusqlite::Connection {
        open_db(&self.db_path())
    }
}

pub fn open_db(path: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("open db")
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.kill9();
    }
}

pub fn insert(block: &str, parent: Option<&str>, key: &str, content: &str) -> Value {
    json!({"opId": id("op_"), "kind": "insert", "blockId": block, "parentId": parent, "orderKey": key, "content": content})
}

pub fn set_content(block: &str, content: &str, base: i64) -> Value {
    json!({"opId": id("op_"), "kind": "set_content", "blockId": block, "content": content, "baseVersion": base})
}

/// Applies log entries onto a snapshot-shaped map of blocks (id → block) plus the title.
pub fn replay(
    blocks: &mut std::collections::BTreeMap<String, Value>,
    title: &mut String,
    entries: &[Value],
) {
    for e in entries {
        for eff in e["effects"].as_array().unwrap() {
            match eff["e"].as_str().unwrap() {
                "block" => {
                    let b = eff["block"].clone();
                    blocks.insert(b["id"].as_str().unwrap().to_string(), b);
                }
                "title" => *title = eff["title"].as_str().unwrap().to_string(),
                "purge" => {
                    for id in eff["blockIds"].as_array().unwrap() {
                        blocks.remove(id.as_str().unwrap());
                    }
                }
                other => panic!("unknown effect {other}"),
            }
        }
    }
}

/// Snapshot blocks without the computed `depth`, keyed by ID.
pub fn snapshot_blocks(snap: &Value) -> std::collections::BTreeMap<String, Value> {
    snap["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            let mut b = b.clone();
            b.as_object_mut().unwrap().remove("depth");
            (b["id"].as_str().unwrap().to_string(), b)
        })
        .collect()
}

/// How a request made with [`TestServer::send`] authenticates.
pub enum Auth<'a> {
    None,
    Bearer(&'a str),
    /// The value of the `docsync_session` cookie.
    Cookie(&'a str),
}

/// A full answer: status, headers and the body (JSON, or the text as a JSON string).
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

impl TestServer {
    /// Runs `docsync ARGS` with `stdin` piped to its standard input; returns (ok, stdout, stderr).
    pub fn cli_stdin(&self, args: &[&str], stdin: &str) -> (bool, String, String) {
        use std::io::Write;
        let mut child = self
            .command()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run docsync cli");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .expect("write cli stdin");
        let out = child.wait_with_output().expect("wait for docsync cli");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Creates a user with a login password (`user add NAME --password-stdin`); returns its token.
    pub fn add_user_with_password(&self, name: &str, password: &str) -> String {
        let (ok, out, err) = self.cli_stdin(
            &["user", "add", name, "--password-stdin"],
            &format!("{password}\n"),
        );
        assert!(ok, "user add --password-stdin failed: {err}");
        out.lines()
            .find_map(|l| l.strip_prefix("token: "))
            .expect("token line")
            .trim()
            .to_string()
    }

    /// This server's own origin, as a browser on its pages would send it.
    pub fn origin(&self) -> String {
        format!("http://{}", self.base.trim_start_matches("http://"))
    }

    /// Any request: method, auth, extra headers, optional JSON body.
    pub fn send(
        &self,
        method: &str,
        path: &str,
        auth: &Auth,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Reply {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut rb = self.client.request(method, self.url(path));
        match auth {
            Auth::None => {}
            Auth::Bearer(t) => rb = rb.bearer_auth(t),
            Auth::Cookie(c) => rb = rb.header("Cookie", format!("docsync_session={c}")),
        }
        for (k, v) in headers {
            rb = rb.header(*k, *v);
        }
        if let Some(b) = body {
            rb = rb
                .header("Content-Type", "application/json")
                .body(b.to_string());
        }
        let r = rb.send().expect("request");
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let text = r.text().unwrap_or_default();
        Reply {
            status,
            headers,
            body: serde_json::from_str(&text).unwrap_or(Value::String(text)),
        }
    }

    pub fn put(&self, token: &str, path: &str, body: &Value) -> (u16, Value) {
        let r = self.send("PUT", path, &Auth::Bearer(token), &[], Some(body));
        (r.status, r.body)
    }

    pub fn patch(&self, token: &str, path: &str, body: &Value) -> (u16, Value) {
        let r = self.send("PATCH", path, &Auth::Bearer(token), &[], Some(body));
        (r.status, r.body)
    }

    /// `POST /api/v1/auth/login`; the reply keeps the `Set-Cookie` headers.
    /// Moves the server's clock forward by `ms` (a server started with
    /// `DOCSYNC_TESTING__CLOCK=manual`); returns the server's time now.
    pub fn advance_clock(&self, ms: i64) -> i64 {
        let r = self.send(
            "POST",
            "/api/v1/testing/clock",
            &Auth::None,
            &[],
            Some(&json!({ "advanceMs": ms })),
        );
        assert_eq!(r.status, 200, "advance clock: {}", r.body);
        r.body["nowMs"].as_i64().expect("nowMs")
    }

    pub fn login(&self, username: &str, password: &str, headers: &[(&str, &str)]) -> Reply {
        self.send(
            "POST",
            "/api/v1/auth/login",
            &Auth::None,
            headers,
            Some(&json!({"username": username, "password": password})),
        )
    }
}

/// The `docsync_session` value set by a reply, if any.
pub fn session_cookie(reply: &Reply) -> Option<String> {
    set_cookie_header(reply).and_then(|h| {
        h.split(';')
            .next()
            .and_then(|kv| kv.trim().strip_prefix("docsync_session="))
            .map(str::to_string)
    })
}

/// The whole `Set-Cookie` header for `docsync_session`, if any.
pub fn set_cookie_header(reply: &Reply) -> Option<String> {
    reply
        .headers
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.trim_start().starts_with("docsync_session="))
        .map(str::to_string)
}
