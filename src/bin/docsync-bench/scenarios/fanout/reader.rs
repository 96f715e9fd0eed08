//! A fan-out reader: an open editor that only watches. It does what PROTOCOL §4 asks of a
//! client on a wake-up, as the browser engine does (`onWake` in static/engine/engine.js):
//! entries that come with the wake-up and continue its log exactly are applied without a
//! request; otherwise, when the wake-up names a newer head or other lease news, it pulls
//! `POST /sync {clientId, lastSeq}` (pages until `hasMore` is false).
//!
//! Readers are lean so that their cost is not what gets measured: they share one HTTP
//! connection pool (keep-alive, a connection per reader at most), many of them run on the
//! bench's few runtime threads, and they parse only the fields they need.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Result};
use futures::{SinkExt, StreamExt};
use serde::Deserialize;
use tokio::sync::watch;
use tokio_tungstenite::tungstenite::Message;

use crate::channel::Channel;
use crate::client::{Api, EventStream, WebSocket};
use crate::listeners::{stopped, PING_EVERY};
use crate::setup::new_id;

/// Counts over all readers (cheap atomics: two runtime threads touch them).
#[derive(Default)]
pub struct Counters {
    /// `DOC_SEQ` messages / `doc_seq` events received.
    pub wakeups: AtomicU64,
    /// `/sync` requests sent.
    pub pulls: AtomicU64,
    /// Wake-ups whose entries were applied without a pull.
    pub applied_wakeups: AtomicU64,
    pub errors: AtomicU64,
}

impl Counters {
    pub fn snapshot(&self) -> [u64; 4] {
        [
            self.wakeups.load(Ordering::Relaxed),
            self.pulls.load(Ordering::Relaxed),
            self.applied_wakeups.load(Ordering::Relaxed),
            self.errors.load(Ordering::Relaxed),
        ]
    }
}

/// Where a reader hears about changes.
pub enum Source {
    Ws(Box<WebSocket>),
    Sse(Box<EventStream>),
}

/// The part of a wake-up a reader acts on (`DOC_SEQ` or the data of `doc_seq`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WakeUp {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    head_seq: Option<i64>,
    lease_seq: Option<u64>,
    #[serde(default)]
    entries: Vec<Seq>,
    /// A bullet guest's view entry continues this cursor (not the log).
    #[serde(default)]
    since: Option<i64>,
}

/// The part of a `/sync` reply a reader acts on.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PullReply {
    #[serde(default)]
    ops: Vec<Seq>,
    head_seq: i64,
    #[serde(default)]
    has_more: bool,
    lease_seq: Option<u64>,
    #[serde(default)]
    resync: bool,
}

/// A log entry, of which a reader only needs the seq.
#[derive(Deserialize)]
struct Seq {
    seq: i64,
}

pub struct Reader {
    api: Api,
    doc_id: Arc<str>,
    client_id: String,
    last_seq: i64,
    lease_seq: Option<u64>,
    /// (seq, when this reader had it) for every entry it received.
    visible: Vec<(i64, Instant)>,
    /// `last_seq`, for the scenario to see when every reader has caught up.
    progress: Arc<AtomicI64>,
    counters: Arc<Counters>,
    /// A bullet guest of the writer's bullet.
    guest: bool,
}

impl Reader {
    /// A reader with its first pull done (its session exists on the server).
    pub async fn join(api: Api, doc_id: Arc<str>, counters: Arc<Counters>) -> Result<Reader> {
        let reader = Reader::at(api, doc_id, counters, new_id("cl_r_"), 0, false);
        reader.joined().await
    }

    /// A bullet guest's reader: their view opens with a snapshot for this tab (a guest's
    /// cursor is the one their view was given), then pulls as any reader.
    pub async fn join_as_guest(
        api: Api,
        doc_id: Arc<str>,
        counters: Arc<Counters>,
    ) -> Result<Reader> {
        let client_id = new_id("cl_g_");
        let snap = api.snapshot(&doc_id, Some(&client_id)).await?;
        let head = snap.body["headSeq"].as_i64().unwrap_or(0);
        let reader = Reader::at(api, doc_id, counters, client_id, head, true);
        reader.joined().await
    }

    fn at(
        api: Api,
        doc_id: Arc<str>,
        counters: Arc<Counters>,
        client_id: String,
        seq: i64,
        guest: bool,
    ) -> Reader {
        Reader {
            api,
            doc_id,
            client_id,
            last_seq: seq,
            lease_seq: None,
            visible: Vec::new(),
            progress: Arc::new(AtomicI64::new(seq)),
            counters,
            guest,
        }
    }

    /// Its first pull: the session exists before anyone listens.
    async fn joined(mut self) -> Result<Reader> {
        self.pull().await?;
        Ok(self)
    }

    /// The tab a stream names: a guest's (its view's entries come only to its own tab);
    /// a document reader's streams name none, as before guests existed.
    fn tab(&self) -> Option<&str> {
        self.guest.then_some(self.client_id.as_str())
    }

    pub fn progress(&self) -> Arc<AtomicI64> {
        self.progress.clone()
    }

    /// Subscribes on `channel`: joined (WebSocket `JOINED`) or streaming (`event: ready`).
    pub async fn subscribe(&self, channel: Channel) -> Result<Source> {
        Ok(match channel {
            Channel::WebSocket => Source::Ws(Box::new(
                self.api.ws_join_as(&self.doc_id, self.tab()).await?,
            )),
            Channel::Sse => Source::Sse(Box::new(
                self.api.events_as(&self.doc_id, self.tab()).await?,
            )),
            Channel::LongPoll => bail!("fanout readers use WebSocket or SSE wake-ups"),
        })
    }

