//! `GET /cluster/v1/member` — what the other nodes probe before they report this node
//! unreachable: that it answers, and as which incarnation. A node that answers but is not
//! the incarnation they wait on (fenced: it lost the database; or restarted as a new one)
//! serves none of that incarnation's documents, so to them it is as gone as one that does
//! not answer — their majority ends that incarnation now, not when its membership expires.
//!
//! The asking side is `Hop::answers_as`. Only a node asks (the cluster secret, as for a forwarded request); the answer touches
//! no database, so a slow database never makes a live node look gone.

use actix_web::{web, HttpRequest, HttpResponse};

use super::hop::{self, Arrival, AsMember};
use crate::http::error::ApiError;
use crate::http::state::AppState;

pub async fn member(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let Some(cluster) = state.cluster.clone() else {
        return Err(ApiError::NotFound);
    };
    if hop::arrival(&req, cluster.hop().secret)? == Arrival::Direct {
        return Err(ApiError::Forbidden(
            "only a node of the cluster asks another whether it is a member".into(),
        ));
    }
    match cluster.this_node.current() {
        Some(m) => Ok(HttpResponse::Ok().json(AsMember { inc: m.inc })),
        None => Err(ApiError::Unavailable(
            "not in the cluster (starting, or fenced until it joins again)".into(),
        )),
    }
}
