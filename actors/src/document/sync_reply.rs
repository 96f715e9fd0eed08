//! What a document actor answers to a `Sync`, and how that becomes the `/sync` response
//! (PROTOCOL §3). The answer is not always complete: its page of log entries may lie below
//! the actor's in-memory tail, and is then read from the database by the caller (entries at
//! or below the durable head never change, so reading them outside the actor is safe).

use std::sync::Arc;

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use crate::collab::lease::{Denied, OtherLease};
use crate::collab::op::OpResult;
use crate::storage::log::LogRecord;
use crate::storage::roles::Role;

use super::messages::Mode;
use super::sessions::Person;

/// Log entries for a reply: either ready from the actor's in-memory tail, or a committed
/// range the caller reads from the database.
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

/// In the API document: an array of log entries (PROTOCOL §3), whichever form it has here.
impl utoipa::PartialSchema for Entries {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        <Vec<crate::collab::op::LogEntry> as utoipa::PartialSchema>::schema()
    }
}

impl utoipa::ToSchema for Entries {
    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        <crate::collab::op::LogEntry as utoipa::ToSchema>::schemas(schemas);
        schemas.push((
            "LogEntry".into(),
            <crate::collab::op::LogEntry as utoipa::PartialSchema>::schema(),
        ));
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

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
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
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SyncResponse {
    pub ops: Entries,
    #[serde(flatten)]
    pub fields: SyncFields,
}

/// Everything in a `/sync` response but the log entries.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SyncFields {
    pub results: Vec<OpResult>,
    pub has_more: bool,
    pub head_seq: i64,
    pub lease_seq: u64,
    pub leases: LeasesReply,
    pub role: Role,
    /// The caller sees only the bullets shared with them (PROTOCOL §10).
    pub bullet_guest: bool,
    pub shared: bool,
    pub sessions: usize,
    /// Who has the document open, one entry per person.
    pub people: Vec<Person>,
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
