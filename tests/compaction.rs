//! Compaction (PROTOCOL §6) end to end over real HTTP, with the server's clock moved through
//! `POST /api/v1/testing/clock` instead of waiting: every retention rule one second before and
//! one second after its boundary, late edits to purged blocks and to tombstones, clients
//! behind the log floor (`resync`), editors applying `purge` entries, and compaction passes
//! running while several clients sync.

use crate::common;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use common::*;
use serde_json::{json, Value};

const SEC: i64 = 1_000;
const DAY: i64 = 86_400_000;

/// A server whose clock only moves when told to and that compacts only when asked.
fn manual_server() -> (TestServer, String) {
    let srv = TestServer::start_with(&[
        ("DOCSYNC_TESTING__CLOCK", "manual"),
        ("DOCSYNC_COMPACTION__RUN_AT_START", "false"),
    ]);
    let admin = srv.add_admin("root");
    (srv, admin)
}

/// Moves the server's clock forward by `ms`; returns the server's time now.
fn advance(srv: &TestServer, ms: i64) -> i64 {
    srv.advance_clock(ms)
}

/// Moves the server's clock forward to exactly `target`.
fn advance_to(srv: &TestServer, target: i64) {
    let now = advance(srv, 0);
    assert!(now <= target, "clock is already past the target");
    assert_eq!(advance(srv, target - now), target);
}

/// Runs one compaction pass; returns its summary.
fn compact(srv: &TestServer, admin: &str) -> Value {
    let (s, v) = srv.post(admin, "/api/v1/admin/compact", &json!({}));
    assert_eq!(s, 200, "compact: {v}");
    assert_eq!(v["failed"], 0, "a document failed to compact: {v}");
    v
}

