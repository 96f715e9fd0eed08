//! Shares, folders, teams and document settings (PROTOCOL §3). Every decision about who
//! may do what goes through the role functions in `storage::roles`.

use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};

use docsync_actors::document::SetIcon;
use docsync_actors::storage::accounts;
use docsync_actors::storage::roles::{self, FolderSummary};
use docsync_actors::storage::sharing::{self, NamedShare, Share, Team};
use docsync_actors::storage::StorageError;

use super::access::{access, caller, owned_folder, read_as, require_folder_write};
use super::audited::{share_changes, Actor};
use super::auth::Credentials;
use super::body::{read_json, read_json_array};
use super::error::ApiError;
use super::state::AppState;
use docsync_actors::storage::audit;

use docsync_actors::collab::validate::fixed::{
    MAX_ICON_BYTES, MAX_NAME_BYTES, MAX_SHARES, MAX_TEAM_MEMBERS, SMALL_BODY_BYTES,
};

fn check_name(field: &str, name: &str) -> Result<(), ApiError> {
    if name.trim().is_empty() || name.len() > MAX_NAME_BYTES {
        return Err(ApiError::BadRequest(format!(
            "{field}: 1 to {MAX_NAME_BYTES} bytes"
        )));
    }
    Ok(())
}

/// A share list the storage refused as invalid is the request's fault: 400.
pub(crate) fn invalid(e: StorageError) -> ApiError {
    match e {
        StorageError::Invalid(m) => ApiError::BadRequest(m),
        other => other.into(),
    }
}

