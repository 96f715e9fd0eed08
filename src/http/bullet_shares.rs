//! Sharing one bullet with everything below it (PROTOCOL §10): its share list, and the
//! bullets shared with the caller for their home page. What a guest then sees of the
//! document is decided by the one role function (`roles::doc_view`) and shown by the
//! document's actor.

use actix_web::{web, HttpRequest, HttpResponse};
use serde::Serialize;

use docsync_actors::collab::validate::DocId;
use docsync_actors::storage::audit;
use docsync_actors::storage::roles;
use docsync_actors::storage::sharing::{self, NamedShare, Share, SharedBullet};

use super::access::{access, read_as};
use super::audited::{share_changes, Actor};
use super::auth::Credentials;
use super::body::read_json_array;
use super::error::ApiError;
use super::sharing::invalid;
use super::state::AppState;

use docsync_actors::collab::validate::fixed::MAX_SHARES;

/// A bullet's shares, with the names of whom they name.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct BulletSharesReply {
    shares: Vec<NamedShare>,
}

/// The bullets shared with the caller.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct SharedBullets {
    bullets: Vec<SharedBullet>,
}

/// The document and bullet a request names, once the caller may manage the bullet's
/// shares: the document's owner, or (with `sharing.editors_share_bullets`) an editor. A
/// bullet the document does not have is 404, like a document the caller cannot read.
async fn manageable(
    state: &AppState,
    creds: &Credentials,
    doc: &str,
    block: &str,
) -> Result<
    (
        docsync_actors::collab::validate::DocId,
        docsync_actors::storage::accounts::User,
    ),
    ApiError,
> {
    let (doc, user, role, _) = access(state, creds, doc).await?;
    let editors = state.settings.sharing.editors_share_bullets;
    if !(role.can_manage_shares() || editors && role.can_write()) {
        return Err(ApiError::Forbidden(if editors {
            "only the document's owner and editors share its bullets".into()
        } else {
            "only the document's owner shares its bullets".into()
        }));
    }
    let (d, b) = (doc.clone(), block.to_string());
    let known = state
        .storage
        .read(move |c| sharing::block_in_doc(c, d.as_str(), &b))
        .await?;
    if !known {
        return Err(ApiError::NotFound);
    }
    Ok((doc, user))
}

/// The bullet's shares with the names of whom they name, as the answer.
async fn named_shares(
    state: &AppState,
    doc: DocId,
    block: String,
) -> Result<HttpResponse, ApiError> {
    let shares = state
        .storage
        .read(move |c| {
            let shares = sharing::block_shares(c, doc.as_str(), &block)?;
            sharing::with_names(c, shares)
        })
        .await?;
    Ok(HttpResponse::Ok().json(BulletSharesReply { shares }))
}

#[utoipa::path(
    get,
    path = "/api/v1/docs/{id}/blocks/{blockId}/shares",
    tag = "sharing",
    summary = "A bullet's shares (owner, or editors when allowed)",
    params(
        ("id" = String, Path, description = "The document's ID"),
        ("blockId" = String, Path, description = "The bullet's ID"),
    ),
    responses(
        (status = 200, description = "shares", body = BulletSharesReply),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "the caller's role does not allow this", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn get_block_shares(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (doc, block) = path.into_inner();
    let (doc, _) = manageable(&state, &creds, &doc, &block).await?;
    named_shares(&state, doc, block).await
}

#[utoipa::path(
    put,
    path = "/api/v1/docs/{id}/blocks/{blockId}/shares",
    tag = "sharing",
    summary = "Replace a bullet's shares (owner, or editors when allowed)",
    params(
        ("id" = String, Path, description = "The document's ID"),
        ("blockId" = String, Path, description = "The bullet's ID"),
    ),
    request_body = Vec<Share>,
    responses(
        (status = 200, description = "the shares now", body = BulletSharesReply),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "the caller's role does not allow this", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn put_block_shares(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<(String, String)>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let (raw_doc, block) = path.into_inner();
    let shares: Vec<Share> = read_json_array(&req, payload, state.max_body()).await?;
    if shares.len() > MAX_SHARES {
        return Err(ApiError::BadRequest(format!("at most {MAX_SHARES} shares")));
    }
    let (doc, user) = manageable(&state, &creds, &raw_doc, &block).await?;
    let (d, b) = (doc.clone(), block.clone());
    let (actor, now) = (Actor::of(&state, &req, Some(&user)), state.clock.now_ms());
    state
        .storage
        .write(move |c| {
            let current = sharing::block_shares(c, d.as_str(), &b)?;
            sharing::check_team_shares(c, &user.id, user.is_admin, &current, &shares)?;
            let owner = sharing::doc_owner(c, d.as_str())?.unwrap_or_default();
            sharing::set_block_shares(c, d.as_str(), &b, &owner, &shares)?;
            let target = format!("bullet:{}/{b}", d.as_str());
            for event in share_changes(&actor, &target, &current, &shares) {
                audit::record(c, now, &event)?;
            }
            Ok(())
        })
        .await
        .map_err(invalid)?;
    // Open streams and sessions are checked again: a guest whose share ended hears no more.
    state.registry.access_changed(vec![doc.to_string()]).await;
    named_shares(&state, doc, block).await
}

#[utoipa::path(
    get,
    path = "/api/v1/docs/{id}/blocks/{blockId}/access",
    tag = "sharing",
    summary = "Who sees a bullet, and through what (the document, a folder, a team, a bullet)",
    params(
        ("id" = String, Path, description = "The document's ID"),
        ("blockId" = String, Path, description = "The bullet's ID"),
    ),
    responses(
        (status = 200, description = "people (owner first, by role) and teams", body = roles::AccessList),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn who_sees_bullet(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (doc, block) = path.into_inner();
    // Anyone who reads the whole document may see who else does (as for the document).
    let (doc, ..) = access(&state, &creds, &doc).await?;
    let list = state
        .storage
        .read(move |c| roles::who_has_access_to_bullet(c, doc.as_str(), &block))
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(HttpResponse::Ok().json(list))
}

#[utoipa::path(
    get,
    path = "/api/v1/shared/bullets",
    tag = "sharing",
    summary = "The bullets shared with the caller (their home page's \"Shared with me: bullets\")",
    responses(
        (status = 200, description = "bullets", body = SharedBullets),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn shared_with_me(
    state: web::Data<AppState>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    let bullets = read_as(&state, &creds, |c, user| {
        sharing::shared_bullets(c, &user.id)
    })
    .await?;
    Ok(HttpResponse::Ok().json(SharedBullets { bullets }))
}
