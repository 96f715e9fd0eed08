//! Single sign-on in the browser (PROTOCOL §9): `/auth/oidc/start` sends the browser to the
//! provider, `/auth/oidc/callback` takes it back, and `/api/v1/auth/methods` tells the login
//! page what to offer. A sign-in is bound to the browser that began it (a short-lived
//! HttpOnly cookie holding its `state`, which must come back equal) and to the server (the
//! PKCE verifier and nonce kept in the database under the hash of the `state`, used once).
//! Every refusal goes back to the login page with a reason it can put into words; nothing
//! is written for a refused sign-in except its audit row.

use actix_web::cookie::{time::Duration as CookieDuration, Cookie, SameSite};
use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};
use serde_json::json;

use docsync_actors::storage::accounts;
use docsync_actors::storage::audit::{self, actions};
use docsync_actors::storage::identities::{self, Flow, Refusal, SignedIn};

use super::accounts::session_cookie;
use super::audited::{user_agent, Actor};
use super::error::ApiError;
use super::state::AppState;
use crate::auth::oidc::SsoError;

const FLOW_COOKIE: &str = "docsync_sso";

/// What the login page may offer.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Methods {
    /// Whether `POST /auth/login` takes passwords.
    password: bool,
    /// Single sign-on, when set up: the button's label and where it starts.
    sso: Option<SsoMethod>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SsoMethod {
    label: String,
    start_url: String,
}

#[utoipa::path(
    get,
    path = "/api/v1/auth/methods",
    tag = "accounts",
    summary = "How one can sign in here: password, single sign-on",
    responses((status = 200, description = "the sign-in methods", body = Methods)),
    security(()),
)]
pub async fn methods(state: web::Data<AppState>) -> HttpResponse {
    let sso = state.sso.as_ref().map(|s| SsoMethod {
        label: s.label().to_string(),
        start_url: "/auth/oidc/start".into(),
    });
    let password = state.sso.as_ref().is_none_or(|s| s.password_login());
    HttpResponse::Ok().json(Methods { password, sso })
}

/// Where a browser goes after signing in: a local path of the app, never elsewhere.
fn local_path(next: Option<&str>) -> String {
    match next {
        Some(n) if n.starts_with('/') && !n.starts_with("//") && !n.contains('\\') => n.to_string(),
        _ => "/".into(),
    }
}

/// Back to the login page with a reason the page puts into words.
fn to_login(reason: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, format!("/login?sso={reason}")))
        .cookie(flow_cookie(String::new(), 0))
        .finish()
}

fn flow_cookie(value: String, max_age_secs: i64) -> Cookie<'static> {
    // Lax: the provider's redirect back is a top-level navigation, which carries it.
    Cookie::build(FLOW_COOKIE, value)
        .path("/auth/oidc")
        .http_only(true)
        .same_site(SameSite::Lax)
        .max_age(CookieDuration::seconds(max_age_secs))
        .finish()
}

#[derive(Deserialize)]
pub struct StartQuery {
    next: Option<String>,
    /// An invitation link's secret: a first sign-in through it makes the account.
    invite: Option<String>,
}

/// `GET /auth/oidc/start`: to the provider.
pub async fn start(
    state: web::Data<AppState>,
    query: web::Query<StartQuery>,
) -> Result<HttpResponse, ApiError> {
    let Some(sso) = state.sso.clone() else {
        return Err(ApiError::NotFound);
    };
    let started = match sso.start().await {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, "single sign-on: the provider is not reachable");
            return Ok(to_login("unreachable"));
        }
    };
    let now = state.clock.now_ms();
    let q = query.into_inner();
    let flow = Flow {
        nonce: started.nonce,
        pkce_verifier: started.pkce_verifier,
        next: local_path(q.next.as_deref()),
        invite: q.invite.filter(|i| i.starts_with("dsi_") && i.len() < 100),
        expires_at: now + identities::FLOW_MS,
    };
    let st = started.state.clone();
    state
        .storage
        .write(move |c| identities::begin(c, &st, &flow, now))
        .await?;
    Ok(HttpResponse::SeeOther()
        .insert_header((header::LOCATION, started.url))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .cookie(flow_cookie(started.state, identities::FLOW_MS / 1000))
        .finish())
}

