//! The change feed (PROTOCOL §11) over real HTTP: every log entry of every document the
//! caller may read, in commit order across documents, rights asked when a page is read,
//! pages and cursors, a long-poll woken by the next commit, a cursor that survives a kill -9,
//! and a resync once compaction took what a cursor had not seen. Runs on PostgreSQL too.

use std::sync::mpsc;
use std::thread;

use crate::common::{self, *};
use serde_json::{json, Value};

const DAY: i64 = 86_400_000;

fn feed(srv: &TestServer, token: &str, query: &str) -> Value {
    let (s, v) = srv.get(token, &format!("/api/v1/feed{query}"));
    assert_eq!(s, 200, "GET /feed{query}: {v}");
    v
}

fn entries(page: &Value) -> &Vec<Value> {
    page["entries"].as_array().expect("entries")
}

/// (docId, seq) of every entry of the page.
fn doc_seqs(page: &Value) -> Vec<(String, i64)> {
    entries(page)
        .iter()
        .map(|e| {
            (
                e["docId"].as_str().unwrap().to_string(),
                e["seq"].as_i64().unwrap(),
            )
        })
        .collect()
}

fn add(srv: &TestServer, token: &str, doc: &str, text: &str) -> String {
    let blk = id("blk_");
    let head = srv.snapshot(token, doc)["headSeq"].as_i64().unwrap();
    let r = srv.sync_ok(
        token,
        doc,
        // A tab per person (a client ID belongs to the first user who uses it).
        &format!("cl_feed_{}", &token[token.len() - 8..]),
        head,
        vec![insert(&blk, None, &format!("a{head}"), text)],
    );
    assert_eq!(r["results"][0]["status"], "applied", "{r}");
    blk
}

fn share(srv: &TestServer, owner: &str, doc: &str, shares: Value) {
    let base = srv.url("");
    assert_eq!(
        common::channels::put_shares(&base, owner, doc, &shares),
        200
    );
}

#[test]
fn the_feed_is_every_readable_entry_in_commit_order() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let base = srv.url("");
    let bob_id = common::channels::user_id(&base, &bob);
    let a = srv.create_doc(&alice, "A");
    let b = srv.create_doc(&alice, "B");
    let c = srv.create_doc(&bob, "C");
    // Interleaved across documents and authors.
    let a1 = add(&srv, &alice, &a, "a one");
    add(&srv, &alice, &b, "b one");
    add(&srv, &bob, &c, "c one");
    add(&srv, &alice, &a, "a two");

    let page = feed(&srv, &alice, "");
    assert_eq!(
        doc_seqs(&page),
        vec![(a.clone(), 1), (b.clone(), 1), (a.clone(), 2)],
        "alice: her documents, in commit order, not bob's: {page}"
    );
    assert_eq!(page["more"], false);
    let first = &entries(&page)[0];
    assert_eq!(first["kind"], "insert");
    assert_eq!(first["blockId"], a1.as_str());
    assert_eq!(first["userId"], common::channels::user_id(&base, &alice));
    assert_eq!(first["effects"][0]["e"], "block");
    assert_eq!(first["effects"][0]["block"]["content"], "a one");
    assert!(first.get("opId").is_none() && first.get("clientId").is_none());
    let cursors: Vec<i64> = entries(&page)
        .iter()
        .map(|e| e["cursor"].as_str().unwrap().parse().unwrap())
        .collect();
    assert!(cursors.windows(2).all(|w| w[0] < w[1]), "{cursors:?}");
    assert_eq!(page["cursor"], entries(&page)[2]["cursor"]);
    assert_eq!(
        doc_seqs(&feed(&srv, &bob, "")),
        vec![(c.clone(), 1)],
        "bob: only his"
    );

    // Pages: one at a time, each cursor going on from the last.
    let one = feed(&srv, &alice, "?limit=1");
    assert_eq!(doc_seqs(&one), vec![(a.clone(), 1)]);
    assert_eq!(one["more"], true);
    let two = feed(
        &srv,
        &alice,
        &format!("?limit=1&since={}", one["cursor"].as_str().unwrap()),
    );
    assert_eq!(doc_seqs(&two), vec![(b.clone(), 1)]);
    // From the end: nothing yet, the cursor stays.
    let end = feed(
        &srv,
        &alice,
        &format!("?since={}", page["cursor"].as_str().unwrap()),
    );
    assert_eq!(entries(&end).len(), 0);
    assert_eq!(end["cursor"], page["cursor"]);

    // Rights are asked when a page is read: shared, bob reads A's entries (all of them);
    // unshared, never again.
    share(
        &srv,
        &alice,
        &a,
        json!([{"kind": "user", "id": bob_id, "access": "read"}]),
    );
    assert_eq!(
        doc_seqs(&feed(&srv, &bob, "")),
        vec![(a.clone(), 1), (c.clone(), 1), (a.clone(), 2)]
    );
    share(&srv, &alice, &a, json!([]));
    add(&srv, &alice, &a, "a three");
    assert_eq!(doc_seqs(&feed(&srv, &bob, "")), vec![(c.clone(), 1)]);
    // Entries bob may not read are passed over: his cursor moves past them.
    let bobs = feed(&srv, &bob, &format!("?since={}", cursors[2]));
    assert_eq!(entries(&bobs).len(), 0);
    assert!(bobs["cursor"].as_str().unwrap().parse::<i64>().unwrap() > cursors[2]);

    // A bullet guest's document is not in their feed (only whole documents are).
    let blk_shares = format!("/api/v1/docs/{a}/blocks/{a1}/shares");
    let (s, v) = srv.put(
        &alice,
        &blk_shares,
        &json!([{"kind": "user", "id": bob_id, "access": "read"}]),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(doc_seqs(&feed(&srv, &bob, "")), vec![(c.clone(), 1)]);
}

