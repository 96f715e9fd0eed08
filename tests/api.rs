//! The HTTP API end to end over real sockets: documents, sync, conflicts, idempotency, log
//! paging, resync, leases, leave, markdown, search, tags and access.

use crate::common;

use std::collections::BTreeMap;

use common::*;
use serde_json::{json, Value};

#[test]
fn create_sync_conflict_markdown_search_tags() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Plans");
    let (a, b) = (id("blk_"), id("blk_"));
    let r = srv.sync_ok(
        &alice,
        &doc,
        "cl_one",
        0,
        vec![
            insert(&a, None, "a0", "Buy milk #errands"),
            insert(&b, Some(&a), "a0", "oat"),
        ],
    );
    assert_eq!(r["results"][0]["status"], "applied");
    assert_eq!(r["results"][0]["seq"], 1);
    assert_eq!(r["results"][1]["seq"], 2);
    assert_eq!(r["headSeq"], 2);
    assert_eq!(
        r["ops"].as_array().unwrap().len(),
        2,
        "own entries come back in order"
    );

    // A second client edits with a stale baseVersion after the first changed the block.
    let r1 = srv.sync_ok(
        &alice,
        &doc,
        "cl_one",
        2,
        vec![set_content(&a, "Buy milk and bread #errands", 1)],
    );
    assert_eq!(r1["results"][0]["status"], "applied");
    let stale = set_content(&a, "Buy cheese", 1);
    let op_id = stale["opId"].as_str().unwrap().to_string();
    let r2 = srv.sync_ok(&alice, &doc, "cl_two", 0, vec![stale.clone()]);
    let res = &r2["results"][0];
    assert_eq!(res["status"], "conflict");
    let copy = res["conflictBlockId"].as_str().unwrap().to_string();
    assert!(
        copy.starts_with("blk_cf_") && copy.len() == "blk_cf_".len() + 20,
        "{copy}"
    );
    // The retry gets the very same answer and makes no second copy.
    let again = srv.sync_ok(&alice, &doc, "cl_two", 0, vec![stale]);
    assert_eq!(again["results"][0], *res);
    let snap = srv.snapshot(&alice, &doc);
    let blocks = snap["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 3);
    let copies: Vec<&Value> = blocks
        .iter()
        .filter(|b| b["conflictOf"] == a.as_str())
        .collect();
    assert_eq!(copies.len(), 1);
    assert_eq!(copies[0]["content"], "Buy cheese");
    assert_eq!(copies[0]["conflictAuthor"]["name"], "alice");
    // Document order: original, its child, then the copy right after the original's subtree.
    let order: Vec<&str> = blocks.iter().map(|b| b["id"].as_str().unwrap()).collect();
    assert_eq!(order, vec![a.as_str(), b.as_str(), copy.as_str()]);
    assert_eq!(blocks[1]["depth"], 1);
    let _ = op_id;

    let (s, md) = srv.get_text(&alice, &format!("/api/v1/docs/{doc}/markdown"));
    assert_eq!(s, 200);
    assert_eq!(
        md,
        "# Plans\n\n- Buy milk and bread #errands\n  - oat\n- Buy cheese\n"
    );

    let (s, v) = srv.get(&alice, "/api/v1/search?q=bread");
    assert_eq!(s, 200);
    assert_eq!(v["results"].as_array().unwrap().len(), 1);
    assert_eq!(v["results"][0]["blockId"], a.as_str());
    // FTS5 syntax in the query is taken as text, never as operators or an error.
    let (s, v) = srv.get(&alice, "/api/v1/search?q=mil%22%20NEAR(");
    assert_eq!(s, 200);
    assert_eq!(v["results"].as_array().unwrap().len(), 0, "{v}");
    let (s, v) = srv.get(&alice, "/api/v1/search?q=%22mil*");
    assert_eq!(s, 200);
    assert_eq!(v["results"].as_array().unwrap().len(), 1, "{v}");
    let (_, v) = srv.get(&alice, "/api/v1/tags");
    assert_eq!(v["tags"][0]["tag"], "errands");
    let (_, v) = srv.get(&alice, "/api/v1/tags/Errands");
    assert_eq!(v["blocks"][0]["blockId"], a.as_str());
}

