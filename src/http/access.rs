//! Who may do what, for handlers: the caller, their role on a document or a folder, and the
//! reads that resolve credentials and rights together. Every decision goes to the one role
//! function (`storage::roles`); decisions only an owner may take are methods of `Role`
//! (`can_delete`, `can_manage_shares`, `can_move_to_folder`). Granted document access may
//! come from the access cache (`access_cache.rs`), which the access epoch keeps honest.
//!
//! A document named by a request is parsed here, once, into a `DocId` (after the credentials
//! are checked, so a bad name costs the caller a 401 first, as an unknown document does);
//! handlers get it back with the decision and pass it on instead of the raw path segment.

use std::sync::Arc;

use docsync_actors::storage::Db;

use docsync_actors::collab::validate::DocId;
use docsync_actors::document::{Confirmed, Standing, StreamGrant};
use docsync_actors::storage::accounts::{Scope, User};
use docsync_actors::storage::roles::{self, BulletRoot, Reach, Role, View};
use docsync_actors::storage::StorageError;

use super::access_cache::Decision;
use super::auth::Credentials;
use super::error::ApiError;
use super::state::AppState;

/// Resolves the caller and runs `f` for them in the same read on the pool, so an
/// authorised read costs one trip off the async threads. No valid credentials → 401.
pub async fn read_as<T, F>(state: &AppState, creds: &Credentials, f: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce(&mut Db, &User) -> Result<T, StorageError> + Send + 'static,
{
    let creds = creds.clone();
    let now = state.clock.now_ms();
    state
        .storage
        .read(move |c| match creds.user(c, now)? {
            Some(user) => f(c, &user).map(Some),
            None => Ok(None),
        })
        .await?
        .ok_or(ApiError::Unauthorized)
}

/// Resolves the caller, the document a request names and their role on it. No read access,
/// or a name that is not a document ID → 404.
pub async fn access(
    state: &AppState,
    creds: &Credentials,
    doc_id: &str,
) -> Result<(DocId, User, Role, bool), ApiError> {
    let (doc, d) = doc_access(state, creds, doc_id).await?;
    Ok((doc, d.user, d.role, d.shared))
}

/// The caller's access to the whole document (`view_access` without bullet guests, who
/// are answered 404 like strangers): what every path that does not filter by subtree asks.
pub async fn doc_access(
    state: &AppState,
    creds: &Credentials,
    doc_id: &str,
) -> Result<(DocId, Decision), ApiError> {
    let (doc, d) = view_access(state, creds, doc_id).await?;
    if !d.reach.is_document() {
        return Err(ApiError::NotFound);
    }
    Ok((doc, d))
}

/// The caller's access to a document — all of it, or as a bullet guest the subtrees of
/// their shared bullets (`Decision::reach`, PROTOCOL §10): only the paths that show a guest
/// their view and nothing else ask this (snapshot, sync, streams). From the access cache
/// while nothing it depends on has changed (no trip to the read pool: the pull after a
/// wake-up is the hot path), else one read through the role function, remembered when it
/// grants access. No valid credentials → 401; no read access, or a name that is not a
/// document ID → 404.
pub async fn view_access(
    state: &AppState,
    creds: &Credentials,
    doc_id: &str,
) -> Result<(DocId, Decision), ApiError> {
    let parsed = DocId::parse(doc_id).ok();
    let now = state.clock.now_ms();
    let key = creds.cache_key();
    let hit = parsed.as_ref().and_then(|id| {
        let k = key.as_deref()?;
        Some((id.clone(), state.access_cache.get(k, id.as_str(), now)?))
    });
    if let Some((id, hit)) = hit {
        creds.resolved_as(&hit.user.name);
        return Ok((id, hit));
    }
    // Read before the database: a change committed meanwhile makes the answer unusable.
    let epoch = state.access_cache.epoch();
    let (who, doc) = (creds.clone(), parsed.clone());
    let scope = creds.scope();
    let found = state
        .storage
        .read(move |c| {
            let Some((user, until)) = who.user_until(c, now)? else {
                return Ok(None);
            };
            // Not a document ID: no document, checked after the credentials as one is.
            let Some(doc) = doc else {
                return Ok(Some((user, None, false, until)));
            };
            let view = roles::doc_view(c, &user.id, doc.as_str())?.map(|v| within(scope, v));
            let shared = match view {
                Some(_) => roles::is_shared(c, doc.as_str())?,
                None => false,
            };
            Ok(Some((user, view, shared, until)))
        })
        .await?;
    let (user, view, shared, until) = found.ok_or(ApiError::Unauthorized)?;
    let (Some(doc), Some(view)) = (parsed, view) else {
        return Err(ApiError::NotFound);
    };
    let decision = Decision {
        user,
        role: view.grant.role,
        shared,
        until,
        reach: view.reach,
    };
    if let Some(k) = key {
        state
            .access_cache
            .put(&k, doc.as_str(), epoch, decision.clone(), until);
    }
    Ok((doc, decision))
}

/// A stream's right to read a document: granted now, and asked again by the document's
/// actor whenever the access epoch moves or the login session ends, for as long as the
/// stream is open.
pub struct StreamAccess {
    pub doc: DocId,
    pub user: User,
    /// What of the document it may hear of (a bullet guest: their subtrees only).
    pub reach: Reach,
    pub grant: Arc<dyn StreamGrant>,
    pub confirmed: Confirmed,
}

/// `doc_access` for a stream that is about to open: the same decision, plus what lets the
/// document re-check it later with the same credentials.
pub async fn stream_access(
    state: &AppState,
    creds: &Credentials,
    doc_id: &str,
) -> Result<StreamAccess, ApiError> {
    // Read before the decision: if anything changes after, the stream is checked again.
    let epoch = state.access_cache.epoch();
    let (doc, d) = view_access(state, creds, doc_id).await?;
    Ok(StreamAccess {
        doc,
        user: d.user,
        reach: d.reach,
        grant: Arc::new(CredentialGrant {
            key: creds.cache_key().unwrap_or_default(),
            creds: creds.clone(),
        }),
        confirmed: Confirmed {
            epoch,
            until: d.until,
        },
    })
}

/// The credentials a stream was opened with, re-checked through the same credential
/// lookup and role function as every request.
struct CredentialGrant {
    creds: Credentials,
    /// The kind and secret (`Credentials::cache_key`): streams of one credential share it.
    key: String,
}

impl StreamGrant for CredentialGrant {
    fn key(&self) -> &str {
        &self.key
    }

    fn recheck(&self, conn: &mut Db, doc_id: &str, now: i64) -> Result<Standing, StorageError> {
        let Some((user, until)) = self.creds.user_until(conn, now)? else {
            return Ok(Standing::CredentialEnded);
        };
        Ok(match roles::doc_view(conn, &user.id, doc_id)? {
            Some(view) => Standing::Reads {
                until,
                reach: view.reach,
            },
            None => Standing::NoAccess,
        })
    }
}

/// A role as far as the credentials' scope reaches: a `read` token is a viewer wherever its
/// user could edit or own (the scope guard refuses its writes before any handler; this keeps
/// every decision that follows a role — leases, usage, history — on the same side).
fn within(scope: Scope, mut view: View) -> View {
    if scope == Scope::Read {
        view.grant.role = view.grant.role.min(Role::Viewer);
        if let Reach::Bullets(roots) = &view.reach {
            let read_only: Vec<BulletRoot> = roots
                .iter()
                .map(|r| BulletRoot {
                    role: r.role.min(Role::Viewer),
                    ..r.clone()
                })
                .collect();
            view.reach = Reach::Bullets(read_only.into());
        }
    }
    view
}

/// Whether the user may read the whole document now — the change feed's question, asked in
/// its read for every document of a page (a bullet guest's documents are not in their feed).
pub fn reads_whole(db: &mut Db, user_id: &str, doc_id: &str) -> Result<bool, StorageError> {
    Ok(roles::doc_view(db, user_id, doc_id)?.is_some_and(|v| v.reach.is_document()))
}

/// Resolves the caller only.
pub async fn caller(state: &AppState, creds: &Credentials) -> Result<User, ApiError> {
    read_as(state, creds, |_, user| Ok(user.clone())).await
}

/// Creating something inside a folder needs write access to it (owner or a write share).
pub async fn require_folder_write(
    state: &AppState,
    user: &User,
    folder: &str,
    field: &str,
) -> Result<(), ApiError> {
    let (f, uid) = (folder.to_string(), user.id.clone());
    match state
        .storage
        .read(move |c| roles::folder_role(c, &uid, &f))
        .await?
    {
        None => Err(ApiError::BadRequest(format!(
            "{field}: no such folder {folder}"
        ))),
        Some(r) if !r.can_write() => {
            Err(ApiError::Forbidden("you cannot add to that folder".into()))
        }
        Some(_) => Ok(()),
    }
}

/// The folder if the caller owns it; 404 if they cannot see it, 403 if they can but do not own it.
pub async fn owned_folder(
    state: &AppState,
    creds: &Credentials,
    folder: &str,
) -> Result<(), ApiError> {
    let f = folder.to_string();
    let out = read_as(state, creds, move |c, user| {
        roles::folder_role(c, &user.id, &f)
    })
    .await?;
    match out {
        None => Err(ApiError::NotFound),
        Some(role) if role.can_manage_shares() => Ok(()),
        Some(_) => Err(ApiError::Forbidden(
            "only the folder's owner manages its shares".into(),
        )),
    }
}