fn n(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn user_id(srv: &TestServer, token: &str) -> String {
    let (s, v) = srv.get(token, "/api/v1/me");
    assert_eq!(s, 200, "me: {v}");
    v["id"].as_str().expect("user id").to_string()
}

fn share_with(srv: &TestServer, owner: &str, doc: &str, user: &str) {
    let (s, v) = srv.put(
        owner,
        &format!("/api/v1/docs/{doc}/shares"),
        &json!([{"kind": "user", "id": user, "access": "read"}]),
    );
    assert_eq!(s, 200, "share: {v}");
}

fn delete_op(block: &str) -> Value {
    json!({"opId": id("op_"), "kind": "delete", "blockId": block})
}

fn restore_op(block: &str) -> Value {
    json!({"opId": id("op_"), "kind": "restore", "blockId": block})
}

/// Every log entry after `last_seq` (all pages); `None` when the server says `resync`.
fn pull(
    srv: &TestServer,
    token: &str,
    doc: &str,
    client: &str,
    mut last_seq: i64,
) -> Option<Vec<Value>> {
    let mut out = Vec::new();
    loop {
        let r = srv.sync_ok(token, doc, client, last_seq, vec![]);
        if r["resync"] == true {
            assert!(
                r["ops"].as_array().is_none_or(|o| o.is_empty()),
                "resync carries no ops: {r}"
            );
            return None;
        }
        for e in r["ops"].as_array().unwrap() {
            assert_eq!(n(&e["seq"]), last_seq + 1, "gap in the log: {e}");
            last_seq += 1;
            out.push(e.clone());
        }
        if r["hasMore"] != true {
            return Some(out);
        }
    }
}

/// The seqs of the document's rows in `doc_ops`, ascending. Checks on the way that the index
/// of which entries changed which bullet names only entries still in the log.
fn db_seqs(srv: &TestServer, doc: &str) -> Vec<i64> {
    let db = srv.db();
    let orphans: i64 = db
        .query_row(
            "SELECT count(*) FROM block_changes c WHERE c.doc_id = ?1 AND NOT EXISTS
               (SELECT 1 FROM doc_ops o WHERE o.doc_id = c.doc_id AND o.seq = c.seq)",
            [doc],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(orphans, 0, "block_changes outlived their log entries");
    let mut stmt = db
        .prepare("SELECT seq FROM doc_ops WHERE doc_id = ?1 ORDER BY seq")
        .unwrap();
    stmt.query_map([doc], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn db_result(srv: &TestServer, doc: &str, op: &str) -> Option<(Value, i64)> {
    let db = srv.db();
    let mut stmt = db
        .prepare("SELECT result, at FROM doc_op_results WHERE doc_id = ?1 AND op_id = ?2")
        .unwrap();
    let mut rows = stmt
        .query_map([doc, op], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
        })
        .unwrap();
    rows.next()
        .map(|r| r.unwrap())
        .map(|(s, at)| (serde_json::from_str(&s).unwrap(), at))
}

/// `base` (a snapshot) with `entries` replayed on top must equal a fresh snapshot.
fn assert_replays_to_server(
    srv: &TestServer,
    token: &str,
    doc: &str,
    base: &Value,
    entries: &[Value],
) {
    let mut blocks = snapshot_blocks(base);
    let mut title = base["title"].as_str().unwrap().to_string();
    replay(&mut blocks, &mut title, entries);
    let fresh = srv.snapshot(token, doc);
    let head = entries.last().map_or(n(&base["headSeq"]), |e| n(&e["seq"]));
    assert_eq!(head, n(&fresh["headSeq"]), "replayed up to the head");
    assert_eq!(title, fresh["title"].as_str().unwrap());
    assert_eq!(
        blocks,
        snapshot_blocks(&fresh),
        "snapshot + log replay differs from the server's state"
    );
}

/// Inserts one block and returns the `at` of its log entry (the server's clock then).
fn insert_at(srv: &TestServer, token: &str, doc: &str, block: &str, key: &str) -> (i64, i64) {
    let r = srv.sync_ok(
        token,
        doc,
        "cl_setup",
        0,
        vec![insert(block, None, key, "text")],
    );
    assert_eq!(r["results"][0]["status"], "applied", "{r}");
    let seq = n(&r["results"][0]["seq"]);
    let e = r["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| n(&e["seq"]) == seq)
        .expect("own entry comes back")
        .clone();
    (seq, n(&e["at"]))
}

/// The log-retention boundary for a document: nothing moves one second before
/// `retention` after the entry, the floor moves up to it one second after.
fn check_log_boundary(srv: &TestServer, admin: &str, owner: &str, doc: &str, retention: i64) {
    let a = id("blk_");
    let (s1, at1) = insert_at(srv, owner, doc, &a, "a0");
    assert_eq!(s1, 1);
    let base = srv.snapshot(owner, doc);
    advance(srv, DAY);
    let r = srv.sync_ok(owner, doc, "cl_setup", 1, vec![set_content(&a, "later", 1)]);
    assert_eq!(r["results"][0]["seq"], 2, "{r}");

    advance_to(srv, at1 + retention - SEC);
    compact(srv, admin);
    let snap = srv.snapshot(owner, doc);
    assert_eq!(snap["logFloor"], 0, "floor moved a second early");
    assert_eq!(db_seqs(srv, doc), vec![1, 2]);
    let all = pull(srv, owner, doc, "cl_old", 0).expect("no resync before the boundary");
    assert_eq!(all.len(), 2);

    advance(srv, 2 * SEC);
    let sum = compact(srv, admin);
    assert_eq!(sum["logRows"], 1, "{sum}");
    let snap = srv.snapshot(owner, doc);
    assert_eq!(
        snap["logFloor"], 1,
        "the floor is the newest entry past retention"
    );
    assert_eq!(snap["headSeq"], 2);
    assert_eq!(db_seqs(srv, doc), vec![2]);
    assert!(
        pull(srv, owner, doc, "cl_old", 0).is_none(),
        "lastSeq below the floor must get resync"
    );
    let rest = pull(srv, owner, doc, "cl_old", 1).expect("lastSeq = floor is not behind");
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0]["seq"], 2);
    assert_replays_to_server(srv, owner, doc, &base, &rest);
}

#[test]
fn shared_document_log_is_kept_30_days() {
    let (srv, admin) = manual_server();
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let doc = srv.create_doc(&alice, "Shared");
    share_with(&srv, &alice, &doc, &user_id(&srv, &bob));
    assert_eq!(srv.snapshot(&alice, &doc)["shared"], true);
    // Past the private retention a shared document's log is still whole.
    let a = id("blk_");
    let (_, at1) = insert_at(&srv, &alice, &doc, &a, "a0");
    advance_to(&srv, at1 + 7 * DAY + SEC);
    compact(&srv, &admin);
    assert_eq!(srv.snapshot(&alice, &doc)["logFloor"], 0);
    assert_eq!(db_seqs(&srv, &doc), vec![1]);

    let doc2 = srv.create_doc(&alice, "Shared two");
    share_with(&srv, &alice, &doc2, &user_id(&srv, &bob));
    check_log_boundary(&srv, &admin, &alice, &doc2, 30 * DAY);
}

#[test]
fn private_document_log_is_kept_7_days() {
    let (srv, admin) = manual_server();
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Private");
    assert_eq!(srv.snapshot(&alice, &doc)["shared"], false);
    check_log_boundary(&srv, &admin, &alice, &doc, 7 * DAY);
}

#[test]
fn tombstones_are_purged_30_days_after_deletion() {
    let (srv, admin) = manual_server();
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Tombs");
    let (p, c, k) = (id("blk_"), id("blk_"), id("blk_"));
    srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        0,
        vec![
            insert(&p, None, "a0", "parent"),
            insert(&c, Some(&p), "a0", "child"),
            insert(&k, None, "a1", "kept"),
        ],
    );
    advance(&srv, DAY);
    let r = srv.sync_ok(&alice, &doc, "cl_a", 3, vec![delete_op(&p)]);
    assert_eq!(r["results"][0]["status"], "applied", "{r}");
    assert_eq!(r["results"][0]["seq"], 4);
    let deleted_at = n(&r["ops"][0]["at"]);
    // The open editor's view right after the delete.
    let editor = srv.snapshot(&alice, &doc);
    let blocks = snapshot_blocks(&editor);
    for b in [&p, &c] {
        assert_eq!(blocks[b]["deleted"], true);
        assert_eq!(n(&blocks[b]["deletedAt"]), deleted_at);
    }

    advance_to(&srv, deleted_at + 30 * DAY - SEC);
    let sum = compact(&srv, &admin);
    assert_eq!(sum["tombstones"], 0, "purged a second early: {sum}");
    let blocks = snapshot_blocks(&srv.snapshot(&alice, &doc));
    assert_eq!(blocks[&p]["deleted"], true, "still a tombstone");
    assert_eq!(blocks[&c]["deleted"], true, "still a tombstone");

    let now = advance(&srv, 2 * SEC);
    let sum = compact(&srv, &admin);
    assert_eq!(sum["tombstones"], 2, "{sum}");
    let snap = srv.snapshot(&alice, &doc);
    let blocks = snapshot_blocks(&snap);
    assert!(!blocks.contains_key(&p) && !blocks.contains_key(&c));
    assert!(blocks.contains_key(&k));
    assert_eq!(snap["headSeq"], 5, "the purge is one log entry");

    // The editor syncs normally and gets the purge entry.
    let entries = pull(&srv, &alice, &doc, "cl_editor", 4).expect("editor is not behind");
    assert_eq!(entries.len(), 1);
    let e = &entries[0];
    assert_eq!(e["kind"], "purge", "{e}");
    assert_eq!(n(&e["at"]), now);
    let effects = e["effects"].as_array().unwrap();
    assert_eq!(effects.len(), 1, "{e}");
    assert_eq!(effects[0]["e"], "purge");
    let mut ids: Vec<&str> = effects[0]["blockIds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    ids.sort();
    let mut want = vec![p.as_str(), c.as_str()];
    want.sort();
    assert_eq!(ids, want);
    assert_replays_to_server(&srv, &alice, &doc, &editor, &entries);

    // Purged IDs are remembered; the rows are gone.
    let db = srv.db();
    for b in [&p, &c] {
        let purged: i64 = db
            .query_row(
                "SELECT count(*) FROM purged_blocks WHERE id = ?1 AND doc_id = ?2",
                [b, &doc],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(purged, 1, "purged ID {b} remembered");
        let rows: i64 = db
            .query_row("SELECT count(*) FROM blocks WHERE id = ?1", [b], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(rows, 0, "block row {b} removed");
    }
}

#[test]
fn idempotency_results_are_kept_90_days() {
    let (srv, admin) = manual_server();
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Results");
    let a = id("blk_");
    let ins = insert(&a, None, "a0", "once");
    let bad_move =
        json!({"opId": id("op_"), "kind": "move", "blockId": a, "parentId": a, "orderKey": "a0"});
    let r = srv.sync_ok(&alice, &doc, "cl_a", 0, vec![ins.clone(), bad_move.clone()]);
    let first = r["results"].as_array().unwrap().clone();
    assert_eq!(first[0]["status"], "applied");
    assert_eq!(first[1]["status"], "rejected", "{r}");
    let at = n(&r["ops"][0]["at"]);
    let ids = [
        ins["opId"].as_str().unwrap(),
        bad_move["opId"].as_str().unwrap(),
    ];
    for (op, res) in ids.iter().zip(&first) {
        let (stored, stored_at) = db_result(&srv, &doc, op).expect("result stored");
        assert_eq!(&stored, res);
        assert_eq!(stored_at, at);
    }

    advance_to(&srv, at + 90 * DAY - SEC);
    let sum = compact(&srv, &admin);
    assert_eq!(sum["results"], 0, "{sum}");
    for op in ids {
        assert!(db_result(&srv, &doc, op).is_some(), "result {op} kept");
    }
    // A retry still gets the stored answer and changes nothing.
    let head = n(&srv.snapshot(&alice, &doc)["headSeq"]);
    let r = srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        head,
        vec![ins.clone(), bad_move.clone()],
    );
    assert_eq!(r["results"].as_array().unwrap(), &first);
    assert_eq!(n(&r["headSeq"]), head, "a retry applies nothing");
    let snap = srv.snapshot(&alice, &doc);
    assert_eq!(snap["blocks"].as_array().unwrap().len(), 1);

    advance(&srv, 2 * SEC);
    let sum = compact(&srv, &admin);
    assert_eq!(sum["results"], 2, "{sum}");
    for op in ids {
        assert!(db_result(&srv, &doc, op).is_none(), "result {op} removed");
    }
}

#[test]
fn late_edits_to_purged_blocks_and_tombstones() {
    let (srv, admin) = manual_server();
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Late");
    let (a, b, c, d) = (id("blk_"), id("blk_"), id("blk_"), id("blk_"));
    srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        0,
        vec![
            insert(&a, None, "a0", "a"),
            insert(&b, None, "a1", "b"),
            insert(&c, None, "a2", "c"),
            insert(&d, None, "a3", "d"),
        ],
    );
    let r = srv.sync_ok(&alice, &doc, "cl_a", 4, vec![delete_op(&b)]);
    let b_deleted = n(&r["ops"][0]["at"]);
    advance(&srv, 20 * DAY);
    srv.sync_ok(&alice, &doc, "cl_a", 5, vec![delete_op(&c)]);
    let base = srv.snapshot(&alice, &doc);
    assert_eq!(base["headSeq"], 6);

    advance_to(&srv, b_deleted + 30 * DAY + SEC);
    let sum = compact(&srv, &admin);
    assert_eq!(sum["tombstones"], 1, "only b is past retention: {sum}");
    let blocks = snapshot_blocks(&srv.snapshot(&alice, &doc));
    assert!(!blocks.contains_key(&b));
    assert_eq!(blocks[&c]["deleted"], true);

    // Text for a purged block: a new top-level block at the end.
    let late = set_content(&b, "late text", 1);
    let r = srv.sync_ok(&alice, &doc, "cl_late", 7, vec![late.clone()]);
    let res = r["results"][0].clone();
    assert_eq!(res["status"], "applied", "{r}");
    assert_eq!(res["seq"], 8);
    let nb = res["blockId"].as_str().expect("new block ID").to_string();
    assert_ne!(nb, b);
    assert!(nb.starts_with("blk_"), "{nb}");
    // A retry makes no second copy.
    let again = srv.sync_ok(&alice, &doc, "cl_late", 8, vec![late]);
    assert_eq!(again["results"][0], res);
    let snap = srv.snapshot(&alice, &doc);
    assert_eq!(snap["headSeq"], 8);
    let order: Vec<&Value> = snap["blocks"].as_array().unwrap().iter().collect();
    let copies: Vec<&&Value> = order
        .iter()
        .filter(|x| x["content"] == "late text")
        .collect();
    assert_eq!(copies.len(), 1);
    let last = order.last().unwrap();
    assert_eq!(last["id"], nb.as_str(), "the text lands at the end");
    assert_eq!(last["parentId"], Value::Null);
    assert_eq!(last["depth"], 0);
    assert_eq!(last["deleted"], false);

    // Text for a tombstone inside retention restores it in place.
    let r = srv.sync_ok(
        &alice,
        &doc,
        "cl_late",
        8,
        vec![set_content(&c, "revived", 1)],
    );
    assert_eq!(r["results"][0]["status"], "applied", "{r}");
    let snap = srv.snapshot(&alice, &doc);
    let blocks = snapshot_blocks(&snap);
    assert_eq!(blocks[&c]["deleted"], false);
    assert_eq!(blocks[&c]["deletedAt"], Value::Null);
    assert_eq!(blocks[&c]["content"], "revived");
    assert_eq!(blocks[&c]["version"], 2);
    assert_eq!(blocks[&c]["parentId"], Value::Null);
    let ids: Vec<&str> = snap["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![a.as_str(), c.as_str(), d.as_str(), nb.as_str()]);

    // Restoring a purged block is rejected; inserting under it lands at top level.
    let e = id("blk_");
    let r = srv.sync_ok(
        &alice,
        &doc,
        "cl_late",
        9,
        vec![restore_op(&b), insert(&e, Some(&b), "a0", "orphan")],
    );
    assert_eq!(r["results"][0]["status"], "rejected", "{r}");
    assert_eq!(r["results"][0]["reason"], "purged");
    assert_eq!(r["results"][1]["status"], "applied", "{r}");
    let blocks = snapshot_blocks(&srv.snapshot(&alice, &doc));
    assert_eq!(blocks[&e]["parentId"], Value::Null);
    assert!(!blocks.contains_key(&b));

    // The editor that loaded before the purge catches up exactly.
    let entries = pull(&srv, &alice, &doc, "cl_editor", 6).expect("not behind the floor");
    assert!(entries.iter().any(|e| e["kind"] == "purge"));
    assert_replays_to_server(&srv, &alice, &doc, &base, &entries);
}

#[test]
fn client_behind_the_floor_resyncs_and_editor_applies_purge() {
    let (srv, admin) = manual_server();
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Behind");
    let (x, y, z, w, v) = (id("blk_"), id("blk_"), id("blk_"), id("blk_"), id("blk_"));
    srv.sync_ok(
        &alice,
        &doc,
        "cl_stale",
        0,
        vec![
            insert(&x, None, "a0", "x"),
            insert(&y, None, "a1", "y"),
            insert(&z, None, "a2", "z"),
        ],
    );
    let r = srv.sync_ok(&alice, &doc, "cl_b", 3, vec![delete_op(&y)]);
    let deleted_at = n(&r["ops"][0]["at"]);
    let editor = srv.snapshot(&alice, &doc);
    assert_eq!(editor["headSeq"], 4);

    advance_to(&srv, deleted_at + 30 * DAY + SEC);
    let r = srv.sync_ok(&alice, &doc, "cl_b", 4, vec![set_content(&x, "x2", 1)]);
    assert_eq!(r["results"][0]["seq"], 5, "{r}");
    let sum = compact(&srv, &admin);
    assert_eq!(sum["tombstones"], 1, "{sum}");
    assert_eq!(sum["logRows"], 4, "{sum}");
    let snap = srv.snapshot(&alice, &doc);
    assert_eq!(snap["logFloor"], 4, "entries 1..4 are past the 7 days");
    assert_eq!(snap["headSeq"], 6);
    assert_eq!(db_seqs(&srv, &doc), vec![5, 6]);

    // The open editor (lastSeq = floor) syncs normally and applies the purge.
    let got = pull(&srv, &alice, &doc, "cl_editor", 4).expect("editor at the floor");
    let seqs: Vec<i64> = got.iter().map(|e| n(&e["seq"])).collect();
    assert_eq!(seqs, vec![5, 6]);
    assert_eq!(got[1]["kind"], "purge");
    assert_eq!(got[1]["effects"], json!([{"e": "purge", "blockIds": [y]}]));
    assert_replays_to_server(&srv, &alice, &doc, &editor, &got);

    // The stale client (lastSeq 3 < floor 4) sends its queue: resync, yet the ops are
    // applied and answered.
    let ops = vec![set_content(&z, "z2", 1), insert(&w, None, "a5", "w")];
    let r = srv.sync_ok(&alice, &doc, "cl_stale", 3, ops.clone());
    assert_eq!(r["resync"], true, "{r}");
    assert!(r["ops"].as_array().is_none_or(|o| o.is_empty()), "{r}");
    let results = r["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{r}");
    for (op, res) in ops.iter().zip(results) {
        assert_eq!(res["opId"], op["opId"]);
        assert_eq!(res["status"], "applied", "{r}");
    }
    assert_eq!(results[0]["seq"], 7);
    assert_eq!(results[1]["seq"], 8);
    assert_eq!(r["headSeq"], 8);

    // It reloads the snapshot, which holds its own ops; from there the log replays exactly.
    let reloaded = srv.snapshot(&alice, &doc);
    assert_eq!(reloaded["headSeq"], 8);
    let blocks = snapshot_blocks(&reloaded);
    assert_eq!(blocks[&z]["content"], "z2");
    assert_eq!(blocks[&w]["content"], "w");
    let r = srv.sync_ok(
        &alice,
        &doc,
        "cl_b",
        8,
        vec![set_content(&x, "x3", 2), insert(&v, Some(&x), "a0", "v")],
    );
    assert_eq!(r["results"][0]["status"], "applied", "{r}");
    assert_eq!(r["results"][1]["status"], "applied", "{r}");
    let later = pull(&srv, &alice, &doc, "cl_stale", 8).expect("not behind any more");
    assert_eq!(later.len(), 2);
    assert_replays_to_server(&srv, &alice, &doc, &reloaded, &later);
    // The editor, still following normally, ends equal too.
    let rest = pull(&srv, &alice, &doc, "cl_editor", 6).expect("editor not behind");
    let mut all = got.clone();
    all.extend(rest);
    assert_replays_to_server(&srv, &alice, &doc, &editor, &all);
}

/// What one syncing client knows and has been told.
struct Replica {
    doc: String,
    client: String,
    last_seq: i64,
    blocks: BTreeMap<String, Value>,
    title: String,
    resyncs: usize,
    entries: usize,
    /// `purge` entries applied by replay (not by reloading).
    purges: usize,
    /// Every op the server answered, with its answer.
    acked: Vec<(Value, Value)>,
    /// opId → seq of own applied ops, to match against the entries that come back.
    own_seqs: HashMap<String, i64>,
}

impl Replica {
    fn reload(&mut self, srv: &TestServer, token: &str) {
        let snap = srv.snapshot(token, &self.doc);
        self.blocks = snapshot_blocks(&snap);
        self.title = snap["title"].as_str().unwrap().to_string();
        self.last_seq = n(&snap["headSeq"]);
    }

    /// Takes a /sync reply: gap check, replay, or reload on resync.
    fn absorb(&mut self, srv: &TestServer, token: &str, r: &Value) {
        if r["resync"] == true {
            self.resyncs += 1;
            self.reload(srv, token);
            return;
        }
        for e in r["ops"].as_array().unwrap() {
            let seq = n(&e["seq"]);
            assert_eq!(
                seq,
                self.last_seq + 1,
                "{}: gap in received seqs without resync",
                self.client
            );
            if let Some(own) = self.own_seqs.get(e["opId"].as_str().unwrap()) {
                assert_eq!(*own, seq, "entry seq differs from the op's result");
            }
            replay(&mut self.blocks, &mut self.title, std::slice::from_ref(e));
            self.last_seq = seq;
            self.entries += 1;
            if e["kind"] == "purge" {
                self.purges += 1;
            }
        }
    }
}

/// Stops the workers even when the main thread panics inside the scope.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[test]
fn compaction_while_clients_sync() {
    const ROUNDS: usize = 12;
    const ROUND_DAYS: i64 = 5;
    let (srv, admin) = manual_server();
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let docs: Vec<String> = (0..3)
        .map(|i| srv.create_doc(&alice, &format!("busy {i}")))
        .collect();
    share_with(&srv, &alice, &docs[1], &user_id(&srv, &bob));
    // Old log and due tombstones in every document before the clients start.
    for doc in &docs {
        let ids: Vec<String> = (0..20).map(|_| id("blk_")).collect();
        let mut ops: Vec<Value> = ids.iter().map(|b| insert(b, None, "a0", "old")).collect();
        ops.extend(ids.iter().step_by(2).map(|b| delete_op(b)));
        srv.sync_ok(&alice, doc, "cl_setup", 0, ops);
    }
    advance(&srv, 31 * DAY);

    let stop = AtomicBool::new(false);
    let round = AtomicUsize::new(0);
    // Per worker: syncs done, and whether it is "offline" (napping) right now. A round of
    // compaction starts once every online worker did ROUND_SYNCS syncs since the last one:
    // rounds are counted in traffic, not in milliseconds, so a slow machine runs the same
    // test.
    const ROUND_SYNCS: usize = 10;
    let done: Vec<AtomicUsize> = (0..6).map(|_| AtomicUsize::new(0)).collect();
    let napping: Vec<AtomicBool> = (0..6).map(|_| AtomicBool::new(false)).collect();
    let mut totals = (0i64, 0i64); // (tombstones, logRows) while the clients ran
    let replicas: Vec<Replica> = std::thread::scope(|s| {
        let guard = StopOnDrop(&stop);
        let mut handles = Vec::new();
        for w in 0..6usize {
            let (srv, alice, stop, round) = (&srv, &alice, &stop, &round);
            let (done, napping) = (&done[w], &napping[w]);
            let doc = docs[w % docs.len()].clone();
            // The second client of each document goes "offline" now and then for long
            // enough to fall behind the floor (30 days of log for the shared document, 7
            // for the others).
            let sleepy = w >= docs.len();
            let nap = if w % docs.len() == 1 { 8 } else { 3 };
            handles.push(s.spawn(move || {
                let mut rep = Replica {
                    doc: doc.clone(),
                    client: format!("cl_worker{w}"),
                    last_seq: 0,
                    blocks: BTreeMap::new(),
                    title: String::new(),
                    resyncs: 0,
                    entries: 0,
                    purges: 0,
                    acked: Vec::new(),
                    own_seqs: HashMap::new(),
                };
                rep.reload(srv, alice);
                // Own live blocks with their version; only this client touches them.
                let mut live: Vec<(String, i64)> = Vec::new();
                let mut i = 0usize;
                let mut next_nap = 5usize;
                while !stop.load(Ordering::SeqCst) {
                    i += 1;
                    if sleepy && i == next_nap {
                        napping.store(true, Ordering::SeqCst);
                        let until = round.load(Ordering::SeqCst) + nap;
                        while round.load(Ordering::SeqCst) < until && !stop.load(Ordering::SeqCst) {
                            std::thread::sleep(Duration::from_millis(2));
                        }
                        napping.store(false, Ordering::SeqCst);
                        next_nap = i + 40;
                    }
                    let (ops, edited) = if live.len() < 3 || i.is_multiple_of(4) {
                        let b = id("blk_");
                        let op = insert(&b, None, "a0", &format!("w{w} new {i}"));
                        live.push((b, 0));
                        (vec![op], None)
                    } else if i % 5 == 1 {
                        let (b, _) = live.remove(0);
                        (vec![delete_op(&b)], None)
                    } else {
                        let k = i % live.len();
                        let (b, v) = &live[k];
                        (vec![set_content(b, &format!("w{w} edit {i}"), *v)], Some(k))
                    };
                    let r = srv.sync_ok(alice, &doc, &rep.client, rep.last_seq, ops.clone());
                    let results = r["results"].as_array().unwrap();
                    assert_eq!(results.len(), ops.len(), "every op is answered: {r}");
                    for (op, res) in ops.iter().zip(results) {
                        assert_eq!(res["opId"], op["opId"]);
                        assert_eq!(res["status"], "applied", "{op} → {res}");
                        if let Some(seq) = res["seq"].as_i64() {
                            rep.own_seqs
                                .insert(op["opId"].as_str().unwrap().to_string(), seq);
                        }
                        rep.acked.push((op.clone(), res.clone()));
                    }
                    // Versions: 1 after the insert, +1 for every applied text change.
                    match edited {
                        Some(k) => live[k].1 += 1,
                        None => {
                            if let Some(last) = live.last_mut().filter(|l| l.1 == 0) {
                                last.1 = 1;
                            }
                        }
                    }
                    rep.absorb(srv, alice, &r);
                    done.fetch_add(1, Ordering::SeqCst);
                }
                rep
            }));
        }
        for r in 0..ROUNDS {
            let start: Vec<usize> = done.iter().map(|d| d.load(Ordering::SeqCst)).collect();
            let deadline = std::time::Instant::now() + Duration::from_secs(120);
            while (0..done.len()).any(|w| {
                !napping[w].load(Ordering::SeqCst)
                    && done[w].load(Ordering::SeqCst) < start[w] + ROUND_SYNCS
            }) {
                if handles.iter().any(|h| h.is_finished()) {
                    break; // a worker failed: joining it below reports why
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "round {r}: workers stuck at {:?} syncs",
                    done.iter()
                        .map(|d| d.load(Ordering::SeqCst))
                        .collect::<Vec<_>>()
                );
                std::thread::sleep(Duration::from_millis(2));
            }
            advance(&srv, ROUND_DAYS * DAY);
            let sum = compact(&srv, &admin);
            totals.0 += n(&sum["tombstones"]);
            totals.1 += n(&sum["logRows"]);
            round.fetch_add(1, Ordering::SeqCst);
        }
        drop(guard);
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(
        totals.0 >= 30,
        "tombstones purged while syncing: {totals:?}"
    );
    assert!(totals.1 > 0, "log rows removed while syncing: {totals:?}");

    let (mut resyncs, mut purges) = (0, 0);
    for mut rep in replicas {
        assert!(rep.acked.len() > 20, "{}: too little traffic", rep.client);
        eprintln!(
            "{}: {} ops acknowledged, {} entries received, {} purges, {} resyncs",
            rep.client,
            rep.acked.len(),
            rep.entries,
            rep.purges,
            rep.resyncs
        );
        resyncs += rep.resyncs;
        purges += rep.purges;
        // Catch up with everything the others wrote, then compare with the server.
        loop {
            let r = srv.sync_ok(&alice, &rep.doc, &rep.client, rep.last_seq, vec![]);
            rep.absorb(&srv, &alice, &r);
            if r["hasMore"] != true && r["resync"] != true {
                break;
            }
        }
        let fresh = srv.snapshot(&alice, &rep.doc);
        assert_eq!(rep.last_seq, n(&fresh["headSeq"]), "{}", rep.client);
        assert_eq!(rep.title, fresh["title"].as_str().unwrap());
        assert_eq!(
            rep.blocks,
            snapshot_blocks(&fresh),
            "{}: snapshot + replayed log differs from the server",
            rep.client
        );
        // Every acknowledged op's result is stored, and a retry gets exactly that answer.
        for (op, res) in &rep.acked {
            let (stored, _) = db_result(&srv, &rep.doc, op["opId"].as_str().unwrap())
                .unwrap_or_else(|| panic!("result of acknowledged op {op} is gone"));
            assert_eq!(&stored, res);
        }
        let head = n(&fresh["headSeq"]);
        for chunk in rep.acked.chunks(200) {
            let ops: Vec<Value> = chunk.iter().map(|(op, _)| op.clone()).collect();
            let r = srv.sync_ok(&alice, &rep.doc, &rep.client, head, ops);
            let want: Vec<Value> = chunk.iter().map(|(_, res)| res.clone()).collect();
            assert_eq!(r["results"].as_array().unwrap(), &want, "retried results");
            assert_eq!(n(&r["headSeq"]), head, "a retry applies nothing");
        }
    }
    assert!(resyncs > 0, "no client ever fell behind the floor");
    assert!(purges > 0, "no client ever applied a purge entry");
    // The stored log is contiguous above each floor.
    for doc in &docs {
        let snap = srv.snapshot(&alice, doc);
        let (floor, head) = (n(&snap["logFloor"]), n(&snap["headSeq"]));
        assert!(floor > 0, "{doc}: the floor never moved");
        let seqs = db_seqs(&srv, doc);
        assert_eq!(seqs, ((floor + 1)..=head).collect::<Vec<_>>(), "{doc}");
    }
}
