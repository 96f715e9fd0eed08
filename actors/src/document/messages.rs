//! What more than one of a document actor's messages share: the error every request may
//! get, who is asking, the document's mode, and what wake-up channels hear. Each message
//! itself is declared beside the handler that answers it (`actor/*.rs`).

use std::sync::Arc;

use serde::Serialize;
use serde_json::value::RawValue;

use crate::collab::block::Author;
use crate::collab::validate::{ClientId, DocId};
use crate::storage::roles::{Reach, Role};

use super::grant::Revoked;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocError {
    #[error("document not found")]
    NotFound,
    /// The actor is going away (idle stop, reload after a failure); ask the registry again.
    #[error("document actor is restarting")]
    Restarting,
    /// The request's idempotency pre-check may predate results this actor no longer holds in
    /// memory; redo the pre-check and send again.
    #[error("pre-check is stale")]
    StalePrecheck,
    #[error("storage: {0}")]
    Storage(String),
    /// The write was refused for lack of space and undone; it can succeed once space is
    /// freed (the HTTP layer answers 507).
    #[error("storage full: {0}")]
    StorageFull(String),
    /// The request would grow the document past `limits.max_document_bytes`.
    #[error("the document holds {size} bytes of text and may hold at most {max}; this request adds {adds}")]
    DocumentFull {
        size: usize,
        adds: usize,
        max: usize,
    },
    /// Cluster mode: another node owns the document now (or this node is out of the
    /// cluster); ask again — the request is routed to the owner (HTTP 503 `not_owner`,
    /// `Retry-After: 0`).
    #[error("another node owns this document now")]
    NotOwner,
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<crate::storage::StorageError> for DocError {
    fn from(e: crate::storage::StorageError) -> Self {
        match e {
            crate::storage::StorageError::Full(m) => DocError::StorageFull(m),
            crate::storage::StorageError::NotOwner { .. } => DocError::NotOwner,
            other => DocError::Storage(other.to_string()),
        }
    }
}

/// Who is asking, as established by the HTTP layer through the role function.
#[derive(Debug, Clone)]
pub struct Caller {
    /// The tab asking; `None` for a plain read (or server-side seeding), which opens no
    /// session and holds no lease.
    pub client: Option<ClientId>,
    pub author: Author,
    pub role: Role,
    pub shared: bool,
    /// What of the document the caller sees: all of it, or (a bullet guest) the subtrees
    /// of their shared bullets only (PROTOCOL §10).
    pub reach: Reach,
}

impl Caller {
    /// The client ID as the lease table and the log spell it (`""`: no client).
    pub(crate) fn client_str(&self) -> &str {
        self.client.as_ref().map_or("", ClientId::as_str)
    }

    /// The share roots of a bullet guest; None for someone who sees the whole document.
    pub(crate) fn bullets(&self) -> Option<&[crate::storage::roles::BulletRoot]> {
        match &self.reach {
            Reach::Document => None,
            Reach::Bullets(roots) => Some(roots),
        }
    }
}

/// Whether other people can be in the document (PROTOCOL §5): with one tab on a private
/// document there are no leases and no presence to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Private,
    Full,
}

/// What a wake-up channel hears from a document (PROTOCOL §4). Built once per change and
/// shared by every subscriber (`Arc`), so a hundred subscribers cost a hundred pointer
/// copies, not a hundred encodings.
#[derive(Debug, Clone)]
pub enum DocEvent {
    /// headSeq and/or leaseSeq moved: one event per change, lease and presence news included.
    Seq(Arc<Wake>),
    /// The stream's credential ended or its user lost read access: the document forgot the
    /// stream, which must end now (nothing more will come).
    Revoked { doc_id: DocId, why: Revoked },
    /// Cluster mode: the relay this stream listened through ended — the document is served
    /// on this node now, or is gone. Nothing more comes; subscribe again (the role function
    /// decides anew, and the registry finds where the document is served).
    Moved { doc_id: DocId },
}

/// Where a document sends one stream's events. `futures`' unbounded channel, not tokio's:
/// an empty one is ~130 bytes, where tokio's allocates a block of 32 slots up front (1.5 KB)
/// — per open stream, and an idle WebSocket or event stream is mostly fixed costs like it.
pub type EventSink = futures::channel::mpsc::UnboundedSender<DocEvent>;
/// The stream's end of an [`EventSink`].
pub type Events = futures::channel::mpsc::UnboundedReceiver<DocEvent>;

/// A new channel for one stream's events.
pub fn event_channel() -> (EventSink, Events) {
    futures::channel::mpsc::unbounded()
}

/// One change of a document as wake-up channels announce it.
#[derive(Debug, Clone)]
pub struct Wake {
    pub doc_id: DocId,
    pub head_seq: i64,
    pub lease_seq: u64,
    /// The new log entries as a JSON array (exactly `/sync`'s `ops` for the range from the
    /// previous announced head up to `head_seq`), when they are small and the subscriber is
    /// known to still have read access; `None` otherwise (the client pulls).
    pub entries: Option<Arc<RawValue>>,
    /// For a bullet guest's tab (PROTOCOL §10): `entries` is the one `view` entry that
    /// brings its view from this cursor to the entry's seq (applied only by a tab whose
    /// `lastSeq` is exactly this, else it pulls). `None`: the entries continue the log.
    pub since: Option<i64>,
}

impl Wake {
    /// The entries' JSON array text, if the wake-up carries them.
    pub fn entries_json(&self) -> Option<&str> {
        self.entries.as_deref().map(RawValue::get)
    }
}

/// The kinds of wake-up channel (PROTOCOL §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Channel {
    WebSocket,
    Sse,
    LongPoll,
    /// Cluster mode: another node's one stream of this document, which it fans out to its
    /// own sockets (`RelayedDocument` there).
    Relay,
}
