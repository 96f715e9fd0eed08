//! The one place where errors become HTTP statuses. Every error body is
//! `{"error": {"code": "...", "message": "..."}}`; nothing a client sends can produce a 500
//! (a 500 means a bug or a broken disk, and says so).

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};

use docsync_actors::collab::validate::InvalidRequest;
use docsync_actors::document::DocError;
use docsync_actors::storage::StorageError;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// A write refused for lack of space (SQLITE_FULL / ENOSPC) and undone: 507, which says
    /// "retry later" without claiming a bug (a 500 would).
    #[error("the server is out of storage space; nothing of this request was saved, retry later")]
    StorageFull,
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    InvalidJson(String),
    #[error("{0}")]
    UnsupportedMediaType(String),
    #[error("authentication required")]
    Unauthorized,
    #[error("{0}")]
    Forbidden(String),
    #[error("not found")]
    NotFound,
    #[error("{0}")]
    Conflict(String),
    #[error("request body is larger than {0} bytes")]
    TooLarge(usize),
    #[error("{0}")]
    Unavailable(String),
    /// A wake-up channel beyond the per-user or per-address bound (`limits.max_streams_*`).
    #[error("{0}")]
    TooManyStreams(String),
    /// Too many attempts (login throttle): try again after `retry_after` seconds.
    #[error("{message}")]
    TooManyRequests { retry_after: u64, message: String },
    /// The document would grow past `limits.max_document_bytes`.
    #[error("{0}")]
    DocumentFull(String),
    /// A write budget (bytes per minute, per user or per document) is spent for now.
    #[error("{message}")]
    WriteBudget { retry_after: u64, message: String },
    /// A bounded resource (the password threads) is saturated: try again shortly.
    #[error("{message}")]
    Busy { retry_after: u64, message: String },
    /// The body did not arrive within `server.body_read_timeout_secs`.
    #[error("request body not received within {0} s")]
    BodyTimeout(u64),
    /// Cluster mode: another node owns the document (or this node is out of the cluster);
    /// asking again reaches the owner. 503 with `Retry-After: 0`.
    #[error("{0}")]
    NotOwner(String),
    #[error("{0}")]
    Internal(String),
    /// An API token whose scope does not reach this request (a `read` token writing, a
    /// `write` token on an admin endpoint): 403 `scope`.
    #[error("{0}")]
    Scope(String),
    /// The account is deactivated: 403 `deactivated`.
    #[error("this account is deactivated; ask an admin")]
    Deactivated,
}

