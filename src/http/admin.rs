//! Operator endpoints (admin users only) and the test-only clock.

use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use docsync_actors::compaction::RunPass;
use docsync_actors::registry::all_stats;

use super::access::caller;
use super::auth::Credentials;
use super::body::read_json;
use super::error::ApiError;
use super::state::AppState;

/// The caller, when they are an admin (an API token also needs scope `admin`: the scope
/// guard refuses it before this).
pub(super) async fn admin(
    state: &AppState,
    creds: &Credentials,
) -> Result<docsync_actors::storage::accounts::User, ApiError> {
    let user = caller(state, creds).await?;
    if !user.is_admin {
        return Err(ApiError::Forbidden("admin only".into()));
    }
    Ok(user)
}

/// Runs one compaction pass now and answers with its summary.
#[utoipa::path(
    post,
    path = "/api/v1/admin/compact",
    tag = "operators",
    summary = "Run a compaction pass now (admins)",
    responses(
        (status = 200, description = "what the pass did", body = docsync_actors::compaction::PassSummary),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "the caller's role does not allow this", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn compact(
    state: web::Data<AppState>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    admin(&state, &creds).await?;
    let summary = state.compaction.send(RunPass).await?;
    Ok(HttpResponse::Ok().json(summary))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Advance {
    advance_ms: i64,
}

/// `testing.clock = "manual"` only: moves the server's clock forward.
pub async fn advance_clock(
    state: web::Data<AppState>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let Some(clock) = &state.manual_clock else {
        return Err(ApiError::NotFound);
    };
    let body: Advance = read_json(
        &req,
        payload,
        docsync_actors::collab::validate::fixed::TINY_BODY_BYTES,
    )
    .await?;
    if body.advance_ms < 0 {
        return Err(ApiError::BadRequest(
            "advanceMs: time only moves forward".into(),
        ));
    }
    clock.advance(body.advance_ms);
    use docsync_actors::clock::Clock;
    Ok(HttpResponse::Ok().json(json!({"nowMs": clock.now_ms()})))
}

#[derive(serde::Serialize, utoipa::ToSchema)]
pub(crate) struct ActorList {
    actors: Vec<docsync_actors::document::ActorReport>,
}

/// Every open document actor with what an operator needs to see (admin only).
#[utoipa::path(
    get,
    path = "/api/v1/admin/actors",
    tag = "operators",
    summary = "Every open document actor (admins)",
    responses(
        (status = 200, description = "actors", body = ActorList),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "the caller's role does not allow this", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn actors(
    state: web::Data<AppState>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    admin(&state, &creds).await?;
    let mut stats = all_stats(&state.registry).await;
    stats.sort_by(|a, b| a.doc_id.cmp(&b.doc_id));
    Ok(HttpResponse::Ok().json(ActorList { actors: stats }))
}

/// Prometheus text exposition. Per-actor figures are summed at scrape time (no document ID
/// ever becomes a label).
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "operators",
    summary = "Prometheus metrics",
    responses(
        (status = 200, description = "Prometheus text exposition", content_type = "text/plain", body = String),
    ),
    security(()),
)]
pub async fn metrics(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    use prometheus::Encoder;
    let stats = all_stats(&state.registry).await;
    let m = &state.metrics;
    m.sessions
        .set(stats.iter().map(|s| s.sessions as i64).sum());
    m.leases_held
        .set(stats.iter().map(|s| s.leases as i64).sum());
    m.subscribers
        .with_label_values(&["websocket"])
        .set(stats.iter().map(|s| s.websocket as i64).sum());
    m.subscribers
        .with_label_values(&["sse"])
        .set(stats.iter().map(|s| s.sse as i64).sum());
    m.subscribers
        .with_label_values(&["long_poll"])
        .set(stats.iter().map(|s| s.long_poll as i64).sum());
    m.subscribers
        .with_label_values(&["relay"])
        .set(stats.iter().map(|s| s.relays as i64).sum());
    m.argon2_runs
        .set(crate::auth::password::argon2_runs() as i64);
    let mut buf = Vec::new();
    prometheus::TextEncoder::new()
        .encode(&m.registry.gather(), &mut buf)
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(HttpResponse::Ok()
        .content_type(prometheus::TEXT_FORMAT)
        .body(buf))
}
