//! Cluster mode: where a wake-up channel (a WebSocket room, an SSE stream, a long-poll) of
//! a document listens, and the relay of a document another node owns. The channels of one
//! node share one stream per document from its owner (`node_stream.rs` there), fanned out
//! here by a `RelayedDocument` (actors crate) that keeps each stream's rights itself (a
//! long-poll's handler checks its own); `ask` finds or starts it (`relays.rs`), its upstream
//! reads the owner's stream into it and follows the document: when the stream ends or goes
//! silent, it asks where the document is served now and reconnects there — or, when the
//! document is to be served on this node or is gone, ends, and every stream subscribes
//! again (the role function decides anew; this node's document actor takes the document).
//! A change missed while reconnecting is pulled by the client from its `lastSeq`: wake-ups
//! are hints.
//!
//! A bullet guest's channel is not relayed here (`listen_where` says `OnOwner`): the owner
//! cuts their view — their WebSocket room has a relay of its own (`guest_relay.rs`), their
//! SSE stream and long-poll are forwarded.

use std::sync::{Arc, Weak};
use std::time::Duration;

use actix::prelude::*;
use actix::WeakAddr;
use serde_json::value::RawValue;

use docsync_actors::collab::validate::{ClientId, DocId};
use docsync_actors::document::{
    Channel, DocError, EventSink, Heard, RelayedDocument, Subscribe, Subscribed, Upstream, Wake,
};
use docsync_actors::storage::roles::Reach;

use actix_web::{HttpRequest, HttpResponse};

use super::hop::{self, Arrival};
use super::node_stream::{self, RelayLine};
use super::{Cluster, Route};
use crate::http::access::StreamAccess;
use crate::http::error::ApiError;
use crate::http::state::AppState;

/// The first pause before asking the owner again after its stream failed; doubled up to
/// `RETRY_MAX` while it keeps failing.
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(2);

/// Where a stream listens to a document.
pub enum Listen {
    /// To the document's actor on this node (it holds the document, or nobody live does and
    /// it will claim it; or not cluster mode).
    Here,
    /// To this node's relay of the document, which the node at `owner` holds.
    Relay { owner: String },
    /// Only on the owner at `owner`: a bullet guest's view is cut there.
    OnOwner { owner: String },
}

/// Where a wake-up channel of `doc` listens, for a reader who sees `reach` of it (as the
/// role function said just now).
pub async fn listen_where(state: &AppState, doc: &DocId, reach: &Reach) -> Listen {
    let Some(cluster) = &state.cluster else {
        return Listen::Here;
    };
    match cluster.route(doc.as_str()).await {
        Route::Here => Listen::Here,
        Route::Owner { addr, .. } if matches!(reach, Reach::Document) => {
            Listen::Relay { owner: addr }
        }
        Route::Owner { addr, .. } => Listen::OnOwner { owner: addr },
    }
}

/// Where a wake-up channel's request that reached this node listens: one that arrived from
/// another node is served here, whatever this node believes (it is never sent on); one from
/// a client where `listen_where` says.
pub async fn listen_for(
    state: &AppState,
    req: &HttpRequest,
    doc: &DocId,
    reach: &Reach,
) -> Result<Listen, ApiError> {
    let Some(cluster) = &state.cluster else {
        return Ok(Listen::Here);
    };
    Ok(match hop::arrival(req, cluster.hop().secret)? {
        Arrival::Direct => listen_where(state, doc, reach).await,
        Arrival::Forwarded { .. } => Listen::Here,
    })
}

/// A bullet guest's channel request, sent on to the owner at `owner` (one hop, waiting at
/// most `head_within` for its answer to begin): the owner's answer.
pub async fn on_owner(
    state: &AppState,
    req: &HttpRequest,
    owner: &str,
    head_within: Duration,
) -> Result<HttpResponse, ApiError> {
    let Some(cluster) = &state.cluster else {
        return Err(ApiError::Internal("no owner without cluster mode".into()));
    };
    let forward = hop::Forward {
        req,
        arrived: &Arrival::Direct,
        body: actix_web::web::Bytes::new(),
        client_addr: &state.client_address(req),
    };
    hop::forward(cluster.hop(), forward, owner, head_within).await
}

/// Subscribes a stream of `access` (a reader of the whole document, authorised by the role
/// function just now) to this node's relay of its document, starting the relay — reading
/// the owner at `owner` — if none runs.
pub async fn subscribe(
    state: &actix_web::web::Data<AppState>,
    access: &StreamAccess,
    channel: Channel,
    client: Option<ClientId>,
    sink: EventSink,
    owner: String,
) -> Result<Subscribed, DocError> {
    let msg = Subscribe {
        channel,
        client,
        user_id: access.user.id.clone(),
        sink,
        grant: access.grant.clone(),
        confirmed: access.confirmed,
        reach: access.reach.clone(),
    };
    ask(state, &access.doc, owner, msg).await
}

