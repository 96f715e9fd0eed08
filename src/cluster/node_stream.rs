//! `GET /cluster/v1/docs/{id}/stream` — another node's one stream of a document this node
//! owns, which that node fans out to its own channels (`listen.rs` there): a hundred sockets
//! on a node cost the owner one subscriber, one encoding and one write per change.
//!
//! Only a node opens it: the request must carry the cluster secret (checked as for a
//! forwarded request), and it is outside `/api/v1/docs/`, so it is served where it arrives,
//! never forwarded. It is authorised as the node, not as a person (`NodeGrant`): the
//! receiving node decides, for each of its sockets, through the one role function, and
//! re-checks them whenever the access epoch moves. So that it never passes on a change a
//! revocation made anywhere should have stopped, every line carries this node's access
//! epoch as of sending it; the receiving node takes that epoch before fanning out.
//!
//! The body is one JSON line per change (`RelayLine`: the epoch and the wake-up as SSE and
//! WebSocket carry it, entries included), the first at once with the current head, and an
//! empty line as keep-alive every `server.sse_keepalive_secs`. It ends when the document's
//! actor goes away (the receiving node asks where the document is now), or on shutdown.

use std::sync::Arc;
use std::time::Duration;

use actix_web::web::Bytes;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};

use docsync_actors::ask::ask;
use docsync_actors::collab::validate::DocId;
use docsync_actors::document::{
    event_channel, Channel, Confirmed, Standing, StreamGrant, Subscribe, Wake,
};
use docsync_actors::storage::roles::Reach;
use docsync_actors::storage::{Db, StorageError};

use super::hop::{self, Arrival};
use crate::http::channels::body;
use crate::http::channels::wire::DocSeq;
use crate::http::error::ApiError;
use crate::http::state::AppState;

/// The path a node asks another for a document's stream.
pub fn path(doc: &str) -> String {
    format!("/cluster/v1/docs/{doc}/stream")
}

/// One line of the stream.
#[derive(Serialize, Deserialize)]
pub struct RelayLine<'a> {
    /// The owner's access epoch when it sent the line.
    pub epoch: u64,
    #[serde(borrow)]
    pub wake: DocSeq<'a>,
}

/// A node's stream: it stands while the node does (the cluster secret got it in). Which
/// person hears what is the receiving node's decision, per socket.
struct NodeGrant;

impl StreamGrant for NodeGrant {
    fn key(&self) -> &str {
        "node"
    }

    fn recheck(&self, _db: &mut Db, _doc: &str, _now: i64) -> Result<Standing, StorageError> {
        Ok(Standing::Reads {
            until: None,
            reach: Reach::Document,
        })
    }
}

fn line(state: &AppState, seq: DocSeq) -> Bytes {
    let epoch = state.storage.access_epoch().current();
    let mut text =
        serde_json::to_string(&RelayLine { epoch, wake: seq }).expect("a line always encodes");
    text.push('\n');
    Bytes::from(text)
}

pub async fn stream(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let Some(cluster) = state.cluster.clone() else {
        return Err(ApiError::NotFound);
    };
    let from = match hop::arrival(&req, cluster.hop().secret)? {
        Arrival::Forwarded { from } => from,
        Arrival::Direct => {
            return Err(ApiError::Forbidden(
                "only a node of the cluster opens a document's relay stream".into(),
            ))
        }
    };
    let doc = DocId::parse(&path.into_inner()).map_err(|_| ApiError::NotFound)?;
    let (tx, rx) = event_channel();
    let subscribed = ask(
        &state.registry,
        &doc,
        Subscribe {
            channel: Channel::Relay,
            client: None,
            user_id: format!("node:{from}"),
            sink: tx,
            grant: Arc::new(NodeGrant),
            confirmed: Confirmed {
                epoch: state.storage.access_epoch().current(),
                until: None,
            },
            reach: Reach::Document,
        },
    )
    .await?;
    let first = line(
        &state,
        DocSeq::new(doc.as_str(), subscribed.head_seq, subscribed.lease_seq),
    );
    let epochs = state.clone();
    let framing = body::Framing {
        first,
        frame: move |wake: &Wake| {
            let seq = DocSeq::new(wake.doc_id.as_str(), wake.head_seq, wake.lease_seq)
                .with_entries(wake.entries.as_deref());
            line(&epochs, seq)
        },
        keepalive: b"\n",
        every: Duration::from_secs(state.settings.server.sse_keepalive_secs),
    };
    let body = body::events(rx, framing, state.shutdown.clone(), subscribed.subscription);
    // Never compressed or buffered on the way: a line held back is a change late everywhere.
    Ok(HttpResponse::Ok()
        .content_type("application/x-ndjson")
        .insert_header(("Cache-Control", "no-cache"))
        .insert_header(("X-Accel-Buffering", "no"))
        .insert_header(("Content-Encoding", "identity"))
        .streaming(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_carries_the_epoch_and_the_wake_up_with_its_entries() {
        let entries =
            serde_json::value::RawValue::from_string(r#"[{"seq":5}]"#.to_string()).unwrap();
        let text = serde_json::to_string(&RelayLine {
            epoch: 9,
            wake: DocSeq::new("doc_1", 5, 2).with_entries(Some(&entries)),
        })
        .unwrap();
        assert_eq!(
            text,
            r#"{"epoch":9,"wake":{"docId":"doc_1","headSeq":5,"leaseSeq":2,"entries":[{"seq":5}]}}"#
        );
        let back: RelayLine = serde_json::from_str(&text).unwrap();
        assert_eq!((back.epoch, back.wake.head_seq), (9, 5));
        assert_eq!(back.wake.entries.unwrap().get(), r#"[{"seq":5}]"#);
    }
}
