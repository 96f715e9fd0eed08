//! Limits that keep one user or document from hurting the others, against the real server:
//! - `limits.max_depth`: a chain typed deeper than the limit lands at the deepest allowed
//!   level with every text kept; a move that would go deeper is rejected (`too_deep`); a
//!   3,000-level chain (limit raised) snapshots, reloads after a crash, deletes and restores;
//!   the markdown export of a deep chain stays linear in size (indentation capped).
//! - `restore` tells apart two deletes of one request (one millisecond) by `deletedBy`, also
//!   after the actor reloads its state from SQLite.

use crate::common;

use std::collections::HashMap;

use common::*;
use serde_json::{json, Value};

/// Inserts `n` blocks, each under the previous one, 500 ops per `/sync`. Returns the IDs
/// and the last seq.
fn build_chain(srv: &TestServer, token: &str, doc: &str, n: usize) -> (Vec<String>, i64) {
    let ids: Vec<String> = (0..n).map(|i| format!("blk_chain{i:05}")).collect();
    let mut last_seq = 0;
    for start in (0..n).step_by(500) {
        let ops: Vec<Value> = (start..(start + 500).min(n))
            .map(|i| {
                let parent = i.checked_sub(1).map(|p| ids[p].as_str());
                insert(&ids[i], parent, "a0", &format!("level {i}"))
            })
            .collect();
        let r = srv.sync_ok(token, doc, "cl_chain", last_seq, ops);
        assert!(r["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|o| o["status"] == "applied"));
        last_seq = r["results"].as_array().unwrap().last().unwrap()["seq"]
            .as_i64()
            .unwrap();
    }
    (ids, last_seq)
}

/// id → (depth, parentId, deleted) from a snapshot.
fn shape(snap: &Value) -> HashMap<String, (i64, Option<String>, bool)> {
    snap["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["id"].as_str().unwrap().to_string(),
                (
                    b["depth"].as_i64().unwrap(),
                    b["parentId"].as_str().map(str::to_string),
                    b["deleted"].as_bool().unwrap(),
                ),
            )
        })
        .collect()
}

fn op(kind: &str, block: &str) -> Value {
    json!({"opId": id("op_"), "kind": kind, "blockId": block})
}

fn mv(block: &str, parent: Option<&str>, key: &str) -> Value {
    json!({"opId": id("op_"), "kind": "move", "blockId": block, "parentId": parent, "orderKey": key})
}

#[test]
fn a_chain_deeper_than_the_limit_lands_at_the_limit_and_keeps_every_text() {
    let srv = TestServer::start_with(&[("DOCSYNC_LIMITS__MAX_DEPTH", "50")]);
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Deep");
    let (ids, seq) = build_chain(&srv, &alice, &doc, 120);
    let snap = srv.snapshot(&alice, &doc);
    let s = shape(&snap);
    assert_eq!(s.len(), 120);
    assert_eq!(
        s.values().map(|v| v.0).max(),
        Some(49),
        "deepest level is 49"
    );
    // Everything typed below the limit is appended, in order, under the block at depth 48.
    let under_48: Vec<&str> = snap["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["parentId"] == ids[48].as_str())
        .map(|b| b["content"].as_str().unwrap())
        .collect();
    let expected: Vec<String> = (49..120).map(|i| format!("level {i}")).collect();
    assert_eq!(under_48, expected);
    // Moving the chain one level down is refused; moving a leaf of the last level is fine.
    let r = srv.sync_ok(
        &alice,
        &doc,
        "cl_chain",
        seq,
        vec![
            insert("blk_top", None, "a1", "top"),
            mv(&ids[0], Some("blk_top"), "a0"),
            mv(&ids[119], Some(&ids[47]), "a5"),
        ],
    );
    let statuses: Vec<(&str, Option<&str>)> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["status"].as_str().unwrap(), o["reason"].as_str()))
        .collect();
    assert_eq!(
        statuses,
        [
            ("applied", None),
            ("rejected", Some("too_deep")),
            ("applied", None)
        ]
    );
}

