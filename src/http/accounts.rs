//! Login, logout, who am I, and API tokens.

use actix_web::cookie::{time::Duration as CookieDuration, Cookie, SameSite};
use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};

use docsync_actors::collab::validate::fixed::{MAX_TOKEN_LABEL_BYTES, SMALL_BODY_BYTES};

use docsync_actors::storage::accounts::{self, Scope, TokenInfo};
use docsync_actors::storage::audit::{self, actions};
use serde_json::json;

use super::access::{caller, read_as};
use super::audited::{user_agent, Actor};
use super::auth::{Credentials, Secret, SESSION_COOKIE};
use super::body::read_json;
use super::error::ApiError;
use super::state::AppState;
use crate::auth::password;
use crate::auth::throttle::LoginKeys;

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LoginBody {
    username: String,
    password: String,
}

/// `POST /tokens`: the secret, shown this once (only its hash is kept).
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TokenCreated {
    token_id: String,
    token: String,
    scope: Scope,
    expires_at: Option<i64>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct TokenList {
    tokens: Vec<TokenInfo>,
}

pub(super) fn session_cookie(
    state: &AppState,
    value: String,
    max_age_secs: i64,
) -> Cookie<'static> {
    Cookie::build(SESSION_COOKIE, value)
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(state.settings.auth.secure_cookies)
        .max_age(CookieDuration::seconds(max_age_secs))
        .finish()
}

#[utoipa::path(
    post,
    path = "/api/v1/auth/login",
    tag = "accounts",
    summary = "Log in: sets the HttpOnly session cookie",
    request_body = LoginBody,
    responses(
        (status = 200, description = "the user; the session cookie is set", body = docsync_actors::storage::accounts::User),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "`deactivated`: the account is deactivated", body = crate::http::error::ErrorBody),
        (status = 429, description = "a budget or rate is spent; see Retry-After", body = crate::http::error::ErrorBody),
    ),
    security(()),
)]
pub async fn login(
    state: web::Data<AppState>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let body: LoginBody = read_json(&req, payload, SMALL_BODY_BYTES).await?;
    if state.sso.as_ref().is_some_and(|s| !s.password_login()) {
        return Err(ApiError::Forbidden(
            "password sign-in is off here: use single sign-on".into(),
        ));
    }
    // Counted by the same address rule as the stream limits: forwarded headers only from
    // our proxies, and only the part they wrote (a client-supplied X-Forwarded-For would
    // let anyone pick a fresh address per attempt).
    let peer = state.client_address(&req);
    let keys = LoginKeys::new(&body.username, &peer);
    // Counted as a failure before it is checked (a correct password takes it back).
    if let Err(wait) = state.throttle.begin(&keys) {
        return Err(ApiError::TooManyRequests {
            retry_after: wait,
            message: format!("too many failed logins; try again in {wait} s"),
        });
    }
    let name = body.username.clone();
    let record = match state
        .storage
        .read(move |c| accounts::login_record(c, &name))
        .await
    {
        Ok(r) => r,
        Err(e) => {
            state.throttle.cancel(&keys);
            return Err(e.into());
        }
    };
    let pw = body.password;
    // Exactly one argon2 run on every path, so timing does not tell which names exist; on
    // the password threads, never the storage pool (`password_pool.rs`).
    let checked = state.passwords.run(move || match record {
        Some((user, Some(phc), active)) => password::verify(&pw, &phc).then_some((user, active)),
        _ => {
            password::verify_dummy(&pw);
            None
        }
    });
    let Ok(ok_user) = checked.await else {
        state.throttle.cancel(&keys);
        state.metrics.logins_refused_busy.inc();
        return Err(ApiError::Busy {
            retry_after: 1,
            message: "too many logins at once; try again in a second".into(),
        });
    };
    let actor = Actor::of(&state, &req, None);
    let now = state.clock.now_ms();
    let Some((user, active)) = ok_user else {
        let (who, failed) = (body.username.clone(), actor);
        state
            .storage
            .write(move |c| {
                let event = failed.event(
                    actions::LOGIN_FAILED,
                    format!("user:{who}"),
                    json!({"method": "password"}),
                );
                audit::record(c, now, &event)
            })
            .await?;
        return Err(ApiError::Unauthorized);
    };
    // The password was right, so saying the account is deactivated tells nothing new.
    if !active {
        state.throttle.succeed(&keys);
        return Err(ApiError::Deactivated);
    }
    state.throttle.succeed(&keys);
    let ttl_ms = state.settings.auth.session_ttl_hours * 3_600_000;
    let (uid, agent, actor) = (user.id.clone(), user_agent(&req), actor.as_user(&user));
    let target = format!("user:{}", user.name);
    let secret = state
        .storage
        .write(move |c| {
            let secret = accounts::create_login_session(c, &uid, now, ttl_ms, &agent)?;
            let event = actor.event(actions::LOGIN_OK, target, json!({"method": "password"}));
            audit::record(c, now, &event)?;
            Ok(secret)
        })
        .await?;
    Ok(HttpResponse::Ok()
        .cookie(session_cookie(&state, secret, ttl_ms / 1000))
        .json(user))
}

