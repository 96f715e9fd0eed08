//! Keeping a version of a document's state (PROTOCOL §8) without making the writer wait:
//! the state is captured in op order, its row is reserved through the writer queue behind
//! the writes of every op it holds (the writer refuses it unless the head on disk is
//! exactly its `seq`), the state is compressed on a blocking thread meanwhile, and the body
//! is stored once both are done — the writer never waits for a compression.

use std::future::Future;
use std::sync::Arc;

use crate::collab::document::DocState;
use crate::storage::accounts::new_id;
use crate::storage::versions::{
    self as stored_versions, NewVersion, VersionKind, VersionMeta, VersionState,
};
use crate::storage::{Storage, StorageError};

/// The version of `state` as it is now (its live bullets and title at its head).
pub(super) fn capture(
    state: &DocState,
    doc_id: &str,
    at: i64,
    kind: VersionKind,
    name: Option<String>,
    created_by: Option<String>,
) -> Arc<NewVersion> {
    Arc::new(NewVersion {
        version_id: new_id("ver_"),
        doc_id: doc_id.to_string(),
        seq: state.head_seq,
        at,
        kind,
        name,
        created_by,
        state: VersionState {
            title: state.title.clone(),
            blocks: state.blocks().filter(|b| !b.deleted).cloned().collect(),
        },
    })
}

/// Stores `version`. The reservation is queued on the writer *now*, before this returns
/// (so it lands behind every write already queued); the rest runs when the future is
/// polled.
pub(super) fn keep(
    storage: &Storage,
    version: Arc<NewVersion>,
    epoch: i64,
) -> impl Future<Output = Result<VersionMeta, StorageError>> + 'static {
    let v = version.clone();
    let reserved = storage.write(move |c| stored_versions::reserve(c, &v, epoch));
    let v = version.clone();
    let compressed = tokio::task::spawn_blocking(move || stored_versions::encode(&v.state));
    let storage = storage.clone();
    async move {
        let reserved = reserved.await;
        let compressed = compressed
            .await
            .map_err(|e| StorageError::Corrupt(format!("compressing a version: {e}")))
            .and_then(|r| r);
        let (body, raw) = reserved.and(compressed)?;
        let (doc, id) = (version.doc_id.clone(), version.version_id.clone());
        storage
            .write(move |c| stored_versions::fill(c, &doc, &id, &body, raw))
            .await
    }
}
