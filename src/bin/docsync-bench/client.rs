//! The HTTP client: one `Api` per (server, user) with a keep-alive connection pool, the
//! event-stream reader, and the `/metrics` helpers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

use crate::channel::Channel;

/// Idle connections a client keeps per host unless told otherwise.
const DEFAULT_IDLE_CONNECTIONS: usize = 256;
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Whole-response limit for event streams (reqwest's timeout covers the body too).
const STREAM_TIMEOUT: Duration = Duration::from_secs(3600);
const COMPACT_TIMEOUT: Duration = Duration::from_secs(600);
/// How long the server may take to count subscribers we opened.
const SUBSCRIBE_TIMEOUT: Duration = Duration::from_secs(20);

#[derive(Clone)]
pub struct Api {
    http: reqwest::Client,
    /// The server's base URL (`/metrics` lives here).
    root: Arc<str>,
    /// `root` + `/api/v1`.
    base: Arc<str>,
    token: Arc<str>,
    auth: Arc<str>,
    local: bool,
}

/// One `GET /snapshot`: body size, the parsed body, and `Server-Timing` duration if sent.
pub struct SnapshotReply {
    pub bytes: usize,
    pub body: Value,
    pub server_ms: Option<f64>,
}

/// One `GET /snapshot` as sent: body bytes on the wire, `Content-Encoding`, `Server-Timing`.
pub struct EncodedReply {
    pub bytes: usize,
    pub content_encoding: Option<String>,
    pub server_ms: Option<f64>,
}

pub type WebSocket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

impl Api {
    pub fn new(base_url: &str, token: &str, local: bool) -> Result<Api> {
        Api::with_pool(base_url, token, local, DEFAULT_IDLE_CONNECTIONS)
    }

    /// A client keeping up to `idle` connections open between requests: as many as requests
    /// run at once, so a pull never pays for a new connection.
    pub fn with_pool(base_url: &str, token: &str, local: bool, idle: usize) -> Result<Api> {
        let mut builder = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .pool_max_idle_per_host(idle)
            .tcp_nodelay(true);
        if local {
            // Our own server is on loopback: never route it through an HTTP proxy.
            builder = builder.no_proxy();
        }
        let root = base_url.trim_end_matches('/');
        Ok(Api {
            http: builder.build()?,
            root: root.into(),
            base: format!("{root}/api/v1").into(),
            token: token.into(),
            auth: format!("Bearer {token}").into(),
            local,
        })
    }

    /// The same server and user with a connection pool of its own.
    pub fn fresh_pool(&self) -> Result<Api> {
        Api::new(&self.root, &self.token, self.local)
    }

    /// The same server and user with a pool of its own that keeps `idle` connections.
    pub fn sized_pool(&self, idle: usize) -> Result<Api> {
        Api::with_pool(&self.root, &self.token, self.local, idle)
    }

    /// `POST /sync` with a body already encoded; the raw reply (a lean reader parses only
    /// the fields it needs).
    pub async fn sync_raw(&self, doc_id: &str, body: String) -> Result<Vec<u8>> {
        let req = self
            .http
            .post(format!("{}/docs/{doc_id}/sync", self.base))
            .header("Content-Type", "application/json")
            .body(body);
        self.send(req).await
    }

    /// `GET /snapshot` asking for `accept_encoding` (none: no header). The body is counted
    /// as it arrived (this client never decodes), so `bytes` is what crossed the wire.
    pub async fn snapshot_encoded(
        &self,
        doc_id: &str,
        accept_encoding: Option<&str>,
    ) -> Result<EncodedReply> {
        let mut req = self
            .http
            .get(format!("{}/docs/{doc_id}/snapshot", self.base));
        if let Some(enc) = accept_encoding {
            req = req.header("Accept-Encoding", enc);
        }
        let resp = self.checked(req).await?;
        let header = |name: &str| {
            resp.headers()
                .get(name)
                .and_then(|h| h.to_str().ok())
                .map(str::to_string)
        };
        let content_encoding = header("content-encoding");
        let server_ms = header("server-timing")
            .as_deref()
            .and_then(parse_server_timing);
        let bytes = resp.bytes().await?.len();
        Ok(EncodedReply {
            bytes,
            content_encoding,
            server_ms,
        })
    }

    /// `POST /api/v1{path}` with a JSON body and extra headers, without this client's
    /// credentials (logins); the status only, whatever it is.
    pub async fn post_anonymous(
        &self,
        path: &str,
        body: &Value,
        headers: &[(&str, String)],
    ) -> Result<u16> {
        let mut req = self.http.post(format!("{}{path}", self.base)).json(body);
        for (k, v) in headers {
            req = req.header(*k, v);
        }
        Ok(req.send().await?.status().as_u16())
    }

    /// `POST /sync`, answering the status whatever it is (budget refusals are a result).
    pub async fn sync_status(&self, doc_id: &str, body: String) -> Result<u16> {
        let resp = self
            .http
            .post(format!("{}/docs/{doc_id}/sync", self.base))
            .header("Authorization", &*self.auth)
            .header("Content-Type", "application/json")
            .body(body)
            .send()
            .await?;
        let status = resp.status().as_u16();
        let _ = resp.bytes().await?;
        Ok(status)
    }

    pub async fn create_doc(&self, title: &str) -> Result<String> {
        let reply = self
            .send(
                self.http
                    .post(format!("{}/docs", self.base))
                    .json(&json!({ "title": title })),
            )
            .await?;
        let body: Value = serde_json::from_slice(&reply)?;
        body["docId"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| anyhow!("no docId in {body}"))
    }

    /// `POST` a JSON body to `path` (under `/api/v1`); the answer's JSON.
    pub async fn post_json(&self, path: &str, body: &Value) -> Result<Value> {
        let url = format!("{}{path}", self.base);
        let reply = self.send(self.http.post(url).json(body)).await?;
        Ok(serde_json::from_slice(&reply)?)
    }

    /// `PUT` a JSON body to `path` (under `/api/v1`); the answer's JSON.
    pub async fn put_json(&self, path: &str, body: &Value) -> Result<Value> {
        let url = format!("{}{path}", self.base);
        let reply = self.send(self.http.put(url).json(body)).await?;
        Ok(serde_json::from_slice(&reply)?)
    }

    pub async fn sync(&self, doc_id: &str, request: &Value) -> Result<Value> {
        let url = format!("{}/docs/{doc_id}/sync", self.base);
        let reply = self.send(self.http.post(url).json(request)).await?;
        Ok(serde_json::from_slice(&reply)?)
    }

    pub async fn snapshot(&self, doc_id: &str, client_id: Option<&str>) -> Result<SnapshotReply> {
        let mut req = self
            .http
            .get(format!("{}/docs/{doc_id}/snapshot", self.base));
        if let Some(c) = client_id {
            req = req.query(&[("clientId", c)]);
        }
        let resp = self.checked(req).await?;
        let server_ms = resp
            .headers()
            .get("server-timing")
            .and_then(|h| h.to_str().ok())
            .and_then(parse_server_timing);
        let bytes = resp.bytes().await?;
        Ok(SnapshotReply {
            bytes: bytes.len(),
            body: serde_json::from_slice(&bytes)?,
            server_ms,
        })
    }

    /// One long-poll: `(headSeq, leaseSeq)` once the document passes `since` or its
    /// leaseSeq differs from `lease_seq`, at the latest after `wait` seconds.
    pub async fn changes(
        &self,
        doc_id: &str,
        since: i64,
        lease_seq: u64,
        wait: i64,
    ) -> Result<(i64, u64)> {
        let req = self
            .http
            .get(format!("{}/docs/{doc_id}/changes", self.base))
            .query(&[
                ("since", since),
                ("leaseSeq", lease_seq as i64),
                ("wait", wait),
            ])
            .timeout(Duration::from_secs(wait.max(1) as u64) + REQUEST_TIMEOUT);
        let body: Value = serde_json::from_slice(&self.send(req).await?)?;
        let head = body["headSeq"]
            .as_i64()
            .ok_or_else(|| anyhow!("no headSeq in {body}"))?;
        Ok((head, body["leaseSeq"].as_u64().unwrap_or(0)))
    }

    /// `GET /docs/{id}/events`, read up to its `event: ready`.
    pub async fn events(&self, doc_id: &str) -> Result<EventStream> {
        self.events_as(doc_id, None).await
    }

    /// `events` for the tab `client` (a bullet guest's stream carries its view's entries
    /// only when it names its tab).
    pub async fn events_as(&self, doc_id: &str, client: Option<&str>) -> Result<EventStream> {
        let mut req = self
            .http
            .get(format!("{}/docs/{doc_id}/events", self.base))
            .timeout(STREAM_TIMEOUT);
        if let Some(c) = client {
            req = req.query(&[("clientId", c)]);
        }
        let mut events = EventStream {
            resp: self.checked(req).await?,
            buf: String::new(),
        };
        let first = tokio::time::timeout(REQUEST_TIMEOUT, events.next_event())
            .await
            .context("waiting for `event: ready`")??;
        match first {
            Some((name, _)) if name == "ready" => Ok(events),
            other => bail!("expected `event: ready` first, got {other:?}"),
        }
    }

    /// A WebSocket on `/api/v1/ws` that has JOINed `doc:<doc_id>`.
    pub async fn ws_join(&self, doc_id: &str) -> Result<WebSocket> {
        self.ws_join_as(doc_id, None).await
    }

    /// `ws_join` for the tab `client`.
    pub async fn ws_join_as(&self, doc_id: &str, client: Option<&str>) -> Result<WebSocket> {
        let url = format!("{}/ws", self.base.replacen("http://", "ws://", 1));
        let mut req = url.into_client_request()?;
        req.headers_mut()
            .insert("Authorization", self.auth.parse()?);
        let connect = tokio_tungstenite::connect_async_with_config(req, None, true);
        let (mut ws, _) = tokio::time::timeout(REQUEST_TIMEOUT, connect)
            .await
            .context("WebSocket connect")??;
        let room = format!("doc:{doc_id}");
        let join = match client {
            Some(c) => json!({"type": "JOIN", "room": room, "clientId": c}),
            None => json!({"type": "JOIN", "room": room}),
        }
        .to_string();
        ws.send(Message::text(join)).await?;
        loop {
            let msg = tokio::time::timeout(REQUEST_TIMEOUT, ws.next())
                .await
                .context("waiting for JOINED")?
                .ok_or_else(|| anyhow!("WebSocket closed before JOINED"))??;
            let Message::Text(text) = msg else { continue };
            let v: Value = serde_json::from_str(text.as_str())?;
            match v["type"].as_str() {
                Some("JOINED") => return Ok(ws),
                Some("ERROR") => bail!("JOIN {room} refused: {v}"),
                _ => {}
            }
        }
    }

    /// `POST /admin/compact` (admin users only): one compaction pass and its summary.
    pub async fn compact(&self) -> Result<Value> {
        let req = self
            .http
            .post(format!("{}/admin/compact", self.base))
            .timeout(COMPACT_TIMEOUT);
        Ok(serde_json::from_slice(&self.send(req).await?)?)
    }

    /// `GET /docs/{id}/blocks/{blockId}/history?limit=…` (a bullet's history, newest first).
    pub async fn history(&self, doc_id: &str, block_id: &str, limit: usize) -> Result<Value> {
        let url = format!(
            "{}/docs/{doc_id}/blocks/{block_id}/history?limit={limit}",
            self.base
        );
        Ok(serde_json::from_slice(
            &self.send(self.http.get(url)).await?,
        )?)
    }

    /// `GET /feed?since=…&limit=…&wait=…` (the change feed, one page; `wait` 0 answers at once).
    pub async fn feed(&self, since: &str, limit: usize, wait: u64) -> Result<Value> {
        let url = format!("{}/feed?since={since}&limit={limit}&wait={wait}", self.base);
        Ok(serde_json::from_slice(
            &self.send(self.http.get(url)).await?,
        )?)
    }

    /// `POST /docs/{id}/versions {name}`: a named version of the document as it is now.
    pub async fn name_version(&self, doc_id: &str, name: &str) -> Result<Value> {
        let req = self
            .http
            .post(format!("{}/docs/{doc_id}/versions", self.base))
            .json(&json!({ "name": name }));
        Ok(serde_json::from_slice(&self.send(req).await?)?)
    }

    /// `GET /docs/{id}/versions/{vid}/diff?to=…` (`head` or another version).
    pub async fn version_diff(&self, doc_id: &str, version_id: &str, to: &str) -> Result<Value> {
        let url = format!(
            "{}/docs/{doc_id}/versions/{version_id}/diff?to={to}",
            self.base
        );
        Ok(serde_json::from_slice(
            &self.send(self.http.get(url)).await?,
        )?)
    }

    /// `POST /docs/{id}/versions/{vid}/restore`.
    pub async fn restore_version(
        &self,
        doc_id: &str,
        version_id: &str,
        body: &Value,
    ) -> Result<Value> {
        let req = self
            .http
            .post(format!(
                "{}/docs/{doc_id}/versions/{version_id}/restore",
                self.base
            ))
            .json(body);
        Ok(serde_json::from_slice(&self.send(req).await?)?)
    }

    /// `GET /metrics` (Prometheus text).
    pub async fn metrics(&self) -> Result<String> {
        let req = self.http.get(format!("{}/metrics", self.root));
        Ok(String::from_utf8(self.send(req).await?)?)
    }

    async fn send(&self, req: reqwest::RequestBuilder) -> Result<Vec<u8>> {
        Ok(self.checked(req).await?.bytes().await?.to_vec())
    }

    /// Sends with auth; a non-2xx status becomes an error naming status and body.
    async fn checked(&self, req: reqwest::RequestBuilder) -> Result<reqwest::Response> {
        let resp = req.header("Authorization", &*self.auth).send().await?;
        let status = resp.status();
        if status.is_success() {
            return Ok(resp);
        }
        let body = resp.text().await.unwrap_or_default();
        let body: String = body.chars().take(300).collect();
        bail!("HTTP {status}: {body}")
    }
}

/// A Server-Sent Events response being read frame by frame.
pub struct EventStream {
    resp: reqwest::Response,
    buf: String,
}

impl EventStream {
    /// The next event's name and JSON data (comments skipped); `None` when the stream ends.
    pub async fn next_event(&mut self) -> Result<Option<(String, Value)>> {
        match self.next_raw().await? {
            Some((name, data)) if data.is_empty() => Ok(Some((name, Value::Null))),
            Some((name, data)) => Ok(Some((name, serde_json::from_str(&data)?))),
            None => Ok(None),
        }
    }

    /// The next event's name and its `data:` text as sent (comments skipped); `None` when
    /// the stream ends.
    pub async fn next_raw(&mut self) -> Result<Option<(String, String)>> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let frame: String = self.buf.drain(..end + 2).collect();
                if let Some(event) = parse_sse_frame(&frame) {
                    return Ok(Some(event));
                }
                continue;
            }
            match self.resp.chunk().await? {
                Some(bytes) => self.buf.push_str(&String::from_utf8_lossy(&bytes)),
                None => return Ok(None),
            }
        }
    }
}