#[test]
fn a_3000_level_chain_snapshots_reloads_restores_and_exports_in_linear_size() {
    const N: usize = 3_000;
    let mut srv = TestServer::start_with(&[("DOCSYNC_LIMITS__MAX_DEPTH", "5000")]);
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Deep");
    let (ids, seq) = build_chain(&srv, &alice, &doc, N);
    let s = shape(&srv.snapshot(&alice, &doc));
    assert_eq!(s[&ids[N - 1]].0, (N - 1) as i64);

    // Export: every line there, in order, indentation capped, so the size stays linear
    // (uncapped it would be about 9 MB: two spaces per level per line).
    let (status, md) = srv.get_text(&alice, &format!("/api/v1/docs/{doc}/markdown"));
    assert_eq!(status, 200);
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(lines.len(), N + 2, "title, blank line, one line per block");
    assert_eq!(lines[N + 1].trim_start(), format!("- level {}", N - 1));
    let indent = lines[N + 1].len() - lines[N + 1].trim_start().len();
    assert!(indent <= 200, "indentation capped, got {indent}");
    assert!(md.len() < 500_000, "export of {} bytes", md.len());

    // A crash, then the actor reloads the deep chain from SQLite.
    srv.restart_after_kill();
    let s = shape(&srv.snapshot(&alice, &doc));
    assert_eq!(s[&ids[N - 1]].0, (N - 1) as i64);

    // Delete the whole chain and restore it in one request.
    let r = srv.sync_ok(
        &alice,
        &doc,
        "cl_chain",
        seq,
        vec![op("delete", &ids[0]), op("restore", &ids[0])],
    );
    assert!(r["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|o| o["status"] == "applied"));
    let s = shape(&srv.snapshot(&alice, &doc));
    assert!(s.values().all(|v| !v.2), "every block is back");
    assert_eq!(s[&ids[N - 1]].0, (N - 1) as i64);
    // A cycle check over the whole chain.
    let r = srv.sync_ok(
        &alice,
        &doc,
        "cl_chain",
        seq,
        vec![mv(&ids[0], Some(&ids[N - 1]), "a0")],
    );
    assert_eq!(r["results"][0]["reason"], "cycle");
}

#[test]
fn two_deletes_in_one_request_are_restored_separately_also_after_a_reload() {
    let mut srv = TestServer::start();
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Deletes");
    let r = srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        0,
        vec![
            insert("blk_y", None, "a0", "Y"),
            insert("blk_y1", Some("blk_y"), "a0", "Y1"),
            insert("blk_y2", Some("blk_y"), "a1", "Y2"),
            insert("blk_x", None, "a1", "X"),
            insert("blk_x1", Some("blk_x"), "a0", "X1"),
            insert("blk_x2", Some("blk_x"), "a1", "X2"),
        ],
    );
    let seq = r["results"][5]["seq"].as_i64().unwrap();
    // One request: inner then outer, in both subtrees (one millisecond).
    let r = srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        seq,
        vec![
            op("delete", "blk_y2"),
            op("delete", "blk_y"),
            op("delete", "blk_x2"),
            op("delete", "blk_x"),
        ],
    );
    let at: Vec<i64> = r["ops"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| e["effects"].as_array().unwrap().clone())
        .map(|e| e["block"]["deletedAt"].as_i64().unwrap())
        .collect();
    assert_eq!(at.len(), 6);
    let deleted_by: Vec<&str> = r["ops"][0]["effects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["block"]["deletedBy"].as_str().unwrap())
        .collect();
    assert_eq!(deleted_by, [r["results"][0]["opId"].as_str().unwrap()]);
    let seq = r["results"][3]["seq"].as_i64().unwrap();
    let deleted = |srv: &TestServer| -> Vec<bool> {
        let s = shape(&srv.snapshot(&alice, &doc));
        ["blk_y", "blk_y1", "blk_y2", "blk_x", "blk_x1", "blk_x2"]
            .iter()
            .map(|id| s[*id].2)
            .collect()
    };
    srv.sync_ok(&alice, &doc, "cl_a", seq, vec![op("restore", "blk_y")]);
    assert_eq!(
        deleted(&srv),
        [false, false, true, true, true, true],
        "Y2 was deleted on purpose"
    );
    // After a crash the state comes from SQLite: deletedBy must have been stored.
    srv.restart_after_kill();
    let s = srv.snapshot(&alice, &doc);
    let x2 = s["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["id"] == "blk_x2")
        .unwrap();
    assert!(x2["deletedBy"].is_string(), "{x2}");
    let r = srv.sync_ok(&alice, &doc, "cl_a", 0, vec![op("restore", "blk_x")]);
    assert_eq!(r["results"][0]["status"], "applied");
    assert_eq!(deleted(&srv), [false, false, true, false, false, true]);
    let y = s["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["id"] == "blk_y")
        .unwrap();
    assert!(
        y.get("deletedBy").is_none(),
        "a live block has no deletedBy"
    );
}

/// Someone shares a folder holding 33,000 documents with bob: search and tags keep working
/// (they used to bind one SQL variable per readable document, and past 32,766 answered
/// 500 for good), and bob can decline the share. The documents are written straight into
/// the database (through the API it takes as long as 33,000 creates).
#[test]
fn search_and_tags_work_for_a_reader_of_33000_documents_who_can_decline_them() {
    let srv = TestServer::start();
    let base = srv.url("");
    let mallory = srv.add_user("mallory");
    let bob = srv.add_user("bob");
    let bob_id = common::channels::user_id(&base, &bob);
    let (s, v) = srv.post(&mallory, "/api/v1/folders", &json!({"name": "Spam"}));
    assert_eq!(s, 201, "{v}");
    let folder = v["folderId"].as_str().unwrap().to_string();
    let (s, v) = srv.post(
        &mallory,
        "/api/v1/docs",
        &json!({"title": "Bait", "folderId": folder}),
    );
    assert_eq!(s, 201, "{v}");
    let bait = v["docId"].as_str().unwrap().to_string();
    srv.sync_ok(
        &mallory,
        &bait,
        "cl_m",
        0,
        vec![insert(&id("blk_"), None, "a0", "click #here for prizes")],
    );
    {
        let mut db = rusqlite::Connection::open(srv.db_path()).unwrap();
        db.busy_timeout(std::time::Duration::from_secs(10)).unwrap();
        let owner: String = db
            .query_row(
                "SELECT owner_id FROM documents WHERE id = ?1",
                [&bait],
                |r| r.get(0),
            )
            .unwrap();
        let tx = db.transaction().unwrap();
        for i in 0..33_000 {
            tx.execute(
                "INSERT INTO documents (id, owner_id, folder_id, title, created_at, updated_at)
                 VALUES (?1, ?2, ?3, 'spam', 1, 1)",
                rusqlite::params![format!("doc_spam{i:05}"), owner, folder],
            )
            .unwrap();
        }
        tx.commit().unwrap();
    }
    let share = json!([{"kind": "user", "id": bob_id, "access": "read"}]);
    let (s, v) = srv.put(
        &mallory,
        &format!("/api/v1/folders/{folder}/shares"),
        &share,
    );
    assert_eq!(s, 200, "{v}");
    let mine = srv.create_doc(&bob, "Mine");
    srv.sync_ok(
        &bob,
        &mine,
        "cl_b",
        0,
        vec![insert(&id("blk_"), None, "a0", "my #notes on prizes")],
    );

    let timed = |path: &str| {
        let t = std::time::Instant::now();
        let r = srv.get(&bob, path);
        (r, t.elapsed())
    };
    let ((s, v), search_time) = timed("/api/v1/search?q=prizes");
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["results"].as_array().map(Vec::len), Some(2), "{v}");
    let ((s, v), tags_time) = timed("/api/v1/tags");
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["tags"].as_array().map(Vec::len), Some(2), "{v}");
    let ((s, v), tag_time) = timed("/api/v1/tags/notes");
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["blocks"].as_array().map(Vec::len), Some(1), "{v}");
    let ((s, v), docs_time) = timed("/api/v1/docs");
    assert_eq!(s, 200);
    assert!(v.to_string().contains("doc_spam32999"));
    eprintln!(
        "reader of 33,002 documents: search {search_time:?}, tags {tags_time:?}, one tag {tag_time:?}, document list {docs_time:?}"
    );

    // Bob declines the folder: his lists, search and tags are his own again.
    assert_eq!(
        srv.delete(&bob, &format!("/api/v1/folders/{folder}/shares/me")),
        204
    );
    assert_eq!(
        srv.delete(&bob, &format!("/api/v1/folders/{folder}/shares/me")),
        404
    );
    let (s, v) = srv.get(&bob, "/api/v1/docs");
    assert_eq!(s, 200);
    assert!(!v.to_string().contains("doc_spam"), "still listed");
    let (_, v) = srv.get(&bob, "/api/v1/search?q=prizes");
    assert_eq!(v["results"].as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(
        srv.get(&bob, &format!("/api/v1/docs/{bait}/snapshot")).0,
        404
    );
}

/// A user declines a document shared with them, and leaves a team (its owner cannot).
#[test]
fn a_user_can_decline_a_document_and_leave_a_team() {
    let srv = TestServer::start();
    let base = srv.url("");
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let bob_id = common::channels::user_id(&base, &bob);
    let doc = srv.create_doc(&alice, "For bob");
    let share = json!([{"kind": "user", "id": bob_id, "access": "read"}]);
    assert_eq!(
        common::channels::put_shares(&base, &alice, &doc, &share),
        200
    );
    assert_eq!(
        srv.get(&bob, &format!("/api/v1/docs/{doc}/snapshot")).0,
        200
    );
    assert_eq!(
        srv.delete(&bob, &format!("/api/v1/docs/{doc}/shares/me")),
        204
    );
    assert_eq!(
        srv.get(&bob, &format!("/api/v1/docs/{doc}/snapshot")).0,
        404
    );
    assert_eq!(
        srv.delete(&alice, &format!("/api/v1/docs/{doc}/shares/me")),
        404
    );

    let (s, v) = srv.post(&alice, "/api/v1/teams", &json!({"name": "crew"}));
    assert_eq!(s, 201, "{v}");
    let team = v["teamId"].as_str().unwrap().to_string();
    let (s, v) = srv.put(
        &alice,
        &format!("/api/v1/teams/{team}/members"),
        &json!({"members": [bob_id]}),
    );
    assert_eq!(s, 200, "{v}");
    let share = json!([{"kind": "team", "id": team, "access": "read"}]);
    assert_eq!(
        common::channels::put_shares(&base, &alice, &doc, &share),
        200
    );
    assert_eq!(
        srv.get(&bob, &format!("/api/v1/docs/{doc}/snapshot")).0,
        200
    );
    assert_eq!(
        srv.delete(&alice, &format!("/api/v1/teams/{team}/members/me")),
        403
    );
    assert_eq!(
        srv.delete(&bob, &format!("/api/v1/teams/{team}/members/me")),
        204
    );
    assert_eq!(
        srv.get(&bob, &format!("/api/v1/docs/{doc}/snapshot")).0,
        404
    );
    assert_eq!(
        srv.delete(&bob, &format!("/api/v1/teams/{team}/members/me")),
        404
    );
}

/// Write budgets: a user who keeps sending big syncs is refused with 429 `write_budget` and
/// `Retry-After` once a minute's worth is spent (nothing of the refused request written),
/// and may write again when the budget has refilled; a document's size budget refuses
/// growth with 413 `document_full` while deletes and shrinking edits still work.
#[test]
fn write_budgets_and_the_document_size_budget_hold() {
    let srv = TestServer::start_with(&[
        common::channels::STILL_CLOCK,
        ("DOCSYNC_LIMITS__MAX_BODY_BYTES", "1048576"),
        ("DOCSYNC_LIMITS__USER_WRITE_BYTES_PER_MINUTE", "1048576"),
        ("DOCSYNC_LIMITS__MAX_DOCUMENT_BYTES", "300000"),
    ]);
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Budget");
    let big = "x".repeat(90_000);
    // 90 KB + per-op allowance each, one per document (each document may hold 300 KB): 11
    // fit into 1 MiB, the 12th does not.
    let mut head = 0;
    let mut ids = Vec::new();
    let mut refused = None;
    for i in 0..20 {
        let b = id("blk_");
        let other = srv.create_doc(&alice, &format!("spill {i}"));
        let (s, v) = srv.sync(
            &alice,
            &other,
            &json!({"clientId": "cl_a", "lastSeq": 0, "ops": [insert(&b, None, "a0", &big)]}),
        );
        if s == 429 {
            refused = Some((v, other));
            break;
        }
        assert_eq!(s, 200, "{v}");
        ids.push(b);
    }
    let (v, other) = refused.expect("the budget never ran out");
    assert_eq!(ids.len(), 11, "a minute's worth went through");
    assert_eq!(v["error"]["code"], "write_budget", "{v}");
    let before = srv.fingerprint();
    let r = srv.send(
        "POST",
        &format!("/api/v1/docs/{other}/sync"),
        &Auth::Bearer(&alice),
        &[("Content-Type", "application/json")],
        Some(&json!({"clientId": "cl_a", "lastSeq": 0, "ops": [insert(&id("blk_"), None, "a0", &big)]})),
    );
    assert_eq!(r.status, 429);
    let wait: i64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&wait), "{wait}");
    srv.assert_unchanged(&before, "a refused write");
    // Pulls are never budgeted.
    assert_eq!(
        srv.sync(&alice, &other, &json!({"clientId": "cl_a", "lastSeq": 0}))
            .0,
        200
    );
    srv.advance_clock(wait * 1000);
    let (s, v) = srv.sync(
        &alice,
        &other,
        &json!({"clientId": "cl_a", "lastSeq": 0, "ops": [insert(&id("blk_"), None, "a0", &big)]}),
    );
    assert_eq!(s, 200, "refilled: {v}");

    // The size budget (300,000 bytes of text): three 90 KB bullets fit, a fourth does not.
    srv.advance_clock(60_000);
    let mut blocks = Vec::new();
    for i in 0..3 {
        let b = id("blk_");
        srv.sync_ok(
            &alice,
            &doc,
            "cl_a",
            head,
            vec![insert(&b, None, &format!("a{i}"), &big)],
        );
        head += 1;
        blocks.push(b);
    }
    let (s, v) = srv.sync(
        &alice,
        &doc,
        &json!({"clientId": "cl_a", "lastSeq": head, "ops": [insert(&id("blk_"), None, "a5", &big)]}),
    );
    assert_eq!(s, 413, "{v}");
    assert_eq!(v["error"]["code"], "document_full");
    let (s, usage) = srv.get(&alice, &format!("/api/v1/docs/{doc}/usage"));
    assert_eq!(s, 200, "{usage}");
    assert_eq!(usage["size"]["contentBytes"], 270_000);
    assert_eq!(usage["size"]["maxBytes"], 300_000);
    assert!(usage["user"]["bytesPerMinute"] == 1_048_576, "{usage}");
    // Shrinking an edit and deleting still work, and deleting makes room.
    srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        head,
        vec![set_content(&blocks[0], "short", 1)],
    );
    head += 1;
    srv.sync_ok(&alice, &doc, "cl_a", head, vec![op("delete", &blocks[1])]);
    head += 1;
    srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        head,
        vec![insert(&id("blk_"), None, "a6", &big)],
    );
    let (s, m) = srv.get_text("", "/metrics");
    assert_eq!(s, 200);
    assert!(
        m.contains(r#"docsync_quota_refusals_total{budget="user_rate"} 2"#),
        "{m}"
    );
    assert!(
        m.contains(r#"docsync_quota_refusals_total{budget="document_size"} 1"#),
        "{m}"
    );
}
