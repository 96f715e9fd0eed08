//! Wake-up channels (PROTOCOL §4): WebSocket, SSE and long-polling. They carry only "document
//! X now has headSeq N / leaseSeq M"; data always flows through `/sync`. Each is registered
//! with the document's actor by message and checks read access through the role function.

pub mod body;
pub mod longpoll;
pub mod slots;
pub mod sse;
pub mod wire;
pub mod ws;
pub mod ws_protocol;

use docsync_actors::ask::ask;
use docsync_actors::collab::validate::ClientId;
use docsync_actors::document::{Channel, EventSink, Subscribe};

use super::access::StreamAccess;
use super::error::ApiError;
use super::state::AppState;

/// Unsubscribes when dropped (the stream or socket went away).
pub use docsync_actors::document::Subscription;

/// Registers `sink` with the document's actor (asking the registry again while it restarts),
/// with what lets the actor re-check the stream's rights for as long as it is open.
/// Returns the registration and the current `(headSeq, leaseSeq)`.
pub async fn subscribe(
    state: &AppState,
    access: &StreamAccess,
    channel: Channel,
    client_id: Option<ClientId>,
    sink: EventSink,
) -> Result<(Subscription, i64, u64), ApiError> {
    let msg = Subscribe {
        channel,
        client: client_id,
        user_id: access.user.id.clone(),
        sink,
        grant: access.grant.clone(),
        confirmed: access.confirmed,
        reach: access.reach.clone(),
    };
    let s = ask(&state.registry, &access.doc, msg).await?;
    Ok((s.subscription, s.head_seq, s.lease_seq))
}

/// The optional `clientId` of a channel's query, checked against the configured limits.
pub fn client_id(state: &AppState, c: Option<String>) -> Result<Option<ClientId>, ApiError> {
    Ok(ClientId::parse_optional(c, &state.limits)?)
}
