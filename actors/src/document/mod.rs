//! The document actor: the only writer of its document. It owns the op queue (its mailbox),
//! the in-memory state, the lease table and the session list, and hands SQLite work to the
//! writer thread so its event loop never waits on the disk.

mod actor;
mod channels;
mod compact;
pub mod encoded;
pub mod grant;
pub mod messages;
pub mod sessions;
mod subscribers;
mod sync;
mod tail;
mod waiters;

#[cfg(test)]
mod restart_tests;
#[cfg(test)]
mod tests;

pub use actor::{ActorConfig, DocumentActor};
pub use encoded::SharedBlocks;
pub use grant::{Confirmed, Revoked, Standing, StreamGrant};
pub use messages::*;
pub use subscribers::Subscription;
