//! Read-only views over committed data: markdown export, backlinks, full-text search and
//! tags. They read the database directly (derived data is written with each change), never
//! an actor; rights come from `access.rs` like everywhere. A bullet guest (PROTOCOL §10)
//! gets the same answers over their shared bullets only: the export of their part, search
//! and tags over it (the storage's `guest_` rows), never the document's title.

use std::convert::Infallible;

use actix_web::web::Bytes;
use actix_web::{web, HttpResponse};
use serde::{Deserialize, Serialize};

use docsync_actors::storage::search::{BlockHit, TagCount};
use docsync_actors::storage::{derived, documents, search};

use super::access::{read_as, view_access};
use super::auth::Credentials;
use super::error::ApiError;
use super::state::AppState;
use docsync_actors::storage::roles::Reach;

use docsync_actors::collab::validate::fixed::{
    MAX_SEARCH_HITS, MAX_SEARCH_QUERY_BYTES, MAX_TAG_BYTES,
};

/// Bullets of other readable documents that link to this one.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct Backlinks {
    backlinks: Vec<BlockHit>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct SearchResults {
    results: Vec<BlockHit>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct TagList {
    tags: Vec<TagCount>,
}

/// The bullets carrying one tag (`tag` as written, without `#`, lower case).
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct TagBlocks {
    tag: String,
    blocks: Vec<BlockHit>,
}

#[utoipa::path(
    get,
    path = "/api/v1/docs/{id}/markdown",
    tag = "read",
    summary = "The document as Markdown",
    params(
        ("id" = String, Path, description = "The document's, folder's, team's or token's ID"),
    ),
    responses(
        (status = 200, description = "Markdown", content_type = "text/markdown", body = String),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn markdown(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let (doc, decision) = view_access(&state, &creds, &path.into_inner()).await?;
    let export = state
        .storage
        .read(move |c| match &decision.reach {
            Reach::Document => {
                let title = documents::meta_title(c, doc.as_str())?.unwrap_or_default();
                derived::markdown_export(c, doc.as_str(), &title)
            }
            Reach::Bullets(roots) => {
                let ids: Vec<String> = roots.iter().map(|r| r.block_id.clone()).collect();
                derived::markdown_export_under(c, doc.as_str(), &ids)
            }
        })
        .await?;
    // Streamed chunk by chunk (indentation capped, see `derived::MAX_EXPORT_INDENT`): the
    // indented text is never built as a whole, whatever the document's size or depth.
    let body = futures::stream::iter(export.map(|chunk| Ok::<_, Infallible>(Bytes::from(chunk))));
    Ok(HttpResponse::Ok()
        .content_type("text/markdown; charset=utf-8")
        .streaming(body))
}

/// `GET /docs/{id}/backlinks`: the bullets of other readable documents that link to this one
/// (`[[doc_…]]`). Strangers get 404, like for the document itself.
#[utoipa::path(
    get,
    path = "/api/v1/docs/{id}/backlinks",
    tag = "read",
    summary = "Bullets of other readable documents linking here",
    params(
        ("id" = String, Path, description = "The document's, folder's, team's or token's ID"),
    ),
    responses(
        (status = 200, description = "backlinks", body = Backlinks),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn backlinks(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    // A bullet guest may ask too: the hits come from what they read, none from this
    // document's part they cannot see (another document's bullets only).
    let (doc, decision) = view_access(&state, &creds, &path.into_inner()).await?;
    let user = decision.user.id;
    let links = state
        .storage
        .read(move |c| search::backlinks(c, &user, doc.as_str(), MAX_SEARCH_HITS))
        .await?;
    Ok(HttpResponse::Ok().json(Backlinks { backlinks: links }))
}

#[derive(Deserialize)]
pub struct SearchQuery {
    #[serde(default)]
    q: String,
}

#[utoipa::path(
    get,
    path = "/api/v1/search",
    tag = "read",
    summary = "Full-text search over readable documents",
    params(
        ("q" = Option<String>, Query, description = "Words to find (letters and digits; the last one as a prefix); none: no results"),
    ),
    responses(
        (status = 200, description = "hits", body = SearchResults),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
    ),
)]
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
    Ok(HttpResponse::Ok().json(SearchResults { results: hits }))
}

#[utoipa::path(
    get,
    path = "/api/v1/tags",
    tag = "read",
    summary = "Every tag in readable documents, with counts",
    responses(
        (status = 200, description = "tags", body = TagList),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn tags(
    state: web::Data<AppState>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    let tags = read_as(&state, &creds, |c, user| search::tags(c, &user.id)).await?;
    Ok(HttpResponse::Ok().json(TagList { tags }))
}

#[utoipa::path(
    get,
    path = "/api/v1/tags/{tag}",
    tag = "read",
    summary = "The bullets carrying a tag",
    params(
        ("tag" = String, Path, description = "A tag, without `#`"),
    ),
    responses(
        (status = 200, description = "bullets", body = TagBlocks),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
    ),
)]
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
    Ok(HttpResponse::Ok().json(TagBlocks { tag: shown, blocks }))
}
