//! Read-only views over committed data: markdown export, full-text search and tags. They
//! read SQLite directly (derived data is written with each change), never an actor.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use docsync_actors::storage::{derived, documents, roles, search};

use super::auth::{Authed, Credentials};
use super::error::ApiError;
use super::AppState;

const MAX_HITS: usize = 100;

pub async fn markdown(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let doc_id = path.into_inner();
    let creds = creds.clone();
    let md = state
        .storage
        .read(move |c| {
            let Some(user) = creds.user(c)? else {
                return Ok(Authed::Unauthorized);
            };
            if roles::doc_role(c, &user.id, &doc_id)?.is_none() {
                return Ok(Authed::Ok(None));
            }
            let title = documents::meta_title(c, &doc_id)?.unwrap_or_default();
            Ok(Authed::Ok(Some(derived::document_markdown(
                c, &doc_id, &title,
            )?)))
        })
        .await?
        .into_result()?
        .ok_or(ApiError::NotFound)?;
    Ok(HttpResponse::Ok()
        .content_type("text/markdown; charset=utf-8")
        .body(md))
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
    if q.len() > 500 {
        return Err(ApiError::BadRequest("q: at most 500 bytes".into()));
    }
    let creds = creds.clone();
    let hits = state
        .storage
        .read(move |c| {
            let Some(user) = creds.user(c)? else {
                return Ok(Authed::Unauthorized);
            };
            Ok(Authed::Ok(search::search(c, &user.id, &q, MAX_HITS)?))
        })
        .await?
        .into_result()?;
    Ok(HttpResponse::Ok().json(json!({"results": hits})))
}

pub async fn tags(
    state: web::Data<AppState>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    let creds = creds.clone();
    let tags = state
        .storage
        .read(move |c| {
            let Some(user) = creds.user(c)? else {
                return Ok(Authed::Unauthorized);
            };
            Ok(Authed::Ok(search::tags(c, &user.id)?))
        })
        .await?
        .into_result()?;
    Ok(HttpResponse::Ok().json(json!({"tags": tags})))
}

pub async fn tag(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let tag = path.into_inner();
    if tag.is_empty() || tag.len() > 100 {
        return Err(ApiError::BadRequest("tag: 1 to 100 bytes".into()));
    }
    let creds = creds.clone();
    let shown = tag.clone();
    let blocks = state
        .storage
        .read(move |c| {
            let Some(user) = creds.user(c)? else {
                return Ok(Authed::Unauthorized);
            };
            Ok(Authed::Ok(search::blocks_with_tag(
                c, &user.id, &tag, MAX_HITS,
            )?))
        })
        .await?
        .into_result()?;
    Ok(HttpResponse::Ok()
        .json(json!({"tag": shown.trim_start_matches('#').to_lowercase(), "blocks": blocks})))
}
