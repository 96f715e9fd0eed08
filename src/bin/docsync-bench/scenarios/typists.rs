//! `typists`: people typing at once in one document, each in a bullet of their own, sending
//! the way the browser engine sends (PROTOCOL §7): a key every `1 / KEYS_PER_S` s; one `/sync`
//! in flight; the bullet's text typed so far merged into one `set_content` (baseVersion of the
//! first unsent change) with the lease held. Each typist also has a WebSocket joined to the
//! document, as every open editor does, and follows the head it announces (so its `/sync`
//! replies carry few entries, as the engine's do when wake-ups bring the entries).
//!
//! Two sending rules, one line each: `throttle_100ms` (now: a change goes at once when the
//! line is idle, else 100 ms after the previous send) and `batch_300ms` (the original design:
//! 300 ms after the first unsent change). Figures: `/sync` per second per typist, keys per
//! `/sync`, server CPU (share of one core, and per key), acknowledgement latency, wake-ups.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use docsync_actors::collab::order_key::n_keys_between;
use futures::StreamExt;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

use crate::client::Api;
use crate::process::CpuMeter;
use crate::setup::{expect_applied, in_parallel, insert_op, new_id};
use crate::stats::{micros, percentiles, round3, Line};

pub const TYPISTS: usize = 50;
/// Keys per second of each typist: steady fast typing (about 300 characters a minute), and a
/// burst faster than the throttle (where it must hold a typist to ~10 `/sync` a second).
pub const KEY_RATES: [u32; 2] = [5, 12];
const TEXT: &str = "the quick brown fox jumps over the lazy dog and types on ";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Leading edge, then throttled: the engine's rule now.
    Throttle100,
    /// The original design's batch: 300 ms after the first unsent change.
    Batch300,
}

impl Rule {
    pub fn name(self) -> &'static str {
        match self {
            Rule::Throttle100 => "throttle_100ms",
            Rule::Batch300 => "batch_300ms",
        }
    }

    /// When the next `/sync` may leave: `first_unsent` is when the oldest change not yet sent
    /// was made, `last_send` when the previous `/sync` left.
    fn due(self, first_unsent: Instant, last_send: Option<Instant>) -> Instant {
        match self {
            Rule::Throttle100 => match last_send {
                Some(t) => first_unsent.max(t + Duration::from_millis(100)),
                None => first_unsent,
            },
            Rule::Batch300 => first_unsent + Duration::from_millis(300),
        }
    }
}

#[derive(Default)]
struct Counts {
    syncs: u64,
    keys_sent: u64,
    conflicts: u64,
    errors: u64,
    latencies_us: Vec<u64>,
}

pub async fn run(
    api: &Api,
    rule: Rule,
    keys_per_s: u32,
    duration: Duration,
    pid: Option<u32>,
) -> Result<Line> {
    let doc = api
        .create_doc(&format!("bench typists {}", rule.name()))
        .await?;
    let keys = n_keys_between(None, None, TYPISTS)?;
    // Setup (not measured): each typist's bullet, and its WebSocket joined.
    let typists = in_parallel(keys.into_iter().enumerate().collect(), |(i, key)| {
        let doc = doc.clone();
        async move {
            let client_id = new_id("cl_");
            let block_id = new_id("blk_");
            let body = json!({
                "clientId": client_id,
                "lastSeq": 0,
                "ops": [insert_op(&block_id, None, &key, &format!("typist {i}: "))],
                "leases": { "hold": [block_id] },
            });
            expect_applied(&api.sync(&doc, &body).await?, 1)?;
            let ws = api.ws_join(&doc).await?;
            Ok((client_id, block_id, ws))
        }
    })
    .await?;
    let head = Arc::new(AtomicI64::new(0));
    let wakeups = Arc::new(AtomicU64::new(0));
    let cpu = CpuMeter::start(pid);
    let start = Instant::now();
    let deadline = start + duration;
    let mut tasks = Vec::new();
    for (client_id, block_id, ws) in typists {
        let (head, wakeups) = (head.clone(), wakeups.clone());
        tokio::spawn(follow(ws, head.clone(), wakeups, deadline));
        let (api, doc) = (api.clone(), doc.clone());
        tasks.push(tokio::spawn(async move {
            let pace = Pace {
                rule,
                keys_per_s: f64::from(keys_per_s),
                start,
                deadline,
            };
            type_until(&api, &doc, &client_id, &block_id, pace, &head).await
        }));
    }
    let mut all = Counts::default();
    for t in tasks {
        let c = t.await?;
        all.syncs += c.syncs;
        all.keys_sent += c.keys_sent;
        all.conflicts += c.conflicts;
        all.errors += c.errors;
        all.latencies_us.extend(c.latencies_us);
    }
    let secs = start.elapsed().as_secs_f64();
    let cpu_s = cpu.elapsed();
    let n = TYPISTS as f64;
    let line = super::Scenario::Typists(rule, keys_per_s)
        .line()
        .with("typists", TYPISTS)
        .with(
            "syncs_per_s_per_typist",
            round3(all.syncs as f64 / secs / n),
        )
        .with(
            "keys_per_sync",
            round3(all.keys_sent as f64 / all.syncs.max(1) as f64),
        )
        .with(
            "server_cpu_share_of_one_core",
            cpu_s.map(|c| round3(c / secs)),
        )
        .with(
            "server_cpu_us_per_key",
            cpu_s.map(|c| round3(c * 1e6 / all.keys_sent.max(1) as f64)),
        )
        .with(
            "server_cpu_us_per_sync",
            cpu_s.map(|c| round3(c * 1e6 / all.syncs.max(1) as f64)),
        )
        .with(
            "wakeups_per_s_per_typist",
            round3(wakeups.load(Ordering::Relaxed) as f64 / secs / n),
        )
        .with("conflicts", all.conflicts)
        .with("errors", all.errors);
    Ok(line.append(percentiles(&mut all.latencies_us)))
}

