//! Sharing one bullet (PROTOCOL §10) over real HTTP: who may share a bullet, what its
//! guests get from every path that names the document (a table: their view where the path
//! shows one, 404 everywhere else — never a text, an ID or a title from outside), their
//! home list, their writes kept inside, their search, tags, backlinks, export, versions and
//! history over their part only, bad share lists refused without a trace, and an ended
//! share closing the guest's stream. What a guest sees while the document changes
//! is the randomized actor test's (`actors/src/document/guest_tests.rs`).

use crate::common;

use std::time::Duration;

use common::channels::{wait_subscribers, Sse, SseNext};
use common::*;
use serde_json::{json, Value};

/// Words only the parts outside the shared bullet contain.
const OUTSIDE: &str = "quarterlyzebra";
const TITLE: &str = "Board secrets";

struct World {
    srv: TestServer,
    alice: String,
    /// Bullet editor (direct share).
    bob: String,
    /// Bullet viewer (through a team).
    carol: String,
    /// Nobody.
    dave: String,
    /// An editor of the whole document.
    erin: String,
    doc: String,
    outside: String,
    root: String,
    inside: String,
}

fn uid(srv: &TestServer, token: &str, name: &str) -> String {
    let (s, v) = srv.get(token, &format!("/api/v1/users?name={name}"));
    assert_eq!(s, 200, "{v}");
    v["id"].as_str().unwrap().to_string()
}

fn world_with(env: &[(&str, &str)]) -> World {
    let srv = TestServer::start_with(env);
    let alice = srv.add_user("alice");
    let (bob, carol, dave, erin) = (
        srv.add_user("bob"),
        srv.add_user("carol"),
        srv.add_user("dave"),
        srv.add_user("erin"),
    );
    let doc = srv.create_doc(&alice, TITLE);
    let (outside, root, inside) = (id("blk_"), id("blk_"), id("blk_"));
    srv.sync_ok(
        &alice,
        &doc,
        "cl_setup",
        0,
        vec![
            insert(&outside, None, "a0", &format!("{OUTSIDE} budget")),
            insert(&root, None, "a1", "Launch plan"),
            insert(&inside, Some(&root), "a0", "Book the venue"),
        ],
    );
    let (s, v) = srv.post(&alice, "/api/v1/teams", &json!({"name": "readers"}));
    assert_eq!(s, 201, "{v}");
    let team = v["teamId"].as_str().unwrap().to_string();
    let carol_id = uid(&srv, &alice, "carol");
    let (s, v) = srv.put(
        &alice,
        &format!("/api/v1/teams/{team}/members"),
        &json!({"members": [carol_id]}),
    );
    assert!(s == 200 || s == 204, "{v}");
    let (s, v) = srv.put(
        &alice,
        &format!("/api/v1/docs/{doc}/shares"),
        &json!([{"kind": "user", "id": uid(&srv, &alice, "erin"), "access": "write"}]),
    );
    assert_eq!(s, 200, "{v}");
    let (s, v) = srv.put(
        &alice,
        &format!("/api/v1/docs/{doc}/blocks/{root}/shares"),
        &json!([
            {"kind": "user", "id": uid(&srv, &alice, "bob"), "access": "write"},
            {"kind": "team", "id": team, "access": "read"},
        ]),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["shares"].as_array().unwrap().len(), 2, "{v}");
    World {
        srv,
        alice,
        bob,
        carol,
        dave,
        erin,
        doc,
        outside,
        root,
        inside,
    }
}

/// Nothing from outside the shared bullet: not its text, its ID, or the document's title.
fn assert_no_leak(w: &World, what: &str, body: &str) {
    for secret in [OUTSIDE, TITLE, w.outside.as_str(), "cl_setup"] {
        assert!(!body.contains(secret), "{what} leaked {secret:?}: {body}");
    }
}