#[test]
fn bad_feed_requests_get_a_clear_error() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "A");
    add(&srv, &alice, &doc, "one");
    for q in [
        "?since=abc",
        "?since=-1",
        "?since=",
        "?since=1234567890123456789",
        "?since=999999",
        "?limit=0",
        "?limit=1001",
        "?wait=26",
    ] {
        let (s, v) = srv.get(&alice, &format!("/api/v1/feed{q}"));
        assert_eq!(s, 400, "{q}: {v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|e| !e.is_empty()),
            "{q}: {v}"
        );
    }
    assert_eq!(srv.get("", "/api/v1/feed").0, 401);
    assert_eq!(srv.get("dsa_not_a_token", "/api/v1/feed").0, 401);
}

#[test]
fn a_waiting_reader_is_woken_by_the_next_commit() {
    // One stream per user: while the reader waits it holds the slot, so a second waiting
    // request is refused — that is how the test knows the reader is waiting.
    let srv = TestServer::start_with(&[("DOCSYNC_LIMITS__MAX_STREAMS_PER_USER", "1")]);
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "A");
    add(&srv, &alice, &doc, "before");
    let head = feed(&srv, &alice, "")["cursor"]
        .as_str()
        .unwrap()
        .to_string();
    // Nothing new: a short wait answers empty at its end, where it was.
    let idle = feed(&srv, &alice, &format!("?since={head}&wait=1"));
    assert_eq!(entries(&idle).len(), 0);
    assert_eq!(idle["cursor"].as_str().unwrap(), head);

    let (tx, rx) = mpsc::channel();
    let url = srv.url(&format!("/api/v1/feed?since={head}&wait=25"));
    let token = alice.clone();
    let reader = thread::spawn(move || {
        let client = reqwest::blocking::Client::new();
        // A probe below may hold the one slot for a moment: then ask again.
        let r = loop {
            let r = client
                .get(&url)
                .bearer_auth(&token)
                .timeout(std::time::Duration::from_secs(60))
                .send()
                .expect("GET /feed");
            if r.status().as_u16() != 429 {
                break r;
            }
        };
        tx.send((r.status().as_u16(), r.json::<Value>().unwrap()))
            .unwrap();
    });
    let probe = format!("/api/v1/feed?since={head}&wait=1");
    while srv.get(&alice, &probe).0 != 429 {
        assert!(
            rx.try_recv().is_err(),
            "the reader answered before anything was written"
        );
    }
    let blk = add(&srv, &alice, &doc, "after");
    let (s, page) = rx.recv().unwrap();
    reader.join().unwrap();
    assert_eq!(s, 200, "{page}");
    let got = entries(&page);
    assert_eq!(
        got.len(),
        1,
        "woken with the new entry, not at the end of the wait: {page}"
    );
    assert_eq!(got[0]["blockId"], blk.as_str());
}

