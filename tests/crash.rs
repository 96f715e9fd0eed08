//! Durability: SIGKILL the real server in the middle of a stream of syncs, restart it, and
//! find every acknowledged op, a log that replays to the snapshot, and a sound database.
//! Also: a panicking document actor is rebuilt from the database without losing anything.

use crate::common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use common::*;
use docsync::history_check::{self, FinalLog, LogRow, Recorder, Type};
use serde_json::{json, Value};

#[derive(Default)]
struct Acked {
    /// opId → (blockId, content) of every acknowledged insert / set_content.
    ops: BTreeMap<String, (String, String, String)>,
}

/// Acknowledged ops before the kill: enough for every worker to have written several times
/// (the kill then lands while all six keep requests in flight).
const ACKED_BEFORE_KILL: usize = 120;

#[test]
fn sigkill_mid_stream_loses_nothing_acknowledged() {
    let mut srv = TestServer::start();
    let token = srv.add_user("writer");
    let docs: Vec<String> = (0..3)
        .map(|i| srv.create_doc(&token, &format!("doc {i}")))
        .collect();
    let acked = Arc::new((Mutex::new(Acked::default()), Condvar::new()));
    // Every op's invoke and answer, and every entry a reply showed: the history checker's
    // input (what was acknowledged must be in the final log exactly once, where the ack said).
    let history = Arc::new(Recorder::default());
    let stop = Arc::new(AtomicBool::new(false));
    let base = srv.url("");
    let mut workers = Vec::new();
    for w in 0..6 {
        let doc = docs[w % docs.len()].clone();
        let token = token.clone();
        let acked = acked.clone();
        let history = history.clone();
        let stop = stop.clone();
        let base = base.clone();
        workers.push(std::thread::spawn(move || {
            let process = format!("w{w}");
            let event = |op_id: &str, seq: Option<i64>| history_check::Value {
                doc: doc.clone(),
                op_id: op_id.to_string(),
                seq,
                epoch: None,
            };
            let client = reqwest::blocking::Client::builder()
                .timeout(Duration::from_secs(5))
                .build()
                .unwrap();
            let client_id = format!("cl_w{w}");
            let blk = id("blk_");
            let mut version = 0;
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let content = format!("worker {w} edit {n}");
                let op = if version == 0 {
                    insert(&blk, None, "a0", &content)
                } else {
                    set_content(&blk, &content, version)
                };
                let op_id = op["opId"].as_str().unwrap().to_string();
                let body = json!({"clientId": client_id, "lastSeq": 0, "ops": [op]});
                history.record(&process, Type::Invoke, "sync", event(&op_id, None));
                let answer = client
                    .post(format!("{base}/api/v1/docs/{doc}/sync"))
                    .bearer_auth(&token)
                    .json(&body)
                    .send()
                    .ok()
                    .filter(|r| r.status() == 200)
                    .and_then(|r| r.json::<Value>().ok());
                let Some(v) = answer else {
                    // Server gone mid-request: whether it applied the op is unknown.
                    history.record(&process, Type::Info, "sync", event(&op_id, None));
                    break;
                };
                assert_eq!(v["results"][0]["status"], "applied", "{v}");
                history.record(
                    &process,
                    Type::Ok,
                    "sync",
                    event(&op_id, v["results"][0]["seq"].as_i64()),
                );
                for e in v["ops"].as_array().into_iter().flatten() {
                    let seen = event(e["opId"].as_str().unwrap_or_default(), e["seq"].as_i64());
                    history.record(&process, Type::Observe, "page", seen);
                }
                version += 1;
                let (lock, more) = &*acked;
                lock.lock()
                    .unwrap()
                    .ops
                    .insert(op_id, (doc.clone(), blk.clone(), content));
                more.notify_all();
            }
        }));
    }
    // Kill once enough is acknowledged (a count, not a time: the same stream on a fast or
    // a loaded machine). The bound only keeps a broken server from hanging the test.
    {
        let (lock, more) = &*acked;
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut a = lock.lock().unwrap();
        while a.ops.len() < ACKED_BEFORE_KILL {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero() && !workers.iter().all(|w| w.is_finished()),
                "only {} ops acknowledged before the workers stopped or 60 s passed",
                a.ops.len()
            );
            // Woken by every ack; the slice only re-checks that workers still run.
            a = more
                .wait_timeout(a, left.min(Duration::from_millis(200)))
                .unwrap()
                .0;
        }
    }
    srv.kill9();
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.join().unwrap();
    }
    let acked = std::mem::take(&mut acked.0.lock().unwrap().ops);
    assert!(acked.len() >= ACKED_BEFORE_KILL);

    srv.restart_after_kill();
    {
        let db = srv.db();
        let ok: String = db
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok");
        let mut stmt = db
            .prepare("SELECT count(*) FROM doc_op_results WHERE doc_id = ?1 AND op_id = ?2")
            .unwrap();
        for (op, (doc, _, _)) in &acked {
            let n: i64 = stmt.query_row([doc, op], |r| r.get(0)).unwrap();
            assert_eq!(n, 1, "acknowledged op {op} is missing after the crash");
        }
    }
    // The newest acknowledged text of every block is at least as new as what was acked,
    // and the log replays exactly to the snapshot.
    let mut final_logs = BTreeMap::new();
    for doc in &docs {
        let snap = srv.snapshot(&token, doc);
        let blocks = snapshot_blocks(&snap);
        for (doc_id, blk, content) in acked.values() {
            if doc_id != doc {
                continue;
            }
            let b = blocks
                .get(blk)
                .unwrap_or_else(|| panic!("block {blk} lost"));
            let have = b["content"].as_str().unwrap();
            let n_have: u64 = have.rsplit(' ').next().unwrap().parse().unwrap();
            let n_acked: u64 = content.rsplit(' ').next().unwrap().parse().unwrap();
            assert!(
                n_have >= n_acked,
                "block {blk} went back from {content:?} to {have:?}"
            );
        }
        let r = srv.sync_ok(&token, doc, "cl_check", 0, vec![]);
        let mut entries: Vec<Value> = r["ops"].as_array().unwrap().clone();
        let mut last = entries.len() as i64;
        let mut more = r["hasMore"].as_bool().unwrap();
        while more {
            let r = srv.sync_ok(&token, doc, "cl_check", last, vec![]);
            let page = r["ops"].as_array().unwrap();
            last += page.len() as i64;
            entries.extend(page.iter().cloned());
            more = r["hasMore"].as_bool().unwrap();
        }
        let mut replayed = BTreeMap::new();
        let mut title = String::new();
        replay(&mut replayed, &mut title, &entries);
        assert_eq!(
            replayed, blocks,
            "log replay differs from snapshot for {doc}"
        );
        assert_eq!(snap["headSeq"].as_i64().unwrap(), entries.len() as i64);
        final_logs.insert(
            doc.clone(),
            FinalLog {
                floor: 0,
                rows: entries
                    .iter()
                    .map(|e| LogRow {
                        doc: doc.clone(),
                        seq: e["seq"].as_i64().unwrap(),
                        op_id: e["opId"].as_str().unwrap().to_string(),
                        epoch: None,
                    })
                    .collect(),
            },
        );
    }
    let verdict = history_check::check(&history.events(), &final_logs);
    assert!(verdict.valid, "history check: {:#?}", verdict.violations);
    assert!(
        verdict.acknowledged >= ACKED_BEFORE_KILL && verdict.observations > 0,
        "{verdict:?}"
    );
    // The same through the command operators use, reading the logs from the server.
    let file = srv.dir.path().join("history.jsonl");
    history
        .write_jsonl(std::fs::File::create(&file).unwrap())
        .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_docsync-check"))
        .args([
            "--history",
            file.to_str().unwrap(),
            "--server",
            &srv.url(""),
            "--token",
            &token,
        ])
        .output()
        .unwrap();
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert!(
        out.status.success(),
        "docsync-check: {printed} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(printed["acknowledged"], verdict.acknowledged);
}

