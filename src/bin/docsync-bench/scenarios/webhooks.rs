//! `webhooks`: a webhook delivering to a receiver the bench runs (a real HTTP/1.1 server on
//! 127.0.0.1 that answers 200 and counts entries), on a server of its own whose database holds
//! 1,000,000 log entries in 100 documents before it starts. First 10 editors on one hot
//! document for 10 s with no webhook; then a webhook made with `since: "0"` drains the whole
//! backlog while 10 editors run again for 10 s; the drain is timed to its last entry.
//! Then, with the webhook caught up, 200 edits one after another: edit sent → its entry
//! received by the receiver. The receiver runs at the lowest priority on a thread of its own
//! (it stands for another machine); on one machine, bench, server and receiver share the CPU.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Result};
use docsync_actors::storage::seed::long_history;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Notify;

use crate::client::Api;
use crate::editor::run_editors;
use crate::setup::{insert_op, new_id, unix_ms};
use crate::stats::{percentiles_named, round3, Line};

use super::{Env, Scenario};

const DOCS: usize = 100;
const ENTRIES_PER_DOC: i64 = 10_000;
const EDITORS: usize = 10;
const EDITING: Duration = Duration::from_secs(10);
const LIVE_EDITS: usize = 200;

pub async fn run(env: &Env) -> Result<Line> {
    let launcher = env
        .launcher
        .clone()
        .ok_or_else(|| anyhow!("needs a server of its own; it cannot run with --target"))?;
    let (server, docs, fill_s) = tokio::task::spawn_blocking(move || {
        let mut dir = launcher.prepare()?;
        // The receiver is on this machine: let the (non-admin) bench user aim there.
        dir.set_env("DOCSYNC_WEBHOOKS__ALLOW_PRIVATE_TARGETS", "true");
        let owner = dir.user.id.clone();
        let started = Instant::now();
        let docs = dir.write_before_serving(move |c| {
            (0..DOCS)
                .map(|_| long_history(c, &owner, 100, ENTRIES_PER_DOC, unix_ms()).map(|(d, _)| d))
                .collect::<Result<Vec<_>, _>>()
        })?;
        anyhow::Ok((dir.serve()?, docs, started.elapsed().as_secs_f64()))
    })
    .await??;
    let api = server.api()?;
    let pid = Some(server.pid);
    let recv = Receiver::start(docs.into_iter().collect()).await?;
    let hot = api.create_doc("bench webhooks hot").await?;
    let alone = run_editors(&api, vec![hot.clone(); EDITORS], EDITING, pid).await?;

    let started = Instant::now();
    let made = api
        .post_json(
            "/webhooks",
            &json!({"url": recv.url, "events": ["ops"], "secret": "bench-secret-0123456789",
                    "since": "0"}),
        )
        .await?;
    if made["id"].is_null() {
        bail!("no webhook made: {made}");
    }
    // A document of their own: the editors of the first run left their leases behind.
    let hot2 = api.create_doc("bench webhooks hot, while draining").await?;
    let during = run_editors(&api, vec![hot2; EDITORS], EDITING, pid).await?;
    let total = DOCS as u64 * ENTRIES_PER_DOC as u64;
    recv.wait_for_backlog(total, Duration::from_secs(900))
        .await?;
    let drain_s = started.elapsed().as_secs_f64();
    let deliveries = recv.state.lock().unwrap().deliveries;
    let mut live_us = live(&api, &hot, &recv).await?;

    let rate = |ops: u64, secs: f64| ops as f64 / secs;
    let before = rate(alone.stats.ops, alone.secs);
    let while_draining = rate(during.stats.ops, during.secs);
    let cpu_ms_per_op = |run: &crate::editor::EditorsRun| {
        run.server_cpu_s
            .filter(|_| run.stats.ops > 0)
            .map(|cpu| round3(cpu * 1000.0 / run.stats.ops as f64))
    };
    Ok(Scenario::Webhooks
        .line()
        .with("backlog_entries", total)
        .with("documents", DOCS)
        .with("fill_s", round3(fill_s))
        .with("drain_s", round3(drain_s))
        .with("drain_entries_per_s", (total as f64 / drain_s).round())
        .with("deliveries", deliveries)
        .with("editors", EDITORS)
        .with("edit_ops_per_s_alone", round3(before))
        .with("edit_ops_per_s_while_draining", round3(while_draining))
        .with(
            "edit_rate_while_draining_pct",
            round3(while_draining / before * 100.0),
        )
        .with("edit_server_cpu_ms_per_op_alone", cpu_ms_per_op(&alone))
        .with("live_edits", LIVE_EDITS)
        .append(percentiles_named(
            &mut live_us,
            [
                "edit_to_webhook_p50_ms",
                "edit_to_webhook_p99_ms",
                "edit_to_webhook_max_ms",
            ],
        )))
}

