//! Links between documents: `[[doc_…]]` in a bullet is kept like a #tag (derived in the
//! same transaction) and read back as the target's backlinks, only from documents the reader
//! may read.

use crate::common::{self, *};
use serde_json::json;

#[test]
fn backlinks_follow_the_text_and_the_readers_rights() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let mallory = srv.add_user("mallory");
    let base = srv.url("");
    let target = srv.create_doc(&alice, "Target");
    let source = srv.create_doc(&alice, "Source");
    let share =
        json!([{"kind": "user", "id": common::channels::user_id(&base, &bob), "access": "read"}]);
    assert_eq!(
        common::channels::put_shares(&base, &alice, &target, &share),
        200
    );
    let blk = id("blk_");
    let text = format!("see [[{target}]] and again [[{target}]], not [[doc_]] or [{target}]");
    srv.sync_ok(
        &alice,
        &source,
        "cl_a",
        0,
        vec![insert(&blk, None, "a0", &text)],
    );
    let path = format!("/api/v1/docs/{target}/backlinks");
    let (s, v) = srv.get(&alice, &path);
    assert_eq!(s, 200, "{v}");
    let links = v["backlinks"].as_array().unwrap();
    assert_eq!(links.len(), 1, "one bullet, however often it links: {v}");
    assert_eq!(links[0]["docId"], source.as_str());
    assert_eq!(links[0]["docTitle"], "Source");
    assert_eq!(links[0]["blockId"], blk.as_str());
    // bob reads the target but not the source: he sees no backlink from it
    let (s, v) = srv.get(&bob, &path);
    assert_eq!(s, 200);
    assert_eq!(v["backlinks"], json!([]));
    // a stranger learns nothing, not even that the document exists
    assert_eq!(srv.get(&mallory, &path).0, 404);
    assert_eq!(srv.get(&alice, "/api/v1/docs/not-a-doc/backlinks").0, 404);
    // the link goes with the text
    srv.sync_ok(
        &alice,
        &source,
        "cl_a",
        1,
        vec![set_content(&blk, "no link now", 1)],
    );
    assert_eq!(srv.get(&alice, &path).1["backlinks"], json!([]));
    srv.sync_ok(
        &alice,
        &source,
        "cl_a",
        2,
        vec![set_content(&blk, &format!("[[{target}]]"), 2)],
    );
    assert_eq!(
        srv.get(&alice, &path).1["backlinks"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    // and with the document
    assert_eq!(srv.delete(&alice, &format!("/api/v1/docs/{source}")), 204);
    assert_eq!(srv.get(&alice, &path).1["backlinks"], json!([]));
}
