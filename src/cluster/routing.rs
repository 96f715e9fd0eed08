//! Cluster mode: a document's requests are served by the node that owns it. In front of
//! the handlers, a request under `/api/v1/docs/{id}/…` is either served here (this node holds
//! the document, or nobody live does and this node's actor will claim it) or forwarded one hop
//! to the owner (`hop.rs`): same method, body and credentials; the answer — streams
//! included — comes back through this node. A request that arrived forwarded is served here,
//! never sent on. The wake-up channels are served where they arrive: a WebSocket room, an
//! SSE stream or a long-poll of a document owned elsewhere listens to this node's relay of
//! it (one stream from the owner per node and document, `listen.rs`); the proxy's
//! `hash $doc` usually lands them on the owner in the first place.
//!
//! Without cluster mode (SQLite) this passes every request straight through.

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{web, HttpMessage, ResponseError};
use futures::StreamExt;

use super::hop::{self, Arrival};
use super::{Cluster, Route, RESOLVE_AGAIN};
use crate::http::error::ApiError;
use crate::http::state::AppState;

/// The document a request is about, when it must be served by the document's owner. The
/// wake-up channels are not (the WebSocket, a document's SSE stream and long-poll): they
/// are served where they arrive, through the node's relay of the document (`listen.rs`).
fn document_of(req: &ServiceRequest) -> Option<String> {
    let path = req.path();
    let rest = path.strip_prefix("/api/v1/docs/")?;
    let mut parts = rest.split('/');
    let id = parts.next().filter(|id| !id.is_empty())?;
    if matches!(parts.next(), Some("events" | "changes")) && parts.next().is_none() {
        return None;
    }
    Some(id.to_string())
}

pub async fn route<B: MessageBody + 'static>(
    req: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<EitherBody<B>>, actix_web::Error> {
    let Some(state) = req.app_data::<web::Data<AppState>>().cloned() else {
        return Ok(next.call(req).await?.map_into_left_body());
    };
    let (Some(cluster), Some(doc)) = (state.cluster.clone(), document_of(&req)) else {
        return Ok(next.call(req).await?.map_into_left_body());
    };
    // Boxed: the forwarding's state (its HTTP client's futures, ≈ 2 KB) is allocated only
    // for a request that may be forwarded, not held by every request while it is served
    // (a long-poll waits up to 25 s).
    Box::pin(route_in_cluster(req, next, state, cluster, doc)).await
}

/// A document's request in cluster mode: served here, or forwarded to the document's owner.
async fn route_in_cluster<B: MessageBody + 'static>(
    mut req: ServiceRequest,
    next: Next<B>,
    state: web::Data<AppState>,
    cluster: std::sync::Arc<Cluster>,
    doc: String,
) -> Result<ServiceResponse<EitherBody<B>>, actix_web::Error> {
    let refuse = |req: ServiceRequest, e: ApiError| {
        Ok(req.into_response(e.error_response()).map_into_right_body())
    };
    let arrived = match hop::arrival(req.request(), cluster.hop().secret) {
        Ok(a) => a,
        Err(e) => return refuse(req, e),
    };
    if let Arrival::Forwarded { .. } = arrived {
        return Ok(next.call(req).await?.map_into_left_body());
    }
    if !cluster.is_member() {
        return refuse(
            req,
            ApiError::NotOwner("this node is not in the cluster right now; ask again".into()),
        );
    }
    let Route::Owner { node_id, inc, addr } = cluster.route(&doc).await else {
        return Ok(next.call(req).await?.map_into_left_body());
    };
    // The whole body, bounded like any body this server reads.
    let max = state.max_body();
    let mut payload = req.take_payload();
    let mut body = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk?;
        if body.len() + chunk.len() > max {
            return refuse(req, ApiError::TooLarge(max));
        }
        body.extend_from_slice(&chunk);
    }
    // Until the owner's answer begins: it answers promptly, or its node is paused or cut off
    // (then the client asks again and, once that node's membership has expired, another
    // node claims the document). Long-polls, which may wait their whole wait, are not
    // forwarded here (`document_of`).
    let head_within = std::time::Duration::from_secs_f64(state.settings.cluster.ttl_secs);
    let body = body.freeze();
    let client_addr = state.client_address(req.request());
    let deadline = std::time::Instant::now() + head_within;
    let (mut node_id, mut inc, mut addr) = (node_id, inc, addr);
    loop {
        state.metrics.requests_forwarded.inc();
        let within = deadline.saturating_duration_since(std::time::Instant::now());
        let outcome = {
            let forward = hop::Forward {
                req: req.request(),
                arrived: &arrived,
                body: body.clone(),
                client_addr: &client_addr,
            };
            let sent = std::pin::pin!(hop::forward(cluster.hop(), forward, &addr, within));
            // Until the answer begins, or until the document should go elsewhere (its owner
            // evicted, expired or moved on): then it is asked again there.
            let moved = std::pin::pin!(cluster.while_owner(&doc, &inc, &addr, &node_id));
            match futures::future::select(sent, moved).await {
                futures::future::Either::Left((answer, _)) => Some(answer),
                futures::future::Either::Right(((), _)) => None,
            }
        };
        let time_left = || std::time::Instant::now() + RESOLVE_AGAIN < deadline;
        let then = match outcome {
            Some(Ok(resp)) if resp.status().as_u16() == 503 && time_left() => {
                // The node believed to own the document may have lost it (a stale route):
                // the database says where it is now. If that is the same node, its answer
                // stands.
                cluster.forget_owner(&doc);
                match cluster.route_fresh(&doc).await {
                    Route::Owner { inc: i, .. } if i == inc => {
                        return Ok(req.into_response(resp).map_into_right_body())
                    }
                    other => other,
                }
            }
            Some(Ok(resp)) => return Ok(req.into_response(resp).map_into_right_body()),
            Some(Err(failed)) => {
                cluster.forget_owner(&doc);
                // No answer before the wait is over: see whether the node answers at all (a
                // request that timed out at the deadline is answered now, not probed).
                if time_left() && !cluster.answers_as(&addr, &inc).await {
                    cluster.unreachable(&node_id, &inc).await;
                }
                // Ask again who serves the document until the wait is over; sending the same
                // request twice is harmless (op IDs). Then serve it here if nobody live
                // holds it.
                if !time_left() {
                    tracing::debug!(node = %node_id, error = %failed, "the document's node did not answer");
                    return refuse(req, ApiError::NotOwner(failed.to_string()));
                }
                cluster.ask_again(&doc).await
            }
            // The owner was evicted, expired or moved on while the request waited.
            None => cluster.ask_again(&doc).await,
        };
        match then {
            Route::Here => {
                req.set_payload(actix_web::dev::Payload::from(body));
                return Ok(next.call(req).await?.map_into_left_body());
            }
            Route::Owner {
                node_id: n,
                inc: i,
                addr: a,
            } => (node_id, inc, addr) = (n, i, a),
        }
    }
}