/// A document's or folder's shares, with the names of whom they name.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct SharesReply {
    shares: Vec<NamedShare>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct TeamList {
    teams: Vec<Team>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct FolderList {
    folders: Vec<FolderSummary>,
}

/// A user found by exact name (to share with).
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FoundUser {
    id: String,
    name: String,
    display_name: String,
}

#[utoipa::path(
    get,
    path = "/api/v1/docs/{id}/shares",
    tag = "sharing",
    summary = "A document's shares (owner)",
    params(
        ("id" = String, Path, description = "The document's, folder's, team's or token's ID"),
    ),
    responses(
        (status = 200, description = "shares", body = SharesReply),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "the caller's role does not allow this", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn get_doc_shares(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let (doc, _, role, _) = access(&state, &creds, &path.into_inner()).await?;
    if !role.can_manage_shares() {
        return Err(ApiError::Forbidden("only the owner manages shares".into()));
    }
    let shares = state
        .storage
        .read(move |c| {
            let shares = sharing::doc_shares(c, doc.as_str())?;
            sharing::with_names(c, shares)
        })
        .await?;
    Ok(HttpResponse::Ok().json(SharesReply { shares }))
}

#[utoipa::path(
    put,
    path = "/api/v1/docs/{id}/shares",
    tag = "sharing",
    summary = "Replace a document's shares (owner)",
    params(
        ("id" = String, Path, description = "The document's, folder's, team's or token's ID"),
    ),
    request_body = Vec<Share>,
    responses(
        (status = 200, description = "the shares now", body = SharesReply),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "the caller's role does not allow this", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn put_doc_shares(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let raw_doc = path.into_inner();
    let shares: Vec<Share> = read_json_array(&req, payload, state.max_body()).await?;
    if shares.len() > MAX_SHARES {
        return Err(ApiError::BadRequest(format!("at most {MAX_SHARES} shares")));
    }
    let (doc, user, role, _) = access(&state, &creds, &raw_doc).await?;
    if !role.can_manage_shares() {
        return Err(ApiError::Forbidden("only the owner manages shares".into()));
    }
    let d = doc.clone();
    let (actor, now) = (Actor::of(&state, &req, Some(&user)), state.clock.now_ms());
    state
        .storage
        .write(move |c| {
            let current = sharing::doc_shares(c, d.as_str())?;
            sharing::check_team_shares(c, &user.id, user.is_admin, &current, &shares)?;
            sharing::set_doc_shares(c, d.as_str(), &user.id, &shares)?;
            let target = format!("doc:{}", d.as_str());
            for event in share_changes(&actor, &target, &current, &shares) {
                audit::record(c, now, &event)?;
            }
            Ok(())
        })
        .await
        .map_err(invalid)?;
    state.registry.access_changed(vec![doc.to_string()]).await;
    let shares = state
        .storage
        .read(move |c| {
            let shares = sharing::doc_shares(c, doc.as_str())?;
            sharing::with_names(c, shares)
        })
        .await?;
    Ok(HttpResponse::Ok().json(SharesReply { shares }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct PatchDoc {
    /// An emoji or short name; `null` removes it.
    #[serde(default, deserialize_with = "double")]
    #[schema(value_type = Option<String>)]
    icon: Option<Option<String>>,
    /// `null` moves the document out of its folder.
    #[serde(default, deserialize_with = "double")]
    #[schema(value_type = Option<String>)]
    folder_id: Option<Option<String>>,
}

fn double<'de, D: serde::Deserializer<'de>>(de: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(de).map(Some)
}

#[utoipa::path(
    patch,
    path = "/api/v1/docs/{id}",
    tag = "documents",
    summary = "Change a document's icon or folder",
    params(
        ("id" = String, Path, description = "The document's, folder's, team's or token's ID"),
    ),
    request_body = PatchDoc,
    responses(
        (status = 204, description = "done"),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "the caller's role does not allow this", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn patch_doc(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let raw_doc = path.into_inner();
    let body: PatchDoc = read_json(&req, payload, SMALL_BODY_BYTES).await?;
    if let Some(Some(icon)) = &body.icon {
        if icon.len() > MAX_ICON_BYTES {
            return Err(ApiError::BadRequest(format!(
                "icon: at most {MAX_ICON_BYTES} bytes"
            )));
        }
    }
    let (doc, user, role, _) = access(&state, &creds, &raw_doc).await?;
    if body.icon.is_some() && !role.can_write() {
        return Err(ApiError::Forbidden(
            "this document is read-only for you".into(),
        ));
    }
    if body.folder_id.is_some() && !role.can_move_to_folder() {
        return Err(ApiError::Forbidden(
            "only the owner moves a document to another folder".into(),
        ));
    }
    if let Some(Some(folder)) = &body.folder_id {
        require_folder_write(&state, &user, folder, "folderId").await?;
    }
    if let Some(folder) = body.folder_id {
        let (d, now) = (doc.clone(), state.clock.now_ms());
        state
            .storage
            .write(move |c| sharing::set_doc_folder(c, d.as_str(), folder.as_deref(), now))
            .await?;
        state.registry.access_changed(vec![doc.to_string()]).await;
    }
    if let Some(icon) = body.icon {
        docsync_actors::ask::ask(&state.registry, &doc, SetIcon { icon }).await?;
    }
    Ok(HttpResponse::NoContent().finish())
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CreateFolder {
    name: String,
    #[serde(default)]
    parent_id: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/folders",
    tag = "folders",
    summary = "Create a folder",
    request_body = CreateFolder,
    responses(
        (status = 201, description = "created", body = docsync_actors::storage::sharing::Folder),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "the caller's role does not allow this", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn create_folder(
    state: web::Data<AppState>,
    creds: Credentials,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let body: CreateFolder = read_json(&req, payload, SMALL_BODY_BYTES).await?;
    check_name("name", &body.name)?;
    let user = caller(&state, &creds).await?;
    if let Some(parent) = &body.parent_id {
        require_folder_write(&state, &user, parent, "parentId").await?;
    }
    let now = state.clock.now_ms();
    let folder = state
        .storage
        .write(move |c| {
            sharing::create_folder(c, &body.name, &user.id, body.parent_id.as_deref(), now)
        })
        .await?;
    Ok(HttpResponse::Created().json(folder))
}

/// `PATCH /folders/{id}`: `{name?, parentId?}` (`parentId: null` = top level). Owner only; the
/// new parent must be a folder the caller can add to, and not the folder or one inside it.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct PatchFolder {
    name: Option<String>,
    /// `null` moves the folder to the top level.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    parent_id: Option<Option<String>>,
}

/// A field that is there (even as `null`) is `Some`; one that is absent is `None`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

#[utoipa::path(
    patch,
    path = "/api/v1/folders/{id}",
    tag = "folders",
    summary = "Rename or move a folder (never into itself)",
    params(
        ("id" = String, Path, description = "The document's, folder's, team's or token's ID"),
    ),
    request_body = PatchFolder,
    responses(
        (status = 200, description = "the folder now", body = docsync_actors::storage::sharing::Folder),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "the caller's role does not allow this", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn patch_folder(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let folder = path.into_inner();
    let body: PatchFolder = read_json(&req, payload, SMALL_BODY_BYTES).await?;
    if body.name.is_none() && body.parent_id.is_none() {
        return Err(ApiError::BadRequest(
            "nothing to change: name or parentId".into(),
        ));
    }
    if let Some(n) = &body.name {
        check_name("name", n)?;
    }
    owned_folder(&state, &creds, &folder).await?;
    let user = caller(&state, &creds).await?;
    if let Some(Some(parent)) = &body.parent_id {
        require_folder_write(&state, &user, parent, "parentId").await?;
    }
    let f = folder.clone();
    let doc_ids = state
        .storage
        .write(move |c| {
            if let Some(n) = &body.name {
                sharing::rename_folder(c, &f, n.trim())?;
            }
            match &body.parent_id {
                Some(p) => sharing::move_folder(c, &f, p.as_deref()),
                None => Ok(Vec::new()),
            }
        })
        .await
        .map_err(invalid)?;
    if !doc_ids.is_empty() {
        state.registry.access_changed(doc_ids).await;
    }
    let updated = state
        .storage
        .read(move |c| sharing::folder(c, &folder))
        .await?;
    Ok(HttpResponse::Ok().json(updated))
}

/// `DELETE /folders/{id}`: owner only. Its documents and subfolders move to its parent; no
/// document is ever deleted with a folder.
#[utoipa::path(
    delete,
    path = "/api/v1/folders/{id}",
    tag = "folders",
    summary = "Delete a folder; its contents move to its parent",
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
pub async fn delete_folder(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let folder = path.into_inner();
    owned_folder(&state, &creds, &folder).await?;
    let now = state.clock.now_ms();
    let doc_ids = state
        .storage
        .write(move |c| sharing::delete_folder(c, &folder, now))
        .await?;
    state.registry.access_changed(doc_ids).await;
    Ok(HttpResponse::NoContent().finish())
}

#[utoipa::path(
    get,
    path = "/api/v1/folders/{id}/shares",
    tag = "sharing",
    summary = "A folder's shares (owner)",
    params(
        ("id" = String, Path, description = "The document's, folder's, team's or token's ID"),
    ),
    responses(
        (status = 200, description = "shares", body = SharesReply),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "the caller's role does not allow this", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn get_folder_shares(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let folder = path.into_inner();
    owned_folder(&state, &creds, &folder).await?;
    let shares = state
        .storage
        .read(move |c| {
            let shares = sharing::folder_shares(c, &folder)?;
            sharing::with_names(c, shares)
        })
        .await?;
    Ok(HttpResponse::Ok().json(SharesReply { shares }))
}

#[utoipa::path(
    put,
    path = "/api/v1/folders/{id}/shares",
    tag = "sharing",
    summary = "Replace a folder's shares (owner)",
    params(
        ("id" = String, Path, description = "The document's, folder's, team's or token's ID"),
    ),
    request_body = Vec<Share>,
    responses(
        (status = 200, description = "the shares now", body = SharesReply),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "the caller's role does not allow this", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn put_folder_shares(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let folder = path.into_inner();
    let shares: Vec<Share> = read_json_array(&req, payload, state.max_body()).await?;
    if shares.len() > MAX_SHARES {
        return Err(ApiError::BadRequest(format!("at most {MAX_SHARES} shares")));
    }
    owned_folder(&state, &creds, &folder).await?;
    let user = caller(&state, &creds).await?;
    let f = folder.clone();
    let (actor, now) = (Actor::of(&state, &req, Some(&user)), state.clock.now_ms());
    let doc_ids = state
        .storage
        .write(move |c| {
            let current = sharing::folder_shares(c, &f)?;
            sharing::check_team_shares(c, &user.id, user.is_admin, &current, &shares)?;
            sharing::set_folder_shares(c, &f, &shares)?;
            for event in share_changes(&actor, &format!("folder:{f}"), &current, &shares) {
                audit::record(c, now, &event)?;
            }
            sharing::docs_under_folder(c, &f)
        })
        .await
        .map_err(invalid)?;
    state.registry.access_changed(doc_ids).await;
    let shares = state
        .storage
        .read(move |c| {
            let shares = sharing::folder_shares(c, &folder)?;
            sharing::with_names(c, shares)
        })
        .await?;
    Ok(HttpResponse::Ok().json(SharesReply { shares }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateTeam {
    name: String,
}

#[utoipa::path(
    post,
    path = "/api/v1/teams",
    tag = "teams",
    summary = "Create a team (the caller owns it)",
    request_body = CreateTeam,
    responses(
        (status = 201, description = "created", body = Team),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn create_team(
    state: web::Data<AppState>,
    creds: Credentials,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let body: CreateTeam = read_json(&req, payload, SMALL_BODY_BYTES).await?;
    check_name("name", &body.name)?;
    let user = caller(&state, &creds).await?;
    let now = state.clock.now_ms();
    let team = state
        .storage
        .write(move |c| sharing::create_team(c, &body.name, &user.id, now))
        .await?;
    Ok(HttpResponse::Created().json(team))
}

#[utoipa::path(
    get,
    path = "/api/v1/teams",
    tag = "teams",
    summary = "The caller's teams",
    responses(
        (status = 200, description = "teams", body = TeamList),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn list_teams(
    state: web::Data<AppState>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    let teams = read_as(&state, &creds, |c, user| sharing::my_teams(c, &user.id)).await?;
    Ok(HttpResponse::Ok().json(TeamList { teams }))
}

/// Every folder the caller can see, with their role (the home page's folder tree).
#[utoipa::path(
    get,
    path = "/api/v1/folders",
    tag = "folders",
    summary = "Every folder the caller can see, with their role",
    responses(
        (status = 200, description = "folders", body = FolderList),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn list_folders(
    state: web::Data<AppState>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    let folders = read_as(&state, &creds, |c, user| {
        roles::readable_folders(c, &user.id)
    })
    .await?;
    Ok(HttpResponse::Ok().json(FolderList { folders }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Members {
    members: Vec<String>,
}

#[utoipa::path(
    put,
    path = "/api/v1/teams/{id}/members",
    tag = "teams",
    summary = "Replace a team's members (its owner)",
    params(
        ("id" = String, Path, description = "The document's, folder's, team's or token's ID"),
    ),
    request_body = Members,
    responses(
        (status = 200, description = "the team now", body = Team),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "the caller's role does not allow this", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn put_members(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let team_id = path.into_inner();
    let body: Members = read_json(&req, payload, state.max_body()).await?;
    if body.members.len() > MAX_TEAM_MEMBERS {
        return Err(ApiError::BadRequest(format!(
            "members: at most {MAX_TEAM_MEMBERS}"
        )));
    }
    let user = caller(&state, &creds).await?;
    let t = team_id.clone();
    let team = state.storage.read(move |c| sharing::team(c, &t)).await?;
    let Some(team) = team.filter(|t| t.owner_id == user.id || t.members.contains(&user.id)) else {
        return Err(ApiError::NotFound);
    };
    if team.owner_id != user.id {
        return Err(ApiError::Forbidden(
            "only the team's owner manages members".into(),
        ));
    }
    let owner = team.owner_id.clone();
    let doc_ids = state
        .storage
        .write(move |c| {
            sharing::set_members(c, &team_id, &owner, &body.members)?;
            sharing::docs_reached_by_team(c, &team_id)
        })
        .await
        .map_err(invalid)?;
    state.registry.access_changed(doc_ids).await;
    let t = team.team_id.clone();
    let team = state.storage.read(move |c| sharing::team(c, &t)).await?;
    Ok(HttpResponse::Ok().json(team))
}

#[derive(Deserialize)]
pub struct UserQuery {
    name: String,
}

/// Finds a user by exact name (to share with them).
#[utoipa::path(
    get,
    path = "/api/v1/users",
    tag = "sharing",
    summary = "Find a user by exact name (to share with them)",
    params(
        ("name" = String, Query, description = "The exact user name"),
    ),
    responses(
        (status = 200, description = "the user", body = FoundUser),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn find_user(
    state: web::Data<AppState>,
    creds: Credentials,
    query: web::Query<UserQuery>,
) -> Result<HttpResponse, ApiError> {
    caller(&state, &creds).await?;
    let name = query.into_inner().name;
    let user = state
        .storage
        .read(move |c| accounts::user_by_name(c, &name))
        .await?;
    match user {
        Some(u) => Ok(HttpResponse::Ok().json(FoundUser {
            id: u.id,
            name: u.name,
            display_name: u.display_name,
        })),
        None => Err(ApiError::NotFound),
    }
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UserSearch {
    /// Part of a user name or display name (any case); 1 to 100 characters.
    q: String,
}

/// People to pick when sharing.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct FoundUsers {
    users: Vec<FoundUser>,
}

/// Finds people by part of their name or display name (the share dialog's picker).
#[utoipa::path(
    get,
    path = "/api/v1/users/search",
    tag = "sharing",
    summary = "Find people by part of their name or display name (at most 20)",
    params(UserSearch),
    responses(
        (status = 200, description = "the people found, by display name", body = FoundUsers),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn search_users(
    state: web::Data<AppState>,
    creds: Credentials,
    query: web::Query<UserSearch>,
) -> Result<HttpResponse, ApiError> {
    caller(&state, &creds).await?;
    let q = query.into_inner().q;
    let len = q.trim().chars().count();
    if len == 0 || len > 100 {
        return Err(ApiError::BadRequest("q: 1 to 100 characters".into()));
    }
    let users = state
        .storage
        .read(move |c| accounts::find_users(c, &q, 20))
        .await?;
    Ok(HttpResponse::Ok().json(FoundUsers {
        users: users
            .into_iter()
            .map(|u| FoundUser {
                id: u.id,
                name: u.name,
                display_name: u.display_name,
            })
            .collect(),
    }))
}

/// Everyone who can open a document, with their role and how they got it, and the teams
/// with their members — for every reader of the document (they see who they share it with).
#[utoipa::path(
    get,
    path = "/api/v1/docs/{id}/access",
    tag = "sharing",
    summary = "Who has access to a document, and through what",
    params(
        ("id" = String, Path, description = "The document's, folder's, team's or token's ID"),
    ),
    responses(
        (status = 200, description = "people (owner first, by role) and teams", body = roles::AccessList),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn who_has_access(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let (doc, _, _, _) = access(&state, &creds, &path.into_inner()).await?;
    let list = state
        .storage
        .read(move |c| roles::who_has_access(c, doc.as_str()))
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(HttpResponse::Ok().json(list))
}

/// `DELETE /docs/{id}/shares/me`: the caller declines a document shared with them directly
/// (their own lists stop showing it; the owner's share list loses them). 404 when there is
/// no such share (shares through a team or folder are left with the team or the folder).
#[utoipa::path(
    delete,
    path = "/api/v1/docs/{id}/shares/me",
    tag = "sharing",
    summary = "Leave a document shared with the caller",
    params(
        ("id" = String, Path, description = "The document's, folder's, team's or token's ID"),
    ),
    responses(
        (status = 204, description = "done"),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn leave_doc_share(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let doc = path.into_inner();
    let user = caller(&state, &creds).await?;
    let d = doc.clone();
    let left = state
        .storage
        .write(move |c| sharing::leave_doc_share(c, &d, &user.id))
        .await?;
    if !left {
        return Err(ApiError::NotFound);
    }
    state.registry.access_changed(vec![doc]).await;
    Ok(HttpResponse::NoContent().finish())
}

/// `DELETE /folders/{id}/shares/me`: the caller declines a folder shared with them directly.
#[utoipa::path(
    delete,
    path = "/api/v1/folders/{id}/shares/me",
    tag = "sharing",
    summary = "Leave a folder shared with the caller",
    params(
        ("id" = String, Path, description = "The document's, folder's, team's or token's ID"),
    ),
    responses(
        (status = 204, description = "done"),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn leave_folder_share(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let folder = path.into_inner();
    let user = caller(&state, &creds).await?;
    let left = state
        .storage
        .write(move |c| {
            let left = sharing::leave_folder_share(c, &folder, &user.id)?;
            left.then(|| sharing::docs_under_folder(c, &folder))
                .transpose()
        })
        .await?;
    let Some(doc_ids) = left else {
        return Err(ApiError::NotFound);
    };
    state.registry.access_changed(doc_ids).await;
    Ok(HttpResponse::NoContent().finish())
}

/// `DELETE /teams/{id}/members/me`: the caller leaves a team (its owner cannot: 403).
#[utoipa::path(
    delete,
    path = "/api/v1/teams/{id}/members/me",
    tag = "teams",
    summary = "Leave a team",
    params(
        ("id" = String, Path, description = "The document's, folder's, team's or token's ID"),
    ),
    responses(
        (status = 204, description = "done"),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn leave_team(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let team_id = path.into_inner();
    let user = caller(&state, &creds).await?;
    let t = team_id.clone();
    let team = state.storage.read(move |c| sharing::team(c, &t)).await?;
    let Some(team) = team.filter(|t| t.members.contains(&user.id)) else {
        return Err(ApiError::NotFound);
    };
    if team.owner_id == user.id {
        return Err(ApiError::Forbidden(
            "the team's owner cannot leave it".into(),
        ));
    }
    let doc_ids = state
        .storage
        .write(move |c| {
            sharing::leave_team(c, &team_id, &user.id)?;
            sharing::docs_reached_by_team(c, &team_id)
        })
        .await?;
    state.registry.access_changed(doc_ids).await;
    Ok(HttpResponse::NoContent().finish())
}
