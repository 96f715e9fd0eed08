//! `GET /docs/{id}/changes?since=N&leaseSeq=M&wait=25&clientId=…` — answers as soon as the
//! document passes `since` or its lease/presence state differs from `leaseSeq`, at the latest
//! after `wait` seconds (1…25). A waiter is a oneshot in the actor: cheap to hold by the
//! ten thousand. While it waits the request holds a stream slot (`slots.rs`). A client that
//! closes its socket ends the request at once (the server refuses half-closed connections):
//! this handler's future is dropped with the receiver and the slot, and the actor forgets
//! the closed waiter on its next tick.
//!
//! Cluster mode: served by the node the request reaches. For a document another node owns
//! it waits on this node's relay of it (`listen.rs`); a bullet guest's is forwarded to the
//! owner, which cuts their view.

use std::time::Duration;

use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;

use docsync_actors::collab::validate::fixed::MAX_LONG_POLL_WAIT_SECS;
use docsync_actors::document::{Changes, WaitChanges};

use super::super::access::view_access;
use super::super::auth::Credentials;
use super::super::error::ApiError;
use super::super::state::AppState;
use super::client_id;
use crate::cluster::listen::{self, Listen};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangesQuery {
    since: i64,
    #[serde(default)]
    lease_seq: u64,
    #[serde(default)]
    wait: Option<u64>,
    #[serde(default)]
    client_id: Option<String>,
}

/// Where the document stands: the client syncs when either moved past what it knew.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Heads {
    head_seq: i64,
    lease_seq: u64,
}

#[utoipa::path(
    get,
    path = "/api/v1/docs/{id}/changes",
    tag = "wake-ups",
    summary = "Long-poll: answers when headSeq passes since or leaseSeq differs (PROTOCOL §4)",
    params(
        ("id" = String, Path, description = "The document's, folder's, team's or token's ID"),
        ("since" = i64, Query, description = "The headSeq the client has"),
        ("leaseSeq" = Option<u64>, Query, description = "The leaseSeq the client has"),
        ("wait" = Option<u64>, Query, description = "Seconds to wait, 1 to 25"),
        ("clientId" = Option<String>, Query, description = "The tab waiting", pattern = r"^cl_[A-Za-z0-9_-]+$", max_length = 100),
    ),
    responses(
        (status = 200, description = "where the document stands", body = Heads),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
        (status = 429, description = "a budget or rate is spent; see Retry-After", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn changes(
    state: web::Data<AppState>,
    req: HttpRequest,
    creds: Credentials,
    path: web::Path<String>,
    query: web::Query<ChangesQuery>,
) -> Result<HttpResponse, ApiError> {
    let q = query.into_inner();
    let client = client_id(&state, q.client_id)?;
    let wait = Duration::from_secs(
        q.wait
            .unwrap_or(MAX_LONG_POLL_WAIT_SECS)
            .clamp(1, MAX_LONG_POLL_WAIT_SECS),
    );
    let mut epoch_moves = state.storage.access_epoch().changes();
    epoch_moves.borrow_and_update();
    // A bullet guest waits for changes to their part only (PROTOCOL §10).
    let (doc, d) = view_access(&state, &creds, &path.into_inner()).await?;
    let user = d.user;
    let doc_id = doc.as_str();
    state
        .client_owners
        .claim_optional(&user.id, client.as_ref())
        .await?;
    // Cluster mode: a bullet guest's long-poll of a document owned elsewhere is the owner's.
    let listen = listen::listen_for(&state, &req, &doc, &d.reach).await?;
    if let Listen::OnOwner { owner } = &listen {
        let within = Duration::from_secs(MAX_LONG_POLL_WAIT_SECS + 5);
        // Boxed, as the relay's ask below: a waiter holds its future for up to 25 s, and an
        // inline forward would make every waiter that size.
        return Box::pin(listen::on_owner(&state, &req, owner, within)).await;
    }
    let _slot = state.take_stream_slot(&req, &user.id)?;
    let mut shutdown = state.shutdown.clone();
    let msg = WaitChanges {
        since: q.since,
        lease_seq: q.lease_seq,
        client,
        user_id: user.id,
        reach: d.reach,
    };
    let asked = match listen {
        Listen::Relay { owner } => Box::pin(listen::ask(&state, &doc, owner, msg)).await,
        _ => docsync_actors::ask::ask(&state.registry, &doc, msg).await,
    };
    let (head, lease) = match asked? {
        Changes::Now {
            head_seq,
            lease_seq,
        } => (head_seq, lease_seq),
        Changes::Later {
            head_seq,
            lease_seq,
            mut rx,
        } => {
            let deadline = actix_web::rt::time::sleep(wait);
            tokio::pin!(deadline);
            loop {
                tokio::select! {
                    r = &mut rx => break r.unwrap_or((head_seq, lease_seq)),
                    _ = &mut deadline => break (head_seq, lease_seq),
                    () = shutdown.wait() => break (head_seq, lease_seq),
                    moved = epoch_moves.changed() => {
                        if moved.is_err() {
                            break (head_seq, lease_seq);
                        }
                        view_access(&state, &creds, doc_id).await?;
                    }
                }
            }
        }
    };
    // The rights may have ended while the request waited (cheap when nothing changed: the
    // access cache answers while the epoch stands).
    view_access(&state, &creds, doc_id).await?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(Heads {
            head_seq: head,
            lease_seq: lease,
        }))
}
