//! History (PROTOCOL §8): a bullet's past, versions (list, read, name, delete, compare,
//! restore), the review of open conflict copies, and the trash. Reads go to storage; what
//! must happen in the document's op order (keeping a version, restoring one) goes to the
//! document's actor. Rights come from `access.rs` like everywhere: readers read, editors
//! name, delete and restore, strangers get 404; the trash is its owner's alone.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};

use docsync_actors::ask::{ask, ask_renewing};
use docsync_actors::collab::block::Block;
use docsync_actors::collab::diff::{self, Diff};
use docsync_actors::collab::subtree;
use docsync_actors::collab::validate::{check_id, ClientId, DocId};
use docsync_actors::document::{GetSize, Restore, RestoreReply, TakeVersion};
use docsync_actors::registry::CloseDocument;
use docsync_actors::storage::conflicts::{self, OpenConflict};
use docsync_actors::storage::documents;
use docsync_actors::storage::log::{self, BlockChange, Precheck};
use docsync_actors::storage::roles::Reach;
use docsync_actors::storage::trash::{self, TrashedDoc};
use docsync_actors::storage::versions::{self, VersionKind, VersionMeta, VersionState};

use super::access::{caller, doc_access, read_as, view_access};
use super::audited::Actor;
use super::auth::Credentials;
use super::body::read_json;
use super::error::ApiError;
use super::guest_part::{self, HistoryLens};
use super::state::AppState;
use super::sync::charge_bytes;
use docsync_actors::storage::audit::{self, actions};

/// Most changes one page of a bullet's history holds (and the default).
const HISTORY_PAGE: usize = 100;
/// Most bytes of a version's name.
const MAX_VERSION_NAME: usize = 200;
/// Most open conflicts one answer lists.
const MAX_CONFLICTS: usize = 500;

type NotFound = crate::http::error::ErrorBody;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryQuery {
    /// Only changes with a smaller `seq` (the previous page's last); default: all.
    #[serde(default)]
    before: Option<i64>,
    #[serde(default)]
    limit: Option<usize>,
}

/// A page of a bullet's history, newest first; `more` when older changes exist.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BlockHistory {
    changes: Vec<BlockChange>,
    more: bool,
}

#[utoipa::path(
    get,
    path = "/api/v1/docs/{id}/blocks/{blockId}/history",
    tag = "history",
    summary = "A bullet's history: its changes in the log, then its state in older versions, newest first (PROTOCOL §8)",
    params(
        ("id" = String, Path, description = "The document's ID"),
        ("blockId" = String, Path, description = "The bullet's ID"),
        ("before" = Option<i64>, Query, description = "Only changes below this seq (paging)"),
        ("limit" = Option<usize>, Query, description = "At most this many changes, 1 to 100 (default 100)"),
    ),
    responses(
        (status = 200, description = "changes, newest first", body = BlockHistory),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = NotFound),
    ),
)]
pub async fn block_history(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<(String, String)>,
    query: web::Query<HistoryQuery>,
) -> Result<HttpResponse, ApiError> {
    let (doc, block) = path.into_inner();
    let (doc, d) = view_access(&state, &creds, &doc).await?;
    check_id("blockId", &block, "blk_", state.limits.max_id_bytes)?;
    let q = query.into_inner();
    let limit = q.limit.unwrap_or(HISTORY_PAGE);
    if !(1..=HISTORY_PAGE).contains(&limit) {
        return Err(ApiError::BadRequest(format!("limit: 1 to {HISTORY_PAGE}")));
    }
    let before = q.before.unwrap_or(i64::MAX);
    let guest = guest_part::guest_roots(&d.reach);
    let found = state
        .storage
        .read(move |c| {
            // A bullet guest: only a bullet inside their part, seen through their lens.
            let mut lens = guest.as_deref().map(HistoryLens::new);
            if let Some(l) = &mut lens {
                if !l.inside(c, doc.as_str(), &block)? {
                    return Ok(None);
                }
            }
            let mut changes = log::block_history(c, doc.as_str(), &block, before, limit + 1)?;
            let raw_more = changes.len() > limit;
            if let Some(l) = &mut lens {
                changes = l.changes(c, doc.as_str(), &block, changes)?;
            }
            if !raw_more && changes.len() <= limit {
                // The log has no older change of this bullet: what versions older than the
                // log's floor kept of it follows (one entry per different text).
                let floor = documents::load_floor(c, doc.as_str())?;
                let below = before.min(floor + 1) - 1;
                let want = limit + 1 - changes.len();
                let mut last = changes.last().and_then(|x| x.content.clone());
                for (m, s) in versions::states_at_or_below(c, doc.as_str(), below, 4 * want)? {
                    if changes.len() > limit {
                        break;
                    }
                    let b = match &lens {
                        Some(l) => l.in_version(&s, &block),
                        None => s.blocks.iter().find(|b| b.id == block).cloned(),
                    };
                    let Some(b) = b else {
                        continue;
                    };
                    if last.as_deref() == Some(b.content.as_str()) {
                        continue;
                    }
                    last = Some(b.content.clone());
                    let entry = match &mut lens {
                        Some(l) => l
                            .changes(
                                c,
                                doc.as_str(),
                                &block,
                                vec![version_state(&guest_part::meta(m, 0), &b)],
                            )?
                            .pop(),
                        None => Some(version_state(&m, &b)),
                    };
                    changes.extend(entry);
                }
            }
            let more = raw_more || changes.len() > limit;
            changes.truncate(limit);
            Ok(Some((changes, more)))
        })
        .await?;
    let (changes, more) = found.ok_or(ApiError::NotFound)?;
    Ok(HttpResponse::Ok().json(BlockHistory { changes, more }))
}

