//! Cluster mode: the WebSocket rooms of documents other nodes own, served on this node
//! through one stream per document from its owner (`node_stream.rs` there), fanned out here
//! by a `RelayedDocument` actor that keeps each room's rights itself (actors crate).
//! `Relays` finds or starts that actor; its upstream reads the owner's stream into it and
//! follows the document: when the stream ends or goes silent, it asks where the document is
//! served now and reconnects there — or, when the document is to be served on this node or
//! is gone, ends, and every room subscribes again (the role function decides anew; this
//! node's document actor takes the document). A change missed while reconnecting is pulled
//! by the client from its `lastSeq`: wake-ups are hints.
//!
//! A bullet guest's room is not relayed here (`guest_relay.rs`): the owner cuts their view.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use actix::prelude::*;
use actix::WeakAddr;
use serde_json::value::RawValue;
use tokio::sync::mpsc::UnboundedSender;

use docsync_actors::collab::validate::{ClientId, DocId};
use docsync_actors::document::{
    AccessChanged, Channel, DocError, DocEvent, Heard, RelayedDocument, Subscribe, Subscribed,
    Upstream, Wake,
};

use super::node_stream::{self, RelayLine};
use super::{Cluster, Route};
use crate::http::access::StreamAccess;
use crate::http::state::AppState;

/// The first pause before asking the owner again after its stream failed; doubled up to
/// `RETRY_MAX` while it keeps failing.
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(2);

/// The relays of this node, by document.
#[derive(Default)]
pub struct Relays {
    open: Mutex<HashMap<DocId, Addr<RelayedDocument>>>,
}

impl Relays {
    fn running(&self, doc: &DocId) -> Option<Addr<RelayedDocument>> {
        let open = self.open.lock().expect("relays lock");
        open.get(doc).filter(|a| a.connected()).cloned()
    }

    /// Every relay running now.
    fn all(&self) -> Vec<Addr<RelayedDocument>> {
        let mut open = self.open.lock().expect("relays lock");
        open.retain(|_, a| a.connected());
        open.values().cloned().collect()
    }

    fn forget(&self, doc: &DocId, addr: &Addr<RelayedDocument>) {
        let mut open = self.open.lock().expect("relays lock");
        if open.get(doc) == Some(addr) {
            open.remove(doc);
        }
    }

    fn started(&self, doc: &DocId, addr: Addr<RelayedDocument>) -> Addr<RelayedDocument> {
        let mut open = self.open.lock().expect("relays lock");
        match open.get(doc).filter(|a| a.connected()) {
            // Another room started one meanwhile: use that; this one lingers and stops.
            Some(first) => first.clone(),
            None => {
                open.insert(doc.clone(), addr.clone());
                addr
            }
        }
    }
}

/// Subscribes a WebSocket room of `access` (a reader of the whole document, authorised by
/// the role function just now) to the relay of its document, starting the relay — reading
/// the owner at `owner` — if none runs.
pub async fn subscribe(
    state: &actix_web::web::Data<AppState>,
    cluster: &Arc<Cluster>,
    access: &StreamAccess,
    client: Option<ClientId>,
    sink: UnboundedSender<DocEvent>,
    owner: String,
) -> Result<Subscribed, DocError> {
    let msg = Subscribe {
        channel: Channel::WebSocket,
        client,
        user_id: access.user.id.clone(),
        sink,
        grant: access.grant.clone(),
        confirmed: access.confirmed,
        reach: access.reach.clone(),
    };
    let doc = &access.doc;
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

/// Tells every relay that the access epoch moved (their rooms are re-checked), for as long
/// as the cluster runs.
pub async fn follow_access(cluster: Weak<Cluster>) {
    let Some(mut moved) = cluster
        .upgrade()
        .map(|c| c.storage.access_epoch().changes())
    else {
        return;
    };
    while moved.changed().await.is_ok() {
        let Some(c) = cluster.upgrade() else {
            return;
        };
        for relay in c.relays.all() {
            relay.do_send(AccessChanged { shares: false });
        }
    }
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
        let sent = c
            .hop()
            .request(
                reqwest::Method::GET,
                &owner,
                &node_stream::path(doc.as_str()),
                &c.node_id,
            )
            .send()
            .await;
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
