//! The history checker: proves from the outside that a run lost, duplicated and forked
//! nothing. A load generator records a Jepsen-shaped history — one JSON line per `invoke`,
//! `ok`, `fail` (definitely not applied) or `info` (unknown: a timeout, a lost answer) of an
//! op, plus every `observe` of a log entry (a `/sync` page, a wake-up) — and the checker
//! compares it with the final log of every document it names:
//!
//! - every acknowledged op is in the final log exactly once, at the `seq` its ack named;
//! - no op ID is in a document's log twice; an op that failed is not in it at all;
//! - no fork: every observation of a `(doc, seq)` names the op the final log has there;
//! - seqs are contiguous from the log floor to the head;
//! - real-time order: an op acknowledged before another was invoked has the lower `seq`;
//! - epochs (cluster mode) never decrease along `seq`.
//!
//! The lines carry Jepsen's fields (`index`, `time` in ns, `process`, `type`, `f`, `value`),
//! so Elle can be run on the same file elsewhere.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::sync::Mutex;
use std::time::Instant;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Type {
    Invoke,
    Ok,
    Fail,
    Info,
    Observe,
}

/// What an event is about: an op of a document and, when known, where it landed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Value {
    pub doc: String,
    pub op_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<i64>,
}

/// One line of a history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    pub index: u64,
    /// Nanoseconds since the recorder started.
    pub time: u64,
    pub process: String,
    #[serde(rename = "type")]
    pub kind: Type,
    /// `sync` for ops; `observe` events name where they saw the entry (`page`, `wake`).
    pub f: String,
    pub value: Value,
}

/// A history being recorded by several threads.
pub struct Recorder {
    start: Instant,
    events: Mutex<Vec<Event>>,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder {
            start: Instant::now(),
            events: Mutex::new(Vec::new()),
        }
    }
}

impl Recorder {
    pub fn record(&self, process: &str, kind: Type, f: &str, value: Value) {
        let time = self.start.elapsed().as_nanos() as u64;
        let mut ev = self.events.lock().unwrap_or_else(|e| e.into_inner());
        let index = ev.len() as u64;
        ev.push(Event {
            index,
            time,
            process: process.to_string(),
            kind,
            f: f.to_string(),
            value,
        });
    }

    pub fn events(&self) -> Vec<Event> {
        self.events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The history as JSON lines.
    pub fn write_jsonl(&self, mut out: impl Write) -> std::io::Result<()> {
        for e in self.events() {
            serde_json::to_writer(&mut out, &e)?;
            out.write_all(b"\n")?;
        }
        Ok(())
    }
}

/// Reads a history written by `Recorder::write_jsonl`.
pub fn read_jsonl(text: &str) -> Result<Vec<Event>, serde_json::Error> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect()
}

/// One entry of a document's final log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogRow {
    pub doc: String,
    pub seq: i64,
    pub op_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<i64>,
}

/// A document's final log as read back: its rows and its floor (entries at or below the
/// floor were compacted away and are not checked).
#[derive(Debug, Clone, Default)]
pub struct FinalLog {
    pub floor: i64,
    pub rows: Vec<LogRow>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    pub valid: bool,
    pub invoked: usize,
    pub acknowledged: usize,
    pub failed: usize,
    pub indeterminate: usize,
    /// Of the indeterminate ops, how many are in the log (applied though unanswered).
    pub indeterminate_applied: usize,
    pub observations: usize,
    pub log_entries: usize,
    pub violations: Vec<String>,
}

