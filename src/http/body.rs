//! Reading JSON request bodies ourselves: the size limit gives a JSON `413`, and decoding
//! errors name the field path (`ops[2].baseVersion: invalid type …`) in a JSON `400`, and a
//! body that does not arrive within `server.body_read_timeout_secs` gives a JSON `408`.

use std::time::Duration;

use actix_web::{web, HttpRequest};
use futures::StreamExt;
use serde::de::DeserializeOwned;

use super::error::ApiError;
use super::state::AppState;

/// Requires a JSON content type (no form posts from other sites), enforces `limit`, decodes
/// a JSON object (and nothing after it).
pub async fn read_json<T: DeserializeOwned>(
    req: &HttpRequest,
    payload: web::Payload,
    limit: usize,
) -> Result<T, ApiError> {
    let body = read_body(req, payload, limit).await?;
    decode(&body, b'{')
}

/// Like `read_json` for endpoints whose body is a JSON array.
pub async fn read_json_array<T: DeserializeOwned>(
    req: &HttpRequest,
    payload: web::Payload,
    limit: usize,
) -> Result<T, ApiError> {
    let body = read_body(req, payload, limit).await?;
    decode(&body, b'[')
}

async fn read_body(
    req: &HttpRequest,
    mut payload: web::Payload,
    limit: usize,
) -> Result<web::BytesMut, ApiError> {
    let ct = req
        .headers()
        .get(actix_web::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let mime = ct
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if mime != "application/json" && !mime.ends_with("+json") {
        return Err(ApiError::UnsupportedMediaType(
            "expected Content-Type: application/json".into(),
        ));
    }
    if let Some(len) = req
        .headers()
        .get(actix_web::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
    {
        if len > limit {
            return Err(ApiError::TooLarge(limit));
        }
    }
    // One deadline for the whole body, not per chunk: a client dribbling a byte every few
    // seconds would otherwise hold its socket and this task for as long as it likes.
    let secs = req
        .app_data::<web::Data<AppState>>()
        .map_or(DEFAULT_BODY_READ_SECS, |s| {
            s.settings.server.body_read_timeout_secs
        });
    let read = async {
        let mut body = web::BytesMut::new();
        while let Some(chunk) = payload.next().await {
            let chunk = chunk.map_err(|e| ApiError::BadRequest(format!("reading body: {e}")))?;
            if body.len() + chunk.len() > limit {
                return Err(ApiError::TooLarge(limit));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    };
    tokio::time::timeout(Duration::from_secs(secs), read)
        .await
        .map_err(|_| ApiError::BodyTimeout(secs))?
}

/// Only for a request without the app's state (never in the server, which always has it).
const DEFAULT_BODY_READ_SECS: u64 = 15;

/// Decodes a body that must be exactly one JSON value opening with `opening` (`{` or `[`):
/// serde would otherwise fill a struct from an array, and ignore bytes after the value.
pub fn decode<T: DeserializeOwned>(body: &[u8], opening: u8) -> Result<T, ApiError> {
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&opening) {
        let what = if opening == b'{' {
            "an object"
        } else {
            "an array"
        };
        return Err(ApiError::InvalidJson(format!(
            "invalid JSON body: expected {what}"
        )));
    }
    let de = &mut serde_json::Deserializer::from_slice(body);
    let value = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path.is_empty() || path == "." {
            ApiError::InvalidJson(format!("invalid JSON body: {inner}"))
        } else {
            ApiError::InvalidJson(format!("{path}: {inner}"))
        }
    })?;
    de.end()
        .map_err(|e| ApiError::InvalidJson(format!("invalid JSON body: {e}")))?;
    Ok(value)
}
