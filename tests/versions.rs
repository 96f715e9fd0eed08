//! Versions, restore, conflict review and the trash (PROTOCOL §8) over real HTTP: every
//! endpoint for every role, restore exactly once and through the rules (leased bullets get
//! conflict copies, purged bullets come back under new IDs), retention with the movable
//! clock, and a deleted document's trip through the trash.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::common::{self, *};
use serde_json::{json, Value};

const DAY: i64 = 86_400_000;

struct People {
    alice: String,
    bob: String,
    carol: String,
    mallory: String,
}

/// alice owns `doc`, bob may write, carol may read, mallory is a stranger.
fn shared_doc(srv: &TestServer) -> (People, String) {
    let base = srv.url("");
    let p = People {
        alice: srv.add_user("alice"),
        bob: srv.add_user("bob"),
        carol: srv.add_user("carol"),
        mallory: srv.add_user("mallory"),
    };
    let doc = srv.create_doc(&p.alice, "Plan");
    let shares = json!([
        {"kind": "user", "id": common::channels::user_id(&base, &p.bob), "access": "write"},
        {"kind": "user", "id": common::channels::user_id(&base, &p.carol), "access": "read"},
    ]);
    assert_eq!(
        common::channels::put_shares(&base, &p.alice, &doc, &shares),
        200
    );
    (p, doc)
}

