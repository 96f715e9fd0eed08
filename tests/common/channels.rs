//! Clients for the wake-up channels (PROTOCOL §4) over real sockets — WebSocket, SSE and
//! long-polling — plus plain JSON requests against any base URL, so the same helpers talk to
//! the server directly or through a reverse proxy. `base` is `http://host:port`.
//!
//! The tests stay synchronous: the async clients run on one shared tokio runtime and every
//! wait is bounded by a timeout that panics with what was seen so far.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::runtime::Runtime;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::{self, Message};

/// The runtime every channel client runs on (never dropped, shared by parallel tests).
pub fn rt() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("tokio runtime")
    })
}

fn http_base(base: &str) -> String {
    format!(
        "http://{}",
        base.trim_start_matches("http://").trim_end_matches('/')
    )
}

fn async_client() -> reqwest::Client {
    static C: OnceLock<reqwest::Client> = OnceLock::new();
    C.get_or_init(|| {
        reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .build()
            .expect("reqwest client")
    })
    .clone()
}

/// A JSON request from the test thread (not inside the runtime): `(status, body)`; a body
/// that is not JSON comes back as a string.
pub fn http_json(method: &str, url: &str, token: &str, body: Option<&Value>) -> (u16, Value) {
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut req = client.request(method.clone(), url).bearer_auth(token);
    if let Some(b) = body {
        req = req
            .header("Content-Type", "application/json")
            .body(b.to_string());
    }
    let r = req.send().unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let status = r.status().as_u16();
    let text = r.text().unwrap_or_default();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// `POST /docs/{doc}/sync` against `base`; panics unless 200.
pub fn sync_at(base: &str, token: &str, doc: &str, body: &Value) -> Value {
    let url = format!("{}/api/v1/docs/{doc}/sync", http_base(base));
    let (s, v) = http_json("POST", &url, token, Some(body));
    assert_eq!(s, 200, "POST {url} {body}: {v}");
    v
}

/// The caller's user ID (`GET /api/v1/me`).
pub fn user_id(base: &str, token: &str) -> String {
    let (s, v) = http_json(
        "GET",
        &format!("{}/api/v1/me", http_base(base)),
        token,
        None,
    );
    assert_eq!(s, 200, "GET /me: {v}");
    v["id"].as_str().expect("me.id").to_string()
}

/// `PUT /docs/{doc}/shares` with `shares` (a JSON array); returns the status.
pub fn put_shares(base: &str, owner: &str, doc: &str, shares: &Value) -> u16 {
    let url = format!("{}/api/v1/docs/{doc}/shares", http_base(base));
    let (s, v) = http_json("PUT", &url, owner, Some(shares));
    assert!(s < 500, "PUT {url}: {s} {v}");
    s
}

/// `(headSeq, leaseSeq)` of a sync/snapshot/changes reply or a channel message.
pub fn seqs(v: &Value) -> (i64, i64) {
    (
        v["headSeq"]
            .as_i64()
            .unwrap_or_else(|| panic!("no headSeq in {v}")),
        v["leaseSeq"]
            .as_i64()
            .unwrap_or_else(|| panic!("no leaseSeq in {v}")),
    )
}

/// A wake-up message without its optional `entries` (PROTOCOL §4), for exact comparisons
/// of the rest.
pub fn without_entries(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(o) = v.as_object_mut() {
        o.remove("entries");
    }
    v
}

// ---------------------------------------------------------------------------------------
// WebSocket

pub type WsStream =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// What the socket did next.
#[derive(Debug)]
pub enum WsNext {
    Msg(Value),
    Closed(Option<u16>),
    Timeout,
}

pub struct Ws {
    stream: WsStream,
    /// Every text message received, in order.
    pub seen: Vec<Value>,
}

impl Ws {
    /// Opens `GET /api/v1/ws` with `Authorization: Bearer <token>` (none when `token` is
    /// `None`). A refused handshake is an `Err` (`tungstenite::Error::Http` carries the
    /// status).
    pub fn connect(base: &str, token: Option<&str>) -> Result<Ws, tungstenite::Error> {
        match token {
            Some(t) => Ws::connect_as(base, &super::Auth::Bearer(t)),
            None => Ws::connect_as(base, &super::Auth::None),
        }
    }

    /// Like `connect`, with any credentials; a session cookie goes with the server's own
    /// `Origin`, as the browser sends it.
    pub fn connect_as(base: &str, auth: &super::Auth) -> Result<Ws, tungstenite::Error> {
        let host = base.trim_start_matches("http://").trim_end_matches('/');
        let url = format!("ws://{host}/api/v1/ws");
        let mut req = url.as_str().into_client_request()?;
        let h = req.headers_mut();
        match auth {
            super::Auth::None => {}
            super::Auth::Bearer(t) => {
                h.insert(
                    "Authorization",
                    HeaderValue::from_str(&format!("Bearer {t}")).unwrap(),
                );
            }
            super::Auth::Cookie(c) => {
                h.insert(
                    "Cookie",
                    HeaderValue::from_str(&format!("docsync_session={c}")).unwrap(),
                );
                h.insert(
                    "Origin",
                    HeaderValue::from_str(&format!("http://{host}")).unwrap(),
                );
            }
        }
        let connect = async {
            tokio::time::timeout(
                Duration::from_secs(10),
                tokio_tungstenite::connect_async(req),
            )
            .await
        };
        match rt().block_on(connect) {
            Ok(Ok((stream, _))) => Ok(Ws {
                stream,
                seen: Vec::new(),
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => panic!("WebSocket handshake to {url}: no answer within 10 s"),
        }
    }

    pub fn send(&mut self, v: Value) {
        rt().block_on(self.stream.send(Message::text(v.to_string())))
            .expect("WebSocket send");
    }

    /// The next text message (parsed as JSON), the close, or `Timeout` after `within`.
    pub fn next(&mut self, within: Duration) -> WsNext {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let got = rt()
                .block_on(async { tokio::time::timeout_at(deadline, self.stream.next()).await });
            match got {
                Err(_) => return WsNext::Timeout,
                Ok(None) => return WsNext::Closed(None),
                Ok(Some(Err(e))) => panic!("WebSocket error: {e} (seen {:?})", self.seen),
                Ok(Some(Ok(Message::Text(t)))) => {
                    let v: Value = serde_json::from_str(t.as_str())
                        .unwrap_or_else(|e| panic!("WebSocket text is not JSON ({e}): {t}"));
                    self.seen.push(v.clone());
                    return WsNext::Msg(v);
                }
                Ok(Some(Ok(Message::Close(frame)))) => {
                    return WsNext::Closed(frame.map(|f| u16::from(f.code)))
                }
                Ok(Some(Ok(Message::Binary(b)))) => {
                    panic!("unexpected binary WebSocket message: {b:?}")
                }
                Ok(Some(Ok(_))) => continue, // ping/pong frames
            }
        }
    }

    /// Reads messages until one satisfies `pred` (returned); panics after `within` or on
    /// close, listing every message seen.
    pub fn wait_for(
        &mut self,
        within: Duration,
        what: &str,
        pred: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next(left) {
                WsNext::Msg(v) if pred(&v) => return v,
                WsNext::Msg(_) => {}
                WsNext::Closed(code) => panic!(
                    "WebSocket closed ({code:?}) while waiting for {what}; seen {:?}",
                    self.seen
                ),
                WsNext::Timeout => panic!(
                    "no {what} on the WebSocket within {within:?}; seen {:?}",
                    self.seen
                ),
            }
        }
    }

    /// Sends `JOIN doc:<doc>` and returns the server's answer for that room (`JOINED` or
    /// `ERROR`).
    pub fn join(&mut self, doc: &str, client_id: Option<&str>) -> Value {
        let room = format!("doc:{doc}");
        let mut msg = json!({"type": "JOIN", "room": room});
        if let Some(c) = client_id {
            msg["clientId"] = json!(c);
        }
        self.send(msg);
        self.wait_for(Duration::from_secs(5), "JOINED/ERROR", |m| {
            m["room"] == room.as_str() && (m["type"] == "JOINED" || m["type"] == "ERROR")
        })
    }

    /// Waits for `DOC_SEQ` of `doc` carrying exactly `(head, lease)` (with or without the
    /// optional `entries`).
    pub fn wait_doc_seq(&mut self, doc: &str, head: i64, lease: i64, within: Duration) {
        let want = json!({"type": "DOC_SEQ", "docId": doc, "headSeq": head, "leaseSeq": lease});
        self.wait_for(within, &format!("{want}"), |m| without_entries(m) == want);
    }

    /// `DOC_SEQ` at `head` with a `leaseSeq` of at least `lease` (see
    /// `Sse::wait_doc_seq_at_least`).
    pub fn wait_doc_seq_at_least(&mut self, doc: &str, head: i64, lease: i64, within: Duration) {
        self.wait_for(within, &format!("DOC_SEQ {doc} {head} ≥{lease}"), |m| {
            m["type"] == "DOC_SEQ"
                && m["docId"] == doc
                && m["headSeq"] == head
                && m["leaseSeq"].as_i64().is_some_and(|l| l >= lease)
        });
    }
}

// ---------------------------------------------------------------------------------------
// Server-Sent Events

enum Piece {
    Head {
        status: u16,
        headers: reqwest::header::HeaderMap,
    },
    Bytes(Vec<u8>),
    End,
    Failed(String),
}

/// What the event stream did next.
#[derive(Debug, PartialEq)]
pub enum SseNext {
    /// `event:` name and `data:` parsed as JSON.
    Event(String, Value),
    End,
    Timeout,
}

/// An SSE stream read in the background; the connection closes when this is dropped.
pub struct Sse {
    rx: mpsc::UnboundedReceiver<Piece>,
    task: JoinHandle<()>,
    pub status: Option<u16>,
    pub headers: Option<reqwest::header::HeaderMap>,
    /// Every body byte received so far, as text.
    pub raw: String,
    pending: String,
    ended: bool,
}

impl Sse {
    /// Starts `GET /api/v1/docs/{doc}/events[?clientId=…]`; returns at once. Like a
    /// browser it sends `Accept-Encoding: gzip` (which proxies may act on); docsync itself
    /// never compresses the stream.
    pub fn open(base: &str, token: &str, doc: &str, client_id: Option<&str>) -> Sse {
        Sse::open_as(base, &super::Auth::Bearer(token), doc, client_id)
    }

    /// Like `open`, with any credentials.
    pub fn open_as(base: &str, auth: &super::Auth, doc: &str, client_id: Option<&str>) -> Sse {
        Sse::open_with(base, auth, doc, client_id, &[])
    }

    /// Like `open_as`, with extra request headers (as a proxy in front would add them).
    pub fn open_with(
        base: &str,
        auth: &super::Auth,
        doc: &str,
        client_id: Option<&str>,
        headers: &[(&str, &str)],
    ) -> Sse {
        let mut url = format!("{}/api/v1/docs/{doc}/events", http_base(base));
        if let Some(c) = client_id {
            url.push_str(&format!("?clientId={c}"));
        }
        Sse::open_url(url, auth, headers)
    }

    /// `GET /api/v1/feed/events{query}` (the change feed's stream), with extra headers.
    pub fn open_feed(base: &str, token: &str, query: &str, headers: &[(&str, &str)]) -> Sse {
        let url = format!("{}/api/v1/feed/events{query}", http_base(base));
        Sse::open_url(url, &super::Auth::Bearer(token), headers)
    }

    fn open_url(url: String, auth: &super::Auth, headers: &[(&str, &str)]) -> Sse {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut req = async_client()
            .get(url)
            .header("Accept", "text/event-stream")
            .header("Accept-Encoding", "gzip");
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        match auth {
            super::Auth::None => {}
            super::Auth::Bearer(t) => req = req.bearer_auth(t),
            super::Auth::Cookie(c) => req = req.header("Cookie", format!("docsync_session={c}")),
        }
        let task = rt().spawn(async move {
            let mut resp = match req.send().await {
                Ok(r) => r,
                Err(e) => {
                    let _ = tx.send(Piece::Failed(e.to_string()));
                    return;
                }
            };
            let _ = tx.send(Piece::Head {
                status: resp.status().as_u16(),
                headers: resp.headers().clone(),
            });
            loop {
                match resp.chunk().await {
                    Ok(Some(b)) => {
                        if tx.send(Piece::Bytes(b.to_vec())).is_err() {
                            return;
                        }
                    }
                    Ok(None) => {
                        let _ = tx.send(Piece::End);
                        return;
                    }
                    Err(e) => {
                        let _ = tx.send(Piece::Failed(e.to_string()));
                        return;
                    }
                }
            }
        });
        Sse {
            rx,
            task,
            status: None,
            headers: None,
            raw: String::new(),
            pending: String::new(),
            ended: false,
        }
    }

    /// Takes in what arrived until `deadline`; false when nothing more came in time.
    fn pump(&mut self, deadline: tokio::time::Instant) -> bool {
        if self.ended {
            return false;
        }
        match rt().block_on(async { tokio::time::timeout_at(deadline, self.rx.recv()).await }) {
            Err(_) => false,
            Ok(None) | Ok(Some(Piece::End)) => {
                self.ended = true;
                true
            }
            Ok(Some(Piece::Failed(e))) => {
                self.ended = true;
                panic!("SSE request failed: {e} (received so far: {:?})", self.raw)
            }
            Ok(Some(Piece::Head { status, headers })) => {
                self.status = Some(status);
                self.headers = Some(headers);
                true
            }
            Ok(Some(Piece::Bytes(b))) => {
                let text = String::from_utf8_lossy(&b);
                self.raw.push_str(&text);
                self.pending.push_str(&text);
                true
            }
        }
    }

    /// The response status, once the headers arrived within `within` (else `None`).
    pub fn wait_status(&mut self, within: Duration) -> Option<u16> {
        let deadline = tokio::time::Instant::now() + within;
        while self.status.is_none() && self.pump(deadline) {}
        self.status
    }

    /// The response body (for refusals): everything until the stream ends.
    pub fn body(&mut self, within: Duration) -> String {
        let deadline = tokio::time::Instant::now() + within;
        while !self.ended && self.pump(deadline) {}
        assert!(self.ended, "SSE body did not end within {within:?}");
        self.raw.clone()
    }

    /// The next event (comment-only frames such as `: keep-alive` are skipped), the end of
    /// the stream, or `Timeout`.
    pub fn next(&mut self, within: Duration) -> SseNext {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let norm = self.pending.replace("\r\n", "\n");
            if norm.len() != self.pending.len() {
                self.pending = norm;
            }
            if let Some(i) = self.pending.find("\n\n") {
                let frame: String = self.pending[..i].to_string();
                self.pending.drain(..i + 2);
                let mut event = None;
                let mut data = String::new();
                for line in frame.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        event = Some(v.trim().to_string());
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.trim_start());
                    }
                }
                if event.is_none() && data.is_empty() {
                    continue; // a comment line
                }
                let data = serde_json::from_str(&data)
                    .unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {frame:?}"));
                return SseNext::Event(event.unwrap_or_else(|| "message".into()), data);
            }
            if self.ended {
                return SseNext::End;
            }
            if !self.pump(deadline) {
                return if self.ended {
                    SseNext::End
                } else {
                    SseNext::Timeout
                };
            }
        }
    }

    /// Reads events until one named `event` with exactly `data` arrives; panics after
    /// `within` or at the end of the stream.
    pub fn wait_event(&mut self, event: &str, data: &Value, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next(left) {
                SseNext::Event(e, d) if e == event && without_entries(&d) == *data => return,
                SseNext::Event(..) => {}
                other => panic!(
                    "no `event: {event}` with {data} within {within:?} ({other:?}); stream so far: {:?}",
                    self.raw
                ),
            }
        }
    }

    /// Reads events until a `doc_seq` at `head` arrives whose `leaseSeq` is at least `lease`
    /// (presence may move on between a reply and the wake-up: a later `leaseSeq` is as
    /// good); panics after `within` or at the end of the stream.
    pub fn wait_doc_seq_at_least(&mut self, doc: &str, head: i64, lease: i64, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next(left) {
                SseNext::Event(e, d)
                    if e == "doc_seq"
                        && d["docId"] == doc
                        && d["headSeq"] == head
                        && d["leaseSeq"].as_i64().is_some_and(|l| l >= lease) =>
                {
                    return
                }
                SseNext::Event(..) => {}
                other => panic!(
                    "no `doc_seq` at head {head} with leaseSeq ≥ {lease} within {within:?} ({other:?}); stream so far: {:?}",
                    self.raw
                ),
            }
        }
    }

    /// Waits until the stream ends (skipping events); panics after `within`.
    pub fn wait_end(&mut self, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next(left) {
                SseNext::End => return,
                SseNext::Event(..) => {}
                SseNext::Timeout => panic!(
                    "SSE stream did not end within {within:?}; stream so far: {:?}",
                    self.raw
                ),
            }
        }
    }

    /// Takes in everything that arrives for `d` (or until the stream ends), parsing nothing:
    /// for checks that nothing came through.
    pub fn read_for(&mut self, d: Duration) {
        let deadline = tokio::time::Instant::now() + d;
        while self.pump(deadline) {}
    }

    /// Whether the stream has ended (or failed).
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// A response header, if the headers arrived.
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .as_ref()?
            .get(name)
            .map(|v| v.to_str().unwrap_or_default().to_string())
    }
}

