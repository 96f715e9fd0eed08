//! Self-service (PROTOCOL §9): a person's display name, their password, and the sessions
//! they are signed in with — each one they can end from anywhere. Their API tokens are in
//! `accounts.rs`.

use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};
use serde_json::json;

use docsync_actors::collab::validate::fixed::SMALL_BODY_BYTES;
use docsync_actors::storage::accounts::{self, SessionInfo};
use docsync_actors::storage::audit::{self, actions};
use docsync_actors::storage::people;

use super::access::{caller, read_as};
use super::audited::Actor;
use super::auth::Credentials;
use super::body::read_json;
use super::error::ApiError;
use super::state::AppState;
use crate::auth::{names, password};

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct MePatch {
    display_name: String,
}

#[utoipa::path(
    patch,
    path = "/api/v1/me",
    tag = "accounts",
    summary = "Change the caller's display name",
    request_body = MePatch,
    responses(
        (status = 200, description = "the caller, changed", body = docsync_actors::storage::accounts::User),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn patch_me(
    state: web::Data<AppState>,
    creds: Credentials,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let user = caller(&state, &creds).await?;
    let body: MePatch = read_json(&req, payload, SMALL_BODY_BYTES).await?;
    names::check_display_name(&body.display_name).map_err(ApiError::BadRequest)?;
    let (actor, now) = (Actor::of(&state, &req, Some(&user)), state.clock.now_ms());
    let changed = state
        .storage
        .write(move |c| {
            people::set_display_name(c, &user.id, body.display_name.trim())?;
            let event = actor.event(
                actions::USER_RENAMED,
                format!("user:{}", user.name),
                json!({"from": user.display_name, "to": body.display_name.trim()}),
            );
            audit::record(c, now, &event)?;
            accounts::user_by_id(c, &user.id)
        })
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(HttpResponse::Ok().json(changed))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PasswordChange {
    current: String,
    new: String,
}

#[utoipa::path(
    post,
    path = "/api/v1/me/password",
    tag = "accounts",
    summary = "Change the caller's password; every other session of theirs ends",
    request_body = PasswordChange,
    responses(
        (status = 204, description = "changed"),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "`forbidden`: the current password is wrong", body = crate::http::error::ErrorBody),
        (status = 503, description = "`busy`: every password check is taken; try again (`Retry-After`)", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn change_password(
    state: web::Data<AppState>,
    creds: Credentials,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let user = caller(&state, &creds).await?;
    let body: PasswordChange = read_json(&req, payload, SMALL_BODY_BYTES).await?;
    password::check_new(&body.new, &user.name).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let name = user.name.clone();
    let record = state
        .storage
        .read(move |c| accounts::login_record(c, &name))
        .await?;
    let (current, new) = (body.current, body.new);
    // Both argon2 runs on the password threads: the check of the current password, then
    // the new hash.
    let hashed = state
        .passwords
        .run(move || match record {
            Some((_, Some(phc), _)) if password::verify(&current, &phc) => {
                password::hash(&new).ok().map(Some)
            }
            _ => Some(None),
        })
        .await
        .map_err(|_| ApiError::Busy {
            retry_after: 1,
            message: "too many password checks at once; try again in a second".into(),
        })?;
    let phc = match hashed {
        Some(Some(phc)) => phc,
        Some(None) => {
            return Err(ApiError::Forbidden(
                "current: that is not your password".into(),
            ))
        }
        None => return Err(ApiError::Internal("could not hash the password".into())),
    };
    let keep = creds.session_secret().map(str::to_string);
    let (actor, now) = (Actor::of(&state, &req, Some(&user)), state.clock.now_ms());
    state
        .storage
        .write(move |c| {
            match &keep {
                Some(secret) => accounts::change_own_password(c, &user.id, &phc, secret)?,
                None => accounts::set_password_hash(c, &user.id, &phc)?,
            }
            let event = actor.event(
                actions::PASSWORD_CHANGED,
                format!("user:{}", user.name),
                json!({"otherSessionsEnded": true}),
            );
            audit::record(c, now, &event)
        })
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct SessionList {
    sessions: Vec<SessionInfo>,
}

#[utoipa::path(
    get,
    path = "/api/v1/me/sessions",
    tag = "accounts",
    summary = "Where the caller is signed in (their login sessions)",
    responses(
        (status = 200, description = "sessions, newest first; `current` marks this one", body = SessionList),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn list_sessions(
    state: web::Data<AppState>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    let current = creds.session_secret().map(str::to_string);
    let now = state.clock.now_ms();
    let sessions = read_as(&state, &creds, move |c, user| {
        accounts::sessions(c, &user.id, current.as_deref(), now)
    })
    .await?;
    Ok(HttpResponse::Ok().json(SessionList { sessions }))
}

#[utoipa::path(
    delete,
    path = "/api/v1/me/sessions/{id}",
    tag = "accounts",
    summary = "Sign out one of the caller's sessions (on another device); its streams end",
    params(("id" = String, Path, description = "The session's ID from the list")),
    responses(
        (status = 204, description = "ended"),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such session of the caller", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn end_session(
    state: web::Data<AppState>,
    creds: Credentials,
    req: HttpRequest,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let user = caller(&state, &creds).await?;
    let id = path.into_inner();
    let (actor, now) = (Actor::of(&state, &req, Some(&user)), state.clock.now_ms());
    let ended = state
        .storage
        .write(move |c| {
            let ended = accounts::end_session_by_id(c, &user.id, &id)?;
            if ended {
                let event = actor.event(
                    actions::SESSION_ENDED,
                    format!("user:{}", user.name),
                    json!({"session": id}),
                );
                audit::record(c, now, &event)?;
            }
            Ok(ended)
        })
        .await?;
    if ended {
        Ok(HttpResponse::NoContent().finish())
    } else {
        Err(ApiError::NotFound)
    }
}
