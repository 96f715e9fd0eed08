//! The document actor: the only writer of its document. It owns the op queue (its mailbox),
//! the in-memory state, the lease table and the session list, and hands SQLite work to the
//! writer thread so its event loop never waits on the disk.
//!
//! Layout: `actor.rs` is the owner (lifecycle, tick, telling channels, re-checking rights);
//! `actor/` holds one file per family of messages, each message beside its handler; the
//! other files are the parts the actor owns, each with private state behind a few methods,
//! none of which knows the actor. Arrows point one way: `actor/*` → `actor.rs` → parts →
//! `messages.rs`, `grant.rs`. `relayed.rs` is a second, smaller owner of some of the same
//! parts (streams and their re-check), for a document another node owns (cluster mode); it
//! uses the stream messages of `actor/streams.rs`, never the document actor.

mod actor;
mod announcer;
mod config;
pub mod encoded;
pub mod grant;
mod guests;
mod keep_version;
pub mod messages;
mod ownership;
mod recent;
mod recheck;
mod relayed;
mod sessions;
mod stats;
mod subscribers;
pub mod sync_reply;
mod tail;
mod version_clock;
mod waiters;

#[cfg(test)]
mod guest_tests;
#[cfg(test)]
mod relayed_tests;
#[cfg(test)]
mod restart_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod version_tests;

pub use actor::compact::{Compact, CompactOutcome};
pub use actor::first_rows::{FirstRows, FirstRowsReply};
pub use actor::icon::SetIcon;
pub use actor::leave::Leave;
pub use actor::operator::{ActorReport, Close, DocSize, GetSize, GetStats, Relinquish};
pub use actor::snapshot::{Snapshot, SnapshotOthers, SnapshotReply};
pub use actor::streams::{Changes, Subscribe, Subscribed, Subscription, WaitChanges};
pub use actor::sync::Sync;
pub use actor::versions::{Restore, RestoreReply, TakeVersion};
pub use actor::{AccessChanged, DocumentActor, Stopped};
pub use config::ActorConfig;
pub use encoded::{SharedBlocks, SnapshotBlock};
pub use grant::{Confirmed, Revoked, Standing, StreamGrant};
pub use messages::{
    event_channel, Caller, Channel, DocError, DocEvent, EventSink, Events, Mode, Wake,
};
pub use relayed::{Heard, RelayedDocument, Upstream};
pub use sessions::Person;
pub use sync_reply::{
    Completion, Entries, LeasesReply, LogPage, SyncFields, SyncReply, SyncResponse, UnreadPage,
};