impl Drop for Sse {
    fn drop(&mut self) {
        self.task.abort();
    }
}

// ---------------------------------------------------------------------------------------
// Long-polling

/// A `GET /docs/{doc}/changes` in flight.
pub struct LongPoll {
    task: Option<JoinHandle<Result<(u16, Value), String>>>,
    pub started: Instant,
    url: String,
}

impl LongPoll {
    /// Starts `GET /api/v1/docs/{doc}/changes?since=…&leaseSeq=…&wait=…[&clientId=…]`.
    pub fn start(
        base: &str,
        token: &str,
        doc: &str,
        since: i64,
        lease_seq: i64,
        wait: u64,
        client_id: Option<&str>,
    ) -> LongPoll {
        let mut url = format!(
            "{}/api/v1/docs/{doc}/changes?since={since}&leaseSeq={lease_seq}&wait={wait}",
            http_base(base)
        );
        if let Some(c) = client_id {
            url.push_str(&format!("&clientId={c}"));
        }
        let req = async_client().get(&url).bearer_auth(token);
        let task = rt().spawn(async move {
            let r = req.send().await.map_err(|e| e.to_string())?;
            let status = r.status().as_u16();
            let text = r.text().await.map_err(|e| e.to_string())?;
            Ok((
                status,
                serde_json::from_str(&text).unwrap_or(Value::String(text)),
            ))
        });
        LongPoll {
            task: Some(task),
            started: Instant::now(),
            url,
        }
    }

