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

use std::time::Duration;

use actix_web::web::Bytes;
use actix_web::{web, HttpRequest, HttpResponse};
use futures::stream;
use serde::Deserialize;
use tokio::sync::mpsc;

use docsync_actors::collab::validate::DocId;
use docsync_actors::document::{Channel, DocEvent};

use super::super::access::stream_access;
use super::super::auth::Credentials;
use super::super::error::ApiError;
use super::super::state::AppState;
use super::slots::StreamSlot;
use super::wire::DocSeq;
use super::{client_id, subscribe, Subscription};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventsQuery {
    #[serde(default)]
    client_id: Option<String>,
}

fn frame(event: &str, seq: DocSeq) -> Bytes {
    Bytes::from(format!("event: {event}\ndata: {}\n\n", seq.to_json()))
}

struct Stream {
    doc_id: DocId,
    rx: mpsc::UnboundedReceiver<DocEvent>,
    keepalive: tokio::time::Interval,
    shutdown: crate::shutdown::Shutdown,
    _sub: Subscription,
    _slot: StreamSlot,
    first: Option<Bytes>,
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
    let slot = state.take_stream_slot(&req, &granted.user.id)?;
    let (tx, rx) = mpsc::unbounded_channel();
    let (sub, head, lease) = subscribe(&state, &granted, Channel::Sse, client_id, tx).await?;
    let doc_id = granted.doc;
    let every = Duration::from_secs(state.settings.server.sse_keepalive_secs);
    let mut keepalive = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    keepalive.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let s = Stream {
        shutdown: state.shutdown.clone(),
        first: Some(frame("ready", DocSeq::new(doc_id.as_str(), head, lease))),
        doc_id,
        rx,
        keepalive,
        _sub: sub,
        _slot: slot,
    };
    let body = stream::unfold(s, |mut s| async move {
        if let Some(first) = s.first.take() {
            return Some((Ok::<_, actix_web::Error>(first), s));
        }
        enum Next {
            Event(Option<DocEvent>),
            KeepAlive,
            Shutdown,
        }
        let next = tokio::select! {
            ev = s.rx.recv() => Next::Event(ev),
            _ = s.keepalive.tick() => Next::KeepAlive,
            () = s.shutdown.wait() => Next::Shutdown,
        };
        match next {
            Next::Event(Some(DocEvent::Seq(wake))) => {
                let seq = DocSeq::new(s.doc_id.as_str(), wake.head_seq, wake.lease_seq)
                    .with_entries(wake.entries.as_deref())
                    .with_since(wake.since);
                let f = frame("doc_seq", seq);
                Some((Ok(f), s))
            }
            Next::KeepAlive => Some((Ok(Bytes::from_static(b": keep-alive\n\n")), s)),
            // Revoked: the document forgot this stream; nothing more may go out.
            Next::Event(Some(DocEvent::Revoked { .. }) | None) | Next::Shutdown => None,
        }
    });
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