fn version_state(m: &VersionMeta, b: &Block) -> BlockChange {
    BlockChange {
        seq: m.seq,
        at: m.at,
        user_id: m.created_by.clone().unwrap_or_default(),
        name: m
            .name
            .clone()
            .unwrap_or_else(|| "Automatic version".to_string()),
        kind: "version".into(),
        content: Some(b.content.clone()),
        parent_id: b.parent_id.clone(),
        deleted: false,
        conflict_of: b.conflict_of.clone(),
        version_id: Some(m.version_id.clone()),
    }
}

/// A document's versions, newest first.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct VersionList {
    versions: Vec<VersionMeta>,
}

#[utoipa::path(
    get,
    path = "/api/v1/docs/{id}/versions",
    tag = "history",
    summary = "The document's versions, newest first (PROTOCOL §8)",
    params(("id" = String, Path, description = "The document's ID")),
    responses(
        (status = 200, description = "versions", body = VersionList),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = NotFound),
    ),
)]
pub async fn list_versions(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let (doc, d) = view_access(&state, &creds, &path.into_inner()).await?;
    let mut versions = state
        .storage
        .read(move |c| versions::list(c, doc.as_str()))
        .await?;
    if !d.reach.is_document() {
        versions = versions
            .into_iter()
            .map(|m| guest_part::meta(m, 0))
            .collect();
    }
    Ok(HttpResponse::Ok().json(VersionList { versions }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct VersionName {
    /// 1 to 200 bytes, not only spaces.
    name: String,
}

impl VersionName {
    fn checked(self) -> Result<String, ApiError> {
        let name = self.name.trim().to_string();
        if name.is_empty() || name.len() > MAX_VERSION_NAME {
            return Err(ApiError::BadRequest(format!(
                "name: 1 to {MAX_VERSION_NAME} bytes, not only spaces"
            )));
        }
        Ok(name)
    }
}

/// Editors only: the caller's document access, refusing readers with 403.
async fn editor(
    state: &AppState,
    creds: &Credentials,
    doc: &str,
) -> Result<(DocId, super::access_cache::Decision), ApiError> {
    let (doc, d) = doc_access(state, creds, doc).await?;
    if !d.role.can_write() {
        return Err(ApiError::Forbidden(
            "this document is read-only for you".into(),
        ));
    }
    Ok((doc, d))
}

/// Who may restore: editors of the document, and bullet guests with a share they may
/// write (their restore is confined to it); anyone else who reads it gets 403.
async fn restorer(
    state: &AppState,
    creds: &Credentials,
    doc: &str,
) -> Result<(DocId, super::access_cache::Decision), ApiError> {
    let (doc, d) = view_access(state, creds, doc).await?;
    let may = match &d.reach {
        Reach::Document => d.role.can_write(),
        Reach::Bullets(roots) => !guest_part::writable_roots(roots).is_empty(),
    };
    if !may {
        return Err(ApiError::Forbidden(
            "this document is read-only for you".into(),
        ));
    }
    Ok((doc, d))
}

#[utoipa::path(
    post,
    path = "/api/v1/docs/{id}/versions",
    tag = "history",
    summary = "Keep a named version of the document as it is now (editors)",
    params(("id" = String, Path, description = "The document's ID")),
    request_body = VersionName,
    responses(
        (status = 201, description = "kept", body = VersionMeta),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "the caller's role does not allow this", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = NotFound),
        (status = 429, description = "a write budget is spent (a version costs about its document's text); see Retry-After", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn create_version(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let body: VersionName = read_json(&req, payload, state.max_body()).await?;
    let (doc, d) = editor(&state, &creds, &path.into_inner()).await?;
    let name = body.checked()?;
    // A version costs about its document's text on disk: charged like writing it, so
    // naming versions in a loop cannot grow the database faster than editing can.
    let size = ask(&state.registry, &doc, GetSize).await?;
    charge_bytes(
        &state,
        &d.user.id,
        Some(&doc),
        size.content_bytes.max(1024) as u64,
    )?;
    let take = TakeVersion {
        kind: VersionKind::Named,
        name: Some(name),
        created_by: Some(d.user.id.clone()),
    };
    let mut meta = ask(&state.registry, &doc, take).await?;
    meta.created_by_name = Some(d.user.display_name);
    Ok(HttpResponse::Created().json(meta))
}

/// A version's state, shaped like a snapshot (read-only).
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct VersionBody {
    doc_id: String,
    version: VersionMeta,
    title: String,
    /// The version's `seq`, as a snapshot's `headSeq`.
    head_seq: i64,
    blocks: Vec<Arc<Block>>,
}

async fn load_version(
    state: &AppState,
    doc: &DocId,
    vid: String,
) -> Result<(VersionMeta, VersionState), ApiError> {
    check_id("versionId", &vid, "ver_", state.limits.max_id_bytes)
        .map_err(|_| ApiError::NotFound)?;
    let d = doc.clone();
    state
        .storage
        .read(move |c| versions::get(c, d.as_str(), &vid))
        .await?
        .ok_or(ApiError::NotFound)
}

#[utoipa::path(
    get,
    path = "/api/v1/docs/{id}/versions/{versionId}",
    tag = "history",
    summary = "A version's state, shaped like a snapshot (read-only)",
    params(
        ("id" = String, Path, description = "The document's ID"),
        ("versionId" = String, Path, description = "The version's ID"),
    ),
    responses(
        (status = 200, description = "the version", body = VersionBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = NotFound),
    ),
)]
pub async fn get_version(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (doc, vid) = path.into_inner();
    let (doc, d) = view_access(&state, &creds, &doc).await?;
    let (mut meta, mut s) = load_version(&state, &doc, vid).await?;
    if let Some(roots) = guest_part::guest_roots(&d.reach) {
        s = guest_part::state(&s, &roots);
        s.title = guest_part::title(&s.blocks);
        meta = guest_part::meta(meta, s.blocks.len() as i64);
    }
    Ok(HttpResponse::Ok().json(VersionBody {
        doc_id: doc.into_string(),
        head_seq: meta.seq,
        version: meta,
        title: s.title,
        blocks: s.blocks,
    }))
}

#[utoipa::path(
    patch,
    path = "/api/v1/docs/{id}/versions/{versionId}",
    tag = "history",
    summary = "Name or rename a version (editors); a named version is kept until deleted",
    params(
        ("id" = String, Path, description = "The document's ID"),
        ("versionId" = String, Path, description = "The version's ID"),
    ),
    request_body = VersionName,
    responses(
        (status = 200, description = "renamed", body = VersionMeta),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "the caller's role does not allow this", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = NotFound),
    ),
)]
pub async fn rename_version(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<(String, String)>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let body: VersionName = read_json(&req, payload, state.max_body()).await?;
    let (doc, vid) = path.into_inner();
    let (doc, _) = editor(&state, &creds, &doc).await?;
    let name = body.checked()?;
    check_id("versionId", &vid, "ver_", state.limits.max_id_bytes)
        .map_err(|_| ApiError::NotFound)?;
    let meta = state
        .storage
        .write(move |c| {
            if !versions::rename(c, doc.as_str(), &vid, &name)? {
                return Ok(None);
            }
            versions::meta(c, doc.as_str(), &vid)
        })
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(HttpResponse::Ok().json(meta))
}

