//! What opened a stream, and whether it still may read the document. A stream is
//! authorised when it opens and again whenever the access epoch moves
//! (`storage::access_epoch`), or when the login session behind it ends by the server's
//! clock: the document actor asks every such stream's `StreamGrant` in one read and ends the
//! streams that lost their credential or their access. The service implements the trait with
//! the request's credentials and the one role function; this crate only asks it.

use crate::storage::{Db, StorageError};

/// The credential (and through it the user) behind an open stream.
pub trait StreamGrant: Send + Sync + 'static {
    /// Streams with equal keys stand or fall together (one credential, one document), so a
    /// re-check asks once per key: a user's ten tabs cost one lookup, not ten.
    fn key(&self) -> &str;

    /// Whether the credential still names its user and that user still reads `doc_id`, at
    /// `now_ms` on the server's clock. Runs inside one read on the pool.
    fn recheck(&self, db: &mut Db, doc_id: &str, now_ms: i64) -> Result<Standing, StorageError>;
}

/// The answer of a `StreamGrant`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Still reads the document — all of it, or (a bullet guest) the subtrees `reach`
    /// names now; a login session ends at `until` (ms, server clock).
    Reads {
        until: Option<i64>,
        reach: crate::storage::roles::Reach,
    },
    /// The credential names no one any more: token deleted, logged out, session expired or
    /// ended by a password change.
    CredentialEnded,
    /// The credential stands, but its user may no longer read the document.
    NoAccess,
}

/// Why a stream was ended by its document (`DocEvent::Revoked`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revoked {
    CredentialEnded,
    NoAccess,
}

/// When a stream's rights were last confirmed: at an access epoch, and (login sessions)
/// until a moment on the server's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Confirmed {
    pub epoch: u64,
    pub until: Option<i64>,
}

impl Confirmed {
    /// Whether these rights still hold at `epoch` and `now_ms`.
    pub fn holds(&self, epoch: u64, now_ms: i64) -> bool {
        self.epoch == epoch && self.until.is_none_or(|t| now_ms < t)
    }
}

/// A stream opened for a user whose credential cannot end: only for driving actors in
/// tests. It asks the role function for the user.
#[cfg(test)]
pub(crate) struct UserGrant(pub String);

#[cfg(test)]
impl StreamGrant for UserGrant {
    fn key(&self) -> &str {
        &self.0
    }

    fn recheck(&self, db: &mut Db, doc_id: &str, _now: i64) -> Result<Standing, StorageError> {
        Ok(
            match crate::storage::roles::doc_role(db, &self.0, doc_id)? {
                Some(_) => Standing::Reads {
                    until: None,
                    reach: crate::storage::roles::Reach::Document,
                },
                None => Standing::NoAccess,
            },
        )
    }
}
