//! Serving the web app: every file of `static/` at its own path, `index.html` for the app's
//! pages (the browser router takes over from there), the operator page at `/admin`.
//! Responses carry a weak ETag (one for every content-coding of a file) and
//! `Cache-Control: no-cache`: browsers always revalidate
//! (a 304 costs one round trip) and the service worker, not the HTTP cache, keeps the app
//! usable offline. Anything that is not a servable file is the API's JSON 404.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::Method;
use actix_web::{web, HttpRequest, HttpResponse};

use super::assets::{Asset, AssetPath};
use super::compression::accepts_gzip;
use super::error::ApiError;
use super::state::AppState;

/// The one HTML page of the web app.
const APP_PAGE: &str = "index.html";
/// The operator page (`/admin`).
const ADMIN_PAGE: &str = "admin.html";

/// `/`, `/login`, `/d/{docId}`, `/d/{docId}/b/{blockId}` (zoomed into a bullet): the app's
/// page; the client-side router reads the URL.
pub async fn app_page(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    serve(&state, &req, APP_PAGE).await
}

/// `/admin`: the operator page (it checks the admin role itself, through the API).
pub async fn admin_page(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    serve(&state, &req, ADMIN_PAGE).await
}

/// Every request no route took: a file of the web app if the path names one, else 404.
pub async fn file_or_not_found(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    // HEAD arrives here as GET (`head_requests`). The API's namespace never falls back to
    // files, so a mistyped endpoint stays an API error.
    if req.method() != Method::GET || req.path().starts_with("/api/") {
        return Err(ApiError::NotFound);
    }
    let path = AssetPath::from_url(req.path()).ok_or(ApiError::NotFound)?;
    respond(&state, &req, &path).await
}

async fn serve(state: &AppState, req: &HttpRequest, file: &str) -> Result<HttpResponse, ApiError> {
    let path = AssetPath::new(file).expect("a fixed, valid file name");
    respond(state, req, &path).await
}

async fn respond(
    state: &AppState,
    req: &HttpRequest,
    path: &AssetPath,
) -> Result<HttpResponse, ApiError> {
    let asset = state.assets.load(path).await?.ok_or(ApiError::NotFound)?;
    if matches_if_none_match(req, &asset.etag) {
        return Ok(HttpResponse::NotModified()
            .insert_header((header::ETAG, asset.etag.as_str()))
            .insert_header((header::CACHE_CONTROL, "no-cache"))
            .finish());
    }
    Ok(ok_response(&asset, accepts_gzip(req.headers())))
}

/// The file, gzipped once and kept when it can be (`Asset::gzipped`; `Compress` leaves an
/// answer that names its encoding alone), else as it is (then `Compress` negotiates).
fn ok_response(asset: &Asset, gzip_ok: bool) -> HttpResponse {
    let mut reply = HttpResponse::Ok();
    reply
        .insert_header((header::CONTENT_TYPE, asset.content_type.as_ref()))
        .insert_header((header::ETAG, asset.etag.as_str()))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header((header::VARY, "Accept-Encoding"));
    match asset.gzipped().filter(|_| gzip_ok) {
        Some(gz) => reply
            .insert_header((header::CONTENT_ENCODING, "gzip"))
            .body(gz.clone()),
        None => reply.body(asset.bytes.clone()),
    }
}

/// `If-None-Match` holds our ETag (or `*`). The comparison is weak, as RFC 9110 §13.1.2
/// asks: with or without the `W/` prefix.
fn matches_if_none_match(req: &HttpRequest, etag: &str) -> bool {
    req.headers()
        .get_all(header::IF_NONE_MATCH)
        .filter_map(|v: &HeaderValue| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|tag| tag == "*" || opaque(tag) == opaque(etag))
}

/// The quoted part of an entity tag, without the weakness marker.
fn opaque(tag: &str) -> &str {
    tag.strip_prefix("W/").unwrap_or(tag)
}