#[test]
fn a_bullet_guest_gets_their_view_where_a_path_shows_one_and_404_everywhere_else() {
    let w = world_with(&[]);
    let doc = w.doc.as_str();
    // (path, method, body, expected status for bob, carol, dave)
    let table: Vec<(&str, String, Option<Value>, [u16; 3])> = vec![
        (
            "GET",
            format!("/api/v1/docs/{doc}/snapshot"),
            None,
            [200, 200, 404],
        ),
        (
            "POST",
            format!("/api/v1/docs/{doc}/sync"),
            Some(json!({"lastSeq": 0})),
            [200, 200, 404],
        ),
        (
            "GET",
            format!("/api/v1/docs/{doc}/first-rows"),
            None,
            [200, 200, 404],
        ),
        (
            "GET",
            format!("/api/v1/docs/{doc}/markdown"),
            None,
            [200, 200, 404],
        ),
        (
            "GET",
            format!("/api/v1/docs/{doc}/backlinks"),
            None,
            [200, 200, 404],
        ),
        (
            "GET",
            format!("/api/v1/docs/{doc}/shares"),
            None,
            [404, 404, 404],
        ),
        (
            "GET",
            format!("/api/v1/docs/{doc}/access"),
            None,
            [404, 404, 404],
        ),
        (
            "GET",
            format!("/api/v1/docs/{doc}/versions"),
            None,
            [200, 200, 404],
        ),
        (
            "GET",
            "/api/v1/conflicts".to_string(),
            None,
            [200, 200, 200],
        ),
        (
            "GET",
            format!("/api/v1/conflicts?docId={doc}"),
            None,
            [200, 200, 404],
        ),
        (
            "GET",
            format!("/api/v1/docs/{doc}/usage"),
            None,
            [404, 404, 404],
        ),
        (
            "GET",
            format!("/api/v1/docs/{doc}/blocks/{}/history", w.inside),
            None,
            [200, 200, 404],
        ),
        (
            "GET",
            format!("/api/v1/docs/{doc}/blocks/{}/history", w.outside),
            None,
            [404, 404, 404],
        ),
        (
            "GET",
            format!("/api/v1/docs/{doc}/blocks/{}/shares", w.root),
            None,
            [404, 404, 404],
        ),
        (
            "PATCH",
            format!("/api/v1/docs/{doc}"),
            Some(json!({"icon": "x"})),
            [404, 404, 404],
        ),
        (
            "GET",
            format!("/api/v1/search?q={OUTSIDE}"),
            None,
            [200, 200, 200],
        ),
        ("GET", "/api/v1/docs".to_string(), None, [200, 200, 200]),
        ("GET", "/api/v1/tags".to_string(), None, [200, 200, 200]),
    ];
    let mut fails = Vec::new();
    for (method, path, body, expect) in &table {
        for (i, token) in [&w.bob, &w.carol, &w.dave].into_iter().enumerate() {
            let before = w.srv.fingerprint();
            // Each tab its own client ID (one belongs to one person).
            let body = body.clone().map(|mut b| {
                if *method == "POST" {
                    b["clientId"] = json!(format!("cl_probe{i}"));
                }
                b
            });
            let r = w
                .srv
                .send(method, path, &Auth::Bearer(token), &[], body.as_ref());
            if r.status != expect[i] {
                fails.push(format!(
                    "{} {method} {path}: {} (expected {})",
                    ["bob", "carol", "dave"][i],
                    r.status,
                    expect[i]
                ));
            }
            assert_no_leak(&w, path, &r.body.to_string());
            if *method != "POST" {
                w.srv.assert_unchanged(&before, &format!("{method} {path}"));
            }
        }
    }
    assert!(fails.is_empty(), "{}", fails.join("\n"));

    // Their view: the shared bullet at the top level, what is below it, its text as the
    // title, their role there.
    for (token, role) in [(&w.bob, "editor"), (&w.carol, "viewer")] {
        let snap = w.srv.snapshot(token, doc);
        let ids: Vec<&str> = snap["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, [w.root.as_str(), w.inside.as_str()], "{snap}");
        assert_eq!(snap["blocks"][0]["parentId"], Value::Null);
        assert_eq!(snap["title"], "Launch plan");
        assert_eq!(snap["role"], role);
        // Home: "Shared with me: bullets".
        let (s, v) = w.srv.get(token, "/api/v1/shared/bullets");
        assert_eq!(s, 200);
        assert_eq!(
            v["bullets"],
            json!([{"docId": doc, "blockId": w.root, "title": "Launch plan", "role": role,
                    "deleted": false}])
        );
        // Not a document of theirs.
        let (_, list) = w.srv.get(token, "/api/v1/docs");
        assert!(!list.to_string().contains(doc), "{list}");
    }
    let (_, v) = w.srv.get(&w.dave, "/api/v1/shared/bullets");
    assert_eq!(v["bullets"], json!([]));
    // Someone who sees the whole document opens the document, not the bullet.
    let (_, v) = w.srv.get(&w.erin, "/api/v1/shared/bullets");
    assert_eq!(v["bullets"], json!([]));
}

#[test]
fn a_bullet_guests_writes_stay_inside_and_a_viewer_writes_nothing() {
    let w = world_with(&[]);
    let doc = w.doc.as_str();
    // Bob edits inside: applied.
    let (s, v) = w.srv.sync(
        &w.bob,
        doc,
        &json!({"clientId": "cl_bob", "lastSeq": 0, "ops": [set_content(&w.inside, "Book the hall", 1)]}),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["results"][0]["status"], "applied", "{v}");
    // Text for the block outside is kept, as a new bullet under the shared one; the outside
    // block is untouched, and the answer is the one an unknown block gets.
    let (s, v) = w.srv.sync(
        &w.bob,
        doc,
        &json!({"clientId": "cl_bob", "lastSeq": 0, "ops": [set_content(&w.outside, "mine now", 1)]}),
    );
    assert_eq!(s, 200, "{v}");
    let made = v["results"][0]["blockId"].as_str().unwrap().to_string();
    assert_ne!(made, w.outside);
    assert_no_leak(&w, "bob's sync", &v.to_string());
    let owner = snapshot_blocks(&w.srv.snapshot(&w.alice, doc));
    assert_eq!(owner[&w.outside]["content"], format!("{OUTSIDE} budget"));
    assert_eq!(owner[&made]["parentId"], w.root.as_str());
    assert_eq!(owner[&made]["content"], "mine now");
    // A delete of the outside block is answered as for an unknown one, and leaves it be.
    let (s, v) = w.srv.sync(
        &w.bob,
        doc,
        &json!({"clientId": "cl_bob", "lastSeq": 0,
                "ops": [{"opId": id("op_"), "kind": "delete", "blockId": w.outside}]}),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["results"][0]["reason"], "unknown_block", "{v}");
    let after = snapshot_blocks(&w.srv.snapshot(&w.alice, doc));
    assert_eq!(after[&w.outside]["deleted"], false);
    // Carol only reads.
    let before = w.srv.fingerprint();
    let (s, v) = w.srv.sync(
        &w.carol,
        doc,
        &json!({"clientId": "cl_carol", "lastSeq": 0, "ops": [set_content(&w.inside, "x", 2)]}),
    );
    assert_eq!(s, 403, "{v}");
    w.srv.assert_unchanged(&before, "a bullet viewer's write");
}

#[test]
fn who_may_share_a_bullet_and_bad_share_lists_change_nothing() {
    let w = world_with(&[]);
    let path = format!("/api/v1/docs/{}/blocks/{}/shares", w.doc, w.inside);
    let bob_id = uid(&w.srv, &w.alice, "bob");
    let one = json!([{"kind": "user", "id": bob_id, "access": "read"}]);
    // An editor of the document may not (by default); a bullet guest sees no such thing.
    let before = w.srv.fingerprint();
    let (s, v) = w.srv.put(&w.erin, &path, &one);
    assert_eq!(s, 403, "{v}");
    assert!(v["error"]["message"].is_string(), "{v}");
    let (s, _) = w.srv.put(&w.bob, &path, &one);
    assert_eq!(s, 404);
    // Bad lists: an unknown person, a person twice, an unknown bullet, not a list.
    let cases: Vec<(String, Value, u16)> = vec![
        (
            path.clone(),
            json!([{"kind": "user", "id": "usr_nobody", "access": "read"}]),
            400,
        ),
        (
            path.clone(),
            json!([{"kind": "user", "id": bob_id, "access": "read"},
                   {"kind": "user", "id": bob_id, "access": "write"}]),
            400,
        ),
        (
            format!("/api/v1/docs/{}/blocks/blk_nope/shares", w.doc),
            one.clone(),
            404,
        ),
        (
            format!("/api/v1/docs/{}/blocks/{}/shares", w.doc, w.inside),
            json!({"kind": "user"}),
            400,
        ),
    ];
    for (p, body, want) in cases {
        let (s, v) = w.srv.put(&w.alice, &p, &body);
        assert_eq!(s, want, "PUT {p} {body}: {v}");
        assert!(v["error"]["message"].is_string(), "{v}");
    }
    w.srv.assert_unchanged(&before, "refused bullet shares");
    // With `sharing.editors_share_bullets`, an editor of the document may.
    let w2 = world_with(&[("DOCSYNC_SHARING__EDITORS_SHARE_BULLETS", "true")]);
    let path = format!("/api/v1/docs/{}/blocks/{}/shares", w2.doc, w2.inside);
    let dave_id = uid(&w2.srv, &w2.alice, "dave");
    let (s, v) = w2.srv.put(
        &w2.erin,
        &path,
        &json!([{"kind": "user", "id": dave_id, "access": "read"}]),
    );
    assert_eq!(s, 200, "{v}");
    let (s, v) = w2.srv.get(&w2.dave, "/api/v1/shared/bullets");
    assert_eq!(s, 200);
    assert_eq!(v["bullets"][0]["title"], "Book the venue", "{v}");
}

#[test]
fn an_ended_bullet_share_ends_the_guests_stream_and_their_next_sync() {
    let w = world_with(&[]);
    let doc = w.doc.as_str();
    let mut sse = Sse::open(&w.srv.url(""), &w.bob, doc, Some("cl_bob"));
    let (s, _) = w.srv.put(
        &w.alice,
        &format!("/api/v1/docs/{doc}/blocks/{}/shares", w.root),
        &json!([]),
    );
    assert_eq!(s, 200);
    // The stream ends (no more events), and the next sync is a stranger's.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        match sse.next(Duration::from_secs(10)) {
            SseNext::End => break,
            SseNext::Timeout => panic!("the guest's stream stayed open"),
            SseNext::Event(_, data) => assert_no_leak(&w, "an event", &data.to_string()),
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the guest's stream stayed open"
        );
    }
    let (s, _) = w
        .srv
        .sync(&w.bob, doc, &json!({"clientId": "cl_bob", "lastSeq": 0}));
    assert_eq!(s, 404);
    let (_, v) = w.srv.get(&w.bob, "/api/v1/shared/bullets");
    assert_eq!(v["bullets"], json!([]));
}

