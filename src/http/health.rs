//! Liveness and readiness.

use actix_web::{web, HttpResponse};
use serde_json::json;

use docsync_actors::storage::migrate;

use super::error::ApiError;
use super::AppState;

pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

/// Ready when a write goes through the writer and the schema is the newest.
pub async fn readyz(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let current = state
        .storage
        .write(migrate::is_current)
        .await
        .map_err(|e| ApiError::Unavailable(format!("database not writable: {e}")))?;
    if !current {
        return Err(ApiError::Unavailable(
            "database schema is not current".into(),
        ));
    }
    Ok(HttpResponse::Ok().json(json!({"status": "ready"})))
}
