//! The fan-out writer: one client typing into its own block at a fixed rate.
//!
//! Edits are made on a fixed schedule (`rate` per second), whatever the server does: an
//! open loop, so a slow server shows up as lag instead of as a lower offered rate. Like the
//! browser engine, the writer has one `/sync` in flight at a time; edits that fall due while
//! it waits go together in the next request (one `set_content` op each, so every edit is
//! one log entry). It runs on a thread and runtime of its own, so the readers' work in the
//! same process delays its timestamps as little as possible.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use docsync_actors::collab::order_key::n_keys_between;
use serde_json::{json, Value};

use crate::client::Api;
use crate::setup::{expect_applied, insert_op, new_id};
use crate::stats::micros;

/// At most this many due edits go into one request.
const MAX_OPS_PER_SYNC: usize = 50;

pub struct Writer {
    api: Api,
    doc_id: String,
    client_id: String,
    block_id: String,
    version: i64,
    last_seq: i64,
}

/// What the writer did in its window.
#[derive(Default)]
pub struct WriterRun {
    /// seq of every acknowledged edit → when the edit was made (its scheduled time).
    pub made: HashMap<i64, Instant>,
    pub ack_us: Vec<u64>,
    pub syncs: u64,
    pub conflicts: u64,
    pub errors: u64,
    /// The highest seq acknowledged.
    pub last_seq: i64,
    /// When the last reply arrived.
    pub ended: Option<Instant>,
}

impl Writer {
    /// Inserts the writer's block (holding its lease); not measured.
    pub async fn join(api: Api, doc_id: String) -> Result<Writer> {
        let mut writer = Writer {
            api,
            doc_id,
            client_id: new_id("cl_w_"),
            block_id: new_id("blk_"),
            version: 1,
            last_seq: 0,
        };
        let key = n_keys_between(None, None, 1)?.remove(0);
        let op = insert_op(&writer.block_id, None, &key, "the writer's line");
        let reply = writer.request(vec![op]).await?;
        expect_applied(&reply, 1)?;
        writer.last_seq = head_seq(&reply)?;
        Ok(writer)
    }

    /// The bullet the writer edits.
    pub fn block_id(&self) -> &str {
        &self.block_id
    }

    async fn request(&self, ops: Vec<Value>) -> Result<Value> {
        let body = json!({
            "clientId": self.client_id,
            "lastSeq": self.last_seq,
            "ops": ops,
            "leases": { "hold": [self.block_id] },
        });
        self.api.sync(&self.doc_id, &body).await
    }

    /// Makes `rate` edits per second from `start` until `start + window`.
    pub async fn run(mut self, rate: f64, start: Instant, window: Duration) -> WriterRun {
        let period = Duration::from_secs_f64(1.0 / rate);
        let end = start + window;
        let due = |i: u32| start + period * i;
        let mut run = WriterRun::default();
        let mut next = 0;
        while due(next) < end {
            tokio::time::sleep_until(due(next).into()).await;
            let now = Instant::now();
            let mut made = Vec::new();
            while due(next) <= now && due(next) < end && made.len() < MAX_OPS_PER_SYNC {
                made.push(due(next));
                next += 1;
            }
            self.send(&made, &mut run).await;
        }
        run
    }

    /// One request carrying one `set_content` per entry of `made`.
    async fn send(&mut self, made: &[Instant], run: &mut WriterRun) {
        let ops: Vec<Value> = (0..made.len() as i64)
            .map(|k| {
                json!({
                    "opId": new_id("op_"),
                    "kind": "set_content",
                    "blockId": self.block_id,
                    "content": format!("edit {}", self.version + k),
                    "baseVersion": self.version + k,
                })
            })
            .collect();
        let sent = Instant::now();
        let reply = self.request(ops).await;
        let acked = Instant::now();
        let reply = match reply {
            Ok(reply) => reply,
            Err(e) => {
                run.errors += 1;
                if run.errors <= 3 {
                    eprintln!("docsync-bench: writer sync failed: {e:#}");
                }
                return;
            }
        };
        run.syncs += 1;
        run.ack_us.push(micros(acked - sent));
        run.ended = Some(acked);
        let results = reply["results"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        for (result, made_at) in results.iter().zip(made) {
            match (result["status"].as_str(), result["seq"].as_i64()) {
                (Some("applied"), Some(seq)) => {
                    self.version += 1;
                    run.made.insert(seq, *made_at);
                    run.last_seq = run.last_seq.max(seq);
                }
                _ => run.conflicts += 1,
            }
        }
        if let Ok(head) = head_seq(&reply) {
            self.last_seq = self.last_seq.max(head);
        }
    }
}

fn head_seq(reply: &Value) -> Result<i64> {
    reply["headSeq"]
        .as_i64()
        .ok_or_else(|| anyhow!("sync reply without headSeq"))
}