/// Asks this node's relay of `doc` (a long-poll's `WaitChanges`, a stream's `Subscribe`),
/// starting the relay — reading the owner at `owner` — if none runs.
pub async fn ask<M, T>(
    state: &actix_web::web::Data<AppState>,
    doc: &DocId,
    owner: String,
    msg: M,
) -> Result<T, DocError>
where
    M: Message<Result = Result<T, DocError>> + Clone + Send + 'static,
    T: Send + 'static,
    RelayedDocument: Handler<M>,
{
    let Some(cluster) = &state.cluster else {
        return Err(DocError::Internal("a relay without cluster mode".into()));
    };
    // A relay that is over (its document came here) refuses; a fresh one is started.
    for _ in 0..3 {
        let addr = match cluster.relays.running(doc) {
            Some(a) => a,
            None => {
                let upstream = reader(Arc::downgrade(cluster), doc.clone(), owner.clone(), state);
                let relay = RelayedDocument::new(
                    doc.clone(),
                    state.storage.clone(),
                    state.clock.clone(),
                    state.metrics.clone(),
                    upstream,
                )
                .start();
                cluster.relays.started(doc, relay)
            }
        };
        match addr.send(msg.clone()).await {
            Ok(Ok(s)) => return Ok(s),
            Ok(Err(DocError::Restarting)) | Err(_) => cluster.relays.forget(doc, &addr),
            Ok(Err(e)) => return Err(e),
        }
    }
    Err(DocError::Restarting)
}

/// What reads the owner's stream of `doc` into a relay, given the relay's address.
fn reader(
    cluster: Weak<Cluster>,
    doc: DocId,
    owner: String,
    state: &AppState,
) -> impl FnOnce(WeakAddr<RelayedDocument>) -> Upstream + 'static {
    // The owner writes at least a keep-alive line this often; twice that without one and
    // it is taken for stuck (paused, cut off): asked again where the document is.
    let silence = Duration::from_secs(state.settings.server.sse_keepalive_secs * 2 + 1);
    move |relay| Box::pin(read_upstream(cluster, doc, owner, relay, silence))
}

async fn read_upstream(
    cluster: Weak<Cluster>,
    doc: DocId,
    mut owner: String,
    relay: WeakAddr<RelayedDocument>,
    silence: Duration,
) {
    let mut pause = RETRY_FIRST;
    loop {
        let Some(c) = cluster.upgrade() else {
            return;
        };
        let request = c.hop().request(
            reqwest::Method::GET,
            &owner,
            &node_stream::path(doc.as_str()),
            &c.node_id,
        );
        // The owner answers at once; a paused or cut-off one within the TTL, or not at all.
        let sent = match tokio::time::timeout(c.ttl, request.send()).await {
            Ok(sent) => sent.map_err(|e| e.to_string()),
            Err(_) => Err(format!("no answer within {:?}", c.ttl)),
        };
        match sent {
            Ok(resp) if resp.status().is_success() => {
                pause = RETRY_FIRST;
                if !pump(resp, &relay, silence).await {
                    return;
                }
            }
            // The document is gone: its rooms subscribe again and hear `not_found`.
            Ok(resp) if resp.status().as_u16() == 404 => return,
            Ok(resp) => {
                tracing::debug!(status = %resp.status(), "relay: the document's node refused its stream")
            }
            Err(e) => tracing::debug!(error = %e, "relay: the document's node did not answer"),
        }
        c.forget_owner(doc.as_str());
        match c.ask_again(doc.as_str()).await {
            Route::Here => return,
            Route::Owner { addr, .. } => {
                if addr == owner {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(RETRY_MAX);
                }
                owner = addr;
            }
        }
    }
}

/// Passes the stream's lines to the relay until the stream ends or is silent too long;
/// false when the relay is gone.
async fn pump(
    mut resp: reqwest::Response,
    relay: &WeakAddr<RelayedDocument>,
    silence: Duration,
) -> bool {
    let mut buf: Vec<u8> = Vec::new();
    while let Ok(Ok(Some(chunk))) = tokio::time::timeout(silence, resp.chunk()).await {
        buf.extend_from_slice(&chunk);
        while let Some(end) = buf.iter().position(|b| *b == b'\n') {
            let text: Vec<u8> = buf.drain(..=end).collect();
            let Some(heard) = heard(&text) else {
                continue; // a keep-alive
            };
            match relay.upgrade() {
                Some(r) => r.do_send(heard),
                None => return false,
            }
        }
    }
    relay.upgrade().is_some()
}

/// One line of the owner's stream as the relay takes it; None for a keep-alive (or a line
/// this node cannot read).
fn heard(text: &[u8]) -> Option<Heard> {
    let line: RelayLine = serde_json::from_slice(text).ok()?;
    let wake = Wake {
        doc_id: DocId::parse(&line.wake.doc_id).ok()?,
        head_seq: line.wake.head_seq,
        lease_seq: line.wake.lease_seq,
        entries: match line.wake.entries {
            Some(e) => Some(Arc::from(RawValue::from_string(e.get().to_owned()).ok()?)),
            None => None,
        },
        since: None,
    };
    Some(Heard {
        wake,
        epoch: line.epoch,
    })
}

#[cfg(test)]
mod tests {
    use super::heard;

    #[test]
    fn a_line_becomes_a_wake_up_with_its_entries_and_a_keep_alive_nothing() {
        let h = heard(
            br#"{"epoch":4,"wake":{"docId":"doc_1","headSeq":7,"leaseSeq":3,"entries":[{"seq":7}]}}
"#,
        )
        .unwrap();
        assert_eq!(h.epoch, 4);
        assert_eq!((h.wake.head_seq, h.wake.lease_seq), (7, 3));
        assert_eq!(h.wake.entries_json(), Some(r#"[{"seq":7}]"#));
        assert!(heard(b"\n").is_none());
    }
}
