//! Read-only views over committed data: markdown export, full-text search and tags. They
//! read SQLite directly (derived data is written with each change), never an actor.

use std::convert::Infallible;

use actix_web::web::Bytes;
use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use docsync_actors::storage::{derived, documents, roles, search};

use super::access::read_as;
use super::auth::Credentials;
use super::error::ApiError;
use super::state::AppState;

use docsync_actors::collab::validate::fixed::{
    MAX_SEARCH_HITS, MAX_SEARCH_QUERY_BYTES, MAX_TAG_BYTES,
};
use docsync_actors::collab::validate::DocId;

pub async fn markdown(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    // Not a document ID: answered as an unknown document, after the credentials.
    let doc_id = DocId::parse(&path.into_inner()).ok();
    let export = read_as(&state, &creds, move |c, user| {
        let Some(doc_id) = doc_id else {
            return Ok(None);
        };
        let doc_id = doc_id.as_str();
        if roles::doc_role(c, &user.id, doc_id)?.is_none() {
            return Ok(None);
        }
        let title = documents::meta_title(c, doc_id)?.unwrap_or_default();
        derived::markdown_export(c, doc_id, &title).map(Some)
    })
    .await?
    .ok_or(ApiError::NotFound)?;
    // Streamed chunk by chunk (indentation capped, see `derived::MAX_EXPORT_INDENT`): the
    // indented text is never built as a whole, whatever the document's size or depth.
    let body = futures::stream::iter(export.map(|chunk| Ok::<_, Infallible>(Bytes::from(chunk))));
    Ok(HttpResponse::Ok()
        .content_type("text/markdown; charset=utf-8")
        .streaming(body))
}

/// `GET /docs/{id}/backlinks`: the bullets of other readable documents that link to this one
/// (`[[doc_…]]`). Strangers get 404, like for the document itself.
pub async fn backlinks(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let doc_id = DocId::parse(&path.into_inner()).ok();
    let links = read_as(&state, &creds, move |c, user| {
        let Some(doc_id) = doc_id else {
            return Ok(None);
        };
        if roles::doc_role(c, &user.id, doc_id.as_str())?.is_none() {
            return Ok(None);
        }
        search::backlinks(c, &user.id, doc_id.as_str(), MAX_SEARCH_HITS).map(Some)
    })
    .await?
    .ok_or(ApiError::NotFound)?;
    Ok(HttpResponse::Ok().json(json!({ "backlinks": links })))
}

#[derive(Deserialize)]
pub struct SearchQuery {
    #[serde(default)]
    q: String,
}

pub async fn search(
    state: web::Data<AppState>,
    creds: Credentials,
    query: web::Query<SearchQuery>,
) -> Result<HttpResponse, ApiError> {
    let q = query.into_inner().q;
    if q.len() > MAX_SEARCH_QUERY_BYTES {
        return Err(ApiError::BadRequest(format!(
            "q: at most {MAX_SEARCH_QUERY_BYTES} bytes"
        )));
    }
    let hits = read_as(&state, &creds, move |c, user| {
        search::search(c, &user.id, &q, MAX_SEARCH_HITS)
    })
    .await?;
    Ok(HttpResponse::Ok().json(json!({"results": hits})))
}

pub async fn tags(
    state: web::Data<AppState>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    let tags = read_as(&state, &creds, |c, user| search::tags(c, &user.id)).await?;
    Ok(HttpResponse::Ok().json(json!({"tags": tags})))
}

pub async fn tag(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let tag = path.into_inner();
    if tag.is_empty() || tag.len() > MAX_TAG_BYTES {
        return Err(ApiError::BadRequest(format!(
            "tag: 1 to {MAX_TAG_BYTES} bytes"
        )));
    }
    let shown = tag.trim_start_matches('#').to_lowercase();
    let blocks = read_as(&state, &creds, move |c, user| {
        search::blocks_with_tag(c, &user.id, &tag, MAX_SEARCH_HITS)
    })
    .await?;
    Ok(HttpResponse::Ok().json(json!({"tag": shown, "blocks": blocks})))
}
