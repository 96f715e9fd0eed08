//! A client ID belongs to the user who first used it: another user naming it is refused
//! with 403 everywhere a client ID enters, and nothing changes — no lease released, no
//! write under someone else's lease.

use crate::common;

use common::channels::{put_shares, user_id, LongPoll, Sse, Ws, WAKE};
use common::{id, insert, set_content, TestServer};
use serde_json::json;

#[test]
fn another_users_client_id_is_refused_and_changes_nothing() {
    let srv = TestServer::start();
    let base = srv.url("");
    let alice = srv.add_user("alice");
    let viewer = srv.add_user("victor");
    let editor = srv.add_user("eddie");
    let doc = srv.create_doc(&alice, "Leased");
    let b = id("blk_");
    srv.sync_ok(
        &alice,
        &doc,
        "cl_alice",
        0,
        vec![insert(&b, None, "a0", "mine")],
    );
    let shares = json!([
        {"kind": "user", "id": user_id(&base, &viewer), "access": "read"},
        {"kind": "user", "id": user_id(&base, &editor), "access": "write"},
    ]);
    assert_eq!(put_shares(&base, &alice, &doc, &shares), 200);
    let (s, r) = srv.sync(
        &alice,
        &doc,
        &json!({"clientId": "cl_alice", "lastSeq": 0, "leases": {"hold": [b]}}),
    );
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["leases"]["granted"], json!([b]));
    let version = common::snapshot_blocks(&srv.snapshot(&alice, &doc))[&b]["version"]
        .as_i64()
        .unwrap();
    let before = srv.fingerprint();

    // The viewer cannot release alice's lease by naming her client.
    let (s, r) = srv.post(
        &viewer,
        &format!("/api/v1/docs/{doc}/leave"),
        &json!({"clientId": "cl_alice"}),
    );
    assert_eq!(s, 403, "{r}");
    assert_eq!(r["error"]["code"], "forbidden");
    // The editor cannot write under her lease by naming her client.
    let body = json!({"clientId": "cl_alice", "lastSeq": 0, "ops": [set_content(&b, "taken over", version)]});
    let (s, r) = srv.sync(&editor, &doc, &body);
    assert_eq!(s, 403, "{r}");
    // Nor listen or be present as her.
    let (s, _) = srv.get(
        &viewer,
        &format!("/api/v1/docs/{doc}/snapshot?clientId=cl_alice"),
    );
    assert_eq!(s, 403);
    assert_eq!(
        Sse::open(&base, &viewer, &doc, Some("cl_alice")).wait_status(WAKE),
        Some(403)
    );
    let (s, _) = LongPoll::start(&base, &viewer, &doc, 0, 0, 1, Some("cl_alice")).finish(WAKE);
    assert_eq!(s, 403);
    let mut ws = Ws::connect(&base, Some(&viewer)).expect("socket");
    assert_eq!(ws.join(&doc, Some("cl_alice"))["code"], "forbidden");
    srv.assert_unchanged(&before, "refused client IDs");

    // Alice's lease still holds: the editor's own edit becomes a conflict copy.
    let body =
        json!({"clientId": "cl_eddie", "lastSeq": 0, "ops": [set_content(&b, "his try", version)]});
    let (s, r) = srv.sync(&editor, &doc, &body);
    assert_eq!(s, 200, "{r}");
    assert_ne!(
        r["results"][0]["status"], "applied",
        "alice's lease was lost: {r}"
    );
    // Alice herself goes on with her client.
    let (s, r) = srv.post(
        &alice,
        &format!("/api/v1/docs/{doc}/leave"),
        &json!({"clientId": "cl_alice"}),
    );
    assert_eq!(s, 204, "{r}");
}
