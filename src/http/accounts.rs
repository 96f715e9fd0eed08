//! Login, logout, who am I, and API tokens.

use actix_web::cookie::{time::Duration as CookieDuration, Cookie, SameSite};
use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};

use docsync_actors::collab::validate::fixed::{MAX_TOKEN_LABEL_BYTES, SMALL_BODY_BYTES};

use docsync_actors::storage::accounts::{self, TokenInfo};

use super::access::{caller, read_as};
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
}

#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct TokenList {
    tokens: Vec<TokenInfo>,
}

fn session_cookie(state: &AppState, value: String, max_age_secs: i64) -> Cookie<'static> {
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
        Some((user, Some(phc))) => password::verify(&pw, &phc).then_some(user),
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
    let Some(user) = ok_user else {
        return Err(ApiError::Unauthorized);
    };
    state.throttle.succeed(&keys);
    let ttl_ms = state.settings.auth.session_ttl_hours * 3_600_000;
    let now = state.clock.now_ms();
    let uid = user.id.clone();
    let secret = state
        .storage
        .write(move |c| accounts::create_login_session(c, &uid, now, ttl_ms))
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
) -> Result<HttpResponse, ApiError> {
    if let Secret::Session(secret) = creds.secret {
        state
            .storage
            .write(move |c| accounts::end_login_session(c, &secret))
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
#[serde(deny_unknown_fields)]
pub(crate) struct TokenBody {
    #[serde(default)]
    label: Option<String>,
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
    let label = body.label.unwrap_or_default();
    if label.len() > MAX_TOKEN_LABEL_BYTES {
        return Err(ApiError::BadRequest(format!(
            "label: at most {MAX_TOKEN_LABEL_BYTES} bytes"
        )));
    }
    let now = state.clock.now_ms();
    let (id, token) = state
        .storage
        .write(move |c| accounts::create_token_with_id(c, &user.id, &label, now))
        .await?;
    Ok(HttpResponse::Created().json(TokenCreated {
        token_id: id,
        token,
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
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let user = caller(&state, &creds).await?;
    let id = path.into_inner();
    let gone = state
        .storage
        .write(move |c| accounts::delete_token(c, &user.id, &id))
        .await?;
    if gone {
        Ok(HttpResponse::NoContent().finish())
    } else {
        Err(ApiError::NotFound)
    }
}