#[test]
fn the_owner_hears_a_guests_edit_at_once() {
    let w = world_with(&[]);
    let doc = w.doc.as_str();
    let mut sse = Sse::open(&w.srv.url(""), &w.alice, doc, Some("cl_alice"));
    // The stream is ready before the guest writes.
    match sse.next(Duration::from_secs(10)) {
        SseNext::Event(name, _) => assert_eq!(name, "ready"),
        other => panic!("no ready event: {other:?}"),
    }
    let (s, v) = w.srv.sync(
        &w.bob,
        doc,
        &json!({"clientId": "cl_bob", "lastSeq": 0,
                "ops": [insert(&id("blk_"), Some(&w.root), "a5", "from bob")]}),
    );
    assert_eq!(s, 200, "{v}");
    let head = v["results"][0]["seq"].as_i64().expect("applied");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        assert!(
            std::time::Instant::now() < deadline,
            "the owner never heard of it"
        );
        match sse.next(Duration::from_secs(10)) {
            SseNext::Event(name, data) if name == "doc_seq" => {
                if data["headSeq"].as_i64() >= Some(head) {
                    break;
                }
            }
            SseNext::Event(..) => {}
            other => panic!("the owner's stream: {other:?}"),
        }
    }
}

#[test]
fn a_guests_long_poll_is_answered_by_a_change_to_their_part_not_by_one_elsewhere() {
    let w = world_with(&[]);
    let doc = w.doc.as_str();
    // Bob's view, and his cursor.
    let (s, v) = w
        .srv
        .sync(&w.bob, doc, &json!({"clientId": "cl_bob", "lastSeq": 0}));
    assert_eq!(s, 200, "{v}");
    assert!(
        v["resync"].as_bool().unwrap(),
        "a first sync of a guest tab reloads: {v}"
    );
    let (_, snap) = w.srv.get(
        &w.bob,
        &format!("/api/v1/docs/{doc}/snapshot?clientId=cl_bob"),
    );
    let since = snap["headSeq"].as_i64().unwrap();
    let lease = snap["leaseSeq"].as_i64().unwrap();
    let url = format!(
        "/api/v1/docs/{doc}/changes?since={since}&leaseSeq={lease}&wait=20&clientId=cl_bob"
    );
    let (srv_url, token) = (w.srv.url(&url), w.bob.clone());
    let poll = std::thread::spawn(move || {
        let r = reqwest::blocking::Client::new()
            .get(srv_url)
            .bearer_auth(token)
            .send()
            .expect("long-poll");
        (r.status().as_u16(), r.json::<Value>().expect("json"))
    });
    // Waiting on the server (`/metrics` counts the waiters of every actor).
    wait_subscribers(&w.srv, "long_poll", 1, Duration::from_secs(10));
    // A change outside his part, then one inside: the answer is the second one's.
    let outside = w.srv.sync_ok(
        &w.alice,
        doc,
        "cl_alice",
        0,
        vec![set_content(&w.outside, &format!("{OUTSIDE} revised"), 1)],
    );
    let inside = w.srv.sync_ok(
        &w.alice,
        doc,
        "cl_alice",
        0,
        vec![set_content(&w.inside, "Book the big hall", 1)],
    );
    let (s, answer) = poll.join().unwrap();
    assert_eq!(s, 200, "{answer}");
    let at_outside = outside["results"][0]["seq"].as_i64().unwrap();
    let at_inside = inside["results"][0]["seq"].as_i64().unwrap();
    assert!(at_outside < at_inside);
    assert!(
        answer["headSeq"].as_i64().unwrap() >= at_inside,
        "answered by the change elsewhere: {answer}"
    );
}