/// Edit sent → the receiver has its entry, one edit at a time; microseconds.
async fn live(api: &Api, doc: &str, recv: &Receiver) -> Result<Vec<u64>> {
    let block = new_id("blk_");
    let reply = api
        .sync(
            doc,
            &json!({"clientId": "cl_webhook_bench", "lastSeq": 0, "ops": [
                insert_op(&block, None, "Zz", "live")]}),
        )
        .await?;
    let mut head = reply["headSeq"].as_i64().unwrap_or(0);
    // The webhook is past the backlog but may still be sending the entries the editors made
    // meanwhile: this edit, unmeasured, arrives once it has caught up.
    let arrived = recv.state.lock().unwrap().expect("caught up");
    let reply = api
        .sync(
            doc,
            &json!({"clientId": "cl_webhook_bench", "lastSeq": head, "ops": [{
                "opId": new_id("op_"), "kind": "set_content", "blockId": block,
                "content": "caught up", "baseVersion": 1}]}),
        )
        .await?;
    head = reply["headSeq"].as_i64().unwrap_or(head);
    tokio::time::timeout(Duration::from_secs(120), arrived)
        .await
        .map_err(|_| anyhow!("the webhook never caught up"))??;
    let mut out = Vec::with_capacity(LIVE_EDITS);
    for n in 0..LIVE_EDITS {
        let text = format!("live {n}");
        let arrived = recv.state.lock().unwrap().expect(&text);
        let started = Instant::now();
        let reply = api
            .sync(
                doc,
                &json!({"clientId": "cl_webhook_bench", "lastSeq": head, "ops": [{
                    "opId": new_id("op_"), "kind": "set_content", "blockId": block,
                    "content": text, "baseVersion": n + 2}]}),
            )
            .await?;
        head = reply["headSeq"].as_i64().unwrap_or(head);
        let at = tokio::time::timeout(Duration::from_secs(10), arrived)
            .await
            .map_err(|_| anyhow!("the receiver never got \"live {n}\""))??;
        out.push(at.saturating_duration_since(started).as_micros() as u64);
    }
    Ok(out)
}

#[derive(Default)]
struct State {
    /// Entries of the backlog's documents received.
    backlog: u64,
    deliveries: u64,
    /// The text a live edit sets, and where to say when its entry arrived.
    waiting: Option<(String, tokio::sync::oneshot::Sender<Instant>)>,
}

impl State {
    fn expect(&mut self, text: &str) -> tokio::sync::oneshot::Receiver<Instant> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.waiting = Some((text.to_string(), tx));
        rx
    }
}

struct Receiver {
    url: String,
    state: Arc<Mutex<State>>,
    moved: Arc<Notify>,
}

impl Receiver {
    /// On a thread of its own at the lowest priority, with a runtime of its own: it stands
    /// for a receiver on another machine, so its work must not slow the bench's editors.
    async fn start(backlog_docs: HashSet<String>) -> Result<Receiver> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let url = format!("http://{}/hook", listener.local_addr()?);
        let state = Arc::new(Mutex::new(State::default()));
        let moved = Arc::new(Notify::new());
        let docs = Arc::new(backlog_docs);
        let (s, m) = (state.clone(), moved.clone());
        std::thread::spawn(move || {
            // SAFETY: a plain system call on this thread's own ID.
            unsafe {
                let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
                libc::setpriority(libc::PRIO_PROCESS, tid, 19);
            }
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("the receiver's runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                while let Ok((conn, _)) = listener.accept().await {
                    let (s, m, docs) = (s.clone(), m.clone(), docs.clone());
                    tokio::spawn(async move {
                        let _ = serve(conn, &s, &m, &docs).await;
                    });
                }
            });
        });
        Ok(Receiver { url, state, moved })
    }

    async fn wait_for_backlog(&self, total: u64, limit: Duration) -> Result<()> {
        let deadline = Instant::now() + limit;
        loop {
            let notified = self.moved.notified();
            let got = self.state.lock().unwrap().backlog;
            if got >= total {
                return Ok(());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if tokio::time::timeout(left, notified).await.is_err() {
                bail!("the backlog was not drained: {got} of {total} entries");
            }
        }
    }
}

async fn serve(
    conn: tokio::net::TcpStream,
    state: &Mutex<State>,
    moved: &Notify,
    docs: &HashSet<String>,
) -> Result<()> {
    let (read, mut write) = conn.into_split();
    let mut reader = BufReader::new(read);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        let mut len = 0usize;
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).await? == 0 {
                return Ok(());
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    len = v.trim().parse()?;
                }
            }
        }
        let mut body = vec![0; len];
        reader.read_exact(&mut body).await?;
        let batch: Value = serde_json::from_slice(&body)?;
        let now = Instant::now();
        {
            let mut s = state.lock().unwrap();
            s.deliveries += 1;
            for e in batch["entries"].as_array().into_iter().flatten() {
                if e["docId"].as_str().is_some_and(|d| docs.contains(d)) {
                    s.backlog += 1;
                }
                let text = e["effects"][0]["block"]["content"].as_str();
                if text.is_some() && s.waiting.as_ref().map(|(t, _)| t.as_str()) == text {
                    if let Some((_, tx)) = s.waiting.take() {
                        let _ = tx.send(now);
                    }
                }
            }
        }
        moved.notify_waiters();
        write
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
            .await?;
    }
}