#[utoipa::path(
    delete,
    path = "/api/v1/docs/{id}/versions/{versionId}",
    tag = "history",
    summary = "Delete a named version (editors); automatic ones go by their retention only",
    params(
        ("id" = String, Path, description = "The document's ID"),
        ("versionId" = String, Path, description = "The version's ID"),
    ),
    responses(
        (status = 204, description = "deleted"),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "the caller's role does not allow this", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = NotFound),
        (status = 409, description = "an automatic version: kept until its retention ends", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn delete_version(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (doc, vid) = path.into_inner();
    let (doc, _) = editor(&state, &creds, &doc).await?;
    check_id("versionId", &vid, "ver_", state.limits.max_id_bytes)
        .map_err(|_| ApiError::NotFound)?;
    let outcome = state
        .storage
        .write(move |c| versions::delete_named(c, doc.as_str(), &vid))
        .await?;
    match outcome {
        None => Err(ApiError::NotFound),
        Some(false) => Err(ApiError::Conflict(
            "an automatic version is kept until its retention ends; name it to keep it, or leave it".into(),
        )),
        Some(true) => Ok(HttpResponse::NoContent().finish()),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffQuery {
    /// `head` (default) or another version's ID.
    #[serde(default)]
    to: Option<String>,
}

/// What changed from a version to the head or to another version.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DiffReply {
    from: VersionMeta,
    /// The other version, absent when compared with the head.
    #[serde(skip_serializing_if = "Option::is_none")]
    to: Option<VersionMeta>,
    /// The seq of the state compared with.
    to_seq: i64,
    #[serde(flatten)]
    diff: Diff,
}

#[utoipa::path(
    get,
    path = "/api/v1/docs/{id}/versions/{versionId}/diff",
    tag = "history",
    summary = "Bullets added, removed, moved and changed (word by word) from a version to the head or another version",
    params(
        ("id" = String, Path, description = "The document's ID"),
        ("versionId" = String, Path, description = "The older version's ID"),
        ("to" = Option<String>, Query, description = "`head` (default) or a version ID"),
    ),
    responses(
        (status = 200, description = "the differences", body = DiffReply),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = NotFound),
    ),
)]
pub async fn diff_version(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<(String, String)>,
    query: web::Query<DiffQuery>,
) -> Result<HttpResponse, ApiError> {
    let (doc, vid) = path.into_inner();
    let (doc, access) = view_access(&state, &creds, &doc).await?;
    let to = query.into_inner().to.filter(|t| t != "head");
    let (mut from, mut before) = load_version(&state, &doc, vid).await?;
    let (mut to_meta, to_seq, mut after) = match to {
        Some(other) => {
            let (m, s) = load_version(&state, &doc, other).await?;
            (Some(m.clone()), m.seq, s)
        }
        None => {
            let d = doc.clone();
            let now = state
                .storage
                .read(move |c| documents::load(c, d.as_str()))
                .await?;
            let live: Vec<Arc<Block>> = now.blocks().filter(|b| !b.deleted).cloned().collect();
            (
                None,
                now.head_seq,
                VersionState {
                    title: now.title.clone(),
                    blocks: live,
                },
            )
        }
    };
    // A bullet guest compares their part of each side, and nothing else.
    if let Some(roots) = guest_part::guest_roots(&access.reach) {
        before = guest_part::state(&before, &roots);
        after = guest_part::state(&after, &roots);
        from = guest_part::meta(from, before.blocks.len() as i64);
        to_meta = to_meta.map(|m| guest_part::meta(m, after.blocks.len() as i64));
    }
    let d =
        web::block(move || diff::diff(&before.title, &before.blocks, &after.title, &after.blocks))
            .await
            .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(HttpResponse::Ok().json(DiffReply {
        from,
        to: to_meta,
        to_seq,
        diff: d,
    }))
}

