//! API token scopes (PROTOCOL §9), decided for every request before any handler runs, from
//! the method and path alone: a `read` token may only read (and pull with `/sync` without
//! ops, which the sync handler checks, and leave a document or log out); only an `admin`
//! token reaches the admin endpoints (whose handlers then check that its user is an admin).
//! A login session may do whatever its user may. The scope is the token's prefix, covered
//! by its stored hash (`accounts::Scope::of_token`), so no I/O is needed here; the role
//! function caps a `read` token at viewer besides (`access.rs`).

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::middleware::Next;
use actix_web::ResponseError;

use docsync_actors::storage::accounts::Scope;

use super::auth::{Credentials, Secret};
use super::error::ApiError;

/// The scope a request needs.
pub fn needed(method: &Method, path: &str) -> Scope {
    let admin = path == "/metrics"
        || path
            .strip_prefix("/api/v1/admin")
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
    if admin {
        return Scope::Admin;
    }
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return Scope::Read;
    }
    let pulls =
        path.starts_with("/api/v1/docs/") && (path.ends_with("/sync") || path.ends_with("/leave"));
    if pulls || path == "/api/v1/auth/logout" {
        return Scope::Read;
    }
    Scope::Write
}

pub async fn guard(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    // A token whose prefix names no scope is no token at all: its handler answers 401.
    let claimed = match Credentials::of(req.request()).secret {
        Secret::Bearer(token) => Scope::of_token(&token),
        _ => None,
    };
    if let Some(has) = claimed {
        let needs = needed(req.method(), req.path());
        if has < needs {
            let e = ApiError::Scope(format!(
                "this API token's scope is {}; this request needs {}",
                has.as_str(),
                needs.as_str()
            ));
            return Ok(req.into_response(e.error_response()).map_into_right_body());
        }
    }
    Ok(next.call(req).await?.map_into_left_body())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_pulls_writes_and_admin() {
        let get = Method::GET;
        let post = Method::POST;
        assert_eq!(needed(&get, "/api/v1/docs/d/snapshot"), Scope::Read);
        assert_eq!(needed(&post, "/api/v1/docs/d/sync"), Scope::Read);
        assert_eq!(needed(&post, "/api/v1/docs/d/leave"), Scope::Read);
        assert_eq!(needed(&post, "/api/v1/docs"), Scope::Write);
        assert_eq!(needed(&Method::PUT, "/api/v1/docs/d/shares"), Scope::Write);
        assert_eq!(needed(&Method::DELETE, "/api/v1/trash/d"), Scope::Write);
        assert_eq!(needed(&get, "/api/v1/admin/users"), Scope::Admin);
        assert_eq!(needed(&get, "/api/v1/admin"), Scope::Admin);
        assert_eq!(needed(&get, "/metrics"), Scope::Admin);
        // A path that only starts like the admin endpoints is not one.
        assert_eq!(needed(&get, "/api/v1/administrators"), Scope::Read);
        // `/sync` only under a document.
        assert_eq!(needed(&post, "/api/v1/sync"), Scope::Write);
    }
}