#[test]
fn who_sees_a_bullet_names_the_shares_of_the_bullets_above_it() {
    let w = world_with(&[]);
    let doc = w.doc.as_str();
    let people = |block: &str| -> Vec<(String, String, String)> {
        let (s, v) = w.srv.get(
            &w.alice,
            &format!("/api/v1/docs/{doc}/blocks/{block}/access"),
        );
        assert_eq!(s, 200, "{v}");
        assert_no_leak(
            &w,
            "who sees a bullet",
            &v["people"].to_string().replace(TITLE, ""),
        );
        v["people"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let s = |k: &str| p[k].as_str().unwrap().to_string();
                (s("name"), s("role"), s("via"))
            })
            .collect()
    };
    // Below the shared bullet: its guests are named, through it.
    let inside = people(&w.inside);
    for want in [
        ("alice", "owner", "owner"),
        ("erin", "editor", "direct"),
        ("bob", "editor", "bullet:Launch plan"),
        ("carol", "viewer", "bullet:Launch plan"),
    ] {
        assert!(
            inside
                .iter()
                .any(|(n, r, v)| (n.as_str(), r.as_str(), v.as_str()) == want),
            "{want:?} not in {inside:?}"
        );
    }
    assert!(!inside.iter().any(|(n, ..)| n == "dave"), "{inside:?}");
    // Elsewhere in the document: only the document's readers.
    let outside = people(&w.outside);
    let names: Vec<&str> = outside.iter().map(|(n, ..)| n.as_str()).collect();
    assert_eq!(names, ["alice", "erin"], "{outside:?}");
    // A guest sees no such list (it would name the document's readers).
    let (s, _) = w.srv.get(
        &w.bob,
        &format!("/api/v1/docs/{doc}/blocks/{}/access", w.inside),
    );
    assert_eq!(s, 404);
}

