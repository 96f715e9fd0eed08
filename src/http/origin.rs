//! Cross-origin write protection. Browsers attach the session cookie to requests that other
//! sites trigger; so every state-changing request that relies on the cookie (and every login),
//! and every cookie WebSocket upgrade, must come from our own origin: an `Origin` header, when
//! present, must name the host the request was sent to. Bearer-token requests carry no ambient
//! authority and are exempt. (Bodies must also be JSON — `body::read_json` — which plain HTML
//! forms cannot send.)
//!
//! The host is the `Host` header. `X-Forwarded-Host` / `Forwarded` are believed only from the
//! peers in `server.trusted_proxies`: anyone else could name any host in them and pass.

use std::net::IpAddr;

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{header, Method};
use actix_web::middleware::Next;
use actix_web::{web, HttpRequest, ResponseError};

use super::auth::{Credentials, SESSION_COOKIE};
use super::error::ApiError;
use super::state::AppState;

fn is_write(m: &Method) -> bool {
    !matches!(*m, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// The host (with port) the client addressed.
fn request_host(req: &HttpRequest, trusted: &[IpAddr]) -> String {
    let from_proxy = req
        .peer_addr()
        .is_some_and(|peer| trusted.contains(&peer.ip()));
    if from_proxy {
        return req.connection_info().host().to_ascii_lowercase();
    }
    req.headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or_else(|| req.uri().authority().map(|a| a.to_string()))
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// True when the request has no `Origin` or its origin names the host it was sent to.
pub fn same_origin(req: &HttpRequest) -> bool {
    let Some(origin) = req
        .headers()
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
    else {
        return true;
    };
    let trusted = req
        .app_data::<web::Data<AppState>>()
        .map(|s| s.settings.server.trusted_proxies.as_slice())
        .unwrap_or(&[]);
    let origin = origin.to_ascii_lowercase();
    let origin_host = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .unwrap_or("");
    !origin_host.is_empty() && origin_host == request_host(req, trusted)
}

/// Requests that answer with a new session cookie: a login, and a used invitation or reset
/// link (another site must not sign a browser in as someone of its choosing).
fn signs_in(path: &str) -> bool {
    path.ends_with("/auth/login")
        || (path.starts_with("/api/v1/invites/") && path.ends_with("/accept"))
}

pub async fn guard(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    let cookie_write = is_write(req.method())
        && !Credentials::of(req.request()).is_bearer()
        && (req.cookie(SESSION_COOKIE).is_some() || signs_in(req.path()));
    if cookie_write && !same_origin(req.request()) {
        let resp = ApiError::Forbidden("cross-origin request refused".into()).error_response();
        return Ok(req.into_response(resp).map_into_right_body());
    }
    Ok(next.call(req).await?.map_into_left_body())
}
