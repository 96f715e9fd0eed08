//! Wake-up channel listeners (idle_subscribers, wakeup): one task per subscriber that
//! records what it heard until told to stop.

use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use futures::stream::{self, StreamExt};
use futures::SinkExt;
use serde_json::Value;
use tokio::sync::watch;
use tokio_tungstenite::tungstenite::Message;

use crate::channel::Channel;
use crate::client::{Api, EventStream, WebSocket};

/// A WebSocket subscriber PINGs this often (the server closes after 35 s of silence).
pub const PING_EVERY: Duration = Duration::from_secs(15);
const LONGPOLL_WAIT_S: i64 = 25;
/// How long a listener may take to stop once told to.
const LISTENER_STOP_TIMEOUT: Duration = Duration::from_secs(30);
/// Connections being opened or closed at once.
pub const CONNECT_PARALLELISM: usize = 64;

/// A subscriber heard that the document reached `head` at `at`; for a long-poll, `polled_at`
/// is when the poll that answered was sent.
pub struct Wake {
    pub head: i64,
    pub at: Instant,
    pub polled_at: Option<Instant>,
}

/// A subscriber's task: it listens until told to stop and returns what it heard.
pub type Listener = tokio::task::JoinHandle<Result<Vec<Wake>>>;

/// Subscribes to `doc_id` on `channel` and leaves the listening to a task. WebSockets and
/// event streams are subscribed when this returns (JOINED / `event: ready`); a long-poller
/// sends its first poll from the task.
pub async fn open_listener(
    api: &Api,
    channel: Channel,
    doc_id: &str,
    stop: watch::Receiver<bool>,
) -> Result<Listener> {
    Ok(match channel {
        Channel::WebSocket => tokio::spawn(ws_listen(api.ws_join(doc_id).await?, stop)),
        Channel::Sse => tokio::spawn(sse_listen(api.events(doc_id).await?, stop)),
        Channel::LongPoll => tokio::spawn(longpoll_listen(api.clone(), doc_id.to_string(), stop)),
    })
}

/// Records `DOC_SEQ` messages and PINGs every 15 s; closes the socket on `stop`.
async fn ws_listen(mut ws: WebSocket, mut stop: watch::Receiver<bool>) -> Result<Vec<Wake>> {
    let mut wakes = Vec::new();
    let mut ping = tokio::time::interval_at(tokio::time::Instant::now() + PING_EVERY, PING_EVERY);
    loop {
        tokio::select! {
            msg = ws.next() => {
                let at = Instant::now();
                match msg {
                    Some(Ok(Message::Text(text))) => {
                        if let Some(head) = doc_seq_head(text.as_str()) {
                            wakes.push(Wake { head, at, polled_at: None });
                        }
                    }
                    Some(Ok(Message::Close(reason))) => bail!("server closed the WebSocket: {reason:?}"),
                    Some(Ok(_)) => {}
                    Some(Err(e)) => return Err(e.into()),
                    None => bail!("WebSocket ended"),
                }
            }
            _ = ping.tick() => ws.send(Message::text(r#"{"type":"PING"}"#)).await?,
            _ = stopped(&mut stop) => break,
        }
    }
    let _ = ws.close(None).await;
    Ok(wakes)
}

/// Resolves once `stop` is set or its sender is gone.
pub async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// `headSeq` of a `DOC_SEQ` message.
fn doc_seq_head(text: &str) -> Option<i64> {
    let v: Value = serde_json::from_str(text).ok()?;
    (v["type"] == "DOC_SEQ").then(|| v["headSeq"].as_i64())?
}

/// Records `doc_seq` events until `stop` (dropping the stream closes it).
async fn sse_listen(mut events: EventStream, mut stop: watch::Receiver<bool>) -> Result<Vec<Wake>> {
    let mut wakes = Vec::new();
    loop {
        tokio::select! {
            event = events.next_event() => match event? {
                Some((name, data)) if name == "doc_seq" => {
                    if let Some(head) = data["headSeq"].as_i64() {
                        wakes.push(Wake { head, at: Instant::now(), polled_at: None });
                    }
                }
                Some(_) => {}
                None => bail!("the server ended the event stream"),
            },
            _ = stopped(&mut stop) => break,
        }
    }
    Ok(wakes)
}

/// Long-polls again and again, each time from the last headSeq and leaseSeq it was told;
/// stops before the next poll once `stop` is set (or its sender is gone).
async fn longpoll_listen(
    api: Api,
    doc_id: String,
    stop: watch::Receiver<bool>,
) -> Result<Vec<Wake>> {
    let mut wakes = Vec::new();
    let (mut head, mut lease) = (0, 0);
    while !*stop.borrow() && stop.has_changed().is_ok() {
        let polled_at = Instant::now();
        let (h, l) = api.changes(&doc_id, head, lease, LONGPOLL_WAIT_S).await?;
        if h > head {
            let at = Instant::now();
            wakes.push(Wake {
                head: h,
                at,
                polled_at: Some(polled_at),
            });
            head = h;
        }
        lease = l;
    }
    Ok(wakes)
}

/// Waits for a listener that was told to stop; it is aborted if it takes too long.
pub async fn join_listener(listener: Listener) -> Result<Vec<Wake>> {
    let abort = listener.abort_handle();
    match tokio::time::timeout(LISTENER_STOP_TIMEOUT, listener).await {
        Ok(joined) => joined?,
        Err(_) => {
            abort.abort();
            bail!("listener did not stop within {LISTENER_STOP_TIMEOUT:?}")
        }
    }
}

/// Closes all listeners (WebSockets with a close frame; long-polls are dropped, which closes
/// their connections); returns how many had failed.
pub async fn close_listeners(
    channel: Channel,
    stop: watch::Sender<bool>,
    listeners: Vec<Listener>,
) -> u64 {
    let _ = stop.send(true);
    if channel == Channel::LongPoll {
        listeners.iter().for_each(|l| l.abort());
    }
    let results: Vec<Result<Vec<Wake>>> = stream::iter(listeners)
        .map(join_listener)
        .buffer_unordered(CONNECT_PARALLELISM)
        .collect()
        .await;
    let failures = results.iter().filter_map(|r| r.as_ref().err());
    let failures = failures.filter(|e| {
        !e.downcast_ref::<tokio::task::JoinError>()
            .is_some_and(|j| j.is_cancelled())
    });
    let mut count = 0;
    for e in failures {
        count += 1;
        if count <= 3 {
            eprintln!("docsync-bench: subscriber failed: {e:#}");
        }
    }
    count
}
