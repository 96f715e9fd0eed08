//! `HEAD` on any `GET` route answers like `GET` without a body (uptime monitors and link
//! checkers use `HEAD`). The request is routed as `GET`; actix-http already drops the body
//! of an answer to a `HEAD` request on the wire (it remembers the method it parsed) and keeps
//! the `Content-Length`. A streamed body (SSE, long answers) is dropped here instead, so a
//! `HEAD` never holds a stream open.

use actix_web::body::{self, BodySize, EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::middleware::Next;

pub async fn answer_like_get(
    mut req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody, body::None>>, actix_web::Error> {
    let is_head = req.method() == Method::HEAD;
    if is_head {
        req.head_mut().method = Method::GET;
    }
    let res = next.call(req).await?;
    if is_head && res.response().body().size() == BodySize::Stream {
        return Ok(res.map_body(|_, _| EitherBody::right(body::None::new())));
    }
    Ok(res.map_into_left_body())
}
