//! The server is stopping: one trigger, fired once on SIGTERM/SIGINT, and a `Shutdown` copy
//! in every open stream (WebSocket sessions, SSE streams, long-polls) that wakes them so they
//! end (a WebSocket with 1001) before the server stops accepting and drains. A stream that
//! starts after the trigger fired sees it at once.

use tokio::sync::watch;

/// Fires the shutdown (held by the server's signal handler).
pub struct ShutdownTrigger(watch::Sender<bool>);

/// A stream's view of the shutdown; clone one per stream.
#[derive(Clone, Debug)]
pub struct Shutdown(watch::Receiver<bool>);

impl ShutdownTrigger {
    /// A trigger and the `Shutdown` the streams copy.
    pub fn new() -> (ShutdownTrigger, Shutdown) {
        let (tx, rx) = watch::channel(false);
        (ShutdownTrigger(tx), Shutdown(rx))
    }

    /// Every `Shutdown` (also ones cloned later) is woken and stays fired.
    pub fn fire(&self) {
        let _ = self.0.send(true);
    }
}

impl Shutdown {
    pub fn is_fired(&self) -> bool {
        *self.0.borrow()
    }

    /// Resolves once the trigger fired (at once if it already did).
    pub async fn wait(&mut self) {
        // An error means the trigger was dropped: the process is ending anyway.
        let _ = self.0.wait_for(|fired| *fired).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn streams_wake_when_fired_and_later_copies_see_it_at_once() {
        let (trigger, shutdown) = ShutdownTrigger::new();
        let mut early = shutdown.clone();
        let waiting = tokio::spawn(async move { early.wait().await });
        assert!(!shutdown.is_fired());
        trigger.fire();
        waiting.await.unwrap();
        let mut late = shutdown.clone();
        assert!(late.is_fired());
        late.wait().await;
    }
}