/// Checks `history` against the final logs (by document).
pub fn check(history: &[Event], logs: &BTreeMap<String, FinalLog>) -> Verdict {
    let mut v = Verdict::default();
    let mut violations = Vec::new();
    let mut bad = |s: String| v_push(&mut violations, s);
    // (doc, op) → seq in the final log; (doc, seq) → op.
    let mut where_op: HashMap<(&str, &str), i64> = HashMap::new();
    let mut at_seq: HashMap<(&str, i64), &str> = HashMap::new();
    let mut entries = 0;
    for (doc, log) in logs {
        let mut rows: Vec<&LogRow> = log.rows.iter().filter(|r| r.seq > log.floor).collect();
        rows.sort_by_key(|r| r.seq);
        entries += rows.len();
        let mut expect = log.floor + 1;
        let mut last_epoch: Option<i64> = None;
        for r in rows {
            if r.seq != expect {
                bad(format!(
                    "{doc}: seq {} follows {} (a gap or a repeat)",
                    r.seq,
                    expect - 1
                ));
            }
            expect = r.seq + 1;
            if let (Some(prev), Some(e)) = (last_epoch, r.epoch) {
                if e < prev {
                    bad(format!(
                        "{doc}: epoch goes down at seq {} ({prev} → {e})",
                        r.seq
                    ));
                }
            }
            last_epoch = r.epoch.or(last_epoch);
            if let Some(first) = where_op.insert((doc.as_str(), r.op_id.as_str()), r.seq) {
                bad(format!(
                    "{doc}: op {} is in the log twice (seq {first} and {})",
                    r.op_id, r.seq
                ));
            }
            at_seq.insert((doc.as_str(), r.seq), r.op_id.as_str());
        }
    }
    v.log_entries = entries;

    // Each op's invoke and completion.
    struct Op<'a> {
        invoked: Option<u64>,
        done: Option<(Type, u64, Option<i64>)>,
        doc: &'a str,
    }
    let mut ops: BTreeMap<(&str, &str), Op> = BTreeMap::new();
    for e in history {
        let key = (e.value.doc.as_str(), e.value.op_id.as_str());
        match e.kind {
            Type::Invoke => {
                v.invoked += 1;
                let op = ops.entry(key).or_insert(Op {
                    invoked: None,
                    done: None,
                    doc: key.0,
                });
                op.invoked.get_or_insert(e.time);
            }
            Type::Ok | Type::Fail | Type::Info => {
                let op = ops.entry(key).or_insert(Op {
                    invoked: None,
                    done: None,
                    doc: key.0,
                });
                // A later definite answer (a retry acknowledged) beats an earlier unknown.
                let better = matches!(
                    (&op.done, e.kind),
                    (None, _) | (Some((Type::Info, ..)), Type::Ok | Type::Fail)
                );
                if better {
                    op.done = Some((e.kind, e.time, e.value.seq));
                }
            }
            Type::Observe => {
                v.observations += 1;
                let Some(seq) = e.value.seq else { continue };
                let Some(log) = logs.get(key.0) else {
                    bad(format!(
                        "{}: observed op {} at seq {seq} but no final log was read",
                        key.0, key.1
                    ));
                    continue;
                };
                if seq <= log.floor {
                    continue;
                }
                match at_seq.get(&(key.0, seq)) {
                    Some(op) if *op == key.1 => {}
                    Some(op) => bad(format!(
                        "{}: fork at seq {seq}: observed {} ({}), the final log has {op}",
                        key.0, key.1, e.f
                    )),
                    None => bad(format!(
                        "{}: observed {} at seq {seq} ({}), which the final log does not have",
                        key.0, key.1, e.f
                    )),
                }
            }
        }
    }

    let floor = |doc: &str| logs.get(doc).map_or(0, |l| l.floor);
    let mut acked: Vec<(u64, u64, &str, i64)> = Vec::new();
    for ((doc, op_id), op) in &ops {
        let in_log = where_op.get(&(*doc, *op_id)).copied();
        match op.done {
            Some((Type::Ok, at, seq)) => {
                v.acknowledged += 1;
                match (seq, in_log) {
                    (Some(s), _) if s <= floor(doc) => {}
                    (Some(s), Some(l)) if s == l => {}
                    (Some(s), Some(l)) => bad(format!(
                        "{doc}: op {op_id} acknowledged at seq {s} but is at {l}"
                    )),
                    (Some(s), None) => {
                        bad(format!("{doc}: op {op_id} acknowledged at seq {s} is lost"))
                    }
                    (None, Some(l)) => bad(format!(
                        "{doc}: op {op_id} acknowledged without a seq is at {l}"
                    )),
                    (None, None) => {}
                }
                if let (Some(inv), Some(s)) = (op.invoked, seq) {
                    acked.push((inv, at, op.doc, s));
                }
            }
            Some((Type::Fail, ..)) => {
                v.failed += 1;
                if let Some(l) = in_log {
                    bad(format!(
                        "{doc}: op {op_id} failed but is in the log at seq {l}"
                    ));
                }
            }
            Some((Type::Info, ..)) | None => {
                v.indeterminate += 1;
                v.indeterminate_applied += usize::from(in_log.is_some());
            }
            Some((Type::Invoke | Type::Observe, ..)) => {}
        }
    }
    // Real-time order: acknowledged before another was invoked ⇒ a lower seq (per document).
    // Sorted by ack time, a sweep keeps the highest seq acknowledged so far.
    let mut by_doc: HashMap<&str, Vec<(u64, u64, i64)>> = HashMap::new();
    for (inv, at, doc, seq) in acked {
        by_doc.entry(doc).or_default().push((inv, at, seq));
    }
    for (doc, mut list) in by_doc {
        let mut by_invoke = list.clone();
        by_invoke.sort_by_key(|x| x.0);
        list.sort_by_key(|x| x.1);
        let mut done = 0;
        let mut highest: Option<(i64, u64)> = None;
        for (inv, _, seq) in by_invoke {
            while done < list.len() && list[done].1 < inv {
                let (_, at, s) = list[done];
                if highest.is_none_or(|(h, _)| s > h) {
                    highest = Some((s, at));
                }
                done += 1;
            }
            if let Some((h, _)) = highest {
                if seq <= h {
                    bad(format!(
                        "{doc}: an op invoked after seq {h} was acknowledged landed at seq {seq}"
                    ));
                }
            }
        }
    }
    v.violations = violations;
    v.valid = v.violations.is_empty();
    v
}

fn v_push(list: &mut Vec<String>, s: String) {
    // Keep the report readable: the first 100 are enough to see what broke.
    if list.len() < 100 {
        list.push(s);
    }
}

#[cfg(test)]
#[path = "history_check_tests.rs"]
mod tests;