#[derive(Deserialize)]
pub struct Callback {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
}

/// `GET /auth/oidc/callback`: back from the provider.
pub async fn callback(
    state: web::Data<AppState>,
    req: HttpRequest,
    query: web::Query<Callback>,
) -> Result<HttpResponse, ApiError> {
    let Some(sso) = state.sso.clone() else {
        return Err(ApiError::NotFound);
    };
    let q = query.into_inner();
    let now = state.clock.now_ms();
    let actor = Actor::of(&state, &req, None);
    let refuse = |reason: &'static str, detail: String| {
        let (state, actor) = (state.clone(), actor.clone());
        async move {
            tracing::info!(reason, detail = %detail, "single sign-on refused");
            let event = actor.event(
                actions::LOGIN_FAILED,
                "sso",
                json!({"method": "oidc", "reason": reason, "detail": detail}),
            );
            state
                .storage
                .write(move |c| audit::record(c, now, &event))
                .await?;
            Ok::<_, ApiError>(to_login(reason))
        }
    };
    if let Some(e) = q.error {
        return refuse("denied", e).await;
    }
    let (Some(code), Some(st)) = (q.code, q.state) else {
        return refuse("state", "no code or state".into()).await;
    };
    // The browser that began this sign-in, and only it, finishes it.
    let same_browser = req.cookie(FLOW_COOKIE).is_some_and(|c| c.value() == st);
    let flow = state
        .storage
        .write(move |c| identities::take(c, &st, now))
        .await?;
    let Some(flow) = flow.filter(|_| same_browser) else {
        return refuse(
            "state",
            "unknown, used, expired or another browser's state".into(),
        )
        .await;
    };
    let who = match sso
        .finish(&code, &flow.nonce, &flow.pkce_verifier, now)
        .await
    {
        Ok(w) => w,
        Err(SsoError::Unreachable(e)) => return refuse("unreachable", e).await,
        Err(SsoError::Refused(e)) => return refuse("refused", e).await,
        Err(SsoError::Invalid(e)) => return refuse("invalid", e).await,
    };
    let domains = sso.allowed_domains().to_vec();
    let ttl_ms = state.settings.auth.session_ttl_hours * 3_600_000;
    let agent = user_agent(&req);
    let invite = flow.invite.clone();
    let subject = format!("{} {}", who.issuer, who.subject);
    let signer = actor.clone();
    let outcome = state
        .storage
        .write(move |c| {
            let signed = match identities::sign_in(c, &who, invite.as_deref(), &domains, now)? {
                Ok(s) => s,
                Err(r) => return Ok(Err(r)),
            };
            let (user, created) = match signed {
                SignedIn::Known(u) => (u, None),
                SignedIn::Created { user, via } => (user, Some(via)),
            };
            let me = signer.as_user(&user);
            let who_target = format!("user:{}", user.name);
            if let Some(via) = created {
                let detail = json!({"admin": user.is_admin, "by": via, "method": "oidc", "email": who.email});
                audit::record(c, now, &me.event(actions::USER_CREATED, &who_target, detail))?;
                if via == "invitation" {
                    let detail = json!({"kind": "join", "method": "oidc"});
                    audit::record(c, now, &me.event(actions::INVITE_USED, "invite", detail))?;
                }
            }
            let session = accounts::create_login_session(c, &user.id, now, ttl_ms, &agent)?;
            let detail = json!({"method": "oidc"});
            audit::record(c, now, &me.event(actions::LOGIN_OK, &who_target, detail))?;
            Ok(Ok(session))
        })
        .await?;
    match outcome {
        Ok(session) => Ok(HttpResponse::SeeOther()
            .insert_header((header::LOCATION, flow.next))
            .cookie(flow_cookie(String::new(), 0))
            .cookie(session_cookie(&state, session, ttl_ms / 1000))
            .finish()),
        Err(Refusal::Deactivated) => refuse("deactivated", subject).await,
        Err(Refusal::NotInvited) => refuse("not_invited", subject).await,
        Err(Refusal::Invite(why)) => refuse("invite", why).await,
    }
}