    pub fn is_finished(&self) -> bool {
        self.task.as_ref().is_none_or(|t| t.is_finished())
    }

    /// The answer `(status, body)`; panics unless it comes within `within`.
    pub fn finish(&mut self, within: Duration) -> (u16, Value) {
        let task = self.task.take().expect("finish once");
        match rt().block_on(async { tokio::time::timeout(within, task).await }) {
            Ok(Ok(Ok(v))) => v,
            Ok(Ok(Err(e))) => panic!("long-poll {} failed: {e}", self.url),
            Ok(Err(e)) => panic!("long-poll task: {e}"),
            Err(_) => panic!("long-poll {} did not answer within {within:?}", self.url),
        }
    }
}

impl Drop for LongPoll {
    fn drop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }
}

// ---------------------------------------------------------------------------------------
// All three channels of one client

/// How long a wait may take before the test gives up. Only a bound against hanging: no
/// test asserts a speed with it (a loaded 2-core machine may take seconds).
pub const WAKE: Duration = Duration::from_secs(15);

/// The server setting for a clock that moves only when a test says so: leases and sessions
/// never expire on their own, so no presence news driven by time can slip in between a
/// change and its wake-up (which `Open::expect_woken` counts exactly).
pub const STILL_CLOCK: (&str, &str) = ("DOCSYNC_TESTING__CLOCK", "manual");

