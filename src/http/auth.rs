//! Who is calling. Handlers take `Credentials` (parsed from the request without I/O) and
//! resolve them inside the same blocking database call that checks the role, so an
//! authorised request costs one trip to the read pool.

use std::future::{ready, Ready};

use actix_web::{dev::Payload, FromRequest, HttpRequest};
use rusqlite::Connection;

use docsync_actors::storage::accounts::{self, User};
use docsync_actors::storage::StorageError;

use super::error::ApiError;

#[derive(Debug, Clone)]
pub enum Credentials {
    Bearer(String),
    Anonymous,
}

impl FromRequest for Credentials {
    type Error = ApiError;
    type Future = Ready<Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let header = req
            .headers()
            .get(actix_web::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        ready(Ok(match header {
            Some(h) if h.len() > 7 && h[..7].eq_ignore_ascii_case("bearer ") => {
                Credentials::Bearer(h[7..].trim().to_string())
            }
            _ => Credentials::Anonymous,
        }))
    }
}

/// Outcome of resolving credentials inside a read closure.
pub enum Authed<T> {
    Ok(T),
    Unauthorized,
}

impl Credentials {
    /// Resolves to a user on a database connection (call inside `Storage::read`).
    pub fn user(&self, conn: &Connection) -> Result<Option<User>, StorageError> {
        match self {
            Credentials::Bearer(token) => accounts::user_by_token(conn, token),
            Credentials::Anonymous => Ok(None),
        }
    }
}

impl<T> Authed<T> {
    pub fn into_result(self) -> Result<T, ApiError> {
        match self {
            Authed::Ok(v) => Ok(v),
            Authed::Unauthorized => Err(ApiError::Unauthorized),
        }
    }
}
