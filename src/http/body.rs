//! Reading JSON request bodies ourselves: the size limit gives a JSON `413`, and decoding
//! errors name the field path (`ops[2].baseVersion: invalid type …`) in a JSON `400`.

use actix_web::{web, HttpRequest};
use futures::StreamExt;
use serde::de::DeserializeOwned;

use super::error::ApiError;

/// Requires a JSON content type (no form posts from other sites), enforces `limit`, decodes.
pub async fn read_json<T: DeserializeOwned>(
    req: &HttpRequest,
    mut payload: web::Payload,
    limit: usize,
) -> Result<T, ApiError> {
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
    let mut body = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| ApiError::BadRequest(format!("reading body: {e}")))?;
        if body.len() + chunk.len() > limit {
            return Err(ApiError::TooLarge(limit));
        }
        body.extend_from_slice(&chunk);
    }
    decode(&body)
}

pub fn decode<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    let de = &mut serde_json::Deserializer::from_slice(body);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path.is_empty() || path == "." {
            ApiError::InvalidJson(format!("invalid JSON body: {inner}"))
        } else {
            ApiError::InvalidJson(format!("{path}: {inner}"))
        }
    })
}
