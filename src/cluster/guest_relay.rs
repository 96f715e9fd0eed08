//! Cluster mode: a bullet guest's WebSocket room whose document another node owns. A guest
//! hears only what touches their shared bullets, which only the owner can tell (it holds
//! the document), so their room is not fanned out from the node's one stream of the
//! document (`listen.rs`): the session's node opens the owner's SSE stream for this room
//! alone (one hop, with the socket's own credentials and the cluster secret) and turns each
//! event into the `DOC_SEQ` the socket would have heard from a local document. The owner
//! authorises that stream like any other (its document re-checks it whenever rights may
//! have changed and ends it when they are gone).
//!
//! When the stream ends: if the credentials no longer reach the document, the room is gone
//! (`Gone`); if the document is now served here, the session joins it locally (`Home`);
//! otherwise the relay follows the document to its owner. Wake-ups stay hints: the client
//! pulls `/sync` from its `lastSeq` whatever it missed in between.

use docsync_actors::collab::validate::{ClientId, DocId};
use futures::channel::mpsc::UnboundedSender;

use super::Route;
use crate::http::auth::{Credentials, Secret, SESSION_COOKIE};
use crate::http::channels::wire::DocSeq;
use crate::http::channels::ws_protocol::{ErrorCode, ServerMessage};
use crate::http::state::AppState;

/// What a relay tells its session.
pub enum Relayed {
    /// A `DOC_SEQ` text, ready to send.
    Seq(String),
    /// The room is over for these credentials.
    Gone(ErrorCode),
    /// The document is served here now: join it locally.
    Home,
}

/// A WebSocket room to relay: whose socket, which document, from which node.
pub struct RelayedRoom {
    /// What opened the socket: the owner authorises the relayed stream with it.
    pub creds: Credentials,
    /// The socket's client address (the owner counts the stream against it).
    pub client_addr: String,
    pub doc: DocId,
    pub client_id: Option<ClientId>,
    /// The owner's internal address.
    pub addr: String,
}

/// Relays the room's events from the owner to `out` until the room ends or the document
/// comes here; cancelled by dropping (the session left the room or closed).
pub async fn run(
    state: actix_web::web::Data<AppState>,
    room: RelayedRoom,
    out: UnboundedSender<(DocId, Relayed)>,
) {
    let Some(cluster) = state.cluster.clone() else {
        return;
    };
    let RelayedRoom {
        creds,
        client_addr,
        doc,
        client_id,
        mut addr,
    } = room;
    loop {
        let mut path = format!("/api/v1/docs/{doc}/events");
        if let Some(c) = &client_id {
            path.push_str(&format!("?clientId={}", c.as_str()));
        }
        let mut req = cluster
            .hop()
            .request(reqwest::Method::GET, &addr, &path, &client_addr);
        req = match &creds.secret {
            Secret::Bearer(t) => req.bearer_auth(t),
            Secret::Session(s) => req.header("cookie", format!("{SESSION_COOKIE}={s}")),
            Secret::Anonymous => req,
        };
        match req.send().await {
            Ok(resp) if resp.status().is_success() => {
                if !pump(resp, &doc, &out).await {
                    return;
                }
            }
            Ok(resp) => {
                let code = match resp.status().as_u16() {
                    401 => Some(ErrorCode::Unauthorized),
                    403 => Some(ErrorCode::Forbidden),
                    404 => Some(ErrorCode::NotFound),
                    // Not the owner any more (503), or busy: follow the document below.
                    _ => None,
                };
                if let Some(code) = code {
                    let _ = out.unbounded_send((doc, Relayed::Gone(code)));
                    return;
                }
            }
            Err(e) => tracing::debug!(error = %e, "relay: the document's node did not answer"),
        }
        match cluster.ask_again(doc.as_str()).await {
            Route::Here => {
                let _ = out.unbounded_send((doc, Relayed::Home));
                return;
            }
            Route::Owner { addr: a, .. } => addr = a,
        }
    }
}

/// Passes the stream's events on until it ends; false when the session is gone.
async fn pump(
    mut resp: reqwest::Response,
    doc: &DocId,
    out: &UnboundedSender<(DocId, Relayed)>,
) -> bool {
    let mut buf: Vec<u8> = Vec::new();
    while let Ok(Some(chunk)) = resp.chunk().await {
        buf.extend_from_slice(&chunk);
        while let Some(end) = buf.windows(2).position(|w| w == b"\n\n") {
            let frame: Vec<u8> = buf.drain(..end + 2).collect();
            if let Some(text) = doc_seq(&String::from_utf8_lossy(&frame)) {
                if out
                    .unbounded_send((doc.clone(), Relayed::Seq(text)))
                    .is_err()
                {
                    return false;
                }
            }
        }
    }
    true
}

/// The `DOC_SEQ` for one SSE frame (`ready` or `doc_seq`), None for comments.
fn doc_seq(frame: &str) -> Option<String> {
    let data = frame.lines().find_map(|l| l.strip_prefix("data: "))?;
    Some(ServerMessage::DocSeq(DocSeq::parse(data)?).to_json())
}

#[cfg(test)]
mod tests {
    use super::doc_seq;

    #[test]
    fn sse_frames_become_doc_seq_messages() {
        let ready = "event: ready\ndata: {\"docId\":\"d\",\"headSeq\":4,\"leaseSeq\":2}\n\n";
        let v: serde_json::Value = serde_json::from_str(&doc_seq(ready).unwrap()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"type": "DOC_SEQ", "docId": "d", "headSeq": 4, "leaseSeq": 2})
        );
        let with = "event: doc_seq\ndata: {\"docId\":\"d\",\"headSeq\":5,\"leaseSeq\":2,\"entries\":[{\"seq\":5}]}\n\n";
        let v: serde_json::Value = serde_json::from_str(&doc_seq(with).unwrap()).unwrap();
        assert_eq!(v["entries"][0]["seq"], 5);
        assert_eq!(v["headSeq"], 5);
        assert!(doc_seq(": keep-alive\n\n").is_none());
    }
}
