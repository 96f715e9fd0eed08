//! Cluster mode's one hop: a node that is not a document's owner forwards the request to the
//! owner's internal address — same method, path, query, body and credentials — marked with
//! the sending node and the cluster secret. The owner serves it as if it came directly; a
//! request that arrived forwarded is never forwarded again (two nodes that disagree on the
//! owner answer 503 instead of bouncing a request between them). No redirect ever reaches the
//! browser: one origin, so cookies and the CSP stay simple.
//!
//! The secret is checked in constant time; a request that claims to be forwarded without it
//! is refused (403) — a client cannot pretend to be a node. Every hop carries the client's
//! address as the forwarding node saw it (`X-Forwarded-For`), believed by the owner only on
//! a request with the secret: per-address limits count the client, not the node.

use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::{HttpRequest, HttpResponse};
use sha2::{Digest, Sha256};

use crate::http::error::ApiError;

/// Names the node that forwarded the request.
pub const HOP_HEADER: &str = "x-docsync-forwarded-by";
/// Carries the cluster secret on forwarded requests.
pub const SECRET_HEADER: &str = "x-docsync-cluster-secret";

/// Request headers that travel with a forwarded request (credentials, body, negotiation).
const PASSED: [&str; 7] = [
    "authorization",
    "cookie",
    "content-type",
    "accept",
    "accept-encoding",
    "origin",
    "user-agent",
];

/// Answer headers that travel back (hop-by-hop ones and the length are the server's own).
const RETURNED: [&str; 7] = [
    "content-type",
    "content-encoding",
    "retry-after",
    "set-cookie",
    "vary",
    "server-timing",
    "etag",
];

/// How a request reached this node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arrival {
    /// From a client (or the proxy): may be forwarded once.
    Direct,
    /// From another node of the cluster (named): served here, never forwarded again.
    Forwarded { from: String },
}

fn same_secret(given: &str, secret: &str) -> bool {
    // Equal-length digests compared without an early exit: the time says nothing of the secret.
    let (a, b) = (
        Sha256::digest(given.as_bytes()),
        Sha256::digest(secret.as_bytes()),
    );
    a.iter()
        .zip(b.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y))
        == 0
}

/// How `req` arrived; a claim of being forwarded without the cluster secret is refused.
pub fn arrival(req: &HttpRequest, secret: &str) -> Result<Arrival, ApiError> {
    let Some(from) = req.headers().get(HOP_HEADER) else {
        return Ok(Arrival::Direct);
    };
    let given = req
        .headers()
        .get(SECRET_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if secret.is_empty() || !same_secret(given, secret) {
        return Err(ApiError::Forbidden(
            "a forwarded request without the cluster's secret".into(),
        ));
    }
    Ok(Arrival::Forwarded {
        from: from.to_str().unwrap_or("").to_string(),
    })
}

/// This node, speaking to another: every request one node sends another is built here.
#[derive(Clone, Copy)]
pub struct Hop<'a> {
    pub me: &'a str,
    pub secret: &'a str,
    pub http: &'a reqwest::Client,
}

impl Hop<'_> {
    /// `method path` at the node `addr` (`host:port`), marked as forwarded by this node with
    /// the cluster secret, for the client at `client_addr`.
    pub fn request(
        &self,
        method: reqwest::Method,
        addr: &str,
        path: &str,
        client_addr: &str,
    ) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("http://{addr}{path}"))
            .header(HOP_HEADER, self.me)
            .header(SECRET_HEADER, self.secret)
            .header("x-forwarded-for", client_addr)
    }
}

/// Where a node asks another which incarnation it is (`member.rs`).
pub const MEMBER_PATH: &str = "/cluster/v1/member";

/// A node's answer there while it is in the cluster.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct AsMember {
    pub inc: String,
}