#[derive(Deserialize, Clone, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct RestoreBody {
    /// The restoring tab (`cl_…`): the restore's ops are its ops.
    client_id: String,
    /// `op_…`: the same prefix again is the same restore (applied once).
    op_id_prefix: String,
    /// Only these bullets of the version (none: the whole document).
    #[serde(default)]
    block_ids: Option<Vec<String>>,
}

#[utoipa::path(
    post,
    path = "/api/v1/docs/{id}/versions/{versionId}/restore",
    tag = "history",
    summary = "Restore a version, or chosen bullets of it, as ordinary ops of the caller (editors; PROTOCOL §8)",
    params(
        ("id" = String, Path, description = "The document's ID"),
        ("versionId" = String, Path, description = "The version's ID"),
    ),
    request_body = RestoreBody,
    responses(
        (status = 200, description = "restored (or, for a repeated opIdPrefix, nothing more)", body = RestoreReply),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "the caller's role does not allow this", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = NotFound),
        (status = 413, description = "the document would grow past its limit", body = crate::http::error::ErrorBody),
        (status = 429, description = "a write budget is spent (a restore costs its version's size); see Retry-After", body = crate::http::error::ErrorBody),
        (status = 507, description = "the server's disk is full; nothing was written", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn restore_version(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<(String, String)>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let body: RestoreBody = read_json(&req, payload, state.max_body()).await?;
    let (raw_doc, vid) = path.into_inner();
    let (doc, d) = restorer(&state, &creds, &raw_doc).await?;
    let client = ClientId::parse(&body.client_id, &state.limits)?;
    // Op IDs of the restore are `{prefix}:{n}`: the prefix leaves room for the counter.
    let max = state.limits.max_id_bytes.saturating_sub(16);
    check_id("opIdPrefix", &body.op_id_prefix, "op_", max)?;
    let only: Option<HashSet<String>> = match body.block_ids {
        None => None,
        Some(ids) if ids.is_empty() => {
            return Err(ApiError::BadRequest(
                "blockIds: name at least one bullet, or leave it out to restore everything".into(),
            ))
        }
        Some(ids) => {
            for id in &ids {
                check_id("blockIds", id, "blk_", state.limits.max_id_bytes)?;
            }
            Some(ids.into_iter().collect())
        }
    };
    let (meta, version) = load_version(&state, &doc, vid.clone()).await?;
    // A bullet guest restores only their writable part of the version (and what they
    // named of it): never the title, never a bullet outside; the actor confines the ops
    // like any of theirs.
    let only = match &d.reach {
        Reach::Document => only,
        Reach::Bullets(roots) => {
            let part = subtree::part_of(&version.blocks, &guest_part::writable_roots(roots));
            let mine: HashSet<String> = part
                .iter()
                .map(|b| b.id.clone())
                .filter(|id| only.as_ref().is_none_or(|o| o.contains(id)))
                .collect();
            if mine.is_empty() {
                return Err(ApiError::BadRequest(
                    "this version holds none of the bullets you may restore".into(),
                ));
            }
            Some(mine)
        }
    };
    // A restore writes at most the version's bullets again: charged like writing them.
    charge_bytes(
        &state,
        &d.user.id,
        Some(&doc),
        meta.raw_bytes.max(1024) as u64,
    )?;
    let label = match (&meta.name, d.reach.is_document()) {
        (Some(name), true) => format!("“{name}”"),
        _ => "an earlier version".to_string(),
    };
    state.client_owners.claim(&d.user.id, &client).await?;
    let marker = format!("{}:restore", body.op_id_prefix);
    let version = Arc::new(version);
    let build = |d: super::access_cache::Decision, pre: (Precheck, Instant)| Restore {
        caller: d.caller(Some(client.clone())),
        version_label: label.clone(),
        version: version.clone(),
        only: only.clone(),
        op_id_prefix: marker.clone(),
        precheck: pre,
    };
    let first = build(d, marker_precheck(&state, &doc, &marker).await?);
    let renew = || async {
        let (doc, d) = restorer(&state, &creds, &raw_doc).await?;
        let pre = marker_precheck(&state, &doc, &marker).await?;
        Ok::<_, ApiError>(build(d, pre))
    };
    let reply = ask_renewing(&state.registry, &doc, first, renew).await?;
    Ok(HttpResponse::Ok().json(reply))
}

/// What the database knows of a restore's marker op ID (its first attempt, answered long
/// ago), read before the actor looks at it.
async fn marker_precheck(
    state: &AppState,
    doc: &DocId,
    marker: &str,
) -> Result<(Precheck, Instant), ApiError> {
    let read_at = Instant::now();
    let (d, m) = (doc.clone(), marker.to_string());
    let pre = state
        .storage
        .read(move |c| log::precheck(c, d.as_str(), [m.as_str()], []))
        .await?;
    Ok((pre, read_at))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConflictQuery {
    #[serde(default)]
    doc_id: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct ConflictList {
    conflicts: Vec<OpenConflict>,
}

#[utoipa::path(
    get,
    path = "/api/v1/conflicts",
    tag = "history",
    summary = "Open conflict copies, oldest first, with both texts: of one document, or of every document the caller can read",
    params(("docId" = Option<String>, Query, description = "Only this document")),
    responses(
        (status = 200, description = "open conflicts", body = ConflictList),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such thing, or the caller may not read it", body = NotFound),
    ),
)]
pub async fn list_conflicts(
    state: web::Data<AppState>,
    creds: Credentials,
    query: web::Query<ConflictQuery>,
) -> Result<HttpResponse, ApiError> {
    let conflicts = match query.into_inner().doc_id {
        Some(doc) => {
            // a bullet guest gets the copies inside their part, as in their list of all
            let (doc, decision) = view_access(&state, &creds, &doc).await?;
            let user = decision.user.id.clone();
            state
                .storage
                .read(move |c| match decision.reach {
                    Reach::Document => conflicts::in_document(c, doc.as_str(), MAX_CONFLICTS),
                    Reach::Bullets(_) => Ok(conflicts::readable(c, &user, MAX_CONFLICTS)?
                        .into_iter()
                        .filter(|k| k.doc_id == doc.as_str())
                        .collect()),
                })
                .await?
        }
        None => {
            read_as(&state, &creds, |c, user| {
                conflicts::readable(c, &user.id, MAX_CONFLICTS)
            })
            .await?
        }
    };
    Ok(HttpResponse::Ok().json(ConflictList { conflicts }))
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TrashList {
    documents: Vec<TrashedDoc>,
    /// Days a document stays in the trash.
    keep_days: f64,
}

#[utoipa::path(
    get,
    path = "/api/v1/trash",
    tag = "history",
    summary = "The caller's deleted documents, restorable until purged",
    responses(
        (status = 200, description = "the trash", body = TrashList),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn list_trash(
    state: web::Data<AppState>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    let keep = state.settings.history.trash_ms();
    let documents = read_as(&state, &creds, move |c, user| {
        trash::list(c, &user.id, keep)
    })
    .await?;
    Ok(HttpResponse::Ok().json(TrashList {
        documents,
        keep_days: keep as f64 / 86_400_000.0,
    }))
}

/// The caller's trashed document named by the path, or 404.
async fn own_trashed(
    state: &AppState,
    creds: &Credentials,
    doc: &str,
) -> Result<(DocId, String), ApiError> {
    let user = caller(state, creds).await?;
    let doc = DocId::parse(doc).map_err(|_| ApiError::NotFound)?;
    let (d, u) = (doc.clone(), user.id.clone());
    let mine = state
        .storage
        .read(move |c| trash::is_trashed_by_owner(c, d.as_str(), &u))
        .await?;
    if !mine {
        return Err(ApiError::NotFound);
    }
    Ok((doc, user.id))
}

#[utoipa::path(
    post,
    path = "/api/v1/trash/{id}/restore",
    tag = "history",
    summary = "Take a document out of the trash with everything it had (its owner)",
    params(("id" = String, Path, description = "The document's ID")),
    responses(
        (status = 204, description = "restored"),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "not in the caller's trash", body = NotFound),
    ),
)]
pub async fn restore_trashed(
    state: web::Data<AppState>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let (doc, owner) = own_trashed(&state, &creds, &path.into_inner()).await?;
    let back = state
        .storage
        .write(move |c| trash::untrash(c, doc.as_str(), &owner))
        .await?;
    if !back {
        return Err(ApiError::NotFound);
    }
    Ok(HttpResponse::NoContent().finish())
}