#[test]
fn panicking_actor_is_rebuilt_from_the_database() {
    let srv = TestServer::start_with(&[("DOCSYNC_TESTING__PANIC_MARKER", "__boom__")]);
    let token = srv.add_user("alice");
    let doc = srv.create_doc(&token, "Fragile");
    let blk = id("blk_");
    let r = srv.sync_ok(
        &token,
        &doc,
        "cl_a",
        0,
        vec![insert(&blk, None, "a0", "kept")],
    );
    assert_eq!(r["results"][0]["status"], "applied");
    let (s, v) = srv.sync(
        &token,
        &doc,
        &json!({"clientId": "cl_a", "lastSeq": 1, "ops": [set_content(&blk, "__boom__", 1)]}),
    );
    assert_eq!(s, 500, "{v}");
    assert_eq!(v["error"]["code"], "internal");
    // The next request is served by a fresh actor that reloaded the acknowledged state.
    let r = srv.sync_ok(
        &token,
        &doc,
        "cl_a",
        1,
        vec![set_content(&blk, "kept and edited", 1)],
    );
    assert_eq!(r["results"][0]["status"], "applied");
    assert_eq!(r["results"][0]["seq"], 2);
    let snap = srv.snapshot(&token, &doc);
    assert_eq!(snap["blocks"][0]["content"], "kept and edited");
    assert_eq!(snap["headSeq"], 2);
}
