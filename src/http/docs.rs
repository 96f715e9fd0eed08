//! Documents as a collection: create, list, delete, and who am I.

use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};

use docsync_actors::registry::CloseDocument;
use docsync_actors::storage::accounts::new_id;
use docsync_actors::storage::roles::DocSummary;
use docsync_actors::storage::{documents, trash};

use super::access::{access, caller, read_as, require_folder_write};
use super::audited::Actor;
use super::auth::Credentials;
use super::body::read_json;
use super::error::ApiError;
use super::state::AppState;
use docsync_actors::storage::audit::{self, actions};
use serde_json::json;

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateDoc {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    folder_id: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DocCreated {
    doc_id: String,
}

/// Every document the caller can read, with their role.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct DocList {
    documents: Vec<DocSummary>,
}

#[utoipa::path(
    post,
    path = "/api/v1/docs",
    tag = "documents",
    summary = "Create a document (optionally in a folder)",
    request_body = CreateDoc,
    responses(
        (status = 201, description = "created", body = DocCreated),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "the caller's role does not allow this", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn create(
    state: web::Data<AppState>,
    creds: Credentials,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let user = caller(&state, &creds).await?;
    let body: CreateDoc = read_json(&req, payload, state.max_body()).await?;
    let title = body.title.unwrap_or_default();
    if title.len() > state.limits.max_title_bytes {
        return Err(ApiError::BadRequest(format!(
            "title: {} bytes is over the limit of {}",
            title.len(),
            state.limits.max_title_bytes
        )));
    }
    if let Some(folder) = &body.folder_id {
        require_folder_write(&state, &user, folder, "folderId").await?;
    }
    let id = new_id("doc_");
    let now = state.clock.now_ms();
    let (doc, owner) = (id.clone(), user.id.clone());
    state
        .storage
        .write(move |c| documents::create(c, &doc, &owner, &title, body.folder_id.as_deref(), now))
        .await?;
    Ok(HttpResponse::Created().json(DocCreated { doc_id: id }))
}

#[utoipa::path(
    get,
    path = "/api/v1/docs",
    tag = "documents",
    summary = "Every document the caller can read",
    responses(
        (status = 200, description = "documents with the caller's role", body = DocList),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn list(
    state: web::Data<AppState>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    let docs = read_as(&state, &creds, |c, user| {
        documents::list_readable(c, &user.id)
    })
    .await?;
    Ok(HttpResponse::Ok().json(DocList { documents: docs }))
}

#[utoipa::path(
    delete,
    path = "/api/v1/docs/{id}",
    tag = "documents",
    summary = "Delete a document (owner only): it goes to the owner's trash for history.trash_days",
    params(
        ("id" = String, Path, description = "The document's, folder's, team's or token's ID"),
    ),
    responses(
        (status = 204, description = "done"),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "the caller's role does not allow this", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn delete(
    state: web::Data<AppState>,
    creds: Credentials,
    req: HttpRequest,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let (doc_id, user, role, _) = access(&state, &creds, &path.into_inner()).await?;
    if !role.can_delete() {
        return Err(ApiError::Forbidden(
            "only the owner may delete a document".into(),
        ));
    }
    // Close the actor first so nothing new is applied; its queued writes stay ahead of the
    // move to the trash in the writer queue. Nobody reads a trashed document (the role
    // function), so collaborators' late syncs are refused and their tabs keep the text.
    state
        .registry
        .send(CloseDocument {
            doc_id: doc_id.clone(),
        })
        .await?;
    let (doc, by, now) = (doc_id.into_string(), user.id.clone(), state.clock.now_ms());
    let actor = Actor::of(&state, &req, Some(&user));
    let deleted = state
        .storage
        .write(move |c| {
            let trashed = trash::trash(c, &doc, &by, now)?;
            if trashed {
                let event = actor.event(actions::DOCUMENT_TRASHED, format!("doc:{doc}"), json!({}));
                audit::record(c, now, &event)?;
            }
            Ok(trashed)
        })
        .await?;
    if !deleted {
        return Err(ApiError::NotFound);
    }
    Ok(HttpResponse::NoContent().finish())
}
