//! A simulated editor tab that keeps editing its own block (hot_doc, many_docs, wakeup,
//! compaction), and running many of them at once.

use std::time::{Duration, Instant};

use anyhow::Result;
use docsync_actors::collab::order_key::n_keys_between;
use serde_json::{json, Value};

use crate::client::Api;
use crate::process::{rss_kib, CpuMeter};
use crate::setup::{expect_applied, in_parallel, insert_op, new_id};
use crate::stats::{micros, percentiles, round3, Line, Stats};

/// One acknowledged sync: when it was sent and answered, and the headSeq it answered with.
#[derive(Clone, Copy)]
pub struct Timed {
    pub sent: Instant,
    pub acked: Instant,
    pub head_seq: i64,
}

impl Timed {
    pub fn latency_us(&self) -> u64 {
        micros(self.acked - self.sent)
    }
}

/// One simulated editor tab: its own block in a document, the version it last saw.
pub struct Editor {
    api: Api,
    doc_id: String,
    client_id: String,
    block_id: String,
    version: i64,
    last_seq: i64,
    edits: u64,
}

impl Editor {
    /// Joins `doc_id` and inserts the editor's block (setup; not measured).
    pub async fn join(api: Api, doc_id: String, index: usize) -> Result<Editor> {
        let mut editor = Editor {
            api,
            doc_id,
            client_id: new_id("cl_"),
            block_id: new_id("blk_"),
            version: 1,
            last_seq: 0,
            edits: 0,
        };
        // Client `index` takes the `index`-th top-level key, so the blocks of one document
        // get distinct keys without coordination.
        let key = n_keys_between(None, None, index + 1)?
            .pop()
            .expect("one key");
        let op = insert_op(&editor.block_id, None, &key, &format!("client {index}"));
        let reply = editor.request(vec![op]).await?;
        expect_applied(&reply, 1)?;
        editor.absorb(&reply);
        Ok(editor)
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

    /// Follows the log (`lastSeq`) and the own block's version from a sync reply.
    fn absorb(&mut self, reply: &Value) {
        let entries = reply["ops"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        let has_more = reply["hasMore"].as_bool().unwrap_or(false);
        let last_entry = entries.last().and_then(|e| e["seq"].as_i64());
        self.last_seq = match (has_more, last_entry) {
            (true, Some(seq)) => seq,
            _ => reply["headSeq"].as_i64().unwrap_or(self.last_seq),
        };
        // Log effects carry the resulting block, so they are authoritative for the version.
        for effect in entries
            .iter()
            .flat_map(|e| e["effects"].as_array().into_iter().flatten())
        {
            let block = &effect["block"];
            if block["id"] == self.block_id.as_str() {
                if let Some(v) = block["version"].as_i64() {
                    self.version = v;
                }
            }
        }
    }

    /// One `set_content` on the own block, timed. A failure is counted in `stats` (and
    /// followed by a short pause, so a failing server is not hammered).
    pub async fn edit_once(&mut self, stats: &mut Stats) -> Option<Timed> {
        self.edits += 1;
        let op = json!({
            "opId": new_id("op_"),
            "kind": "set_content",
            "blockId": self.block_id,
            "content": format!("{} edit {}", self.client_id, self.edits),
            "baseVersion": self.version,
        });
        let sent = Instant::now();
        let reply = self.request(vec![op]).await;
        let acked = Instant::now();
        match reply {
            Ok(reply) => {
                stats.latencies_us.push(micros(acked - sent));
                stats.acked_syncs += 1;
                self.count_results(&reply, stats);
                self.absorb(&reply);
                let head_seq = reply["headSeq"].as_i64().unwrap_or(self.last_seq);
                Some(Timed {
                    sent,
                    acked,
                    head_seq,
                })
            }
            Err(e) => {
                stats.errors += 1;
                if stats.errors <= 3 {
                    eprintln!("docsync-bench: sync error on {}: {e:#}", self.doc_id);
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
                None
            }
        }
    }

    /// Edits until `deadline`, one request in flight at a time.
    async fn edit_until(mut self, deadline: Instant) -> Stats {
        let mut stats = Stats::default();
        while Instant::now() < deadline {
            self.edit_once(&mut stats).await;
        }
        stats
    }

    /// Edits back to back while `more()` says so; returns the acknowledged syncs.
    pub async fn edit_while(
        &mut self,
        stats: &mut Stats,
        mut more: impl FnMut() -> bool,
    ) -> Vec<Timed> {
        let mut timed = Vec::new();
        while more() {
            timed.extend(self.edit_once(stats).await);
        }
        timed
    }

    fn count_results(&mut self, reply: &Value, stats: &mut Stats) {
        for result in reply["results"].as_array().into_iter().flatten() {
            stats.ops += 1;
            if result["status"] == "applied" {
                if !result["seq"].is_null() {
                    self.version += 1;
                }
            } else {
                stats.conflicts += 1;
                if stats.conflicts <= 3 {
                    eprintln!("docsync-bench: non-applied result: {result}");
                }
            }
        }
    }
}

/// What a group of editors did in the measured window, and the server's CPU time in it.
pub struct EditorsRun {
    pub stats: Stats,
    pub secs: f64,
    pub server_cpu_s: Option<f64>,
}

/// Joins one editor per entry of `doc_ids`, then lets them all edit for `duration`; the
/// server's CPU time (`pid`, from its own rusage) is taken over the editing only.
pub async fn run_editors(
    api: &Api,
    doc_ids: Vec<String>,
    duration: Duration,
    pid: Option<u32>,
) -> Result<EditorsRun> {
    let setups = doc_ids.into_iter().enumerate().collect();
    let editors = in_parallel(setups, |(i, d)| Editor::join(api.clone(), d, i)).await?;
    let cpu = CpuMeter::start(pid);
    let started = Instant::now();
    let deadline = started + duration;
    let tasks: Vec<_> = editors
        .into_iter()
        .map(|e| tokio::spawn(e.edit_until(deadline)))
        .collect();
    let mut stats = Stats::default();
    for task in tasks {
        stats.merge(task.await?);
    }
    Ok(EditorsRun {
        stats,
        secs: started.elapsed().as_secs_f64(),
        server_cpu_s: cpu.elapsed(),
    })
}

/// The figures of `run` after the scenario's `line`. `server_cpu_ms_per_op`: the server's
/// CPU time in the window over the op results it returned (every op acknowledged).
pub fn editors_line(line: Line, clients: usize, run: EditorsRun, pid: Option<u32>) -> Line {
    let EditorsRun {
        mut stats,
        secs,
        server_cpu_s,
    } = run;
    let per_op = server_cpu_s
        .filter(|_| stats.ops > 0)
        .map(|cpu| round3(cpu * 1000.0 / stats.ops as f64));
    line.with("clients", clients)
        .with("duration_s", round3(secs))
        .with("acked_syncs", stats.acked_syncs)
        .with("syncs_per_s", round3(stats.acked_syncs as f64 / secs))
        .with("ops_per_s", round3(stats.ops as f64 / secs))
        .append(percentiles(&mut stats.latencies_us))
        .with("conflicts", stats.conflicts)
        .with("errors", stats.errors)
        .with("server_cpu_s", server_cpu_s.map(round3))
        .with("server_cpu_ms_per_op", per_op)
        .with("server_rss_kib", rss_kib(pid))
}
