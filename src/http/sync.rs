//! Snapshot, sync and leave: the data path of PROTOCOL §3. Each request is authorised, then
//! becomes exactly one message to the document's actor through `ask::ask`, which
//! retries invisibly while the actor restarts (idle stop, reload after a failure).

use std::time::Instant;

use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;

use docsync_actors::ask::{ask, ask_renewing};
use docsync_actors::collab::op::{Op, OpKind};
use docsync_actors::collab::sync_request::{SyncBody, SyncRequest};
use docsync_actors::collab::validate::{ClientId, DocId};
use docsync_actors::document::{
    Caller, Completion, DocSize, GetSize, Leave, Snapshot, SnapshotBlock, SnapshotReply, Sync,
};
use docsync_actors::storage::accounts::Scope;
use docsync_actors::storage::log::{self, Precheck};

use super::access::{access, view_access};
use super::auth::Credentials;
use super::body::read_json;
use super::error::ApiError;
use super::state::AppState;
use super::write_budget::Allowance;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotQuery {
    #[serde(default)]
    client_id: Option<String>,
}

/// The snapshot's body as sent: `SnapshotReply`'s fields plus `blocks`, which the handler
/// splices in from the encoding shared by every caller at that head.
pub struct SnapshotBody;

impl utoipa::PartialSchema for SnapshotBody {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::Schema> {
        use utoipa::openapi::schema::{AllOfBuilder, ArrayBuilder, ObjectBuilder};
        AllOfBuilder::new()
            .item(utoipa::openapi::RefOr::Ref(
                utoipa::openapi::Ref::from_schema_name(<SnapshotReply as utoipa::ToSchema>::name()),
            ))
            .item(
                ObjectBuilder::new()
                    .property(
                        "blocks",
                        ArrayBuilder::new().items(utoipa::openapi::RefOr::Ref(
                            utoipa::openapi::Ref::from_schema_name(
                                <SnapshotBlock as utoipa::ToSchema>::name(),
                            ),
                        )),
                    )
                    .required("blocks"),
            )
            .into()
    }
}

impl utoipa::ToSchema for SnapshotBody {
    fn schemas(schemas: &mut Vec<(String, utoipa::openapi::RefOr<utoipa::openapi::Schema>)>) {
        for (name, schema) in [
            (
                <SnapshotReply as utoipa::ToSchema>::name(),
                <SnapshotReply as utoipa::PartialSchema>::schema(),
            ),
            (
                <SnapshotBlock as utoipa::ToSchema>::name(),
                <SnapshotBlock as utoipa::PartialSchema>::schema(),
            ),
        ] {
            schemas.push((name.into_owned(), schema));
        }
        <SnapshotReply as utoipa::ToSchema>::schemas(schemas);
        <SnapshotBlock as utoipa::ToSchema>::schemas(schemas);
    }
}

