//! `/webhooks` — receivers of the change feed (PROTOCOL §11). An admin's webhook may reach
//! every document; anyone else's only documents they own (`roles::hooks_document`, asked
//! again for every batch). A webhook is managed by its creator and by admins; to anyone
//! else it does not exist (404). The secret is write-only: sealed at rest, never answered.
//! Making, resuming and deleting one are audit events.

use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};
use serde_json::json;

use docsync_actors::collab::validate::fixed::SMALL_BODY_BYTES;
use docsync_actors::storage::accounts::{new_id, Scope, User};
use docsync_actors::storage::audit::{self, actions};
use docsync_actors::storage::feed;
use docsync_actors::storage::roles;
use docsync_actors::storage::webhooks::{self, Delivery, Webhook, EVENTS};

use super::access::caller;
use super::audited::Actor;
use super::auth::{Credentials, Secret};
use super::body::read_json;
use super::error::ApiError;
use super::state::AppState;
use crate::webhooks::target;

/// Webhooks one person may have.
const MAX_PER_CREATOR: usize = 50;
/// Documents one webhook may name.
const MAX_DOC_IDS: usize = 100;
/// Attempts `GET /webhooks/{id}/deliveries` answers with when no `limit` is given.
const DEFAULT_DELIVERIES: i64 = 50;

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct NewWebhook {
    /// Where deliveries are POSTed: an `http://` or `https://` URL.
    url: String,
    /// What to deliver: `["ops"]` (every log entry).
    events: Vec<String>,
    /// Only these documents (1 to 100); none: every document the webhook may reach.
    #[serde(default)]
    doc_ids: Option<Vec<String>>,
    /// 16 to 256 characters; signs every delivery (`X-Docsync-Signature`). Never shown again.
    secret: String,
    /// A feed cursor to deliver from (e.g. "0": everything the log still holds, for a new
    /// index or a backup); none: what is logged from now on.
    #[serde(default)]
    since: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct WebhookList {
    webhooks: Vec<Webhook>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct DeliveryList {
    deliveries: Vec<Delivery>,
}

#[derive(Deserialize)]
pub struct DeliveriesQuery {
    limit: Option<i64>,
}

/// Whether the caller acts as an admin here: an admin, with a login session or an admin
/// token (a narrower token of theirs does not carry the admin's reach).
fn acts_as_admin(user: &User, creds: &Credentials) -> bool {
    user.is_admin
        && match &creds.secret {
            Secret::Bearer(token) => Scope::of_token(token) == Some(Scope::Admin),
            _ => true,
        }
}

fn check(body: &NewWebhook, admin: bool, private_ok: bool) -> Result<Vec<String>, ApiError> {
    if let Some(why) = target::refuse(&body.url, admin || private_ok) {
        return Err(ApiError::BadRequest(why));
    }
    let mut events: Vec<String> = Vec::new();
    for e in &body.events {
        if !EVENTS.contains(&e.as_str()) {
            return Err(ApiError::BadRequest(match e.as_str() {
                "shares" | "documents" => format!(
                    "events: \"{e}\" is not delivered by this server yet; \"ops\" is (every log entry)"
                ),
                _ => format!("events: \"{e}\" is not an event; \"ops\" is (every log entry)"),
            }));
        }
        if !events.contains(e) {
            events.push(e.clone());
        }
    }
    if events.is_empty() {
        return Err(ApiError::BadRequest(
            "events: at least one, e.g. [\"ops\"]".into(),
        ));
    }
    let n = body.secret.chars().count();
    if !(16..=256).contains(&n) {
        return Err(ApiError::BadRequest(
            "secret: 16 to 256 characters (a random one, e.g. `openssl rand -hex 32`)".into(),
        ));
    }
    if let Some(ids) = &body.doc_ids {
        if ids.is_empty() || ids.len() > MAX_DOC_IDS {
            return Err(ApiError::BadRequest(format!(
                "docIds: 1 to {MAX_DOC_IDS} document IDs, or leave it out for every document"
            )));
        }
    }
    Ok(events)
}

#[utoipa::path(
    post,
    path = "/api/v1/webhooks",
    tag = "integrations",
    summary = "Make a webhook: the change feed POSTed to a receiver, signed, in order (PROTOCOL §11)",
    request_body = NewWebhook,
    responses(
        (status = 201, description = "made; it delivers what is logged from now on (or from `since`)", body = Webhook),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "an admin's webhook needs a login session or an admin token", body = crate::http::error::ErrorBody),
        (status = 409, description = "`conflict`: this cluster has no `webhooks.key` to seal secrets with", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn create(
    state: web::Data<AppState>,
    req: HttpRequest,
    creds: Credentials,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let body: NewWebhook = read_json(&req, payload, SMALL_BODY_BYTES).await?;
    let user = caller(&state, &creds).await?;
    let admin = acts_as_admin(&user, &creds);
    if user.is_admin && !admin {
        return Err(ApiError::Forbidden(
            "an admin's webhook may reach every document: make it with a login session or an admin token".into(),
        ));
    }
    let events = check(&body, admin, state.settings.webhooks.allow_private_targets)?;
    let id = new_id("wh_");
    let sealed = state.webhooks.seal(&id, &body.secret).ok_or_else(|| {
        ApiError::Conflict(
            "webhooks need webhooks.key on this cluster (the same key on every node)".into(),
        )
    })?;
    let since = match body.since.as_deref() {
        None => None,
        Some(c) => Some(super::feed::parse_cursor(Some(c))?),
    };
    feed::settle(&state.storage).await?;
    let now = state.clock.now_ms();
    let actor = Actor::of(&state, &req, Some(&user));
    let mut hook = Webhook::new(
        id.clone(),
        user.id.clone(),
        body.url.clone(),
        events,
        body.doc_ids.clone(),
        now,
        0,
    );
    let made = state
        .storage
        .write(move |db| {
            let mine = webhooks::list(db)?
                .iter()
                .filter(|h| h.created_by == hook.created_by)
                .count();
            if mine >= MAX_PER_CREATOR {
                return Ok(Err(format!(
                    "at most {MAX_PER_CREATOR} webhooks per person: delete one first"
                )));
            }
            for doc in hook.doc_ids.iter().flatten() {
                if !roles::hooks_document(db, &hook.created_by, doc)? {
                    return Ok(Err(format!(
                        "docIds: {doc} is not a document you may hook (its owner or an admin makes webhooks for it)"
                    )));
                }
            }
            let head = feed::head(db)?;
            hook.cursor_pos = match since {
                Some(c) if c > head => {
                    return Ok(Err(format!(
                        "since: {c} is past the end of the feed ({head}); leave it out to start now"
                    )))
                }
                Some(c) => c,
                None => head,
            };
            webhooks::insert(db, &hook, &sealed)?;
            let detail = json!({"url": hook.url, "events": hook.events, "docIds": hook.doc_ids});
            audit::record(
                db,
                now,
                &actor.event(actions::WEBHOOK_CREATED, format!("webhook:{}", hook.id), detail),
            )?;
            webhooks::by_id(db, &hook.id).map(Ok)
        })
        .await?
        .map_err(ApiError::BadRequest)?
        .ok_or(ApiError::NotFound)?;
    state.webhooks.poke();
    Ok(HttpResponse::Created().json(made))
}

#[utoipa::path(
    get,
    path = "/api/v1/webhooks",
    tag = "integrations",
    summary = "The webhooks the caller manages (an admin: every one)",
    responses(
        (status = 200, description = "oldest first", body = WebhookList),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn list(
    state: web::Data<AppState>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    let user = caller(&state, &creds).await?;
    let admin = acts_as_admin(&user, &creds);
    let mut hooks = state.storage.read(webhooks::list).await?;
    hooks.retain(|h| admin || h.created_by == user.id);
    Ok(HttpResponse::Ok().json(WebhookList { webhooks: hooks }))
}

/// The webhook if the caller manages it (its creator, or an admin); else 404.
async fn managed(
    state: &AppState,
    creds: &Credentials,
    id: &str,
) -> Result<(User, Webhook), ApiError> {
    let user = caller(state, creds).await?;
    let admin = acts_as_admin(&user, creds);
    let key = id.to_string();
    match state
        .storage
        .read(move |db| webhooks::by_id(db, &key))
        .await?
    {
        Some(h) if admin || h.created_by == user.id => Ok((user, h)),
        _ => Err(ApiError::NotFound),
    }
}

#[utoipa::path(
    get,
    path = "/api/v1/webhooks/{id}",
    tag = "integrations",
    summary = "One webhook: where it stands, whether it is paused and why",
    params(("id" = String, Path, description = "The webhook's ID")),
    responses(
        (status = 200, description = "the webhook", body = Webhook),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such webhook the caller manages", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn get(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let (_, hook) = managed(&state, &creds, &path).await?;
    Ok(HttpResponse::Ok().json(hook))
}

#[utoipa::path(
    delete,
    path = "/api/v1/webhooks/{id}",
    tag = "integrations",
    summary = "Delete a webhook and its delivery log (a delivery under way may still arrive)",
    params(("id" = String, Path, description = "The webhook's ID")),
    responses(
        (status = 204, description = "deleted"),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such webhook the caller manages", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn delete(
    state: web::Data<AppState>,
    req: HttpRequest,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let (user, hook) = managed(&state, &creds, &path).await?;
    let (now, actor) = (state.clock.now_ms(), Actor::of(&state, &req, Some(&user)));
    state
        .storage
        .write(move |db| {
            webhooks::delete(db, &hook.id)?;
            let event = actor.event(
                actions::WEBHOOK_DELETED,
                format!("webhook:{}", hook.id),
                json!({"url": hook.url}),
            );
            audit::record(db, now, &event)
        })
        .await?;
    state.webhooks.poke();
    Ok(HttpResponse::NoContent().finish())
}

#[utoipa::path(
    post,
    path = "/api/v1/webhooks/{id}/resume",
    tag = "integrations",
    summary = "Deliver again after a pause: the pending delivery first, with a new retry window",
    params(("id" = String, Path, description = "The webhook's ID")),
    responses(
        (status = 200, description = "active again", body = Webhook),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such webhook the caller manages", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn resume(
    state: web::Data<AppState>,
    req: HttpRequest,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let (user, hook) = managed(&state, &creds, &path).await?;
    let (now, actor) = (state.clock.now_ms(), Actor::of(&state, &req, Some(&user)));
    let resumed = state
        .storage
        .write(move |db| {
            webhooks::resume(db, &hook.id)?;
            if hook.is_paused() {
                let event = actor.event(
                    actions::WEBHOOK_RESUMED,
                    format!("webhook:{}", hook.id),
                    json!({"pausedReason": hook.paused_reason}),
                );
                audit::record(db, now, &event)?;
            }
            webhooks::by_id(db, &hook.id)
        })
        .await?
        .ok_or(ApiError::NotFound)?;
    state.webhooks.poke();
    Ok(HttpResponse::Ok().json(resumed))
}

#[utoipa::path(
    get,
    path = "/api/v1/webhooks/{id}/deliveries",
    tag = "integrations",
    summary = "The webhook's recent attempts, newest first",
    params(
        ("id" = String, Path, description = "The webhook's ID"),
        ("limit" = Option<i64>, Query, description = "Attempts at most, 1 to 200 (50 when none)", minimum = 1, maximum = 200),
    ),
    responses(
        (status = 200, description = "newest first", body = DeliveryList),
        (status = 400, description = "the request is malformed or breaks a limit", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such webhook the caller manages", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn deliveries(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
    query: web::Query<DeliveriesQuery>,
) -> Result<HttpResponse, ApiError> {
    let limit = match query.limit {
        None => DEFAULT_DELIVERIES,
        Some(n) if (1..=200).contains(&n) => n,
        Some(_) => return Err(ApiError::BadRequest("limit: 1 to 200 attempts".into())),
    };
    let (_, hook) = managed(&state, &creds, &path).await?;
    let list = state
        .storage
        .read(move |db| webhooks::deliveries(db, &hook.id, limit))
        .await?;
    Ok(HttpResponse::Ok().json(DeliveryList { deliveries: list }))
}
