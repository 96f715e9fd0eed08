//! The body of a response that passes a document's events on as they come — an SSE stream,
//! or a node's relay stream (`cluster/node_stream.rs`): the first frame at once, then one
//! frame per wake-up, a keep-alive in quiet times, and the end when the document ends the
//! stream (revoked, moved, its actor gone) or the server shuts down.

use std::time::Duration;

use actix_web::web::Bytes;
use futures::{stream, Stream, StreamExt};

use docsync_actors::document::{DocEvent, Events, Wake};

use crate::shutdown::Shutdown;

/// How a stream's events become bytes.
pub struct Framing<F> {
    /// Sent at once.
    pub first: Bytes,
    /// Each wake-up as the stream writes it.
    pub frame: F,
    /// Written after `every` without an event (`every` from the start, then between them).
    pub keepalive: &'static [u8],
    pub every: Duration,
}

struct Open<H, F> {
    rx: Events,
    framing: Framing<F>,
    first: Option<Bytes>,
    tick: tokio::time::Interval,
    shutdown: Shutdown,
    _held: H,
}

/// The body reading `rx`. `held` (the subscription, a stream slot) lives exactly as long as
/// the body: dropping the body — the client went away — unsubscribes and frees it.
pub fn events<H, F>(
    rx: Events,
    framing: Framing<F>,
    shutdown: Shutdown,
    held: H,
) -> impl Stream<Item = Result<Bytes, actix_web::Error>>
where
    H: 'static,
    F: Fn(&Wake) -> Bytes + 'static,
{
    let every = framing.every;
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let open = Open {
        rx,
        first: Some(framing.first.clone()),
        framing,
        tick,
        shutdown,
        _held: held,
    };
    stream::unfold(open, |mut s| async move {
        if let Some(first) = s.first.take() {
            return Some((Ok(first), s));
        }
        enum Next {
            Event(Option<DocEvent>),
            KeepAlive,
            Shutdown,
        }
        let next = tokio::select! {
            ev = s.rx.next() => Next::Event(ev),
            _ = s.tick.tick() => Next::KeepAlive,
            () = s.shutdown.wait() => Next::Shutdown,
        };
        match next {
            Next::Event(Some(DocEvent::Seq(wake))) => {
                let bytes = (s.framing.frame)(&wake);
                Some((Ok(bytes), s))
            }
            Next::KeepAlive => Some((Ok(Bytes::from_static(s.framing.keepalive)), s)),
            // Revoked: the document forgot this stream; nothing more may go out. Moved (a
            // relayed room's): this stream is over too; its client connects again.
            Next::Event(Some(DocEvent::Revoked { .. } | DocEvent::Moved { .. }) | None)
            | Next::Shutdown => None,
        }
    })
}
