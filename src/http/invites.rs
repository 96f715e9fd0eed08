//! Opening an invitation or a password-reset link (PROTOCOL §9): the page at `/invite/{token}`
//! asks what the link is for, then sends the person's choice. Whoever holds the link may use
//! it (it is a 256-bit secret, stored hashed); its use, the new account or password, the
//! session that signs them in and the audit rows are one transaction.

use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};
use serde_json::json;

use docsync_actors::collab::validate::fixed::SMALL_BODY_BYTES;
use docsync_actors::storage::accounts;
use docsync_actors::storage::audit::{self, actions};
use docsync_actors::storage::invites;

use super::accounts::{hash_on_pool, session_cookie};
use super::audited::{user_agent, Actor};
use super::body::read_json;
use super::error::ApiError;
use super::state::AppState;
use crate::auth::{names, password};

/// What the page shows before the person chooses.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InviteFace {
    /// `join` (choose a name and a password) or `reset` (choose a password).
    kind: String,
    role: String,
    /// For `reset`: whose password.
    user_name: Option<String>,
    expires_at: i64,
}

#[utoipa::path(
    get,
    path = "/api/v1/invites/{token}",
    tag = "accounts",
    summary = "What an invitation or reset link is for",
    params(("token" = String, Path, description = "The secret from the link")),
    responses(
        (status = 200, description = "the link can be used", body = InviteFace),
        (status = 404, description = "no such link", body = crate::http::error::ErrorBody),
        (status = 409, description = "`conflict`: revoked, expired or used up (the message says which)", body = crate::http::error::ErrorBody),
    ),
    security(()),
)]
pub async fn open(
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let secret = path.into_inner();
    let now = state.clock.now_ms();
    let invite = state
        .storage
        .read(move |c| invites::open(c, &secret, now))
        .await?;
    Ok(HttpResponse::Ok().json(InviteFace {
        kind: invite.kind,
        role: invite.role,
        user_name: invite.user_name,
        expires_at: invite.expires_at,
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct Acceptance {
    /// For `join`: the user name to sign in with.
    #[serde(default)]
    name: Option<String>,
    /// For `join`: the name others see (default: the user name).
    #[serde(default)]
    display_name: Option<String>,
    password: String,
}

#[utoipa::path(
    post,
    path = "/api/v1/invites/{token}/accept",
    tag = "accounts",
    summary = "Use a link: make the account (join) or set the password (reset), and sign in",
    params(("token" = String, Path, description = "The secret from the link")),
    request_body = Acceptance,
    responses(
        (status = 200, description = "signed in (the session cookie is set)", body = docsync_actors::storage::accounts::User),
        (status = 404, description = "no such link", body = crate::http::error::ErrorBody),
        (status = 409, description = "`conflict`: the name is taken, or the link is revoked, expired or used up", body = crate::http::error::ErrorBody),
        (status = 503, description = "`busy`: every password check is taken; try again (`Retry-After`)", body = crate::http::error::ErrorBody),
    ),
    security(()),
)]
pub async fn accept(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let secret = path.into_inner();
    let body: Acceptance = read_json(&req, payload, SMALL_BODY_BYTES).await?;
    let now = state.clock.now_ms();
    // What the link is for decides what the body must hold; checked before any hashing.
    let probe = secret.clone();
    let invite = state
        .storage
        .read(move |c| invites::open(c, &probe, now))
        .await?;
    let joining = invite.kind == "join";
    let name = match (&body.name, joining) {
        (Some(n), true) => {
            names::check_user_name(n).map_err(ApiError::BadRequest)?;
            n.clone()
        }
        (None, true) => return Err(ApiError::BadRequest("name: required".into())),
        (_, false) => invite.user_name.clone().unwrap_or_default(),
    };
    let display = body.display_name.clone().unwrap_or_else(|| name.clone());
    if joining {
        names::check_display_name(&display).map_err(ApiError::BadRequest)?;
    }
    password::check_new(&body.password, &name).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let phc = hash_on_pool(&state, body.password).await?;
    let ttl_ms = state.settings.auth.session_ttl_hours * 3_600_000;
    let (actor, agent) = (Actor::of(&state, &req, None), user_agent(&req));
    let (user, session) = state
        .storage
        .write(move |c| {
            let (invite, user) = if joining {
                invites::join(c, &secret, &name, display.trim(), Some(&phc), now)?
            } else {
                invites::reset(c, &secret, &phc, now)?
            };
            let me = actor.as_user(&user);
            let who = format!("user:{}", user.name);
            let link = format!("invite:{}", invite.invite_id);
            audit::record(c, now, &me.event(actions::INVITE_USED, link, json!({"kind": invite.kind})))?;
            if joining {
                let detail = json!({"admin": user.is_admin, "by": "invitation", "invitedBy": invite.created_by});
                audit::record(c, now, &me.event(actions::USER_CREATED, &who, detail))?;
            } else {
                audit::record(c, now, &me.event(actions::PASSWORD_RESET, &who, json!({})))?;
            }
            let session = accounts::create_login_session(c, &user.id, now, ttl_ms, &agent)?;
            audit::record(c, now, &me.event(actions::LOGIN_OK, &who, json!({"method": "link"})))?;
            Ok((user, session))
        })
        .await?;
    Ok(HttpResponse::Ok()
        .cookie(session_cookie(&state, session, ttl_ms / 1000))
        .json(user))
}