/// `event:` and `data:` of one SSE frame; `None` for a comment-only frame.
fn parse_sse_frame(frame: &str) -> Option<(String, String)> {
    let mut event = None;
    let mut data = String::new();
    for line in frame.lines() {
        if let Some(name) = line.strip_prefix("event:") {
            event = Some(name.trim().to_string());
        } else if let Some(d) = line.strip_prefix("data:") {
            data = d.trim().to_string();
        }
    }
    event.map(|e| (e, data))
}

/// The first `dur=` value of a `Server-Timing` header, in milliseconds.
fn parse_server_timing(header: &str) -> Option<f64> {
    header
        .split([',', ';'])
        .find_map(|part| part.trim().strip_prefix("dur="))
        .and_then(|v| v.trim().parse().ok())
}

/// The value of the sample `name` (labels included, e.g. `x{le="0.05"}`) in Prometheus text.
pub fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

/// How many subscribers of `channel` the server counts (all documents).
pub async fn subscriber_count(api: &Api, channel: Channel) -> Result<u64> {
    let name = format!(
        "docsync_subscribers{{channel=\"{}\"}}",
        channel.metric_label()
    );
    Ok(metric(&api.metrics().await?, &name).unwrap_or(0.0) as u64)
}

/// Waits until the server counts at least `n` subscribers of `channel`.
pub async fn wait_for_subscribers(api: &Api, channel: Channel, n: u64) -> Result<u64> {
    let started = Instant::now();
    loop {
        let count = subscriber_count(api, channel).await?;
        if count >= n {
            return Ok(count);
        }
        if started.elapsed() > SUBSCRIBE_TIMEOUT {
            bail!(
                "the server counts {count} {} subscribers after {SUBSCRIBE_TIMEOUT:?}, expected {n}",
                channel.name()
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
