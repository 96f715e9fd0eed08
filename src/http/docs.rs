//! Documents as a collection: create, list, delete, and who am I.

use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use docsync_actors::registry::CloseDocument;
use docsync_actors::storage::accounts::{new_id, User};
use docsync_actors::storage::documents;
use docsync_actors::storage::roles::{self, Role};

use super::access_cache::Decision;
use super::auth::{read_as, Credentials};
use super::body::read_json;
use super::error::ApiError;
use super::AppState;

/// Resolves the caller and their role on a document. No read access → 404.
pub async fn access(
    state: &AppState,
    creds: &Credentials,
    doc_id: &str,
) -> Result<(User, Role, bool), ApiError> {
    let d = doc_access(state, creds, doc_id).await?;
    Ok((d.user, d.role, d.shared))
}

/// The caller's access to a document: from the access cache while nothing it depends on has
/// changed (no trip to the read pool: the pull after a wake-up is the hot path), else one
/// read through the role function, remembered when it grants access. No valid credentials
/// → 401; no read access → 404.
pub async fn doc_access(
    state: &AppState,
    creds: &Credentials,
    doc_id: &str,
) -> Result<Decision, ApiError> {
    let now = state.clock.now_ms();
    let key = creds.cache_key();
    if let Some(hit) = key
        .as_deref()
        .and_then(|k| state.access_cache.get(k, doc_id, now))
    {
        creds.resolved_as(&hit.user.name);
        return Ok(hit);
    }
    // Read before the database: a change committed meanwhile makes the answer unusable.
    let epoch = state.access_cache.epoch();
    let (who, doc) = (creds.clone(), doc_id.to_string());
    let found = state
        .storage
        .read(move |c| {
            let Some((user, until)) = who.user_until(c, now)? else {
                return Ok(None);
            };
            let role = roles::doc_role(c, &user.id, &doc)?;
            let shared = match role {
                Some(_) => roles::is_shared(c, &doc)?,
                None => false,
            };
            Ok(Some((user, role, shared, until)))
        })
        .await?;
    let (user, role, shared, until) = found.ok_or(ApiError::Unauthorized)?;
    let decision = Decision {
        user,
        role: role.ok_or(ApiError::NotFound)?,
        shared,
    };
    if let Some(k) = key {
        state
            .access_cache
            .put(&k, doc_id, epoch, decision.clone(), until);
    }
    Ok(decision)
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
