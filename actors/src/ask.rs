//! The one way to ask a document actor something. An actor may be going away at any moment
//! (idle stop, reload after a failure, shutdown of its arbiter): it then answers
//! `Restarting` or its mailbox is closed. Either way the registry hands out a fresh actor on
//! the next `Open`, so we ask again after a short pause. Callers never see an actor's
//! address: they name the document and get the answer or a `DocError`.
//!
//! One more refusal is recoverable but not by waiting: `StalePrecheck` means the request was
//! built from a database read older than what the actor still remembers. Only the caller can
//! redo that read, so `ask_renewing` takes a hook that rebuilds the message.

use std::future::Future;
use std::time::Duration;

use actix::prelude::*;

use crate::collab::validate::DocId;
use crate::document::{DocError, DocumentActor};
use crate::registry::{Documents, Open};

/// How often and how patiently a request is retried while its actor restarts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// Attempts in all, the first one included.
    pub attempts: usize,
    /// Pause after the first failed attempt; doubled after each further one.
    pub first: Duration,
}

/// The policy every caller uses. An actor restart takes one writer round trip (its state is
/// loaded through the writer queue), usually well under 10 ms; five pauses of 5…80 ms
/// (155 ms in all) cover a restart behind a busy writer without keeping a client waiting
/// long when the document is truly unavailable.
pub const BACKOFF: Backoff = Backoff {
    attempts: 6,
    first: Duration::from_millis(5),
};

impl Backoff {
    /// The pause after failed attempt number `attempt` (0-based).
    pub fn pause(&self, attempt: usize) -> Duration {
        self.first * (1u32 << attempt.min(16))
    }
}

/// Sends `msg` to the document's actor, asking the registry again while the actor restarts.
/// Gives up with `DocError::Restarting` when every attempt met a restarting actor.
pub async fn ask<M, T>(registry: &Documents, doc_id: &DocId, msg: M) -> Result<T, DocError>
where
    M: Message<Result = Result<T, DocError>> + Clone + Send + 'static,
    T: Send + 'static,
    DocumentActor: Handler<M>,
{
    ask_renewing(registry, doc_id, msg, || async {
        // Only `Sync` answers StalePrecheck, and it is always sent through a renewing ask;
        // seeing it here means a message without a pre-check: nothing to redo.
        Err::<M, DocError>(DocError::StalePrecheck)
    })
    .await
}

/// Like `ask`, and when the actor answers `StalePrecheck`, `renew` rebuilds the message
/// (e.g. redoes the sync's database pre-check) before the next attempt. Errors of `renew`
/// end the ask as they are.
pub async fn ask_renewing<M, T, E, R, F>(
    registry: &Documents,
    doc_id: &DocId,
    mut msg: M,
    mut renew: R,
) -> Result<T, E>
where
    M: Message<Result = Result<T, DocError>> + Clone + Send + 'static,
    T: Send + 'static,
    DocumentActor: Handler<M>,
    E: From<DocError>,
    R: FnMut() -> F,
    F: Future<Output = Result<M, E>>,
{
    let policy = BACKOFF;
    for attempt in 0..policy.attempts {
        let last = attempt + 1 == policy.attempts;
        // A running actor is found without a message; the registry starts one otherwise,
        // and is asked again after a refusal (it has heard of the stop by then: the actor
        // tells it before it refuses anything).
        let handle = match registry.running(doc_id).filter(|_| attempt == 0) {
            Some(h) => h,
            None => {
                let open = Open {
                    doc_id: doc_id.clone(),
                };
                // The registry gone means the server is shutting down: as good as restarting.
                registry
                    .send(open)
                    .await
                    .map_err(|_| DocError::Restarting)?
            }
        };
        match handle.request(msg.clone()).await {
            Ok(Ok(v)) => return Ok(v),
            Ok(Err(DocError::StalePrecheck)) if !last => msg = renew().await?,
            Ok(Err(DocError::Restarting)) | Err(_) if !last => {
                tokio::time::sleep(policy.pause(attempt)).await
            }
            Ok(Err(DocError::StalePrecheck)) | Ok(Err(DocError::Restarting)) | Err(_) => break,
            Ok(Err(e)) => return Err(e.into()),
        }
    }
    Err(DocError::Restarting.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_double_from_the_first() {
        let b = BACKOFF;
        assert_eq!(b.pause(0), Duration::from_millis(5));
        assert_eq!(b.pause(1), Duration::from_millis(10));
        assert_eq!(b.pause(4), Duration::from_millis(80));
        let total: Duration = (0..b.attempts - 1).map(|a| b.pause(a)).sum();
        assert_eq!(total, Duration::from_millis(155));
    }
}
