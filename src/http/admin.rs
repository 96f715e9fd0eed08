//! Operator endpoints (admin users only) and the test-only clock.

use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use docsync_actors::compaction::RunPass;

use super::auth::Credentials;
use super::body::read_json;
use super::docs::caller;
use super::error::ApiError;
use super::AppState;

async fn admin(state: &AppState, creds: &Credentials) -> Result<(), ApiError> {
    let user = caller(state, creds).await?;
    if !user.is_admin {
        return Err(ApiError::Forbidden("admin only".into()));
    }
    Ok(())
}

/// Runs one compaction pass now and answers with its summary.
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
    let body: Advance = read_json(&req, payload, 1024).await?;
    if body.advance_ms < 0 {
        return Err(ApiError::BadRequest(
            "advanceMs: time only moves forward".into(),
        ));
    }
    clock.advance(body.advance_ms);
    use docsync_actors::clock::Clock;
    Ok(HttpResponse::Ok().json(json!({"nowMs": clock.now_ms()})))
}