/// What a node said when asked which incarnation it is (`Hop::ask_member`).
#[derive(Debug, PartialEq, Eq)]
pub enum Heard {
    /// It answered as this incarnation.
    As(String),
    /// It answered, but has no such answer (a node of an earlier release: 404).
    Older,
    /// It answered as no incarnation (fenced, or not joined yet: 503).
    NoMember,
    /// No answer within the patience: paused, or cut off by the network.
    Silent,
    /// The connection was refused or closed: nobody listens there (the process is gone —
    /// its presence in the database ends with it — or it is stopping and leaves in a moment).
    Closed,
}

impl Heard {
    /// Whether this answer says the node serves `inc`'s documents.
    pub fn is(&self, inc: &str) -> bool {
        match self {
            Heard::As(i) => i == inc,
            Heard::Older => true,
            _ => false,
        }
    }
}

impl Hop<'_> {
    /// Asks the node at `addr`, within `patience`, which incarnation it is.
    pub async fn ask_member(&self, addr: &str, patience: std::time::Duration) -> Heard {
        let asked = self
            .request(reqwest::Method::GET, addr, MEMBER_PATH, self.me)
            .timeout(patience)
            .send()
            .await;
        let answer = match asked {
            Ok(a) => a,
            Err(e) if e.is_timeout() => return Heard::Silent,
            Err(_) => return Heard::Closed,
        };
        match answer.status().as_u16() {
            200 => match answer.json::<AsMember>().await {
                Ok(m) => Heard::As(m.inc),
                Err(e) if e.is_timeout() => Heard::Silent,
                Err(_) => Heard::Closed,
            },
            404 => Heard::Older,
            _ => Heard::NoMember,
        }
    }

    /// Whether the node at `addr` answers within `patience` as the incarnation `inc`: a node
    /// that answers as none (fenced) or as another (restarted) does not serve `inc`'s
    /// documents. A node of an earlier release, which has no such answer (404), counts as
    /// `inc` when it answers at all.
    pub async fn answers_as(&self, addr: &str, inc: &str, patience: std::time::Duration) -> bool {
        self.ask_member(addr, patience).await.is(inc)
    }
}

/// Whether `req` came from another node of the cluster with the secret (so the client
/// address it carries may be believed).
pub fn from_a_node(req: &HttpRequest, secret: &str) -> bool {
    matches!(arrival(req, secret), Ok(Arrival::Forwarded { .. }))
}

/// A client's request on its way to the document's owner.
pub struct Forward<'a> {
    pub req: &'a HttpRequest,
    pub arrived: &'a Arrival,
    pub body: actix_web::web::Bytes,
    /// The client's address as this node sees it.
    pub client_addr: &'a str,
}