impl ApiError {
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::StorageFull => "storage_full",
            ApiError::BadRequest(_) => "bad_request",
            ApiError::InvalidJson(_) => "invalid_json",
            ApiError::UnsupportedMediaType(_) => "unsupported_media_type",
            ApiError::Unauthorized => "unauthorized",
            ApiError::Forbidden(_) => "forbidden",
            ApiError::NotFound => "not_found",
            ApiError::Conflict(_) => "conflict",
            ApiError::TooLarge(_) => "payload_too_large",
            ApiError::Unavailable(_) => "unavailable",
            ApiError::TooManyStreams(_) => "too_many_streams",
            ApiError::TooManyRequests { .. } => "too_many_requests",
            ApiError::Busy { .. } => "busy",
            ApiError::DocumentFull(_) => "document_full",
            ApiError::WriteBudget { .. } => "write_budget",
            ApiError::BodyTimeout(_) => "request_timeout",
            ApiError::NotOwner(_) => "not_owner",
            ApiError::Internal(_) => "internal",
            ApiError::Scope(_) => "scope",
            ApiError::Deactivated => "deactivated",
        }
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::StorageFull => StatusCode::INSUFFICIENT_STORAGE,
            ApiError::BadRequest(_) | ApiError::InvalidJson(_) => StatusCode::BAD_REQUEST,
            ApiError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) | ApiError::Scope(_) | ApiError::Deactivated => {
                StatusCode::FORBIDDEN
            }
            ApiError::NotFound => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::DocumentFull(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::TooManyStreams(_)
            | ApiError::TooManyRequests { .. }
            | ApiError::WriteBudget { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Busy { .. } | ApiError::NotOwner(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::BodyTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let mut resp = HttpResponse::build(self.status_code());
        if matches!(self, ApiError::Unauthorized) {
            resp.insert_header(("WWW-Authenticate", "Bearer"));
        }
        if let ApiError::TooManyRequests { retry_after, .. }
        | ApiError::Busy { retry_after, .. }
        | ApiError::WriteBudget { retry_after, .. } = self
        {
            resp.insert_header(("Retry-After", retry_after.to_string()));
        }
        if matches!(self, ApiError::NotOwner(_)) {
            resp.insert_header(("Retry-After", "0"));
        }
        if matches!(self, ApiError::BodyTimeout(_)) {
            // The rest of the body may still be dribbling in: close rather than drain it.
            resp.force_close();
        }
        resp.json(ErrorBody {
            error: ErrorDetail {
                code: self.code(),
                message: self.to_string(),
            },
        })
    }
}

/// The JSON error body of every 4xx and 5xx (PROTOCOL §3).
#[derive(serde::Serialize, utoipa::ToSchema)]
pub(crate) struct ErrorBody {
    error: ErrorDetail,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
pub(crate) struct ErrorDetail {
    /// Stable, for programs: `bad_request`, `not_found`, `forbidden`, `write_budget`, …
    code: &'static str,
    /// For people: what was wrong and, where it helps, what to do.
    message: String,
}

impl From<StorageError> for ApiError {
    fn from(e: StorageError) -> Self {
        match e {
            StorageError::DocNotFound(_) | StorageError::NotFound(_) => ApiError::NotFound,
            StorageError::Conflict(m) => ApiError::Conflict(m),
            StorageError::Forbidden(m) => ApiError::Forbidden(m),
            // A rule only storage can check in the transaction said no: nothing was written.
            StorageError::Invalid(m) => ApiError::BadRequest(m),
            StorageError::ForeignBlock(id) => {
                ApiError::Conflict(format!("block {id} belongs to another document"))
            }
            // Logged once per episode by the writer (storage::health), not per request.
            StorageError::Full(_) => ApiError::StorageFull,
            StorageError::NotOwner { .. } => {
                ApiError::NotOwner("another node serves this document now; ask again".into())
            }
            // The database is out of reach (cluster mode): not a bug, a retry may succeed.
            StorageError::Pool(e) => ApiError::Unavailable(format!("database unavailable: {e}")),
            StorageError::Postgres(e) if e.is_closed() || e.code().is_none() => {
                ApiError::Unavailable(format!("database unavailable: {e}"))
            }
            other => {
                tracing::error!(error = %other, "storage error");
                ApiError::Internal(format!("storage: {other}"))
            }
        }
    }
}

impl From<DocError> for ApiError {
    fn from(e: DocError) -> Self {
        match e {
            DocError::NotFound => ApiError::NotFound,
            DocError::Restarting | DocError::StalePrecheck => {
                ApiError::Unavailable("the document is restarting, retry shortly".into())
            }
            DocError::StorageFull(_) => ApiError::StorageFull,
            e @ DocError::DocumentFull { .. } => ApiError::DocumentFull(e.to_string()),
            DocError::Storage(m) => {
                tracing::error!(error = %m, "document storage error");
                ApiError::Internal(format!("storage: {m}"))
            }
            DocError::NotOwner => {
                ApiError::NotOwner("another node serves this document now; ask again".into())
            }
            DocError::Internal(m) => ApiError::Internal(m),
        }
    }
}

impl From<crate::workspace::import::ImportFailed> for ApiError {
    fn from(e: crate::workspace::import::ImportFailed) -> Self {
        use crate::workspace::import::ImportFailed;
        match e {
            ImportFailed::Storage(e) => e.into(),
            ImportFailed::Document(e) => e.into(),
            ImportFailed::Refused(m) => {
                tracing::error!(error = %m, "an import's planned op was refused");
                ApiError::Internal(m)
            }
        }
    }
}

impl From<crate::workspace::export::ExportFailed> for ApiError {
    fn from(e: crate::workspace::export::ExportFailed) -> Self {
        use crate::workspace::export::ExportFailed;
        match e {
            ExportFailed::Storage(e) => e.into(),
            ExportFailed::Io(e) => {
                tracing::error!(error = %e, "building an export");
                ApiError::Internal(e.to_string())
            }
        }
    }
}

impl From<InvalidRequest> for ApiError {
    fn from(e: InvalidRequest) -> Self {
        ApiError::BadRequest(e.to_string())
    }
}

impl From<crate::http::assets::AssetError> for ApiError {
    fn from(e: crate::http::assets::AssetError) -> Self {
        tracing::error!(error = %e, "static file");
        ApiError::Internal(e.to_string())
    }
}

impl From<actix::MailboxError> for ApiError {
    fn from(e: actix::MailboxError) -> Self {
        ApiError::Unavailable(format!("document actor unavailable: {e}"))
    }
}

/// Query strings that do not parse (`since=1e400`, `wait=-5`) get the JSON error shape like
/// every other bad input, instead of actix's plain-text 400. Registered once as app data.
pub fn query_config() -> actix_web::web::QueryConfig {
    actix_web::web::QueryConfig::default()
        .error_handler(|err, _req| ApiError::BadRequest(format!("query string: {err}")).into())
}

/// Path segments that do not parse get the JSON error shape too.
pub fn path_config() -> actix_web::web::PathConfig {
    actix_web::web::PathConfig::default()
        .error_handler(|err, _req| ApiError::BadRequest(format!("path: {err}")).into())
}