#[utoipa::path(
    delete,
    path = "/api/v1/trash/{id}",
    tag = "history",
    summary = "Purge a trashed document for good now (its owner)",
    params(("id" = String, Path, description = "The document's ID")),
    responses(
        (status = 204, description = "purged"),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 404, description = "not in the caller's trash", body = NotFound),
    ),
)]
pub async fn purge_trashed(
    state: web::Data<AppState>,
    creds: Credentials,
    req: HttpRequest,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let (doc, owner) = own_trashed(&state, &creds, &path.into_inner()).await?;
    let who = caller(&state, &creds).await?;
    let (actor, now) = (Actor::of(&state, &req, Some(&who)), state.clock.now_ms());
    state
        .registry
        .send(CloseDocument {
            doc_id: doc.clone(),
        })
        .await?;
    let purged = state
        .storage
        .write(move |c| {
            if !trash::is_trashed_by_owner(c, doc.as_str(), &owner)? {
                return Ok(false);
            }
            let purged = documents::delete(c, doc.as_str())?;
            if purged {
                let target = format!("doc:{}", doc.as_str());
                let event = actor.event(actions::DOCUMENT_PURGED, target, serde_json::json!({}));
                audit::record(c, now, &event)?;
            }
            Ok(purged)
        })
        .await?;
    if !purged {
        return Err(ApiError::NotFound);
    }
    Ok(HttpResponse::NoContent().finish())
}