/// The owner's current version of a block.
fn version_of(w: &World, block: &str) -> i64 {
    snapshot_blocks(&w.srv.snapshot(&w.alice, &w.doc))[block]["version"]
        .as_i64()
        .unwrap()
}

fn hit_ids(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} in {v}"))
        .iter()
        .map(|h| h["blockId"].as_str().unwrap().to_string())
        .collect()
}

fn op(kind: &str, block: &str, extra: Value) -> Value {
    let mut v = json!({"opId": id("op_"), "kind": kind, "blockId": block});
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

#[test]
fn a_bullet_guest_searches_exports_and_goes_back_in_history_inside_their_part_only() {
    let w = world_with(&[]);
    let (srv, doc) = (&w.srv, w.doc.as_str());
    let target = srv.create_doc(&w.alice, "Venues");
    let (s, v) = srv.put(
        &w.alice,
        &format!("/api/v1/docs/{target}/shares"),
        &json!([{"kind": "user", "id": uid(srv, &w.alice, "bob"), "access": "read"}]),
    );
    assert_eq!(s, 200, "{v}");
    let moved_in = id("blk_");
    let (inside_v, outside_v) = (version_of(&w, &w.inside), version_of(&w, &w.outside));
    let owner_writes = |ops: Vec<Value>| srv.sync_ok(&w.alice, doc, "cl_setup", 0, ops);
    owner_writes(vec![
        set_content(
            &w.inside,
            &format!("Book the venue #logistics lanternfish [[{target}]]"),
            inside_v,
        ),
        set_content(
            &w.outside,
            &format!("{OUTSIDE} budget #logistics lanternfish [[{target}]]"),
            outside_v,
        ),
        insert(&moved_in, None, "a2", &format!("{OUTSIDE} first draft")),
    ]);
    owner_writes(vec![set_content(
        &moved_in,
        "Catering",
        version_of(&w, &moved_in),
    )]);
    owner_writes(vec![op(
        "move",
        &moved_in,
        json!({"parentId": w.root, "orderKey": "a5"}),
    )]);

    // Search, tags and backlinks: a reader of the whole document finds both bullets under
    // its title; a guest only theirs, titled by the shared bullet.
    let (_, v) = srv.get(&w.erin, "/api/v1/search?q=lanternfish");
    assert_eq!(hit_ids(&v, "results").len(), 2, "{v}");
    assert_eq!(v["results"][0]["docTitle"], TITLE);
    for token in [&w.bob, &w.carol] {
        let (s, v) = srv.get(token, "/api/v1/search?q=lanternfish");
        assert_eq!(s, 200);
        assert_eq!(hit_ids(&v, "results"), vec![w.inside.clone()], "{v}");
        assert_eq!(v["results"][0]["docTitle"], "Launch plan");
        assert_no_leak(&w, "search", &v.to_string());
        let (_, v) = srv.get(token, "/api/v1/search?q=draft");
        assert!(hit_ids(&v, "results").is_empty(), "{v}");
        let (_, v) = srv.get(token, "/api/v1/tags");
        assert_eq!(
            v["tags"],
            json!([{"tag": "logistics", "blocks": 1, "documents": 1}]),
            "{v}"
        );
        let (_, v) = srv.get(token, "/api/v1/tags/logistics");
        assert_eq!(hit_ids(&v, "blocks"), vec![w.inside.clone()], "{v}");
        assert_no_leak(&w, "a tag's bullets", &v.to_string());
    }
    let (_, v) = srv.get(&w.erin, "/api/v1/tags");
    assert_eq!(v["tags"][0]["blocks"], 2, "{v}");
    let (_, v) = srv.get(&w.bob, &format!("/api/v1/docs/{target}/backlinks"));
    assert_eq!(hit_ids(&v, "backlinks"), vec![w.inside.clone()], "{v}");
    assert_no_leak(&w, "backlinks", &v.to_string());
    // A deleted bullet below the shared one is found no more; restored, it is again.
    owner_writes(vec![op("delete", &w.inside, json!({}))]);
    let (_, v) = srv.get(&w.bob, "/api/v1/search?q=lanternfish");
    assert!(hit_ids(&v, "results").is_empty(), "{v}");
    owner_writes(vec![op("restore", &w.inside, json!({}))]);
    let (_, v) = srv.get(&w.bob, "/api/v1/search?q=lanternfish");
    assert_eq!(hit_ids(&v, "results"), vec![w.inside.clone()], "{v}");

    // A conflict inside their part is theirs to review (titled by the shared bullet); one
    // outside is not.
    let stale = version_of(&w, &w.inside);
    owner_writes(vec![set_content(&w.inside, "Book the venue early", stale)]);
    let (s, v) = srv.sync(
        &w.bob,
        doc,
        &json!({"clientId": "cl_bob", "lastSeq": 0, "ops": [set_content(&w.inside, "Book the venue late", stale)]}),
    );
    assert_eq!(s, 200, "{v}");
    let stale_out = version_of(&w, &w.outside);
    owner_writes(vec![set_content(
        &w.outside,
        &format!("{OUTSIDE} one"),
        stale_out,
    )]);
    let (s, v) = srv.sync(
        &w.erin,
        doc,
        &json!({"clientId": "cl_erin", "lastSeq": 0, "ops": [set_content(&w.outside, &format!("{OUTSIDE} two"), stale_out)]}),
    );
    assert_eq!(s, 200, "{v}");
    let (_, v) = srv.get(&w.erin, "/api/v1/conflicts");
    assert_eq!(v["conflicts"].as_array().unwrap().len(), 2, "{v}");
    let (s, v) = srv.get(&w.bob, "/api/v1/conflicts");
    assert_eq!(s, 200);
    let mine = v["conflicts"].as_array().unwrap();
    assert_eq!(mine.len(), 1, "{v}");
    assert_eq!(mine[0]["originalId"], w.inside.as_str());
    assert_eq!(mine[0]["copyText"], "Book the venue late");
    assert_eq!(mine[0]["docTitle"], "Launch plan");
    assert_no_leak(&w, "conflicts", &v.to_string());
    // asked for this document: the same, their part's copy only
    let (s, one) = srv.get(&w.bob, &format!("/api/v1/conflicts?docId={doc}"));
    assert_eq!(s, 200, "{one}");
    assert_eq!(one["conflicts"], v["conflicts"], "{one}");
    let (_, v) = srv.get(&w.dave, "/api/v1/conflicts");
    assert_eq!(v["conflicts"], json!([]), "{v}");
    // Back to the text the rest of this test expects.
    owner_writes(vec![set_content(
        &w.inside,
        &format!("Book the venue #logistics lanternfish [[{target}]]"),
        version_of(&w, &w.inside),
    )]);

    // Markdown: their part, without the document's title.
    let (s, md) = srv.get_text(&w.bob, &format!("/api/v1/docs/{doc}/markdown"));
    assert_eq!(s, 200);
    assert!(md.starts_with("- Launch plan\n  - Book the venue"), "{md}");
    assert!(md.contains("\n  - Catering"), "{md}");
    assert_no_leak(&w, "markdown", &md);

    // A bullet moved in from outside: its life outside stays out of its history for guests.
    let history = |token: &str, block: &str| {
        srv.get(token, &format!("/api/v1/docs/{doc}/blocks/{block}/history"))
    };
    let (s, v) = history(&w.bob, &moved_in);
    assert_eq!(s, 200, "{v}");
    let kinds: Vec<&str> = v["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["move"], "{v}");
    assert_no_leak(&w, "history", &v.to_string());
    let (_, v) = history(&w.alice, &moved_in);
    assert_eq!(v["changes"].as_array().unwrap().len(), 3, "{v}");
    let (_, v) = history(&w.bob, &w.inside);
    assert!(v["changes"].as_array().unwrap().len() >= 3, "{v}");
    assert_no_leak(&w, "history", &v.to_string());

    // Versions: listed without name, author or sizes; opened and compared as their part.
    let (s, v) = srv.post(
        &w.alice,
        &format!("/api/v1/docs/{doc}/versions"),
        &json!({"name": "Before the zebra talks"}),
    );
    assert_eq!(s, 201, "{v}");
    let vid = v["versionId"].as_str().unwrap().to_string();
    owner_writes(vec![
        set_content(&w.inside, "Venue cancelled", version_of(&w, &w.inside)),
        set_content(
            &w.outside,
            &format!("{OUTSIDE} cut"),
            version_of(&w, &w.outside),
        ),
    ]);
    let (s, v) = srv.get(&w.bob, &format!("/api/v1/docs/{doc}/versions"));
    assert_eq!(s, 200, "{v}");
    let listed = v["versions"].as_array().unwrap();
    assert!(listed.iter().any(|m| m["versionId"] == vid.as_str()), "{v}");
    for m in listed {
        assert!(
            m.get("name").is_none() && m.get("createdBy").is_none(),
            "{m}"
        );
        assert_eq!(m["rawBytes"], 0, "{m}");
    }
    assert!(!v.to_string().contains("zebra"), "{v}");
    let (s, v) = srv.get(&w.bob, &format!("/api/v1/docs/{doc}/versions/{vid}"));
    assert_eq!(s, 200, "{v}");
    let ids: Vec<&str> = v["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    // The shared bullet, the venue, its conflict copy and the bullet moved in.
    assert_eq!(ids.len(), 4, "{v}");
    assert_eq!(ids[0], w.root);
    assert_eq!(v["blocks"][0]["parentId"], Value::Null);
    assert_eq!(v["title"], "Launch plan");
    assert_eq!(v["version"]["blocks"], 4);
    assert_no_leak(&w, "a version", &v.to_string());
    let (s, v) = srv.get(&w.bob, &format!("/api/v1/docs/{doc}/versions/{vid}/diff"));
    assert_eq!(s, 200, "{v}");
    assert!(v.to_string().contains("Venue cancelled"), "{v}");
    assert_no_leak(&w, "a diff", &v.to_string());
    let (_, whole) = srv.get(&w.alice, &format!("/api/v1/docs/{doc}/versions/{vid}/diff"));
    assert!(whole.to_string().contains(OUTSIDE), "{whole}");

    // Restore: a read-only guest may not; a writing guest brings back their part only.
    let rpath = format!("/api/v1/docs/{doc}/versions/{vid}/restore");
    let before = srv.fingerprint();
    let restore = |token: &str, body: Value| srv.post(token, &rpath, &body);
    let (s, _) = restore(
        &w.carol,
        json!({"clientId": "cl_carol", "opIdPrefix": "op_cr"}),
    );
    assert_eq!(s, 403);
    let (s, _) = restore(
        &w.dave,
        json!({"clientId": "cl_dave", "opIdPrefix": "op_dr"}),
    );
    assert_eq!(s, 404);
    let (s, e) = restore(
        &w.bob,
        json!({"clientId": "cl_bob", "opIdPrefix": "op_br", "blockIds": [w.outside]}),
    );
    assert_eq!(s, 400, "{e}");
    srv.assert_unchanged(&before, "refused guest restores");
    let (s, v) = restore(&w.bob, json!({"clientId": "cl_bob", "opIdPrefix": "op_br"}));
    assert_eq!(s, 200, "{v}");
    assert_no_leak(&w, "a restore's answer", &v.to_string());
    let owner = snapshot_blocks(&srv.snapshot(&w.alice, doc));
    let text = owner[&w.inside]["content"].as_str().unwrap();
    assert!(text.starts_with("Book the venue"), "{text}");
    assert_eq!(owner[&w.outside]["content"], format!("{OUTSIDE} cut"));
}
