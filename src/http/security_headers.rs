//! Security headers, added in this one place to every response the server sends.
//!
//! - `X-Content-Type-Options: nosniff` everywhere: a browser never runs a JSON answer or an
//!   uploaded text as script because it "looks like" one.
//! - `Referrer-Policy: same-origin`: document IDs are in the app's URLs (`/d/doc_…`); a link
//!   in a bullet must not tell another site which document it was clicked in, or that this
//!   server exists. Our own requests keep the full referrer (logs, debugging).
//! - On HTML only (the only responses a browser renders as a page): a strict
//!   `Content-Security-Policy` — scripts, styles, connections, workers and the manifest from
//!   this origin only, no inline script or style, no plugins, no `<base>` rewriting, forms
//!   post only here, and no framing — plus `X-Frame-Options: DENY` for browsers that predate
//!   `frame-ancestors`. Pages must therefore keep script and style in files.
//!
//! A header a handler already set is left as it is (a handler may need something stricter).

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use actix_web::middleware::Next;

pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
style-src 'self'; img-src 'self' data:; connect-src 'self'; worker-src 'self'; \
manifest-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; \
frame-ancestors 'none'";

const EVERY_RESPONSE: &[(HeaderName, &str)] = &[
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (header::REFERRER_POLICY, "same-origin"),
];

const HTML_ONLY: &[(HeaderName, &str)] = &[
    (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
    (header::X_FRAME_OPTIONS, "DENY"),
];

pub async fn add(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let mut res = next.call(req).await?;
    let headers = res.headers_mut();
    set_missing(headers, EVERY_RESPONSE);
    if is_html(headers) {
        set_missing(headers, HTML_ONLY);
    }
    Ok(res)
}

fn is_html(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("text/html"))
}

fn set_missing(headers: &mut HeaderMap, wanted: &[(HeaderName, &'static str)]) {
    for (name, value) in wanted {
        if !headers.contains_key(name) {
            headers.insert(name.clone(), HeaderValue::from_static(value));
        }
    }
}
