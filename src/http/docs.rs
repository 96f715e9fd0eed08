//! Documents as a collection: create, list, delete, and who am I.

use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use docsync_actors::registry::CloseDocument;
use docsync_actors::storage::accounts::{new_id, User};
use docsync_actors::storage::documents;
use docsync_actors::storage::roles::{self, Role};

use super::auth::{read_as, Credentials};
use super::body::read_json;
use super::error::ApiError;
use super::AppState;

/// Resolves the caller and their role on a document in one read. No read access → 404.
pub async fn access(
    state: &AppState,
    creds: &Credentials,
    doc_id: &str,
) -> Result<(User, Role, bool), ApiError> {
    let doc = doc_id.to_string();
    let (user, role, shared) = read_as(state, creds, move |c, user| {
        let role = roles::doc_role(c, &user.id, &doc)?;
        let shared = match role {
            Some(_) => roles::is_shared(c, &doc)?,
            None => false,
        };
        Ok((user.clone(), role, shared))
    })
    .await?;
    Ok((user, role.ok_or(ApiError::NotFound)?, shared))
}

/// Resolves the caller only.
pub async fn caller(state: &AppState, creds: &Credentials) -> Result<User, ApiError> {
    read_as(state, creds, |_, user| Ok(user.clone())).await
}

/// Creating something inside a folder needs write access to it (owner or a write share).
pub async fn require_folder_write(
    state: &AppState,
    user: &User,
    folder: &str,
    field: &str,
) -> Result<(), ApiError> {
    let (f, uid) = (folder.to_string(), user.id.clone());
    match state
        .storage
        .read(move |c| roles::folder_role(c, &uid, &f))
        .await?
    {
        None => Err(ApiError::BadRequest(format!(
            "{field}: no such folder {folder}"
        ))),
        Some(r) if !r.can_write() => {
            Err(ApiError::Forbidden("you cannot add to that folder".into()))
        }
        Some(_) => Ok(()),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CreateDoc {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    folder_id: Option<String>,
}

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
    Ok(HttpResponse::Created().json(json!({"docId": id})))
}

pub async fn list(
    state: web::Data<AppState>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    let docs = read_as(&state, &creds, |c, user| {
        documents::list_readable(c, &user.id)
    })
    .await?;
    Ok(HttpResponse::Ok().json(json!({"documents": docs})))
}

pub async fn delete(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let doc_id = path.into_inner();
    let (_, role, _) = access(&state, &creds, &doc_id).await?;
    if role != Role::Owner {
        return Err(ApiError::Forbidden(
            "only the owner may delete a document".into(),
        ));
    }
    // Close the actor first so nothing new is applied; its queued writes stay ahead of the
    // delete in the writer queue.
    state
        .registry
        .send(CloseDocument {
            doc_id: doc_id.clone(),
        })
        .await?;
    let doc = doc_id.clone();
    let deleted = state
        .storage
        .write(move |c| documents::delete(c, &doc))
        .await?;
    if !deleted {
        return Err(ApiError::NotFound);
    }
    Ok(HttpResponse::NoContent().finish())
}
