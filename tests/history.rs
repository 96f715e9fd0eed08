//! A bullet's own history (PROTOCOL §8): every change still in the log, newest first, with
//! who made it, paged by `seq`; readers may read it, strangers learn nothing.

use crate::common::{self, *};
use serde_json::json;

#[test]
fn a_bullets_history_names_its_authors_newest_first_and_pages() {
    let srv = TestServer::start();
    let base = srv.url("");
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let carol = srv.add_user("carol");
    let mallory = srv.add_user("mallory");
    let doc = srv.create_doc(&alice, "Plan");
    let shares = json!([
        {"kind": "user", "id": common::channels::user_id(&base, &bob), "access": "write"},
        {"kind": "user", "id": common::channels::user_id(&base, &carol), "access": "read"},
    ]);
    assert_eq!(
        common::channels::put_shares(&base, &alice, &doc, &shares),
        200
    );
    let (blk, other) = (id("blk_"), id("blk_"));
    // Each edit, then its author lets go of the bullet (an edit takes a lease, and a leased
    // bullet edited by someone else would get a conflict copy instead).
    let edit = |token: &str, client: &str, last: i64, op: serde_json::Value| {
        srv.sync_ok(token, &doc, client, last, vec![op]);
        let release = json!({"clientId": client, "lastSeq": last + 1, "leases": {"hold": []}});
        assert_eq!(srv.sync(token, &doc, &release).0, 200);
    };
    srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        0,
        vec![insert(&other, None, "a1", "Eggs")],
    );
    edit(&alice, "cl_a", 1, insert(&blk, None, "a0", "Milk"));
    edit(&bob, "cl_b", 2, set_content(&blk, "Oat milk", 1));
    edit(&alice, "cl_a", 3, set_content(&other, "Six eggs", 1));
    edit(&alice, "cl_a", 4, set_content(&blk, "Oat milk, 2 l", 2));
    edit(
        &bob,
        "cl_b",
        5,
        json!({"opId": id("op_"), "kind": "delete", "blockId": blk}),
    );

    let path = format!("/api/v1/docs/{doc}/blocks/{blk}/history");
    // A reader sees it all, newest first, with names; the other bullet's change is not there.
    let (s, h) = srv.get(&carol, &path);
    assert_eq!(s, 200, "{h}");
    let changes = h["changes"].as_array().unwrap();
    let summary: Vec<(i64, &str, &str, &str, bool)> = changes
        .iter()
        .map(|c| {
            (
                c["seq"].as_i64().unwrap(),
                c["name"].as_str().unwrap(),
                c["kind"].as_str().unwrap(),
                c["content"].as_str().unwrap(),
                c["deleted"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (6, "bob", "delete", "Oat milk, 2 l", true),
            (5, "alice", "set_content", "Oat milk, 2 l", false),
            (3, "bob", "set_content", "Oat milk", false),
            (2, "alice", "insert", "Milk", false),
        ]
    );
    assert_eq!(h["more"], false);
    // Pages: two, then the rest below the last seq seen.
    let (_, p1) = srv.get(&alice, &format!("{path}?limit=2"));
    assert_eq!(p1["changes"].as_array().unwrap().len(), 2);
    assert_eq!(p1["more"], true);
    let (_, p2) = srv.get(&alice, &format!("{path}?limit=2&before=5"));
    let seqs: Vec<i64> = p2["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["seq"].as_i64().unwrap())
        .collect();
    assert_eq!(seqs, vec![3, 2]);
    assert_eq!(p2["more"], false);
    // Strangers learn nothing; bad input is a 400 after the rights.
    assert_eq!(srv.get(&mallory, &path).0, 404);
    assert_eq!(
        srv.get(&alice, &format!("/api/v1/docs/{doc}/blocks/x/history"))
            .0,
        400
    );
    assert_eq!(srv.get(&alice, &format!("{path}?limit=0")).0, 400);
    assert_eq!(srv.get(&alice, &format!("{path}?limit=101")).0, 400);
    assert_eq!(srv.get(&alice, &format!("{path}?when=now")).0, 400);
    // A bullet that never was has no history.
    let none = format!("/api/v1/docs/{doc}/blocks/blk_never/history");
    assert_eq!(srv.get(&alice, &none).1["changes"], json!([]));
}
