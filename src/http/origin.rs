//! Cross-origin write protection. Browsers attach the session cookie to requests that other
//! sites trigger; so every state-changing request that relies on the cookie (and every login)
//! must come from our own origin: an `Origin` header, when present, must name the host the
//! request was sent to. Bearer-token requests carry no ambient authority and are exempt.
//! (Bodies must also be JSON — `body::read_json` — which plain HTML forms cannot send.)

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::middleware::Next;
use actix_web::ResponseError;

use super::auth::{Credentials, SESSION_COOKIE};
use super::error::ApiError;

fn is_write(m: &Method) -> bool {
    !matches!(*m, Method::GET | Method::HEAD | Method::OPTIONS)
}

fn same_origin(req: &ServiceRequest) -> bool {
    let Some(origin) = req.headers().get("origin").and_then(|v| v.to_str().ok()) else {
        return true;
    };
    let host = req.connection_info().host().to_ascii_lowercase();
    let origin = origin.to_ascii_lowercase();
    let origin_host = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .unwrap_or("");
    origin_host == host
}

pub async fn guard(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    let cookie_write = is_write(req.method())
        && !Credentials::of(req.request()).is_bearer()
        && (req.cookie(SESSION_COOKIE).is_some() || req.path().ends_with("/auth/login"));
    if cookie_write && !same_origin(&req) {
        let resp = ApiError::Forbidden("cross-origin request refused".into()).error_response();
        return Ok(req.into_response(resp).map_into_right_body());
    }
    Ok(next.call(req).await?.map_into_left_body())
}
