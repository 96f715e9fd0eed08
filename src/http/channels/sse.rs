//! `GET /docs/{id}/events` — Server-Sent Events: `event: ready` at once, then `event: doc_seq`
//! on every change, a comment line every `server.sse_keepalive_secs` (15) so proxies and
//! clients see the stream is alive. Never compressed, never buffered (`X-Accel-Buffering:
//! no`). The stream ends when its credential ends (token deleted, logout, password change,
//! session expiry) or its user loses read access — the document re-checks it whenever
//! rights may have changed and says `Revoked` —, the document's actor goes away
//! (the client reconnects) or the server shuts down; it is dropped — unsubscribing and
//! freeing its slot (`slots.rs`) — as soon as the client closes its socket (the server
//! refuses half-closed connections, so the EOF ends the request) or a keep-alive write
//! fails.
//!
//! Cluster mode: served by the node the stream reaches. For a document another node owns it
//! listens to this node's relay of it (one stream from the owner per node, `listen.rs`); a
//! bullet guest's stream is forwarded to the owner, which cuts their view.

use std::time::Duration;

use actix_web::web::Bytes;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;

use docsync_actors::document::{event_channel, Channel, Wake};

use super::super::access::stream_access;
use super::super::auth::Credentials;
use super::super::error::ApiError;
use super::super::state::AppState;
use super::body;
use super::wire::DocSeq;
use super::{client_id, subscribe};
use crate::cluster::listen::{self, Listen};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventsQuery {
    #[serde(default)]
    client_id: Option<String>,
}

fn frame(event: &str, seq: DocSeq) -> Bytes {
    Bytes::from(format!("event: {event}\ndata: {}\n\n", seq.to_json()))
}

#[utoipa::path(
    get,
    path = "/api/v1/docs/{id}/events",
    tag = "wake-ups",
    summary = "Server-sent events: doc_seq on every change (PROTOCOL §4)",
    params(
        ("id" = String, Path, description = "The document's, folder's, team's or token's ID"),
        ("clientId" = Option<String>, Query, description = "The tab listening", pattern = r"^cl_[A-Za-z0-9_-]+$", max_length = 100),
    ),
    responses(
        (status = 200, description = "an event stream (`text/event-stream`): `event: ready` at once, then `event: doc_seq` per change, each `data:` one JSON line of this shape; `: keep-alive` comments in between", content_type = "text/event-stream", body = DocSeq),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
        (status = 429, description = "a budget or rate is spent; see Retry-After", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn events(
    state: web::Data<AppState>,
    req: HttpRequest,
    creds: Credentials,
    path: web::Path<String>,
    query: web::Query<EventsQuery>,
) -> Result<HttpResponse, ApiError> {
    let client_id = client_id(&state, query.into_inner().client_id)?;
    let granted = stream_access(&state, &creds, &path.into_inner()).await?;
    state
        .client_owners
        .claim_optional(&granted.user.id, client_id.as_ref())
        .await?;
    // Cluster mode: a bullet guest's stream of a document owned elsewhere is the owner's.
    let listen = listen::listen_for(&state, &req, &granted.doc, &granted.reach).await?;
    if let Listen::OnOwner { owner } = &listen {
        let within = Duration::from_secs_f64(state.settings.cluster.ttl_secs);
        return listen::on_owner(&state, &req, owner, within).await;
    }
    let slot = state.take_stream_slot(&req, &granted.user.id)?;
    let (tx, rx) = event_channel();
    let (sub, head, lease) = match listen {
        Listen::Relay { owner } => {
            let s = listen::subscribe(&state, &granted, Channel::Sse, client_id, tx, owner).await?;
            (s.subscription, s.head_seq, s.lease_seq)
        }
        _ => subscribe(&state, &granted, Channel::Sse, client_id, tx).await?,
    };
    let doc_id = granted.doc;
    let framing = body::Framing {
        first: frame("ready", DocSeq::new(doc_id.as_str(), head, lease)),
        frame: |wake: &Wake| {
            let seq = DocSeq::new(wake.doc_id.as_str(), wake.head_seq, wake.lease_seq)
                .with_entries(wake.entries.as_deref())
                .with_since(wake.since);
            frame("doc_seq", seq)
        },
        keepalive: b": keep-alive\n\n",
        every: Duration::from_secs(state.settings.server.sse_keepalive_secs),
    };
    let body = body::events(rx, framing, state.shutdown.clone(), (sub, slot));
    Ok(event_stream(body))
}

/// An answer that is an event stream: never cached, never buffered by a proxy, never
/// compressed (a compressor would hold events back until its buffer fills).
pub(crate) fn event_stream<S>(body: S) -> HttpResponse
where
    S: futures::Stream<Item = Result<Bytes, actix_web::Error>> + 'static,
{
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("Cache-Control", "no-cache"))
        .insert_header(("X-Accel-Buffering", "no"))
        .insert_header(("Content-Encoding", "identity"))
        .streaming(body)
}