/// Counts the wake-ups of one WebSocket and keeps the highest head it announced.
async fn follow(
    mut ws: crate::client::WebSocket,
    head: Arc<AtomicI64>,
    wakeups: Arc<AtomicU64>,
    deadline: Instant,
) {
    while let Ok(Some(Ok(msg))) = tokio::time::timeout_at(deadline.into(), ws.next()).await {
        let Message::Text(text) = msg else { continue };
        let Ok(v) = serde_json::from_str::<Value>(text.as_str()) else {
            continue;
        };
        if v["type"] == "DOC_SEQ" {
            wakeups.fetch_add(1, Ordering::Relaxed);
            if let Some(h) = v["headSeq"].as_i64() {
                head.fetch_max(h, Ordering::Relaxed);
            }
        }
    }
}

/// How a typist types and sends.
#[derive(Clone, Copy)]
struct Pace {
    rule: Rule,
    keys_per_s: f64,
    start: Instant,
    deadline: Instant,
}

/// One typist: keys at a steady rate, sent by the rule, one `/sync` in flight.
async fn type_until(
    api: &Api,
    doc: &str,
    client_id: &str,
    block_id: &str,
    pace: Pace,
    head: &AtomicI64,
) -> Counts {
    let Pace {
        rule,
        keys_per_s,
        start,
        deadline,
    } = pace;
    let key_every = Duration::from_secs_f64(1.0 / keys_per_s);
    let mut c = Counts::default();
    let (mut version, mut sent_keys, mut last_send) = (1_i64, 0_u64, None);
    loop {
        let now = Instant::now();
        if now >= deadline {
            return c;
        }
        let typed = (now - start).as_secs_f64() * keys_per_s;
        let typed = typed as u64;
        if typed == sent_keys {
            // Nothing unsent: wait for the next key.
            tokio::time::sleep_until((start + key_every * (typed as u32 + 1)).into()).await;
            continue;
        }
        let first_unsent = start + key_every * (sent_keys as u32 + 1);
        let due = rule.due(first_unsent, last_send);
        if now < due {
            tokio::time::sleep_until(due.into()).await;
            continue;
        }
        let content: String = TEXT.chars().cycle().take(typed as usize % 400).collect();
        let body = json!({
            "clientId": client_id,
            "lastSeq": head.load(Ordering::Relaxed),
            "ops": [{
                "opId": new_id("op_"), "kind": "set_content", "blockId": block_id,
                "content": format!("{client_id} {content}"), "baseVersion": version,
            }],
            "leases": { "hold": [block_id] },
        });
        last_send = Some(now);
        let sent = Instant::now();
        match api.sync(doc, &body).await {
            Ok(reply) => {
                c.latencies_us.push(micros(sent.elapsed()));
                c.syncs += 1;
                c.keys_sent += typed - sent_keys;
                sent_keys = typed;
                match reply["results"][0]["status"].as_str() {
                    Some("applied") => version += 1,
                    Some("conflict") => c.conflicts += 1,
                    _ => {}
                }
                if let Some(h) = reply["headSeq"].as_i64() {
                    head.fetch_max(h, Ordering::Relaxed);
                }
            }
            Err(e) => {
                c.errors += 1;
                if c.errors <= 3 {
                    eprintln!("docsync-bench: typist sync error: {e:#}");
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}