#[test]
fn other_users_get_404_and_owner_deletes() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let doc = srv.create_doc(&alice, "Private");
    let blk = id("blk_");
    srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        0,
        vec![insert(&blk, None, "a0", "secret #hidden")],
    );
    for path in ["snapshot", "markdown"] {
        let (s, v) = srv.get(&bob, &format!("/api/v1/docs/{doc}/{path}"));
        assert_eq!(s, 404, "{path}: {v}");
        assert_eq!(v["error"]["code"], "not_found");
    }
    let (s, _) = srv.sync(
        &bob,
        &doc,
        &json!({"clientId": "cl_b", "lastSeq": 0, "ops": [set_content(&blk, "mine", 1)]}),
    );
    assert_eq!(s, 404);
    let (_, v) = srv.get(&bob, "/api/v1/search?q=secret");
    assert!(v["results"].as_array().unwrap().is_empty());
    let (_, v) = srv.get(&bob, "/api/v1/tags");
    assert!(v["tags"].as_array().unwrap().is_empty());
    let (_, v) = srv.get(&bob, "/api/v1/docs");
    assert!(v["documents"].as_array().unwrap().is_empty());
    assert_eq!(srv.delete(&bob, &format!("/api/v1/docs/{doc}")), 404);
    let (_, v) = srv.get(&alice, "/api/v1/docs");
    assert_eq!(v["documents"][0]["role"], "owner");

    // Unauthenticated requests are 401 with a JSON body.
    let (s, v) = srv.get("nope", "/api/v1/docs");
    assert_eq!(s, 401);
    assert_eq!(v["error"]["code"], "unauthorized");

    assert_eq!(srv.delete(&alice, &format!("/api/v1/docs/{doc}")), 204);
    let (s, _) = srv.get(&alice, &format!("/api/v1/docs/{doc}/snapshot"));
    assert_eq!(s, 404);
    let (_, v) = srv.get(&alice, "/api/v1/search?q=secret");
    assert!(v["results"].as_array().unwrap().is_empty());
    // In the owner's trash until she purges it; then nothing of it is left.
    assert_eq!(srv.delete(&alice, &format!("/api/v1/trash/{doc}")), 204);
    let db = srv.db();
    let rows: i64 = db
        .query_row("SELECT (SELECT count(*) FROM blocks) + (SELECT count(*) FROM doc_ops) + (SELECT count(*) FROM block_tags) + (SELECT count(*) FROM documents)", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 0);
}

#[test]
fn log_pages_by_500_and_replay_equals_snapshot() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Big");
    let keys = docsync_actors::collab::order_key::n_keys_between(None, None, 1200).unwrap();
    let ids: Vec<String> = (0..1200).map(|_| id("blk_")).collect();
    for chunk in 0..3 {
        let ops: Vec<Value> = (chunk * 400..(chunk + 1) * 400)
            .map(|i| insert(&ids[i], None, &keys[i], &format!("line {i}")))
            .collect();
        srv.sync_ok(&alice, &doc, "cl_w", 0, ops);
    }
    srv.sync_ok(
        &alice,
        &doc,
        "cl_w",
        0,
        vec![set_content(&ids[7], "changed", 1)],
    );
    srv.sync_ok(
        &alice,
        &doc,
        "cl_w",
        0,
        vec![
            json!({"opId": id("op_"), "kind": "delete", "blockId": ids[8]}),
            json!({"opId": id("op_"), "kind": "set_title", "title": "Bigger", "baseVersion": 1}),
        ],
    );
    // A fresh client catches up page by page.
    let mut last = 0;
    let mut entries = Vec::new();
    loop {
        let r = srv.sync_ok(&alice, &doc, "cl_reader", last, vec![]);
        let page = r["ops"].as_array().unwrap();
        assert!(page.len() <= 500);
        for (i, e) in page.iter().enumerate() {
            assert_eq!(e["seq"], last + 1 + i as i64, "no gap in seq");
        }
        entries.extend(page.iter().cloned());
        last = r["headSeq"].as_i64().unwrap().min(last + page.len() as i64);
        if !r["hasMore"].as_bool().unwrap() {
            assert_eq!(last, r["headSeq"].as_i64().unwrap());
            break;
        }
        assert_eq!(page.len(), 500);
    }
    assert_eq!(entries.len(), 1203);
    let mut blocks = BTreeMap::new();
    let mut title = "Big".to_string();
    replay(&mut blocks, &mut title, &entries);
    let snap = srv.snapshot(&alice, &doc);
    assert_eq!(snapshot_blocks(&snap), blocks);
    assert_eq!(snap["title"], title.as_str());
    assert_eq!(snap["headSeq"], 1203);

    // Replaying from the middle of the log onto nothing but the later entries agrees too.
    let (s, v) = srv.sync(&alice, &doc, &json!({"clientId": "cl_x", "lastSeq": 5000}));
    assert_eq!(s, 200);
    assert_eq!(v["resync"], true, "client ahead of the server must resync");
}