/// Forwards the request to the owner at `owner_addr` (`host:port`), waiting at most
/// `head_within` for its answer to begin, and answers with the owner's answer. A request
/// that arrived forwarded is not forwarded again.
pub async fn forward(
    hop: Hop<'_>,
    f: Forward<'_>,
    owner_addr: &str,
    head_within: std::time::Duration,
) -> Result<HttpResponse, ApiError> {
    let Forward {
        req,
        arrived,
        body,
        client_addr,
    } = f;
    if let Arrival::Forwarded { from } = arrived {
        return Err(ApiError::Unavailable(format!(
            "this node does not own the document and the request was already forwarded by {from}; retry"
        )));
    }
    let path = req
        .uri()
        .path_and_query()
        .map_or(req.uri().path(), |p| p.as_str());
    let method = reqwest::Method::from_bytes(req.method().as_str().as_bytes())
        .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let mut out = hop
        .request(method, owner_addr, path, client_addr)
        .body(body.to_vec());
    for name in PASSED {
        for v in req.headers().get_all(name) {
            out = out.header(name, v.as_bytes());
        }
    }
    // Bounded until the answer's head arrives: a paused or cut-off owner must not hold the
    // request (and the client) forever. Streams answer their head at once; a long-poll
    // answers when it has news or its wait ends.
    let answer = tokio::time::timeout(head_within, out.send())
        .await
        .map_err(|_| {
            ApiError::Unavailable(format!(
                "the document's node did not answer within {} ms",
                head_within.as_millis()
            ))
        })?
        .map_err(|e| ApiError::Unavailable(format!("the document's node did not answer: {e}")))?;
    let mut res = HttpResponse::build(
        actix_web::http::StatusCode::from_u16(answer.status().as_u16())
            .unwrap_or(actix_web::http::StatusCode::BAD_GATEWAY),
    );
    for name in RETURNED {
        for v in answer.headers().get_all(name) {
            if let (Ok(n), Ok(v)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_bytes(v.as_bytes()),
            ) {
                res.append_header((n, v));
            }
        }
    }
    // Streamed as it arrives: an SSE stream or a long-poll passes through unbuffered.
    let body = futures::stream::unfold(answer, |mut a| async move {
        match a.chunk().await {
            Ok(Some(b)) => Some((Ok::<_, actix_web::Error>(b), a)),
            Ok(None) => None,
            Err(e) => {
                tracing::debug!(error = %e, "the document's node broke off a forwarded answer");
                None
            }
        }
    });
    Ok(res.streaming(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    const WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

    fn forwarded<'a>(req: &'a HttpRequest, arrived: &'a Arrival, body: web::Bytes) -> Forward<'a> {
        Forward {
            req,
            arrived,
            body,
            client_addr: "198.51.100.7",
        }
    }
    use actix_web::{web, App, HttpServer};

    /// The "owner": echoes what it received and how it arrived.
    async fn owner(req: HttpRequest, body: web::Bytes) -> Result<HttpResponse, ApiError> {
        let arrived = arrival(&req, "s3cret")?;
        Ok(HttpResponse::Created()
            .insert_header(("set-cookie", "k=v"))
            .insert_header(("x-internal", "not for clients"))
            .json(serde_json::json!({
                "method": req.method().as_str(),
                "path": req.uri().to_string(),
                "auth": req.headers().get("authorization").and_then(|v| v.to_str().ok()),
                "client": req.headers().get("x-forwarded-for").and_then(|v| v.to_str().ok()),
                "body": String::from_utf8_lossy(&body),
                "arrived": format!("{arrived:?}"),
            })))
    }

    #[actix_web::test]
    async fn one_hop_with_everything_and_never_two() {
        let server = HttpServer::new(|| App::new().default_service(web::to(owner)))
            .bind("127.0.0.1:0")
            .unwrap();
        let addr = server.addrs()[0].to_string();
        let running = server.run();
        let handle = running.handle();
        actix_web::rt::spawn(running);
        let http = reqwest::Client::new();
        let hop = Hop {
            me: "node-b",
            secret: "s3cret",
            http: &http,
        };

        // A client's request on a node that is not the owner: forwarded once, whole.
        let req = actix_web::test::TestRequest::post()
            .uri("/api/v1/docs/doc_1/sync?x=1")
            .insert_header(("authorization", "Bearer dst_abc"))
            .insert_header(("content-type", "application/json"))
            .to_http_request();
        let arrived = arrival(&req, "s3cret").unwrap();
        assert_eq!(arrived, Arrival::Direct);
        let body = web::Bytes::from_static(b"{\"ops\":[]}");
        let res = forward(hop, forwarded(&req, &arrived, body), &addr, WITHIN)
            .await
            .unwrap();
        assert_eq!(res.status(), 201);
        assert_eq!(res.headers().get("set-cookie").unwrap(), "k=v");
        assert!(
            res.headers().get("x-internal").is_none(),
            "only the listed headers come back"
        );
        let echoed: serde_json::Value =
            serde_json::from_slice(&actix_web::body::to_bytes(res.into_body()).await.unwrap())
                .unwrap();
        assert_eq!(echoed["method"], "POST");
        assert_eq!(echoed["path"], "/api/v1/docs/doc_1/sync?x=1");
        assert_eq!(echoed["auth"], "Bearer dst_abc");
        assert_eq!(
            echoed["client"], "198.51.100.7",
            "the client's address travels"
        );
        assert_eq!(echoed["body"], "{\"ops\":[]}");
        assert_eq!(echoed["arrived"], "Forwarded { from: \"node-b\" }");

        // Arrived forwarded: never forwarded again.
        let again = actix_web::test::TestRequest::get()
            .uri("/api/v1/docs/doc_1/snapshot")
            .insert_header((HOP_HEADER, "node-a"))
            .insert_header((SECRET_HEADER, "s3cret"))
            .to_http_request();
        let arrived = arrival(&again, "s3cret").unwrap();
        let err = forward(
            hop,
            forwarded(&again, &arrived, web::Bytes::new()),
            &addr,
            WITHIN,
        )
        .await
        .unwrap_err();
        assert!(matches!(err, ApiError::Unavailable(_)), "{err}");

        // Pretending to be a node without the secret (or with a wrong one) is refused.
        for secret in [None, Some("guess")] {
            let mut fake =
                actix_web::test::TestRequest::get().insert_header((HOP_HEADER, "node-x"));
            if let Some(s) = secret {
                fake = fake.insert_header((SECRET_HEADER, s));
            }
            assert!(matches!(
                arrival(&fake.to_http_request(), "s3cret"),
                Err(ApiError::Forbidden(_))
            ));
        }
        // A node without a configured secret accepts no forwarded request at all.
        let forwarded = actix_web::test::TestRequest::get()
            .insert_header((HOP_HEADER, "node-a"))
            .insert_header((SECRET_HEADER, ""))
            .to_http_request();
        assert!(matches!(
            arrival(&forwarded, ""),
            Err(ApiError::Forbidden(_))
        ));
        handle.stop(true).await;
    }

    /// A node that answers `status` with `body` to every request.
    fn answering(status: u16, body: &'static str) -> String {
        let status = actix_web::http::StatusCode::from_u16(status).unwrap();
        let server = HttpServer::new(move || {
            App::new().default_service(web::to(move || async move {
                HttpResponse::build(status)
                    .content_type("application/json")
                    .body(body)
            }))
        })
        .workers(1)
        .bind("127.0.0.1:0")
        .unwrap();
        let addr = server.addrs()[0].to_string();
        actix_web::rt::spawn(server.run());
        addr
    }

    #[actix_web::test]
    async fn a_probe_tells_an_answer_from_silence_and_from_nobody_listening() {
        let http = reqwest::Client::new();
        let hop = Hop {
            me: "node-b",
            secret: "s3cret",
            http: &http,
        };
        let patience = std::time::Duration::from_millis(300);
        let ask = |addr: String| async move { hop.ask_member(&addr, patience).await };

        let live = answering(200, r#"{"inc":"inc_1"}"#);
        assert_eq!(ask(live.clone()).await, Heard::As("inc_1".into()));
        assert!(hop.answers_as(&live, "inc_1", patience).await);
        assert!(
            !hop.answers_as(&live, "inc_0", patience).await,
            "restarted as another"
        );
        let fenced = answering(503, r#"{"error":"not_owner"}"#);
        assert_eq!(ask(fenced).await, Heard::NoMember);
        let older = answering(404, r#"{"error":"not_found"}"#);
        assert_eq!(ask(older.clone()).await, Heard::Older);
        assert!(hop.answers_as(&older, "inc_1", patience).await);

        // Paused: the kernel takes the connection, nobody answers.
        let paused = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let paused_addr = paused.local_addr().unwrap().to_string();
        assert_eq!(ask(paused_addr).await, Heard::Silent);
        // Nobody listens there (the port was free again): refused.
        let gone = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let gone_addr = gone.local_addr().unwrap().to_string();
        drop(gone);
        assert_eq!(ask(gone_addr).await, Heard::Closed);
        drop(paused);
    }
}
