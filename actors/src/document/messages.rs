//! Messages a document actor answers, and their replies. Handlers, streams and the
//! compaction supervisor reach a document only through these.

use std::sync::Arc;
use std::time::Instant;

use actix::Message;
use serde::{Serialize, Serializer};

use crate::collab::block::{Author, Block};
use crate::collab::lease::{Denied, OtherLease};
use crate::collab::op::{Op, OpResult};
use crate::storage::log::{LogRecord, Precheck};
use crate::storage::roles::Role;

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
    #[error("internal error: {0}")]
    Internal(String),
}

/// Who is asking, as established by the HTTP layer through the role function.
#[derive(Debug, Clone)]
pub struct Caller {
    pub client_id: String,
    pub author: Author,
    pub role: Role,
    pub shared: bool,
}

#[derive(Message)]
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
    Ready(Vec<Arc<LogRecord>>),
    Read { after: i64, upto: i64 },
}

impl Serialize for LogPage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        match self {
            LogPage::Ready(records) => {
                let mut seq = s.serialize_seq(Some(records.len()))?;
                for r in records {
                    seq.serialize_element(&*r.json)?;
                }
                seq.end()
            }
            LogPage::Read { .. } => Err(serde::ser::Error::custom("log page not read yet")),
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

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncReply {
    pub results: Vec<OpResult>,
    pub ops: LogPage,
    pub has_more: bool,
    pub head_seq: i64,
    pub lease_seq: u64,
    pub leases: LeasesReply,
    pub role: Role,
    pub shared: bool,
    pub sessions: usize,
    pub mode: Mode,
    pub resync: bool,
    /// The icon is not part of the op log; open editors learn a change here.
    pub icon: Option<String>,
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
    pub blocks: Vec<SnapshotBlock>,
    pub leases: SnapshotOthers,
}

#[derive(Message, Clone)]
#[rtype(result = "Result<(), DocError>")]
pub struct Leave {
    pub client_id: String,
}

/// Changes the document's icon (not part of the op log; takes its place in the actor's order).
#[derive(Message)]
#[rtype(result = "Result<(), DocError>")]
pub struct SetIcon {
    pub icon: Option<String>,
}

/// What a wake-up channel hears from a document. Channels never carry data: the client
/// calls `/sync` when it hears something (PROTOCOL §4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocEvent {
    /// headSeq or leaseSeq moved.
    Seq {
        doc_id: String,
        head_seq: i64,
        lease_seq: u64,
    },
    /// Shares changed: the channel must re-check that its user may still read the document.
    AccessChanged { doc_id: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Channel {
    WebSocket,
    Sse,
    LongPoll,
}

/// Registers a wake-up channel. The reply is the current `(headSeq, leaseSeq)`.
#[derive(Message, Clone)]
#[rtype(result = "Result<(i64, u64), DocError>")]
pub struct Subscribe {
    pub id: u64,
    pub channel: Channel,
    /// The tab behind the channel, kept present while the channel is open.
    pub client_id: Option<String>,
    pub user_id: String,
    pub sink: tokio::sync::mpsc::UnboundedSender<DocEvent>,
}

#[derive(Message)]
#[rtype(result = "()")]
pub struct Unsubscribe {
    pub id: u64,
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

/// Shares of the document changed: `shared`/mode may flip, readers may have lost access.
#[derive(Message)]
#[rtype(result = "()")]
pub struct AccessChanged;

/// Compaction of this document, in its op order (PROTOCOL §6).
#[derive(Message)]
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

/// Sent by the registry when the actor may stop (idle).
#[derive(Message)]
#[rtype(result = "()")]
pub struct StopIdle;

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
