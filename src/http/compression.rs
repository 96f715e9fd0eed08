//! Compression of responses (`Content-Encoding`), negotiated from the client's
//! `Accept-Encoding` by actix-web's `Compress` middleware: zstd, br or gzip (all three are
//! compiled in: actix-web's default features). JSON answers (sync, lists, search), the
//! markdown export and the web app's files are compressed; what must not be, is marked:
//!
//! - **Wake-up channels.** An SSE stream carries `Content-Encoding: identity` from its
//!   handler (a compressor holds small events back until its buffer fills; the client would
//!   give up on the stream after 5 s, PROTOCOL §4), and `Compress` leaves any response that
//!   already names an encoding alone. A WebSocket upgrade (`101`) is never compressed. A
//!   long-poll answer (`{headSeq, leaseSeq}`) is a complete body of a few dozen bytes: the
//!   small-body rule below keeps it as it is.
//! - **Small bodies** (under `MIN_BYTES`): actix's `Compress` has no size threshold, and
//!   setting up a compressor costs far more than it saves on a `/sync` reply of a few hundred
//!   bytes (each response gets a fresh encoder with its tables; a packet carries 1.4 KB
//!   either way). Measured on the 2-core machine for a 187-byte `/sync` reply, encoders as
//!   actix builds them: gzip (fast) 17.9 µs, brotli (q 3) 12.8 µs, zstd (3) 21.0 µs each —
//!   a quarter to a half of the whole target of 0.05 ms server CPU per delivered edit
//!   (the fan-out budget of December 2026). Browsers always ask for compression, so without this every pull of every reader
//!   would pay for it. `skip_small` (inside
//!   `Compress`) marks such answers `identity` so `Compress` passes them through, and
//!   `unmark` (outside it) removes that marker again, so they go out with no
//!   `Content-Encoding` at all, as before.
//! - **The snapshot** arrives already encoded (`Content-Encoding: gzip`, the big part
//!   compressed once per head, see `docsync_actors::document::encoded`) when the client
//!   accepts gzip; otherwise it is plain JSON and `Compress` handles it like any other.

use actix_web::body::{BodySize, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderMap, HeaderValue};
use actix_web::middleware::Next;

/// Bodies smaller than this are sent as they are.
pub const MIN_BYTES: u64 = 1024;

/// Put on a response whose `identity` encoding is only a note to `Compress`.
#[derive(Clone, Copy)]
struct Marked;

/// Inside `Compress`: a body of known size under `MIN_BYTES` is marked `identity`.
pub async fn skip_small(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let mut res = next.call(req).await?;
    let small = matches!(res.response().body().size(), BodySize::Sized(n) if n < MIN_BYTES);
    if small && !res.headers().contains_key(header::CONTENT_ENCODING) {
        res.headers_mut().insert(
            header::CONTENT_ENCODING,
            HeaderValue::from_static("identity"),
        );
        res.response_mut().extensions_mut().insert(Marked);
    }
    Ok(res)
}

/// Outside `Compress`: removes the note `skip_small` left.
pub async fn unmark(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let mut res = next.call(req).await?;
    let marked = res.response().extensions().get::<Marked>().is_some();
    if marked {
        res.headers_mut().remove(header::CONTENT_ENCODING);
    }
    Ok(res)
}

/// Whether `Accept-Encoding` allows gzip (`gzip`, `x-gzip` or `*` with a non-zero `q`).
pub fn accepts_gzip(headers: &HeaderMap) -> bool {
    let mut star = false;
    for value in headers.get_all(header::ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            match coding.as_str() {
                "gzip" | "x-gzip" => return q > 0.0,
                "*" => star = q > 0.0,
                _ => {}
            }
        }
    }
    star
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepts(v: &str) -> bool {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT_ENCODING, HeaderValue::from_str(v).unwrap());
        accepts_gzip(&h)
    }

    #[test]
    fn gzip_negotiation() {
        assert!(accepts("gzip"));
        assert!(accepts("gzip, deflate, br, zstd"));
        assert!(accepts("br;q=1.0, GZIP;q=0.5"));
        assert!(accepts("*"));
        assert!(!accepts("gzip;q=0"));
        assert!(!accepts("br, zstd"));
        assert!(!accepts("identity"));
        assert!(!accepts("*;q=0, br"));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }
}