#[test]
fn leases_conflicts_and_leave() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Leases");
    // a second person (another client of alice herself would take her lease over)
    let bob = srv.add_user("bob");
    let bob_id = common::channels::user_id(&srv.url(""), &bob);
    let share = json!([{"kind": "user", "id": bob_id, "access": "write"}]);
    assert_eq!(
        common::channels::put_shares(&srv.url(""), &alice, &doc, &share),
        200
    );
    let blk = id("blk_");
    srv.sync_ok(&alice, &doc, "cl_a", 0, vec![insert(&blk, None, "a0", "x")]);
    // Two sessions open: full mode, leases are handed out.
    let (s, r) = srv.sync(
        &bob,
        &doc,
        &json!({"clientId": "cl_b", "lastSeq": 0, "leases": {"hold": []}}),
    );
    assert_eq!(s, 200);
    assert_eq!(r["sessions"], 2);
    assert_eq!(r["mode"], "full");
    let (_, r) = srv.sync(
        &alice,
        &doc,
        &json!({"clientId": "cl_a", "lastSeq": 1, "leases": {"hold": [blk]}}),
    );
    assert_eq!(r["leases"]["granted"], json!([blk]));
    let (_, r) = srv.sync(
        &bob,
        &doc,
        &json!({"clientId": "cl_b", "lastSeq": 1, "leases": {"hold": [blk]}}),
    );
    assert_eq!(r["leases"]["denied"][0]["blockId"], blk.as_str());
    assert_eq!(r["leases"]["denied"][0]["heldBy"]["name"], "alice");
    assert_eq!(r["leases"]["others"][0]["clientId"], "cl_a");
    // Typing into a bullet someone else holds → conflict copy, never an overwrite.
    let r = srv.sync_ok(&bob, &doc, "cl_b", 1, vec![set_content(&blk, "from b", 1)]);
    assert_eq!(r["results"][0]["status"], "conflict");
    assert_eq!(r["leases"]["granted"].as_array().map(|a| a.len()), Some(0));
    // Leave releases the lease at once.
    let (s, _) = srv.post(
        &alice,
        &format!("/api/v1/docs/{doc}/leave"),
        &json!({"clientId": "cl_a"}),
    );
    assert_eq!(s, 204);
    let r = srv.sync_ok(
        &bob,
        &doc,
        "cl_b",
        2,
        vec![set_content(&blk, "from b again", 1)],
    );
    assert_eq!(r["results"][0]["status"], "applied");
}

#[test]
fn private_mode_with_one_session() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Solo");
    let blk = id("blk_");
    let (_, r) = srv.sync(&alice, &doc, &json!({"clientId": "cl_a", "lastSeq": 0, "ops": [insert(&blk, None, "a0", "x")], "leases": {"hold": [blk]}}));
    assert_eq!(r["mode"], "private");
    assert_eq!(r["leases"]["granted"], json!([]));
    let (s, snap) = srv.get(
        &alice,
        &format!("/api/v1/docs/{doc}/snapshot?clientId=cl_b"),
    );
    assert_eq!(s, 200);
    assert_eq!(snap["mode"], "full");
    let (_, r) = srv.sync(
        &alice,
        &doc,
        &json!({"clientId": "cl_a", "lastSeq": 1, "leases": {"hold": [blk]}}),
    );
    assert_eq!(r["mode"], "full");
    assert_eq!(r["leases"]["granted"], json!([blk]));
}

#[test]
fn health_and_unknown_routes() {
    let srv = TestServer::start();
    let (s, v) = srv.get("", "/healthz");
    assert_eq!((s, v["status"].as_str()), (200, Some("ok")));
    let (s, v) = srv.get("", "/readyz");
    assert_eq!((s, v["status"].as_str()), (200, Some("ready")));
    let (s, v) = srv.get("", "/nope");
    assert_eq!(s, 404);
    assert_eq!(v["error"]["code"], "not_found");
}

