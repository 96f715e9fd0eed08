//! Who is calling. `Credentials` is parsed from the request without I/O (bearer token or
//! session cookie) and resolved inside the same blocking database call that checks the
//! role, so an authorised request costs one trip to the read pool.

use std::future::{ready, Ready};

use actix_web::{dev::Payload, FromRequest, HttpRequest};
use rusqlite::Connection;

use docsync_actors::storage::accounts::{self, User};
use docsync_actors::storage::{unix_ms, StorageError};

use super::error::ApiError;

pub const SESSION_COOKIE: &str = "docsync_session";

#[derive(Debug, Clone)]
pub enum Credentials {
    Bearer(String),
    Session(String),
    Anonymous,
}

impl FromRequest for Credentials {
    type Error = ApiError;
    type Future = Ready<Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(Ok(Credentials::of(req)))
    }
}

/// Outcome of resolving credentials inside a read closure.
pub enum Authed<T> {
    Ok(T),
    Unauthorized,
}

impl Credentials {
    pub fn of(req: &HttpRequest) -> Credentials {
        let header = req
            .headers()
            .get(actix_web::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        if let Some(h) = header {
            if h.len() > 7 && h[..7].eq_ignore_ascii_case("bearer ") {
                return Credentials::Bearer(h[7..].trim().to_string());
            }
        }
        match req.cookie(SESSION_COOKIE) {
            Some(c) if !c.value().is_empty() => Credentials::Session(c.value().to_string()),
            _ => Credentials::Anonymous,
        }
    }

    /// Resolves to a user on a database connection (call inside `Storage::read`).
    pub fn user(&self, conn: &Connection) -> Result<Option<User>, StorageError> {
        match self {
            Credentials::Bearer(token) => accounts::user_by_token(conn, token),
            Credentials::Session(secret) => accounts::user_by_session(conn, secret, unix_ms()),
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