#[test]
fn a_cursor_survives_a_kill_and_compaction_asks_for_a_resync() {
    let mut srv = TestServer::start_with(&[
        ("DOCSYNC_TESTING__CLOCK", "manual"),
        ("DOCSYNC_COMPACTION__RUN_AT_START", "false"),
    ]);
    let admin = srv.add_admin("root");
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Private");
    for t in ["one", "two", "three"] {
        add(&srv, &alice, &doc, t);
    }
    let first = feed(&srv, &alice, "?limit=1");
    let cursor = first["cursor"].as_str().unwrap().to_string();

    srv.restart_after_kill();
    let rest = feed(&srv, &alice, &format!("?since={cursor}"));
    assert_eq!(
        doc_seqs(&rest),
        vec![(doc.clone(), 2), (doc.clone(), 3)],
        "after kill -9 the cursor goes on where it was"
    );

    // A private document's log is kept 7 days: then compaction takes entries 1-3.
    srv.advance_clock(8 * DAY);
    add(&srv, &alice, &doc, "four");
    let (s, v) = srv.post(&admin, "/api/v1/admin/compact", &json!({}));
    assert_eq!(s, 200, "{v}");
    assert_eq!(srv.snapshot(&alice, &doc)["logFloor"], 3);
    let after = feed(&srv, &alice, &format!("?since={cursor}"));
    let items = entries(&after);
    assert_eq!(
        items.len(),
        2,
        "one resync, then the entry still in the log: {after}"
    );
    assert_eq!(items[0]["docId"], doc.as_str());
    assert_eq!(items[0]["resync"], true);
    assert_eq!(items[1]["seq"], 4);
    // A reader already past what compaction took is not told to resync.
    let past = feed(
        &srv,
        &alice,
        &format!("?since={}", rest["cursor"].as_str().unwrap()),
    );
    assert_eq!(doc_seqs(&past), vec![(doc.clone(), 4)]);
}

#[test]
fn the_feed_as_events_goes_on_live_resumes_and_ends_with_the_credentials() {
    use common::channels::{Sse, SseNext};
    use std::time::Duration;
    let within = Duration::from_secs(10);
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let base = srv.url("");
    let bob_id = common::channels::user_id(&base, &bob);
    let a = srv.create_doc(&alice, "A");
    let secret = srv.create_doc(&alice, "Secret");
    share(
        &srv,
        &alice,
        &a,
        json!([{"kind": "user", "id": bob_id, "access": "read"}]),
    );
    add(&srv, &alice, &a, "one");

    let event = |sse: &mut Sse| match sse.next(within) {
        SseNext::Event(name, v) => (name, v),
        other => panic!("expected an event, got {other:?} after {:?}", sse.raw),
    };
    let mut sse = Sse::open_feed(&base, &bob, "", &[]);
    assert_eq!(sse.wait_status(within), Some(200));
    let (name, v) = event(&mut sse);
    assert_eq!(
        (name.as_str(), v["docId"].as_str(), v["seq"].as_i64()),
        ("entry", Some(a.as_str()), Some(1))
    );
    // Live: the next entry of A; the secret document's never.
    add(&srv, &alice, &secret, "hidden");
    add(&srv, &alice, &a, "two");
    let (_, v) = event(&mut sse);
    assert_eq!(
        (v["docId"].as_str(), v["seq"].as_i64()),
        (Some(a.as_str()), Some(2))
    );
    let last_id = v["cursor"].as_str().unwrap().to_string();
    assert!(sse.raw.contains(&format!("id: {last_id}\n")), "{}", sse.raw);
    // Rights lost: A's next entry is not sent; bob's own next one is.
    share(&srv, &alice, &a, json!([]));
    add(&srv, &alice, &a, "three");
    let b = srv.create_doc(&bob, "B");
    add(&srv, &bob, &b, "mine");
    let (_, v) = event(&mut sse);
    assert_eq!(
        (v["docId"].as_str(), v["seq"].as_i64()),
        (Some(b.as_str()), Some(1))
    );

    // A new stream from the last event's ID (as EventSource reconnects) goes on from there.
    let mut again = Sse::open_feed(&base, &bob, "", &[("Last-Event-ID", &last_id)]);
    let (_, v) = event(&mut again);
    assert_eq!(v["docId"].as_str(), Some(b.as_str()));
    drop(again);

    // Deactivated: the stream ends (credentials are asked for every page read).
    let (ok, _, err) = srv.cli(&["user", "deactivate", "bob"]);
    assert!(ok, "{err}");
    add(&srv, &alice, &a, "four");
    assert_eq!(sse.next(within), SseNext::End);
    // A cursor ahead of the feed is refused before a stream opens.
    let mut ahead = Sse::open_feed(&base, &alice, "?since=999999", &[]);
    assert_eq!(ahead.wait_status(within), Some(400));
}
