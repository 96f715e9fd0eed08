//! Wake-up channels (PROTOCOL §4): WebSocket, SSE and long-polling. They carry only "document
//! X now has headSeq N / leaseSeq M"; data always flows through `/sync`. Each is registered
//! with the document's actor by message and checks read access through the role function.

pub mod longpoll;
pub mod sse;
pub mod ws;

use std::sync::atomic::{AtomicU64, Ordering};

use actix::Addr;
use docsync_actors::document::{Channel, DocEvent, DocumentActor, Subscribe, Unsubscribe};
use tokio::sync::mpsc::UnboundedSender;

use super::error::ApiError;
use super::AppState;

static NEXT_SUBSCRIBER: AtomicU64 = AtomicU64::new(1);

pub fn next_subscriber_id() -> u64 {
    NEXT_SUBSCRIBER.fetch_add(1, Ordering::Relaxed)
}

/// Registers `sink` with the document's actor (asking the registry again while it restarts).
pub async fn subscribe(
    state: &AppState,
    doc_id: &str,
    channel: Channel,
    client_id: Option<String>,
    user_id: &str,
    sink: UnboundedSender<DocEvent>,
) -> Result<(Addr<DocumentActor>, u64, i64, u64), ApiError> {
    let id = next_subscriber_id();
    let msg = Subscribe {
        id,
        channel,
        client_id,
        user_id: user_id.to_string(),
        sink,
    };
    let (handle, (head, lease)) = super::sync::ask(state, doc_id, msg).await?;
    Ok((handle.addr, id, head, lease))
}

/// Unsubscribes when dropped (the stream or socket went away).
pub struct Subscription {
    pub addr: Addr<DocumentActor>,
    pub id: u64,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.addr.do_send(Unsubscribe { id: self.id });
    }
}

pub fn check_client_id(c: &Option<String>) -> Result<(), ApiError> {
    if let Some(c) = c {
        docsync_actors::collab::validate::check_id("clientId", c, "cl_", 100)?;
    }
    Ok(())
}