    /// Handles wake-ups until `stop`; returns what became visible when.
    pub async fn listen(
        mut self,
        source: Source,
        stop: watch::Receiver<bool>,
    ) -> Vec<(i64, Instant)> {
        let outcome = match source {
            Source::Ws(ws) => self.listen_ws(*ws, stop).await,
            Source::Sse(events) => self.listen_sse(*events, stop).await,
        };
        if let Err(e) = outcome {
            self.failed(&e);
        }
        self.visible
    }

    async fn listen_ws(
        &mut self,
        mut ws: WebSocket,
        mut stop: watch::Receiver<bool>,
    ) -> Result<()> {
        let start = tokio::time::Instant::now() + PING_EVERY;
        let mut ping = tokio::time::interval_at(start, PING_EVERY);
        loop {
            tokio::select! {
                msg = ws.next() => match msg {
                    Some(Ok(Message::Text(text))) => {
                        if let Ok(wake) = serde_json::from_str::<WakeUp>(text.as_str()) {
                            if wake.kind.as_deref() == Some("DOC_SEQ") {
                                self.on_wake(wake).await;
                            }
                        }
                    }
                    Some(Ok(Message::Close(reason))) => bail!("server closed the WebSocket: {reason:?}"),
                    Some(Ok(_)) => {}
                    Some(Err(e)) => return Err(e.into()),
                    None => bail!("WebSocket ended"),
                },
                _ = ping.tick() => ws.send(Message::text(r#"{"type":"PING"}"#)).await?,
                _ = stopped(&mut stop) => break,
            }
        }
        let _ = ws.close(None).await;
        Ok(())
    }

    async fn listen_sse(
        &mut self,
        mut events: EventStream,
        mut stop: watch::Receiver<bool>,
    ) -> Result<()> {
        loop {
            tokio::select! {
                event = events.next_raw() => match event? {
                    Some((name, data)) if name == "doc_seq" => {
                        if let Ok(wake) = serde_json::from_str::<WakeUp>(&data) {
                            self.on_wake(wake).await;
                        }
                    }
                    Some(_) => {}
                    None => bail!("the server ended the event stream"),
                },
                _ = stopped(&mut stop) => break,
            }
        }
        Ok(())
    }

    /// PROTOCOL §4: apply entries that continue the log exactly; pull for anything else
    /// that is news (a newer head, or lease/presence news).
    async fn on_wake(&mut self, wake: WakeUp) {
        self.counters.wakeups.fetch_add(1, Ordering::Relaxed);
        let fits = match wake.since {
            Some(since) => {
                since == self.last_seq
                    && wake.entries.len() == 1
                    && wake.entries[0].seq > self.last_seq
            }
            None => self.continues_log(&wake.entries),
        };
        if fits {
            let at = Instant::now();
            self.saw(wake.entries.iter().map(|e| e.seq), at);
            self.advance(wake.entries.last().map_or(self.last_seq, |e| e.seq));
            self.counters
                .applied_wakeups
                .fetch_add(1, Ordering::Relaxed);
        }
        let behind = wake.head_seq.is_some_and(|h| h > self.last_seq);
        let lease_news = wake.lease_seq.is_some() && wake.lease_seq != self.lease_seq;
        if behind || lease_news {
            if let Err(e) = self.pull().await {
                self.failed(&e);
            }
        }
    }

    fn continues_log(&self, entries: &[Seq]) -> bool {
        let Some(first) = entries.first() else {
            return false;
        };
        first.seq == self.last_seq + 1
            && entries
                .iter()
                .zip(first.seq..)
                .all(|(entry, expected)| entry.seq == expected)
    }

    /// `POST /sync {clientId, lastSeq}` until the reply has no more pages.
    async fn pull(&mut self) -> Result<()> {
        loop {
            let body = format!(
                r#"{{"clientId":"{}","lastSeq":{}}}"#,
                self.client_id, self.last_seq
            );
            self.counters.pulls.fetch_add(1, Ordering::Relaxed);
            let bytes = self.api.sync_raw(&self.doc_id, body).await?;
            let reply: PullReply = serde_json::from_slice(&bytes)?;
            let at = Instant::now();
            if reply.resync {
                bail!("resync: the server says this reader's lastSeq is not servable");
            }
            let fresh: Vec<i64> = reply.ops.iter().map(|e| e.seq).collect();
            self.saw(fresh.into_iter(), at);
            self.lease_seq = reply.lease_seq;
            let page_end = reply.ops.last().map(|e| e.seq);
            match (reply.has_more, page_end) {
                (true, Some(seq)) => self.advance(seq),
                _ => {
                    self.advance(reply.head_seq);
                    return Ok(());
                }
            }
        }
    }

    /// Entries `seqs` (ascending) became visible at `at`. A guest's one view entry shows
    /// every change since its cursor (the edits it covers are visible with it).
    fn saw(&mut self, seqs: impl Iterator<Item = i64>, at: Instant) {
        let mut from = self.last_seq;
        for seq in seqs.filter(|s| *s > self.last_seq) {
            if self.guest {
                self.visible.extend((from + 1..=seq).map(|s| (s, at)));
            } else {
                self.visible.push((seq, at));
            }
            from = seq;
        }
    }

    fn advance(&mut self, seq: i64) {
        self.last_seq = self.last_seq.max(seq);
        self.progress.store(self.last_seq, Ordering::Relaxed);
    }

    fn failed(&self, e: &anyhow::Error) {
        if self.counters.errors.fetch_add(1, Ordering::Relaxed) < 3 {
            eprintln!("docsync-bench: fanout reader failed: {e:#}");
        }
    }
}