#[test]
fn icon_changes_reach_open_editors() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Iconic");
    let r = srv.sync_ok(&alice, &doc, "cl_a", 0, vec![]);
    assert_eq!(r["icon"], Value::Null);
    let lease_seq = r["leaseSeq"].as_i64().unwrap();
    let (s, v) = srv.patch(
        &alice,
        &format!("/api/v1/docs/{doc}"),
        &json!({"icon": "📝"}),
    );
    assert_eq!(s, 204, "{v}");
    // The icon is outside the op log: editors are woken and see it in their next sync.
    let r = srv.sync_ok(&alice, &doc, "cl_a", 0, vec![]);
    assert_eq!(r["icon"], "📝");
    assert!(
        r["leaseSeq"].as_i64().unwrap() > lease_seq,
        "open editors are woken"
    );
    assert_eq!(srv.snapshot(&alice, &doc)["icon"], "📝");
    let (s, _) = srv.patch(
        &alice,
        &format!("/api/v1/docs/{doc}"),
        &json!({"icon": null}),
    );
    assert_eq!(s, 204);
    assert_eq!(srv.snapshot(&alice, &doc)["icon"], Value::Null);
}

/// `GET /docs/{id}/first-rows`: what a device without a copy draws while the snapshot loads —
/// the snapshot's own order, no deleted bullet, nothing below a collapsed one, at most
/// `count` rows; readers only; bad counts refused; it opens no session.
#[test]
fn first_rows_are_the_top_of_the_document_as_a_new_reader_sees_it() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let dave = srv.add_user("dave");
    let doc = srv.create_doc(&alice, "Big plans");
    let (a, a1, a1x, gone, c) = (id("blk_"), id("blk_"), id("blk_"), id("blk_"), id("blk_"));
    let mut ops = vec![
        insert(&a, None, "a0", "Top"),
        insert(&a1, Some(&a), "a0", "Folded"),
        insert(&a1x, Some(&a1), "a0", "Hidden below the fold"),
        insert(&gone, None, "a1", "Deleted"),
        insert(&c, None, "a2", "After"),
        json!({"opId": id("op_"), "kind": "set_props", "blockId": a1, "props": {"collapsed": true}}),
        json!({"opId": id("op_"), "kind": "delete", "blockId": gone}),
    ];
    for i in 0..100 {
        ops.push(insert(
            &id("blk_"),
            None,
            &format!("b{i:02}"),
            &format!("row {i}"),
        ));
    }
    srv.sync_ok(&alice, &doc, "cl_alice", 0, ops);
    let (s, v) = srv.put(
        &alice,
        &format!("/api/v1/docs/{doc}/shares"),
        &json!([{"kind": "user", "id": srv.get(&alice, "/api/v1/users?name=bob").1["id"], "access": "read"}]),
    );
    assert!(s == 200 || s == 204, "{v}");

    let (s, v) = srv.get(&bob, &format!("/api/v1/docs/{doc}/first-rows"));
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["title"], "Big plans");
    assert_eq!(v["bulletGuest"], false);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 80, "the default count");
    let shape: Vec<(String, u64, bool, bool)> = rows
        .iter()
        .take(4)
        .map(|r| {
            (
                r["content"].as_str().unwrap().to_string(),
                r["depth"].as_u64().unwrap(),
                r["collapsed"].as_bool().unwrap(),
                r["hasChildren"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        vec![
            ("Top".into(), 0, false, true),
            ("Folded".into(), 1, true, true),
            ("After".into(), 0, false, false),
            ("row 0".into(), 0, false, false),
        ]
    );
    // The same order as the snapshot's live bullets, less what is folded away.
    let snap = srv.snapshot(&alice, &doc);
    let order: Vec<&str> = snap["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["deleted"] == false && b["id"] != a1x.as_str())
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, order[..80]);
    let (s, v) = srv.get(&bob, &format!("/api/v1/docs/{doc}/first-rows?count=3"));
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["rows"].as_array().unwrap().len(), 3);

    for bad in ["0", "201", "many", "-1"] {
        let (s, v) = srv.get(&bob, &format!("/api/v1/docs/{doc}/first-rows?count={bad}"));
        assert_eq!(s, 400, "count={bad}: {v}");
        assert!(
            v["error"]["message"].is_string(),
            "a JSON error for count={bad}: {v}"
        );
    }
    let (s, _) = srv.get(&dave, &format!("/api/v1/docs/{doc}/first-rows"));
    assert_eq!(s, 404, "no access, no rows");
    let (s, _) = srv.get(&dave, "/api/v1/docs/doc_nothere/first-rows");
    assert_eq!(s, 404);

    // A plain read: bob is not counted as having the document open.
    let people = srv.snapshot(&alice, &doc)["people"].clone();
    assert!(
        people
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["name"] != "bob"),
        "{people}"
    );
}
