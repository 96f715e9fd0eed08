//! Documents as a collection: create, list, delete, and who am I.

use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use docsync_actors::registry::CloseDocument;
use docsync_actors::storage::accounts::new_id;
use docsync_actors::storage::documents;

use super::access::{access, caller, read_as, require_folder_write};
use super::auth::Credentials;
use super::body::read_json;
use super::error::ApiError;
use super::state::AppState;

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
    let (doc_id, _, role, _) = access(&state, &creds, &path.into_inner()).await?;
    if !role.can_delete() {
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
    let doc = doc_id.into_string();
    let deleted = state
        .storage
        .write(move |c| documents::delete(c, &doc))
        .await?;
    if !deleted {
        return Err(ApiError::NotFound);
    }
    Ok(HttpResponse::NoContent().finish())
}