#[utoipa::path(
    post,
    path = "/api/v1/auth/logout",
    tag = "accounts",
    summary = "Log out: ends the session and clears its cookie",
    responses(
        (status = 204, description = "done"),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn logout(
    state: web::Data<AppState>,
    creds: Credentials,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    if let Secret::Session(secret) = creds.secret {
        let (ip, now) = (state.client_address(&req), state.clock.now_ms());
        state
            .storage
            .write(move |c| {
                let who = accounts::user_by_session(c, &secret, now)?;
                if accounts::end_login_session(c, &secret)? {
                    if let Some(user) = who {
                        let actor = Actor {
                            id: Some(user.id.clone()),
                            name: Some(user.name.clone()),
                            ip,
                        };
                        let target = format!("user:{}", user.name);
                        audit::record(c, now, &actor.event(actions::LOGOUT, target, json!({})))?;
                    }
                }
                Ok(())
            })
            .await?;
    }
    Ok(HttpResponse::NoContent()
        .cookie(session_cookie(&state, String::new(), 0))
        .finish())
}

#[utoipa::path(
    get,
    path = "/api/v1/me",
    tag = "accounts",
    summary = "The caller",
    responses(
        (status = 200, description = "the user the credentials name", body = docsync_actors::storage::accounts::User),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn me(state: web::Data<AppState>, creds: Credentials) -> Result<HttpResponse, ApiError> {
    let user = caller(&state, &creds).await?;
    Ok(HttpResponse::Ok().json(user))
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct TokenBody {
    #[serde(default)]
    label: Option<String>,
    /// Also accepted as `name` (PROTOCOL §9); `label` wins when both are given.
    #[serde(default)]
    name: Option<String>,
    /// `read`, `write` or `admin` (the default: what tokens could always do). Never more
    /// than the credentials it is made with.
    #[serde(default)]
    scope: Option<Scope>,
    /// 1 to 3650; none: until deleted.
    #[serde(default)]
    expires_in_days: Option<i64>,
}

#[utoipa::path(
    post,
    path = "/api/v1/tokens",
    tag = "accounts",
    summary = "Create an API token (its secret is shown once)",
    request_body = TokenBody,
    responses(
        (status = 201, description = "created", body = TokenCreated),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn create_token(
    state: web::Data<AppState>,
    creds: Credentials,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let user = caller(&state, &creds).await?;
    let body: TokenBody = read_json(&req, payload, SMALL_BODY_BYTES).await?;
    let label = body.label.or(body.name).unwrap_or_default();
    if label.len() > MAX_TOKEN_LABEL_BYTES {
        return Err(ApiError::BadRequest(format!(
            "label: at most {MAX_TOKEN_LABEL_BYTES} bytes"
        )));
    }
    let scope = body.scope.unwrap_or(Scope::Admin);
    if scope > creds.scope() {
        return Err(ApiError::Scope(format!(
            "a token of scope {} cannot make one of scope {}",
            creds.scope().as_str(),
            scope.as_str()
        )));
    }
    let now = state.clock.now_ms();
    let expires_at = match body.expires_in_days {
        None => None,
        Some(d @ 1..=3650) => Some(now + d * 86_400_000),
        Some(_) => return Err(ApiError::BadRequest("expiresInDays: from 1 to 3650".into())),
    };
    let actor = Actor::of(&state, &req, Some(&user));
    let (id, token) = state
        .storage
        .write(move |c| {
            let (id, token) =
                accounts::create_token_with_id(c, &user.id, &label, scope, expires_at, now)?;
            let event = actor.event(
                actions::TOKEN_CREATED,
                format!("token:{id}"),
                json!({"label": label, "scope": scope.as_str(), "expiresAt": expires_at}),
            );
            audit::record(c, now, &event)?;
            Ok((id, token))
        })
        .await?;
    Ok(HttpResponse::Created().json(TokenCreated {
        token_id: id,
        token,
        scope,
        expires_at,
    }))
}

#[utoipa::path(
    get,
    path = "/api/v1/tokens",
    tag = "accounts",
    summary = "The caller's API tokens (never their secrets)",
    responses(
        (status = 200, description = "tokens", body = TokenList),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn list_tokens(
    state: web::Data<AppState>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    let tokens = read_as(&state, &creds, |c, user| accounts::list_tokens(c, &user.id)).await?;
    Ok(HttpResponse::Ok().json(TokenList { tokens }))
}

#[utoipa::path(
    delete,
    path = "/api/v1/tokens/{id}",
    tag = "accounts",
    summary = "Delete one of the caller's tokens; its streams end",
    params(
        ("id" = String, Path, description = "The document's, folder's, team's or token's ID"),
    ),
    responses(
        (status = 204, description = "done"),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn delete_token(
    state: web::Data<AppState>,
    creds: Credentials,
    req: HttpRequest,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let user = caller(&state, &creds).await?;
    let id = path.into_inner();
    let (actor, now) = (Actor::of(&state, &req, Some(&user)), state.clock.now_ms());
    let gone = state
        .storage
        .write(move |c| {
            let gone = accounts::delete_token(c, &user.id, &id)?;
            if gone {
                let event = actor.event(actions::TOKEN_DELETED, format!("token:{id}"), json!({}));
                audit::record(c, now, &event)?;
            }
            Ok(gone)
        })
        .await?;
    if gone {
        Ok(HttpResponse::NoContent().finish())
    } else {
        Err(ApiError::NotFound)
    }
}

/// A new password hashed on the password threads (never the async ones): argon2 takes tens
/// of milliseconds. All of them busy → 503 `busy`.
pub(super) async fn hash_on_pool(state: &AppState, pw: String) -> Result<String, ApiError> {
    state
        .passwords
        .run(move || password::hash(&pw).ok())
        .await
        .map_err(|_| ApiError::Busy {
            retry_after: 1,
            message: "too many password checks at once; try again in a second".into(),
        })?
        .ok_or_else(|| ApiError::Internal("could not hash the password".into()))
}