/// The three channels of one client, open on one document.
pub struct Open {
    pub ws: Ws,
    pub sse: Sse,
    pub lp: LongPoll,
    /// `(since, leaseSeq)` the running long-poll was started with.
    pub lp_from: (i64, i64),
}

impl Open {
    /// Opens WS (JOIN), SSE (checks `ready` carries `(head, lease)`) and a long-poll from
    /// `(head, lease)` for `client`. Whether the long-poll wrongly answers without a change
    /// shows at the next `expect_woken` (its answer must be that change).
    pub fn new(base: &str, token: &str, doc: &str, client: &str, head: i64, lease: i64) -> Open {
        let mut ws = Ws::connect(base, Some(token)).expect("WebSocket handshake");
        let j = ws.join(doc, Some(client));
        assert_eq!(j, json!({"type": "JOINED", "room": format!("doc:{doc}")}));
        let mut sse = Sse::open(base, token, doc, Some(client));
        assert_eq!(sse.wait_status(WAKE), Some(200), "SSE: {:?}", sse.raw);
        sse.wait_event(
            "ready",
            &json!({"docId": doc, "headSeq": head, "leaseSeq": lease}),
            WAKE,
        );
        let lp = LongPoll::start(base, token, doc, head, lease, 25, Some(client));
        Open {
            ws,
            sse,
            lp,
            lp_from: (head, lease),
        }
    }

