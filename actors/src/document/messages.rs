//! Messages a document actor answers, and their replies. Handlers, streams and the
//! compaction supervisor reach a document only through these.

use std::sync::Arc;
use std::time::Instant;

use actix::Message;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use crate::collab::block::{Author, Block};
use crate::collab::lease::{Denied, OtherLease};
use crate::collab::op::{Op, OpResult};
use crate::storage::log::{LogRecord, Precheck};
use crate::storage::roles::Role;

use super::encoded::SharedBlocks;

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
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<crate::storage::StorageError> for DocError {
    fn from(e: crate::storage::StorageError) -> Self {
        match e {
            crate::storage::StorageError::Full(m) => DocError::StorageFull(m),
            other => DocError::Storage(other.to_string()),
        }
    }
}

/// Who is asking, as established by the HTTP layer through the role function.
#[derive(Debug, Clone)]
pub struct Caller {
    pub client_id: String,
    pub author: Author,
    pub role: Role,
    pub shared: bool,
}

#[derive(Message, Clone)]
#[rtype(result = "Result<SyncReply, DocError>")]
pub struct Sync {
    pub caller: Caller,
    pub last_seq: i64,
    pub ops: Vec<Op>,
    /// None = keep whatever is held.
    pub hold: Option<Vec<String>>,
    pub precheck: Precheck,
    pub precheck_at: Instant,
}

/// Log entries for a reply: either ready from the actor's in-memory tail, or a committed
/// range the caller reads from the database (entries at or below the durable head never
/// change, so reading them outside the actor is safe).
#[derive(Debug, Clone)]
pub enum LogPage {
    Ready(Entries),
    Read { after: i64, upto: i64 },
}

/// Log entries in the form they are sent: a JSON array encoded once and shared by every
/// reply that asks for the same page, or records (each already JSON) from the database.
#[derive(Debug, Clone)]
pub enum Entries {
    Encoded(Arc<RawValue>),
    Records(Vec<Arc<LogRecord>>),
}

impl Entries {
    pub fn none() -> Entries {
        Entries::Records(Vec::new())
    }
}

impl Serialize for Entries {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        match self {
            Entries::Encoded(raw) => raw.serialize(s),
            Entries::Records(records) => {
                let mut seq = s.serialize_seq(Some(records.len()))?;
                for r in records {
                    seq.serialize_element(&*r.json)?;
                }
                seq.end()
            }
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeasesReply {
    pub granted: Vec<String>,
    pub denied: Vec<Denied>,
    pub others: Vec<OtherLease>,
}

/// What the actor answers to a `Sync`. Not what the client gets: its page may still have to
/// be read from the database, so only `complete` makes something serialisable.
#[derive(Debug, Clone)]
pub struct SyncReply {
    pub page: LogPage,
    pub fields: SyncFields,
}

/// The `/sync` response (PROTOCOL §3), complete by construction: `ops` is in hand.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncResponse {
    pub ops: Entries,
    #[serde(flatten)]
    pub fields: SyncFields,
}

/// Everything in a `/sync` response but the log entries.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncFields {
    pub results: Vec<OpResult>,
    pub has_more: bool,
    pub head_seq: i64,
    pub lease_seq: u64,
    pub leases: LeasesReply,
    pub role: Role,
    pub shared: bool,
    pub sessions: usize,
    /// Who has the document open, one entry per person.
    pub people: Vec<super::sessions::Person>,
    pub mode: Mode,
    pub resync: bool,
    /// The icon is not part of the op log; open editors learn a change here.
    pub icon: Option<String>,
}

/// A reply whose page lies below the actor's in-memory tail: read `after < seq <= upto`
/// from the database and `fill` it in.
#[derive(Debug)]
pub struct UnreadPage {
    pub after: i64,
    pub upto: i64,
    fields: SyncFields,
}

