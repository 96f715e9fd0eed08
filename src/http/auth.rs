//! Who is calling. `Credentials` is parsed from the request without I/O (bearer token or
//! session cookie) and resolved inside the same blocking database call that checks the
//! role (`access.rs`), so an authorised request costs at most one trip to the read pool.

use std::future::{ready, Ready};
use std::sync::{Arc, OnceLock};

use actix_web::{dev::Payload, FromRequest, HttpMessage, HttpRequest};
use docsync_actors::storage::Db;

use docsync_actors::storage::accounts::{self, Scope, User};
use docsync_actors::storage::StorageError;

use super::error::ApiError;

pub const SESSION_COOKIE: &str = "docsync_session";

#[derive(Debug, Clone)]
pub enum Secret {
    Bearer(String),
    Session(String),
    Anonymous,
}

/// What the request presented, plus a slot the request log reads to name the user once
/// the handler resolved them.
#[derive(Debug, Clone)]
pub struct Credentials {
    pub secret: Secret,
    resolved: Arc<OnceLock<String>>,
}

/// Put into request extensions by the request log; filled in by `Credentials::user`.
#[derive(Clone, Default)]
pub struct ResolvedUser(pub Arc<OnceLock<String>>);

impl FromRequest for Credentials {
    type Error = ApiError;
    type Future = Ready<Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(Ok(Credentials::of(req)))
    }
}

impl Credentials {
    pub fn of(req: &HttpRequest) -> Credentials {
        let resolved = req
            .extensions()
            .get::<ResolvedUser>()
            .map(|r| r.0.clone())
            .unwrap_or_default();
        Credentials {
            secret: Self::secret_of(req),
            resolved,
        }
    }

    fn secret_of(req: &HttpRequest) -> Secret {
        let header = req
            .headers()
            .get(actix_web::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        if let Some(h) = header {
            if h.len() > 7 && h[..7].eq_ignore_ascii_case("bearer ") {
                return Secret::Bearer(h[7..].trim().to_string());
            }
        }
        match req.cookie(SESSION_COOKIE) {
            Some(c) if !c.value().is_empty() => Secret::Session(c.value().to_string()),
            _ => Secret::Anonymous,
        }
    }

    pub fn is_bearer(&self) -> bool {
        matches!(self.secret, Secret::Bearer(_))
    }

    pub fn is_session(&self) -> bool {
        matches!(self.secret, Secret::Session(_))
    }

    /// What these credentials may do at most, read off the request without I/O: an API
    /// token's scope is its prefix (which its stored hash covers, so it cannot be changed);
    /// a login session may do whatever its user may.
    pub fn scope(&self) -> Scope {
        match &self.secret {
            Secret::Bearer(token) => Scope::of_token(token).unwrap_or(Scope::Read),
            Secret::Session(_) | Secret::Anonymous => Scope::Admin,
        }
    }

    /// The login session's secret, when that is what was presented.
    pub fn session_secret(&self) -> Option<&str> {
        match &self.secret {
            Secret::Session(s) => Some(s),
            _ => None,
        }
    }

    /// Resolves to a user on a database connection (call inside `Storage::read`); `now` is
    /// the server's clock, the same one login sessions were created with.
    pub fn user(&self, conn: &mut Db, now: i64) -> Result<Option<User>, StorageError> {
        Ok(self.user_until(conn, now)?.map(|(user, _)| user))
    }

    /// Like `user`, with the moment the credential ends (`None` for an API token without
    /// an expiry).
    pub fn user_until(
        &self,
        conn: &mut Db,
        now: i64,
    ) -> Result<Option<(User, Option<i64>)>, StorageError> {
        let found = match &self.secret {
            Secret::Bearer(token) => {
                accounts::user_by_token(conn, token, now)?.map(|(u, _, until)| (u, until))
            }
            Secret::Session(secret) => accounts::user_by_session_until(conn, secret, now)?
                .map(|(u, until)| (u, Some(until))),
            Secret::Anonymous => None,
        };
        if let Some((u, _)) = &found {
            self.resolved_as(&u.name);
        }
        Ok(found)
    }

    /// Names the user in the request log (also when the answer came from the access cache).
    pub fn resolved_as(&self, name: &str) {
        let _ = self.resolved.set(name.to_string());
    }

    /// What an access decision for this caller is remembered under (`access_cache.rs`); the
    /// kind is part of it, so a token and a session with equal text never share an entry.
    pub fn cache_key(&self) -> Option<String> {
        match &self.secret {
            Secret::Bearer(token) => Some(format!("b:{token}")),
            Secret::Session(secret) => Some(format!("s:{secret}")),
            Secret::Anonymous => None,
        }
    }
}
