//! Liveness and readiness.

use actix_web::{web, HttpResponse};

use super::error::ApiError;
use super::state::AppState;

/// `/healthz` and `/readyz`: `ok` / `ready` (a 503 JSON error otherwise).
#[derive(serde::Serialize, utoipa::ToSchema)]
pub(crate) struct Status {
    status: &'static str,
}

#[utoipa::path(
    get,
    path = "/healthz",
    tag = "operators",
    summary = "The process is up",
    responses(
        (status = 200, description = "ok", body = Status),
    ),
    security(()),
)]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(Status { status: "ok" })
}

/// Ready when a write goes through the writer, the schema is the newest and writes are not
/// failing for lack of space. While they are, each check probes for space with a real write
/// (see `storage::sqlite::space::probe`): a server reported not ready gets no traffic, so without
/// the probe nothing would ever find out that space came back.
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "operators",
    summary = "The process can serve (database writable, disk not full)",
    responses(
        (status = 200, description = "ready", body = Status),
        (status = 503, description = "not ready", body = crate::http::error::ErrorBody),
    ),
    security(()),
)]
pub async fn readyz(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    if let Some(cluster) = &state.cluster {
        if !cluster.is_member() {
            return Err(ApiError::Unavailable(
                "not in the cluster (starting, or fenced until it joins again)".into(),
            ));
        }
    }
    let storage_health = state.storage.health().clone();
    if storage_health.is_full() {
        let bytes = storage_health.probe_bytes();
        let probe = state.storage.probe_space(bytes);
        if matches!(probe.await, Ok(true)) {
            storage_health.space_found();
        } else {
            return Err(ApiError::Unavailable(
                "storage full: writes are refused until space is freed".into(),
            ));
        }
    }
    let current = state
        .storage
        .schema_is_current()
        .await
        .map_err(|e| ApiError::Unavailable(format!("database not writable: {e}")))?;
    if !current {
        return Err(ApiError::Unavailable(
            "database schema is not current".into(),
        ));
    }
    Ok(HttpResponse::Ok().json(Status { status: "ready" }))
}

/// Test hook, compiled only into debug builds (what `cargo test` runs) and for admins only:
/// `POST /api/v1/testing/max_page_count {"maxPageCount": N}` caps the writer connection's
/// database size (SQLite `PRAGMA max_page_count`), which makes "disk full" deterministic
/// without root or a small filesystem. `0` caps it at the current size; a large number
/// frees the space again. Answers the limit in force and the current page count.
#[cfg(debug_assertions)]
pub async fn set_max_page_count(
    state: web::Data<AppState>,
    creds: super::auth::Credentials,
    req: actix_web::HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct Body {
        max_page_count: u32,
    }
    let user = super::access::caller(&state, &creds).await?;
    if !user.is_admin {
        return Err(ApiError::Forbidden("admin only".into()));
    }
    let body: Body = super::body::read_json(
        &req,
        payload,
        docsync_actors::collab::validate::fixed::TINY_BODY_BYTES,
    )
    .await?;
    let (limit, pages) = state.storage.cap_pages(body.max_page_count).await?;
    Ok(HttpResponse::Ok().json(serde_json::json!({"maxPageCount": limit, "pageCount": pages})))
}