/// A `SyncReply` taken apart: the response, or what is still to read first.
#[derive(Debug)]
pub enum Completion {
    Done(SyncResponse),
    ReadFirst(UnreadPage),
}

impl SyncReply {
    pub fn complete(self) -> Completion {
        match self.page {
            LogPage::Ready(ops) => Completion::Done(SyncResponse {
                ops,
                fields: self.fields,
            }),
            LogPage::Read { after, upto } => Completion::ReadFirst(UnreadPage {
                after,
                upto,
                fields: self.fields,
            }),
        }
    }
}

impl UnreadPage {
    /// Most entries the page holds.
    pub fn limit(&self) -> usize {
        (self.upto - self.after) as usize
    }

    /// Completes the response with the records read. A gap means compaction removed entries
    /// meanwhile: the client must reload (`resync`), and gets no entries.
    pub fn fill(self, records: Vec<Arc<LogRecord>>) -> SyncResponse {
        let complete = records.len() == self.limit()
            && records.first().is_none_or(|r| r.seq == self.after + 1);
        if complete {
            return SyncResponse {
                ops: Entries::Records(records),
                fields: self.fields,
            };
        }
        SyncResponse {
            ops: Entries::none(),
            fields: SyncFields {
                has_more: false,
                resync: true,
                ..self.fields
            },
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Private,
    Full,
}

#[derive(Message, Clone)]
#[rtype(result = "Result<SnapshotReply, DocError>")]
pub struct Snapshot {
    pub caller: Caller,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotBlock {
    #[serde(flatten)]
    pub block: Arc<Block>,
    pub depth: u32,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotOthers {
    pub others: Vec<OtherLease>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotReply {
    pub doc_id: String,
    pub title: String,
    pub title_version: i64,
    pub icon: Option<String>,
    pub head_seq: i64,
    pub log_floor: i64,
    pub lease_seq: u64,
    pub role: Role,
    pub shared: bool,
    pub mode: Mode,
    pub sessions: usize,
    /// Who has the document open, one entry per person.
    pub people: Vec<super::sessions::Person>,
    pub leases: SnapshotOthers,
    /// The same for every caller at this head and encoded once for all of them: not part
    /// of this struct's encoding; the HTTP layer adds it as `blocks` (`SharedBlocks::json`).
    #[serde(skip)]
    pub blocks: Arc<SharedBlocks>,
}

#[derive(Message, Clone)]
#[rtype(result = "Result<(), DocError>")]
pub struct Leave {
    pub client_id: String,
}

/// Changes the document's icon (not part of the op log; takes its place in the actor's order).
#[derive(Message, Clone)]
#[rtype(result = "Result<(), DocError>")]
pub struct SetIcon {
    pub icon: Option<String>,
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
    Revoked {
        doc_id: String,
        why: super::grant::Revoked,
    },
}

/// One change of a document as wake-up channels announce it.
#[derive(Debug, Clone)]
pub struct Wake {
    pub doc_id: String,
    pub head_seq: i64,
    pub lease_seq: u64,
    /// The new log entries as a JSON array (exactly `/sync`'s `ops` for the range from the
    /// previous announced head up to `head_seq`), when they are small and the subscriber is
    /// known to still have read access; `None` otherwise (the client pulls).
    pub entries: Option<Arc<RawValue>>,
}

impl Wake {
    /// The entries' JSON array text, if the wake-up carries them.
    pub fn entries_json(&self) -> Option<&str> {
        self.entries.as_deref().map(RawValue::get)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Channel {
    WebSocket,
    Sse,
    LongPoll,
}

/// Registers a wake-up channel. The reply holds the current `(headSeq, leaseSeq)` and the
/// registration itself: dropping the `Subscription` unsubscribes.
#[derive(Message, Clone)]
#[rtype(result = "Result<Subscribed, DocError>")]
pub struct Subscribe {
    pub channel: Channel,
    /// The tab behind the channel, kept present while the channel is open.
    pub client_id: Option<String>,
    pub user_id: String,
    pub sink: tokio::sync::mpsc::UnboundedSender<DocEvent>,
    /// What opened the channel: asked again whenever the access epoch moves.
    pub grant: std::sync::Arc<dyn super::grant::StreamGrant>,
    /// When the opener's rights were checked (the epoch read *before* that check).
    pub confirmed: super::grant::Confirmed,
}

pub struct Subscribed {
    pub head_seq: i64,
    pub lease_seq: u64,
    pub subscription: super::subscribers::Subscription,
}

/// Sent by a `Subscription` when it is dropped.
#[derive(Message)]
#[rtype(result = "()")]
pub(super) struct Unsubscribe {
    pub(super) id: u64,
}

/// Long-polling: answered at once when `headSeq > since` or `leaseSeq != lease_seq`, otherwise
/// the receiver fires on the next such change. The caller owns the timeout.
#[derive(Message, Clone)]
#[rtype(result = "Result<Changes, DocError>")]
pub struct WaitChanges {
    pub since: i64,
    pub lease_seq: u64,
    pub client_id: Option<String>,
    pub user_id: String,
}

pub enum Changes {
    Now {
        head_seq: i64,
        lease_seq: u64,
    },
    Later {
        head_seq: i64,
        lease_seq: u64,
        rx: tokio::sync::oneshot::Receiver<(i64, u64)>,
    },
}

/// Rights may have changed (the access epoch moved): open streams are re-checked, leases of
/// users who lost write access and sessions of users who lost read access dropped. With
/// `shares`, this document's own shares changed, so `shared`/mode may flip: every client
/// hears presence news.
#[derive(Message)]
#[rtype(result = "()")]
pub struct AccessChanged {
    pub shares: bool,
}

/// Compaction of this document, in its op order (PROTOCOL §6).
#[derive(Message, Clone)]
#[rtype(result = "Result<CompactOutcome, DocError>")]
pub struct Compact {
    pub now: i64,
    pub shared: bool,
    pub retention: crate::storage::compaction::Retention,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactOutcome {
    pub log_rows: u64,
    pub tombstones: u64,
    pub results: u64,
    pub log_floor: i64,
}

/// The document was deleted: answer NotFound from now on and stop.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Close;

/// Sent by a document actor to whoever started it (the registry) when it stops taking work:
/// that owner must stop handing out `addr` for `doc_id`. Defined here, next to the actor, so
/// the actor needs to know nothing about who listens.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Stopped {
    pub doc_id: String,
    pub addr: actix::Addr<super::DocumentActor>,
}

/// How much text the document holds, against its budget (`limits.max_document_bytes`).
#[derive(Message, Clone)]
#[rtype(result = "Result<DocSize, DocError>")]
pub struct GetSize;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DocSize {
    pub content_bytes: usize,
    /// 0: no limit.
    pub max_bytes: usize,
    pub blocks: usize,
}

/// Operator view of one actor.
#[derive(Message)]
#[rtype(result = "ActorStats")]
pub struct GetStats;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActorStats {
    pub doc_id: String,
    /// Requests sent and not yet answered (filled in by the registry).
    pub mailbox_depth: u64,
    pub uptime_ms: i64,
    pub idle_ms: i64,
    pub sync_p50_ms: f64,
    pub sync_p99_ms: f64,
    /// Recent sync latencies (ms), oldest first, for the operator page's chart.
    pub recent_sync_ms: Vec<f64>,
    pub loaded: bool,
    pub blocks: usize,
    /// Bytes of text the document holds (its size budget counts these).
    pub content_bytes: usize,
    pub head_seq: i64,
    pub durable_seq: i64,
    pub sessions: usize,
    pub leases: usize,
    pub inflight_writes: usize,
    pub websocket: usize,
    pub sse: usize,
    pub long_poll: usize,
    pub ops_applied: u64,
    pub conflicts: u64,
    pub rejected: u64,
}