#[utoipa::path(
    get,
    path = "/api/v1/docs/{id}/snapshot",
    tag = "sync",
    summary = "The whole document at its durable head (PROTOCOL §3)",
    params(
        ("id" = String, Path, description = "The document's, folder's, team's or token's ID"),
        ("clientId" = Option<String>, Query, description = "The tab asking; without it the read opens no session", pattern = r"^cl_[A-Za-z0-9_-]+$", max_length = 100),
    ),
    responses(
        (status = 200, description = "the snapshot", body = SnapshotBody),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn snapshot(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
    query: web::Query<SnapshotQuery>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let started = Instant::now();
    let client_id = ClientId::parse_optional(query.into_inner().client_id, &state.limits)?;
    // A bullet guest gets their view of the document (PROTOCOL §10).
    let (doc_id, d) = view_access(&state, &creds, &path.into_inner()).await?;
    state
        .client_owners
        .claim_optional(&d.user.id, client_id.as_ref())
        .await?;
    // Without a clientId the snapshot is a plain read and opens no session.
    let caller = d.caller(client_id);
    let reply = ask(&state.registry, &doc_id, Snapshot { caller }).await?;
    let gzip = super::compression::accepts_gzip(req.headers());
    let chunks = snapshot_body(reply, gzip).await?;
    let len = chunks.iter().map(|c| c.len() as u64).sum();
    // Time spent in the server (auth, actor, encoding): what the benchmark reports.
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let mut res = HttpResponse::Ok();
    res.content_type("application/json")
        .insert_header(("Server-Timing", format!("app;dur={ms:.2}")))
        .insert_header((actix_web::http::header::VARY, "Accept-Encoding"));
    if gzip {
        // Already compressed: `Compress` leaves a response that names its encoding alone.
        res.insert_header((actix_web::http::header::CONTENT_ENCODING, "gzip"));
    }
    let chunks = futures::stream::iter(chunks.into_iter().map(Ok::<_, std::convert::Infallible>));
    Ok(res.body(actix_web::body::SizedStream::new(len, chunks)))
}

/// The snapshot's body as chunks: this caller's fields, then the blocks every caller at this
/// head shares (encoded, and gzipped, once per head; the first request that needs an
/// encoding makes it on the blocking pool, later ones find it ready), then the closing brace.
/// Field order differs from the struct's (blocks last); JSON objects are unordered.
async fn snapshot_body(
    reply: docsync_actors::document::SnapshotReply,
    gzip: bool,
) -> Result<Vec<web::Bytes>, ApiError> {
    let blocks = reply.blocks.clone();
    // `reply` leaves `blocks` out of its own encoding: `{…}` becomes `{…,"blocks":` + shared.
    let mut prefix = serde_json::to_vec(&reply).map_err(|e| ApiError::Internal(e.to_string()))?;
    prefix.pop();
    prefix.extend_from_slice(b",\"blocks\":");
    const SUFFIX: &[u8] = b"}";
    let blocking = |e: actix_web::error::BlockingError| ApiError::Internal(e.to_string());
    if gzip {
        let segment = match blocks.gzip_if_ready() {
            Some(s) => s,
            None => web::block(move || blocks.gzip()).await.map_err(blocking)?,
        };
        return Ok(docsync_actors::document::encoded::gzip_around(
            &prefix, &segment, SUFFIX,
        ));
    }
    let json = match blocks.json_if_ready() {
        Some(j) => j,
        None => web::block(move || blocks.json()).await.map_err(blocking)?,
    };
    Ok(vec![prefix.into(), json, web::Bytes::from_static(SUFFIX)])
}

/// The caller's rights for a sync (`doc_id` as the request named it, parsed with the rights
/// by `access::view_access`): a write needs an editor.
async fn authorize(
    state: &AppState,
    creds: &Credentials,
    doc_id: &str,
    ops: &[Op],
) -> Result<(DocId, Caller), ApiError> {
    // Rights, usually from the access cache (one read on a miss); a bullet guest syncs
    // their view (PROTOCOL §10).
    let (doc, d) = view_access(state, creds, doc_id).await?;
    if !ops.is_empty() && creds.scope() < Scope::Write {
        return Err(ApiError::Scope(
            "this API token's scope is read: a sync may pull, not send ops".into(),
        ));
    }
    if !ops.is_empty() && !d.role.can_write() {
        return Err(ApiError::Forbidden(
            "this document is read-only for you".into(),
        ));
    }
    // The client is set by `Sync::new` from the request.
    Ok((doc, d.caller(None)))
}

/// The idempotency pre-check: stored results of these op IDs, and blocks that belong to
/// other documents. Asked for only when the document's actor cannot tell without it (an op
/// ID that may be a retry, a block it does not have); a few index lookups, run in place
/// when a connection is free (`read_short`). Returned with the moment before the read: the
/// actor judges the pre-check by it.
async fn precheck(
    state: &AppState,
    doc: &DocId,
    ops: &[Op],
) -> Result<(Precheck, Instant), ApiError> {
    let read_at = Instant::now();
    let id = doc.clone();
    let op_ids: Vec<String> = ops.iter().map(|o| o.op_id.clone()).collect();
    let block_ids: Vec<String> = ops
        .iter()
        .flat_map(|o| o.kind.referenced_blocks())
        .map(str::to_string)
        .collect();
    let pre = state
        .storage
        .read_short(move |c| {
            let ops = op_ids.iter().map(String::as_str);
            log::precheck(c, id.as_str(), ops, block_ids.iter().map(String::as_str))
        })
        .await?;
    Ok((pre, read_at))
}

#[utoipa::path(
    post,
    path = "/api/v1/docs/{id}/sync",
    tag = "sync",
    summary = "Send ops and lease wishes, get results and the log since lastSeq (PROTOCOL §3)",
    params(
        ("id" = String, Path, description = "The document's, folder's, team's or token's ID"),
    ),
    request_body = docsync_actors::collab::sync_request::SyncBody,
    responses(
        (status = 200, description = "results, entries after lastSeq, leases, presence", body = docsync_actors::document::SyncResponse),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "the caller's role does not allow this", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
        (status = 413, description = "the body is too large", body = crate::http::error::ErrorBody),
        (status = 429, description = "a budget or rate is spent; see Retry-After", body = crate::http::error::ErrorBody),
        (status = 507, description = "the server's disk is full; nothing was written", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn sync(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let raw_doc = path.into_inner();
    let body: SyncBody = read_json(&req, payload, state.max_body()).await?;
    let request = SyncRequest::parse(body, &state.limits)?;
    let ops = &request.ops;
    let (doc_id, caller) = authorize(&state, &creds, &raw_doc, ops).await?;
    state
        .client_owners
        .claim(&caller.author.user_id, &request.client)
        .await?;
    charge_write(&state, &caller.author.user_id, &doc_id, ops)?;
    // Without a pre-check when the actor can likely tell by itself that the ops are new
    // (edits of bullets it has). An insert names a block the document does not have yet,
    // which only the database can place, so its request reads the pre-check at once instead
    // of being sent back for it. Whenever the actor cannot tell (or its memory is younger
    // than the read), it answers `StalePrecheck` and the request is sent again with one, read
    // now, with the rights checked again.
    let inserts = ops.iter().any(|o| matches!(o.kind, OpKind::Insert { .. }));
    let first = if inserts {
        Some(precheck(&state, &doc_id, ops).await?)
    } else {
        None
    };
    let first = Sync::new(caller, request.clone(), first);
    let renew = || async {
        let (doc, caller) = authorize(&state, &creds, &raw_doc, ops).await?;
        let pre = precheck(&state, &doc, ops).await?;
        Ok::<_, ApiError>(Sync::new(caller, request.clone(), Some(pre)))
    };
    let reply = ask_renewing(&state.registry, &doc_id, first, renew).await?;
    let response = match reply.complete() {
        Completion::Done(response) => response,
        Completion::ReadFirst(unread) => {
            // Below the actor's in-memory tail: committed entries, safe to read here.
            let (doc, after, upto, limit) = (doc_id, unread.after, unread.upto, unread.limit());
            let records = state
                .storage
                .read(move |c| log::read_after(c, doc.as_str(), after, upto, limit))
                .await?;
            unread.fill(records)
        }
    };
    Ok(HttpResponse::Ok().json(&response))
}

/// What a request's ops may add to the database: their text plus a fixed allowance per op
/// for its log row, result and index entries.
pub(crate) const BYTES_PER_OP: u64 = 256;

/// Takes the request's cost from the user's and the document's write budgets, or refuses it
/// (429 `write_budget`) before anything reaches the document.
fn charge_write(state: &AppState, user: &str, doc: &DocId, ops: &[Op]) -> Result<(), ApiError> {
    if ops.is_empty() {
        return Ok(());
    }
    let bytes: u64 = ops
        .iter()
        .map(|o| o.kind.added_text_bytes() as u64 + BYTES_PER_OP)
        .sum();
    charge_bytes(state, user, Some(doc), bytes)
}

/// Takes `bytes` from the user's and the document's write budgets, or refuses (429
/// `write_budget`, nothing charged). Also what versions, restores and imports (no document:
/// the user's budget only) cost.
pub(crate) fn charge_bytes(
    state: &AppState,
    user: &str,
    doc: Option<&DocId>,
    bytes: u64,
) -> Result<(), ApiError> {
    let now = state.clock.now_ms();
    state
        .write_budgets
        .charge(user, doc.map(DocId::as_str), bytes, now)
        .map_err(|(budget, wait)| {
            state
                .metrics
                .quota_refusals
                .with_label_values(&[budget.label()])
                .inc();
            ApiError::WriteBudget {
                retry_after: wait,
                message: format!(
                    "write budget ({}) spent for now; nothing was written, retry in {wait} s",
                    budget.label().replace('_', " ")
                ),
            }
        })
}

/// The document's size against its budget, and what its and the caller's write budgets
/// have left.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub(crate) struct Usage {
    size: DocSize,
    document: Allowance,
    user: Allowance,
}

/// `GET /docs/{id}/usage`: the document's size against its budget and what its write
/// budgets have left (the owner's view; editors see it too, readers do not).
#[utoipa::path(
    get,
    path = "/api/v1/docs/{id}/usage",
    tag = "documents",
    summary = "The document's size and write budgets (editors)",
    params(
        ("id" = String, Path, description = "The document's, folder's, team's or token's ID"),
    ),
    responses(
        (status = 200, description = "usage", body = Usage),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "the caller's role does not allow this", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn usage(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let (doc, user, role, _) = access(&state, &creds, &path.into_inner()).await?;
    if !role.can_write() {
        return Err(ApiError::Forbidden(
            "usage is shown to the document's editors".into(),
        ));
    }
    let size = ask(&state.registry, &doc, GetSize).await?;
    let now = state.clock.now_ms();
    Ok(HttpResponse::Ok().json(Usage {
        size,
        document: state.write_budgets.document(doc.as_str(), now),
        user: state.write_budgets.user(&user.id, now),
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LeaveBody {
    /// The tab whose session ends (its own: another user's ID is refused).
    #[schema(pattern = r"^cl_[A-Za-z0-9_-]+$", max_length = 100)]
    client_id: String,
}

#[utoipa::path(
    post,
    path = "/api/v1/docs/{id}/leave",
    tag = "sync",
    summary = "A tab closed the document: its session and leases end now",
    params(
        ("id" = String, Path, description = "The document's, folder's, team's or token's ID"),
    ),
    request_body = LeaveBody,
    responses(
        (status = 204, description = "done"),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "the caller's role does not allow this", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn leave(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let body: LeaveBody = read_json(&req, payload, state.max_body()).await?;
    let client_id = ClientId::parse(&body.client_id, &state.limits)?;
    // A bullet guest's tab leaves too.
    let (doc_id, d) = view_access(&state, &creds, &path.into_inner()).await?;
    let user = d.user;
    state.client_owners.claim(&user.id, &client_id).await?;
    ask(&state.registry, &doc_id, Leave { client: client_id }).await?;
    Ok(HttpResponse::NoContent().finish())
}