/// Live bullets of a snapshot-shaped body: id → (parent, key, text).
fn live(v: &Value) -> BTreeMap<String, (Value, String, String)> {
    v["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["deleted"] != true)
        .map(|b| {
            (
                b["id"].as_str().unwrap().to_string(),
                (
                    b["parentId"].clone(),
                    b["orderKey"].as_str().unwrap().to_string(),
                    b["content"].as_str().unwrap().to_string(),
                ),
            )
        })
        .collect()
}

fn versions(srv: &TestServer, token: &str, doc: &str) -> Vec<Value> {
    let (s, v) = srv.get(token, &format!("/api/v1/docs/{doc}/versions"));
    assert_eq!(s, 200, "{v}");
    v["versions"].as_array().unwrap().clone()
}

/// Waits (counting, not sleeping a fixed time) until the document has `n` automatic
/// versions: the actor keeps them on its clock tick.
fn wait_auto_versions(srv: &TestServer, token: &str, doc: &str, n: usize) -> Vec<Value> {
    let until = Instant::now() + Duration::from_secs(15);
    loop {
        let all = versions(srv, token, doc);
        if all.iter().filter(|v| v["kind"] == "auto").count() >= n {
            return all;
        }
        assert!(Instant::now() < until, "no automatic version: {all:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn head(srv: &TestServer, token: &str, doc: &str) -> i64 {
    srv.snapshot(token, doc)["headSeq"].as_i64().unwrap()
}

#[test]
fn versions_are_kept_named_read_and_compared_by_role() {
    let srv = TestServer::start();
    let (p, doc) = shared_doc(&srv);
    let (a, b) = (id("blk_"), id("blk_"));
    srv.sync_ok(
        &p.alice,
        &doc,
        "cl_a",
        0,
        vec![
            insert(&a, None, "a0", "buy milk and bread"),
            insert(&b, None, "a1", "call mum"),
        ],
    );
    // An automatic version of the changed document, at its head.
    let auto = wait_auto_versions(&srv, &p.carol, &doc, 1);
    assert_eq!(auto[0]["seq"], 2);
    assert_eq!(auto[0]["auto"], true);

    // Named by an editor; readers may not, strangers learn nothing.
    let vpath = format!("/api/v1/docs/{doc}/versions");
    let (s, named) = srv.post(&p.bob, &vpath, &json!({"name": "  Before the trip "}));
    assert_eq!(s, 201, "{named}");
    assert_eq!(named["name"], "Before the trip");
    assert_eq!(named["createdByName"], "bob");
    assert_eq!(named["auto"], false);
    assert_eq!(srv.post(&p.carol, &vpath, &json!({"name": "x"})).0, 403);
    assert_eq!(srv.post(&p.mallory, &vpath, &json!({"name": "x"})).0, 404);
    assert_eq!(srv.get(&p.mallory, &vpath).0, 404);
    for bad in [
        json!({"name": ""}),
        json!({"name": "   "}),
        json!({"name": "x".repeat(201)}),
        json!({"name": 5}),
        json!({"name": "x", "extra": 1}),
    ] {
        assert_eq!(srv.post(&p.alice, &vpath, &bad).0, 400, "{bad}");
    }
    let vid = named["versionId"].as_str().unwrap().to_string();

    // Read back like a snapshot, by anyone who can read.
    let (s, body) = srv.get(&p.carol, &format!("{vpath}/{vid}"));
    assert_eq!(s, 200, "{body}");
    assert_eq!(live(&body), live(&srv.snapshot(&p.alice, &doc)));
    assert_eq!(body["title"], "Plan");
    assert_eq!(srv.get(&p.mallory, &format!("{vpath}/{vid}")).0, 404);
    assert_eq!(srv.get(&p.alice, &format!("{vpath}/ver_nothere")).0, 404);
    assert_eq!(srv.get(&p.alice, &format!("{vpath}/nonsense")).0, 404);

    // Renamed by an editor (an automatic one named is kept like a named one).
    let auto_id = auto[0]["versionId"].as_str().unwrap();
    let (s, renamed) = srv.patch(
        &p.alice,
        &format!("{vpath}/{auto_id}"),
        &json!({"name": "First draft"}),
    );
    assert_eq!(s, 200, "{renamed}");
    assert_eq!(
        (renamed["kind"].as_str(), renamed["auto"].as_bool()),
        (Some("named"), Some(false))
    );
    assert_eq!(
        srv.patch(
            &p.carol,
            &format!("{vpath}/{auto_id}"),
            &json!({"name": "x"})
        )
        .0,
        403
    );

    // Changes, then the diff against now: added, removed, changed word by word.
    let c = id("blk_");
    srv.sync_ok(
        &p.alice,
        &doc,
        "cl_a",
        2,
        vec![
            set_content(&a, "buy oat milk and bread", 1),
            json!({"opId": id("op_"), "kind": "delete", "blockId": b}),
            insert(&c, None, "a2", "pack bags"),
        ],
    );
    let (s, d) = srv.get(&p.carol, &format!("{vpath}/{vid}/diff"));
    assert_eq!(s, 200, "{d}");
    assert_eq!(d["added"][0]["blockId"], json!(c));
    assert_eq!(d["removed"][0]["content"], "call mum");
    assert_eq!(
        d["changed"][0]["words"],
        json!([
            {"op": "same", "text": "buy "},
            {"op": "add", "text": "oat "},
            {"op": "same", "text": "milk and bread"},
        ])
    );
    assert_eq!(d["toSeq"], 5);
    // Version against version: nothing between two states that are the same.
    let (s, same) = srv.get(&p.carol, &format!("{vpath}/{vid}/diff?to={auto_id}"));
    assert_eq!(s, 200, "{same}");
    assert_eq!(
        (
            same["added"].as_array().unwrap().len(),
            same["removed"].as_array().unwrap().len(),
            same["changed"].as_array().unwrap().len()
        ),
        (0, 0, 0)
    );
    assert_eq!(
        srv.get(&p.carol, &format!("{vpath}/{vid}/diff?to=ver_nothere"))
            .0,
        404
    );
    assert_eq!(
        srv.get(&p.carol, &format!("{vpath}/{vid}/diff?from=x")).0,
        400
    );

    // Deleting: editors, named ones only.
    assert_eq!(srv.delete(&p.carol, &format!("{vpath}/{vid}")), 403);
    assert_eq!(srv.delete(&p.bob, &format!("{vpath}/{vid}")), 204);
    assert_eq!(srv.delete(&p.bob, &format!("{vpath}/{vid}")), 404);
    let list = versions(&srv, &p.alice, &doc);
    assert!(list.iter().all(|v| v["versionId"] != json!(vid)));
    let still_auto = list.iter().find(|v| v["kind"] == "auto");
    if let Some(v) = still_auto {
        let path = format!("{vpath}/{}", v["versionId"].as_str().unwrap());
        assert_eq!(srv.delete(&p.alice, &path), 409);
    }
}

#[test]
fn a_restore_runs_through_the_rules_exactly_once_and_can_be_undone() {
    let srv = TestServer::start();
    let (p, doc) = shared_doc(&srv);
    let ids: Vec<String> = (0..4).map(|_| id("blk_")).collect();
    let ops = ids
        .iter()
        .enumerate()
        .map(|(i, b)| insert(b, None, &format!("a{i}"), &format!("line {i}")))
        .collect();
    srv.sync_ok(&p.alice, &doc, "cl_a", 0, ops);
    // alice lets go of what she typed.
    let (s, _) = srv.sync(
        &p.alice,
        &doc,
        &json!({"clientId": "cl_a", "lastSeq": 4, "leases": {"hold": []}}),
    );
    assert_eq!(s, 200);
    let (_, v) = srv.post(
        &p.alice,
        &format!("/api/v1/docs/{doc}/versions"),
        &json!({"name": "Four lines"}),
    );
    let vid = v["versionId"].as_str().unwrap().to_string();
    let version = live(&srv.snapshot(&p.alice, &doc));

    // bob deletes two lines and keeps typing in a third (he holds its lease).
    srv.sync_ok(
        &p.bob,
        &doc,
        "cl_b",
        4,
        vec![
            json!({"opId": id("op_"), "kind": "delete", "blockId": ids[0]}),
            json!({"opId": id("op_"), "kind": "delete", "blockId": ids[1]}),
        ],
    );
    let (s, held) = srv.sync(
        &p.bob,
        &doc,
        &json!({"clientId": "cl_b", "lastSeq": 6, "ops": [set_content(&ids[2], "bob was here", 1)], "leases": {"hold": [ids[2]]}}),
    );
    assert_eq!(s, 200, "{held}");
    assert_eq!(held["leases"]["granted"], json!([ids[2]]));

    // Readers may not restore; bad input changes nothing.
    let rpath = format!("/api/v1/docs/{doc}/versions/{vid}/restore");
    let body = json!({"clientId": "cl_a", "opIdPrefix": "op_restore1"});
    assert_eq!(srv.post(&p.carol, &rpath, &body).0, 403);
    assert_eq!(srv.post(&p.mallory, &rpath, &body).0, 404);
    let before = srv.fingerprint();
    for bad in [
        json!({"clientId": "cl_a"}),
        json!({"clientId": "nope", "opIdPrefix": "op_r"}),
        json!({"clientId": "cl_a", "opIdPrefix": "r1"}),
        json!({"clientId": "cl_a", "opIdPrefix": "op_r", "blockIds": []}),
        json!({"clientId": "cl_a", "opIdPrefix": "op_r", "blockIds": ["x"]}),
        json!({"clientId": "cl_a", "opIdPrefix": "op_r", "more": 1}),
    ] {
        let (s, e) = srv.post(&p.alice, &rpath, &bad);
        assert_eq!(s, 400, "{bad}: {e}");
        assert!(e["error"]["message"].is_string(), "{e}");
    }
    assert_eq!(
        srv.post(
            &p.alice,
            &format!("/api/v1/docs/{doc}/versions/ver_x/restore"),
            &body
        )
        .0,
        404
    );
    srv.assert_unchanged(&before, "refused restores");

    // alice restores: the deleted lines come back, bob's bullet keeps his text and the
    // version's text lands in a conflict copy below it.
    let (s, r) = srv.post(&p.alice, &rpath, &body);
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["repeated"], false);
    assert_eq!(r["conflicts"], 1, "{r}");
    assert_eq!(r["rejected"], 0, "{r}");
    assert_eq!(r["before"]["kind"], "restore");
    let after = srv.snapshot(&p.carol, &doc);
    let now = live(&after);
    for (i, b) in ids.iter().enumerate() {
        let want = if i == 2 {
            "bob was here".to_string()
        } else {
            format!("line {i}")
        };
        assert_eq!(now[b].2, want, "{b}");
    }
    let copies: Vec<&Value> = after["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["conflictOf"] == json!(ids[2]) && b["deleted"] != true)
        .collect();
    assert_eq!(copies.len(), 1);
    assert_eq!(copies[0]["content"], "line 2");
    assert_eq!(copies[0]["conflictAuthor"]["name"], "alice");

    // The same restore again applies nothing.
    let head_after = after["headSeq"].as_i64().unwrap();
    let (s, again) = srv.post(&p.alice, &rpath, &body);
    assert_eq!(
        (s, again["repeated"].as_bool()),
        (200, Some(true)),
        "{again}"
    );
    assert_eq!(head(&srv, &p.alice, &doc), head_after);

    // bob lets go; restoring the version again now gives exactly the version.
    let (s, _) = srv.sync(
        &p.bob,
        &doc,
        &json!({"clientId": "cl_b", "lastSeq": head_after, "leases": {"hold": []}}),
    );
    assert_eq!(s, 200);
    let (s, r2) = srv.post(
        &p.alice,
        &rpath,
        &json!({"clientId": "cl_a", "opIdPrefix": "op_restore2"}),
    );
    assert_eq!(s, 200, "{r2}");
    assert_eq!(
        (r2["conflicts"].as_i64(), r2["rejected"].as_i64()),
        (Some(0), Some(0)),
        "{r2}"
    );
    assert_eq!(live(&srv.snapshot(&p.alice, &doc)), version);

    // The version kept before that restore undoes it.
    let undo = r2["before"]["versionId"].as_str().unwrap();
    let (s, _) = srv.post(
        &p.alice,
        &format!("/api/v1/docs/{doc}/versions/{undo}/restore"),
        &json!({"clientId": "cl_a", "opIdPrefix": "op_undo"}),
    );
    assert_eq!(s, 200);
    let undone = live(&srv.snapshot(&p.alice, &doc));
    assert_eq!(
        undone,
        live(&after),
        "the undo brings back the state before the second restore"
    );

    // Chosen bullets only: line 0 back to the version, nothing else touched.
    srv.sync_ok(
        &p.alice,
        &doc,
        "cl_a",
        head(&srv, &p.alice, &doc),
        vec![
            set_content(&ids[0], "changed", 1),
            set_content(&ids[1], "changed too", 1),
        ],
    );
    let (s, r3) = srv.post(
        &p.alice,
        &rpath,
        &json!({"clientId": "cl_a", "opIdPrefix": "op_restore3", "blockIds": [ids[0]]}),
    );
    assert_eq!(s, 200, "{r3}");
    let now = live(&srv.snapshot(&p.alice, &doc));
    assert_eq!(
        (now[&ids[0]].2.as_str(), now[&ids[1]].2.as_str()),
        ("line 0", "changed too")
    );
}

#[test]
fn purged_bullets_come_back_under_new_ids_and_retention_thins_automatic_versions() {
    let srv = TestServer::start_with(&[
        ("DOCSYNC_TESTING__CLOCK", "manual"),
        ("DOCSYNC_COMPACTION__RUN_AT_START", "false"),
    ]);
    let admin = srv.add_admin("root");
    // Whatever hour the clock starts at, begin at 01:00 UTC of a day, so the three hourly
    // versions below fall on one UTC day (retention keeps the newest of each day).
    let start = srv.advance_clock(0);
    srv.advance_clock(DAY - start.rem_euclid(DAY) + DAY / 24);
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Notes");
    let (a, kid) = (id("blk_"), id("blk_"));
    srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        0,
        vec![
            insert(&a, None, "a0", "parent"),
            insert(&kid, Some(&a), "a0", "child"),
        ],
    );
    // Three automatic versions an hour apart on one day, each after a change.
    let mut seq = 2;
    for n in 1..=3i64 {
        wait_auto_versions(&srv, &alice, &doc, n as usize);
        srv.advance_clock(61 * 60_000);
        srv.sync_ok(
            &alice,
            &doc,
            "cl_a",
            seq,
            vec![set_content(&a, &format!("parent {n}"), n)],
        );
        seq += 1;
    }
    let (_, named) = srv.post(
        &alice,
        &format!("/api/v1/docs/{doc}/versions"),
        &json!({"name": "keep"}),
    );
    let vid = named["versionId"].as_str().unwrap().to_string();

    // Delete, and after the tombstone period compaction purges both bullets for good.
    srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        seq,
        vec![json!({"opId": id("op_"), "kind": "delete", "blockId": a})],
    );
    srv.advance_clock(31 * DAY);
    let (s, pass) = srv.post(&admin, "/api/v1/admin/compact", &json!({}));
    assert_eq!(s, 200, "{pass}");
    assert!(srv.snapshot(&alice, &doc)["blocks"]
        .as_array()
        .unwrap()
        .is_empty());
    // Past seven days, automatic versions of one day are thinned to the newest one (a new
    // one may have been kept since, of the document as it is now).
    let week_ago = srv.advance_clock(0) - 7 * DAY;
    let autos = versions(&srv, &alice, &doc)
        .into_iter()
        .filter(|v| v["kind"] == "auto" && v["at"].as_i64().unwrap() < week_ago)
        .count();
    assert_eq!(autos, 1, "{pass}");
    assert!(pass["versions"].as_i64().unwrap() >= 2, "{pass}");

    // Restored: the same texts and tree under new IDs.
    let (s, r) = srv.post(
        &alice,
        &format!("/api/v1/docs/{doc}/versions/{vid}/restore"),
        &json!({"clientId": "cl_a", "opIdPrefix": "op_back"}),
    );
    assert_eq!(s, 200, "{r}");
    let now = live(&srv.snapshot(&alice, &doc));
    assert_eq!(now.len(), 2);
    assert!(!now.contains_key(&a) && !now.contains_key(&kid));
    let parent = now
        .iter()
        .find(|(_, v)| v.2 == "parent 3")
        .expect("parent back")
        .0
        .clone();
    let child = now.values().find(|v| v.2 == "child").expect("child back");
    assert_eq!(child.0, json!(parent));

    // Past ninety days only named versions (and the newest restore's) remain.
    srv.advance_clock(91 * DAY);
    let (s, _) = srv.post(&admin, "/api/v1/admin/compact", &json!({}));
    assert_eq!(s, 200);
    let kinds: Vec<String> = versions(&srv, &alice, &doc)
        .iter()
        .map(|v| v["kind"].as_str().unwrap().to_string())
        .collect();
    assert!(
        kinds.iter().all(|k| k == "named" || k == "auto"),
        "{kinds:?}"
    );
    assert!(kinds.contains(&"named".to_string()));
    let (_, metrics) = srv.get_text(&admin, "/metrics");
    assert!(
        metrics.contains("docsync_versions_kept"),
        "metrics lack versions_kept"
    );
}

#[test]
fn conflict_review_lists_open_copies_with_both_texts_for_readers() {
    let srv = TestServer::start();
    let (p, doc) = shared_doc(&srv);
    let b = id("blk_");
    srv.sync_ok(
        &p.alice,
        &doc,
        "cl_a",
        0,
        vec![insert(&b, None, "a0", "meet at noon")],
    );
    let (s, _) = srv.sync(
        &p.alice,
        &doc,
        &json!({"clientId": "cl_a", "lastSeq": 1, "leases": {"hold": []}}),
    );
    assert_eq!(s, 200);
    // bob holds the bullet and types; alice's edit meanwhile becomes a conflict copy.
    let (s, _) = srv.sync(&p.bob, &doc, &json!({"clientId": "cl_b", "lastSeq": 1, "ops": [set_content(&b, "meet at one", 1)], "leases": {"hold": [b]}}));
    assert_eq!(s, 200);
    let r = srv.sync_ok(
        &p.alice,
        &doc,
        "cl_a",
        2,
        vec![set_content(&b, "meet at noon sharp", 1)],
    );
    assert_eq!(r["results"][0]["status"], "conflict");
    let copy = r["results"][0]["conflictBlockId"]
        .as_str()
        .unwrap()
        .to_string();

    let (s, one) = srv.get(&p.carol, &format!("/api/v1/conflicts?docId={doc}"));
    assert_eq!(s, 200, "{one}");
    let c = &one["conflicts"][0];
    assert_eq!(
        (c["copyId"].as_str(), c["originalId"].as_str()),
        (Some(copy.as_str()), Some(b.as_str()))
    );
    assert_eq!(
        (c["copyText"].as_str(), c["originalText"].as_str()),
        (Some("meet at noon sharp"), Some("meet at one"))
    );
    assert_eq!(c["author"]["name"], "alice");
    assert_eq!(c["docTitle"], "Plan");
    // Across every readable document; strangers see none and may not name the document.
    let (_, all) = srv.get(&p.carol, "/api/v1/conflicts");
    assert_eq!(all["conflicts"].as_array().unwrap().len(), 1);
    let (_, none) = srv.get(&p.mallory, "/api/v1/conflicts");
    assert_eq!(none["conflicts"], json!([]));
    assert_eq!(
        srv.get(&p.mallory, &format!("/api/v1/conflicts?docId={doc}"))
            .0,
        404
    );
    assert_eq!(srv.get(&p.carol, "/api/v1/conflicts?doc=1").0, 400);

    // Keep both: the copy stays, the conflict is closed.
    let keep = json!({"opId": id("op_"), "kind": "set_props", "blockId": copy, "props": {"conflictResolved": true}});
    srv.sync_ok(&p.alice, &doc, "cl_a", 3, vec![keep]);
    let (_, after) = srv.get(&p.alice, &format!("/api/v1/conflicts?docId={doc}"));
    assert_eq!(after["conflicts"], json!([]));
}

#[test]
fn a_deleted_document_waits_in_its_owners_trash_with_everything() {
    let srv = TestServer::start_with(&[
        ("DOCSYNC_TESTING__CLOCK", "manual"),
        ("DOCSYNC_COMPACTION__RUN_AT_START", "false"),
    ]);
    let admin = srv.add_admin("root");
    let (p, doc) = shared_doc(&srv);
    let b = id("blk_");
    srv.sync_ok(
        &p.bob,
        &doc,
        "cl_b",
        0,
        vec![insert(&b, None, "a0", "bob's line")],
    );
    let (_, v) = srv.post(
        &p.alice,
        &format!("/api/v1/docs/{doc}/versions"),
        &json!({"name": "v1"}),
    );
    assert!(v["versionId"].is_string());

    // Only the owner deletes; then nobody reads it, it is in her trash only.
    assert_eq!(srv.delete(&p.bob, &format!("/api/v1/docs/{doc}")), 403);
    assert_eq!(srv.delete(&p.alice, &format!("/api/v1/docs/{doc}")), 204);
    for who in [&p.alice, &p.bob, &p.carol] {
        assert_eq!(srv.get(who, &format!("/api/v1/docs/{doc}/snapshot")).0, 404);
        let (_, list) = srv.get(who, "/api/v1/docs");
        assert!(list["documents"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["docId"] != json!(doc)));
    }
    // bob's late edit is refused (his tab keeps it).
    let (s, _) = srv.sync(
        &p.bob,
        &doc,
        &json!({"clientId": "cl_b", "lastSeq": 1, "ops": [set_content(&b, "late", 1)]}),
    );
    assert_eq!(s, 404);
    let (s, t) = srv.get(&p.alice, "/api/v1/trash");
    assert_eq!(s, 200, "{t}");
    assert_eq!(t["documents"][0]["docId"], json!(doc));
    assert_eq!(t["documents"][0]["blocks"], 1);
    assert_eq!(t["keepDays"], 30.0);
    assert_eq!(srv.get(&p.bob, "/api/v1/trash").1["documents"], json!([]));
    assert_eq!(
        srv.post(&p.bob, &format!("/api/v1/trash/{doc}/restore"), &json!({}))
            .0,
        404
    );
    assert_eq!(
        srv.post(&p.alice, "/api/v1/trash/nonsense/restore", &json!({}))
            .0,
        404
    );

    // Restored with everything: shares, text, versions; bob's late edit now lands.
    assert_eq!(
        srv.post(
            &p.alice,
            &format!("/api/v1/trash/{doc}/restore"),
            &json!({})
        )
        .0,
        204
    );
    let r = srv.sync_ok(&p.bob, &doc, "cl_b", 1, vec![set_content(&b, "late", 1)]);
    assert_eq!(r["results"][0]["status"], "applied");
    assert!(versions(&srv, &p.carol, &doc)
        .iter()
        .any(|v| v["name"] == "v1"));

    // Deleted again and left: purged for good after the trash period.
    assert_eq!(srv.delete(&p.alice, &format!("/api/v1/docs/{doc}")), 204);
    srv.advance_clock(29 * DAY);
    srv.post(&admin, "/api/v1/admin/compact", &json!({}));
    assert_eq!(
        srv.get(&p.alice, "/api/v1/trash").1["documents"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    srv.advance_clock(2 * DAY);
    let (_, pass) = srv.post(&admin, "/api/v1/admin/compact", &json!({}));
    assert_eq!(pass["trashed"], 1, "{pass}");
    assert_eq!(srv.get(&p.alice, "/api/v1/trash").1["documents"], json!([]));
    let db = srv.db();
    for table in [
        "documents",
        "blocks",
        "doc_ops",
        "doc_versions",
        "doc_shares",
        "block_changes",
    ] {
        let col = if table == "documents" { "id" } else { "doc_id" };
        let n: i64 = db
            .query_row(
                &format!("SELECT count(*) FROM {table} WHERE {col} = ?1"),
                [&doc],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 0, "{table} still holds rows of the purged document");
    }
    // Purging an empty trash entry by hand: 404.
    assert_eq!(srv.delete(&p.alice, &format!("/api/v1/trash/{doc}")), 404);
}

/// Versions are durable (acknowledged means on disk: a `kill -9` loses none), travel in the
/// backup, and carry a bullet's history on once compaction has removed its log entries.
#[test]
fn versions_survive_kill_9_travel_in_backups_and_outlive_the_log() {
    let mut srv = TestServer::start_with(&[
        ("DOCSYNC_TESTING__CLOCK", "manual"),
        ("DOCSYNC_COMPACTION__RUN_AT_START", "false"),
        ("DOCSYNC_HISTORY__AUTO_EVERY_MINUTES", "0"),
    ]);
    let admin = srv.add_admin("root");
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Log");
    let b = id("blk_");
    let vpath = format!("/api/v1/docs/{doc}/versions");
    srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        0,
        vec![insert(&b, None, "a0", "first words")],
    );
    let (s, _) = srv.post(&alice, &vpath, &json!({"name": "one"}));
    assert_eq!(s, 201);
    srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        1,
        vec![set_content(&b, "second words", 1)],
    );
    srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        2,
        vec![set_content(&b, "third words", 2)],
    );
    let (s, _) = srv.post(&alice, &vpath, &json!({"name": "two"}));
    assert_eq!(s, 201);

    srv.restart_after_kill();
    let names: Vec<String> = versions(&srv, &alice, &doc)
        .iter()
        .map(|v| v["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, vec!["two", "one"]);

    let file = srv.dir.path().join("versions-backup.db");
    let (ok, _, err) = srv.cli(&["backup", file.to_str().unwrap()]);
    assert!(ok, "backup: {err}");
    let copy = open_db(&file);
    let n: i64 = copy
        .query_row(
            "SELECT count(*) FROM doc_versions WHERE doc_id = ?1",
            [&doc],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 2, "the backup holds both versions");

    // A private document's log goes after a week; the bullet's past is then its versions.
    srv.advance_clock(8 * DAY);
    let (s, pass) = srv.post(&admin, "/api/v1/admin/compact", &json!({}));
    assert_eq!(s, 200, "{pass}");
    assert!(pass["logRows"].as_i64().unwrap() >= 3, "{pass}");
    let (s, h) = srv.get(&alice, &format!("/api/v1/docs/{doc}/blocks/{b}/history"));
    assert_eq!(s, 200, "{h}");
    let past: Vec<(&str, &str)> = h["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["kind"].as_str().unwrap(), c["content"].as_str().unwrap()))
        .collect();
    assert_eq!(
        past,
        vec![("version", "third words"), ("version", "first words")]
    );
    assert_eq!(h["changes"][0]["name"], "two");
}

/// Naming versions and restoring are charged to the write budgets like the writes they
/// amount to: a loop of them is refused with 429 `write_budget` and writes nothing more.
#[test]
fn versions_and_restores_are_charged_to_the_write_budget() {
    let srv = TestServer::start_with(&[
        common::channels::STILL_CLOCK,
        ("DOCSYNC_LIMITS__MAX_BODY_BYTES", "1048576"),
        ("DOCSYNC_LIMITS__USER_WRITE_BYTES_PER_MINUTE", "1048576"),
        ("DOCSYNC_HISTORY__AUTO_EVERY_MINUTES", "0"),
    ]);
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Budget");
    let b = id("blk_");
    srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        0,
        vec![insert(&b, None, "a0", &"x".repeat(90_000))],
    );
    let vpath = format!("/api/v1/docs/{doc}/versions");
    let mut named = 0;
    let mut refused = None;
    for i in 0..20 {
        let (s, v) = srv.post(&alice, &vpath, &json!({"name": format!("v{i}")}));
        if s == 201 {
            named += 1;
        } else {
            refused = Some((s, v));
            break;
        }
    }
    // 1 MiB less the first 90 KB write: ten versions of 90 KB fit, the eleventh does not.
    let (s, v) = refused.expect("a version refused");
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (429, Some("write_budget")),
        "{v}"
    );
    assert_eq!(named, 10);
    assert_eq!(versions(&srv, &alice, &doc).len(), 10);
    let vid = versions(&srv, &alice, &doc)[0]["versionId"]
        .as_str()
        .unwrap()
        .to_string();
    let before = srv.fingerprint();
    let (s, v) = srv.post(
        &alice,
        &format!("{vpath}/{vid}/restore"),
        &json!({"clientId": "cl_a", "opIdPrefix": "op_r"}),
    );
    assert_eq!(s, 429, "{v}");
    srv.assert_unchanged(&before, "a restore refused by the budget");
}