    /// The next thing every channel carries is exactly the `(headSeq, leaseSeq)` of reply
    /// `r` (one change, one wake-up): the next WebSocket message is its `DOC_SEQ`, the next
    /// SSE event its `doc_seq`, the long-poll answers with it. So each call is also a
    /// barrier for the time since the previous one: a wake-up without a change, or a second
    /// one for the same change, arrives first and fails here; no time window is needed.
    /// The long-poll is started again from `r`'s values.
    pub fn expect_woken(&mut self, base: &str, token: &str, doc: &str, client: &str, r: &Value) {
        let (head, lease) = seqs(r);
        let want = json!({"type": "DOC_SEQ", "docId": doc, "headSeq": head, "leaseSeq": lease});
        match self.ws.next(WAKE) {
            WsNext::Msg(m) => assert_eq!(
                without_entries(&m),
                want,
                "WebSocket: the next message must be this change's wake-up; seen {:?}",
                self.ws.seen
            ),
            other => panic!(
                "WebSocket: {other:?} instead of {want}; seen {:?}",
                self.ws.seen
            ),
        }
        let data = json!({"docId": doc, "headSeq": head, "leaseSeq": lease});
        match self.sse.next(WAKE) {
            SseNext::Event(name, d) => assert_eq!(
                (name.as_str(), without_entries(&d)),
                ("doc_seq", data.clone()),
                "SSE: the next event must be this change's wake-up; stream so far: {:?}",
                self.sse.raw
            ),
            other => panic!(
                "SSE: {other:?} instead of doc_seq {data}; stream so far: {:?}",
                self.sse.raw
            ),
        }
        let (s, v) = self.lp.finish(WAKE);
        assert_eq!(
            (s, &v),
            (200, &json!({"headSeq": head, "leaseSeq": lease})),
            "long-poll from {:?}: its answer must be this change",
            self.lp_from
        );
        self.lp = LongPoll::start(base, token, doc, head, lease, 25, Some(client));
        self.lp_from = (head, lease);
    }
}

/// `subscribers{channel="…"}` from `/metrics`.
pub fn subscribers(s: &super::TestServer, channel: &str) -> i64 {
    let (status, text) = s.get_text("", "/metrics");
    assert_eq!(status, 200);
    let prefix = format!("docsync_subscribers{{channel=\"{channel}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map_or(0, |v| v.trim().parse().unwrap())
}

/// Polls until `subscribers(channel) == want`; the bound is generous, the usual wait is a
/// few milliseconds (SSE) or one actor tick (long-poll, 1 s).
pub fn wait_subscribers(s: &super::TestServer, channel: &str, want: i64, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let now = subscribers(s, channel);
        if now == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{channel} subscribers still {now}, expected {want} within {within:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
