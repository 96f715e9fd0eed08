//! `GET /docs/{id}/first-rows`: the first rows of a document as a new reader sees them, for
//! a device with no copy of it to draw (read-only) while the whole snapshot is on its way.
//! Authorised like the snapshot (a bullet guest gets their view's first rows); a plain read
//! that opens no session.

use actix_web::{web, HttpResponse};
use serde::Deserialize;

use docsync_actors::ask::ask;
use docsync_actors::document::FirstRows;

use super::access::view_access;
use super::auth::Credentials;
use super::error::ApiError;
use super::state::AppState;

/// Rows asked for when the request names no count; a tall window shows about 40.
const DEFAULT_COUNT: usize = 80;
/// The most rows one request may ask for.
const MAX_COUNT: usize = 200;

#[derive(Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct FirstRowsQuery {
    /// How many rows at most (1–200; default 80).
    #[param(minimum = 1, maximum = 200)]
    count: Option<usize>,
}

#[utoipa::path(
    get,
    path = "/api/v1/docs/{id}/first-rows",
    tag = "sync",
    summary = "The first rows of a document as a new reader sees them, to draw while the snapshot loads",
    params(
        ("id" = String, Path, description = "The document's ID"),
        FirstRowsQuery,
    ),
    responses(
        (status = 200, description = "the first rows in document order: live bullets, nothing below a collapsed one", body = docsync_actors::document::FirstRowsReply),
        (status = 400, description = "the request is malformed or breaks a limit", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn first_rows(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
    query: web::Query<FirstRowsQuery>,
) -> Result<HttpResponse, ApiError> {
    let count = query.into_inner().count.unwrap_or(DEFAULT_COUNT);
    if !(1..=MAX_COUNT).contains(&count) {
        return Err(ApiError::BadRequest(format!(
            "count must be between 1 and {MAX_COUNT}"
        )));
    }
    let (doc_id, d) = view_access(&state, &creds, &path.into_inner()).await?;
    let caller = d.caller(None);
    let reply = ask(&state.registry, &doc_id, FirstRows { caller, count }).await?;
    Ok(HttpResponse::Ok().json(reply))
}
