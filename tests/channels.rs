//! The wake-up channels (PROTOCOL §4, §5) straight against the server over real sockets:
//! WebSocket, SSE and long-polling wake a second client after another client's op or lease
//! change with the exact headSeq/leaseSeq of that moment; documents the user may not read
//! are refused; revoked access ends streams; long-polls time out at `wait`; private ↔ full
//! mode switching; `leave` frees leases and wakes the others; PING → PONG.
//!
//! No time window decides anything: "nothing arrived" is shown by a later, known event
//! arriving next (a wake-up, a PONG), and the servers whose channels are counted exactly
//! run on a still clock (`STILL_CLOCK`), so no lease or session expires in between.

use crate::common;

use std::time::Duration;

use common::channels::*;
use common::*;
use serde_json::{json, Value};

fn sync_hold(
    srv: &TestServer,
    token: &str,
    doc: &str,
    client: &str,
    last: i64,
    hold: Value,
) -> Value {
    let (s, r) = srv.sync(
        token,
        doc,
        &json!({"clientId": client, "lastSeq": last, "leases": {"hold": hold}}),
    );
    assert_eq!(s, 200, "sync: {r}");
    r
}

#[test]
fn every_channel_wakes_on_ops_and_lease_changes() {
    let srv = TestServer::start_with(&[STILL_CLOCK]);
    let base = srv.url("");
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Live");
    let (b1, b2) = (id("blk_"), id("blk_"));
    let (ca, cb) = (id("cl_"), id("cl_"));
    srv.sync_ok(
        &alice,
        &doc,
        &ca,
        0,
        vec![
            insert(&b1, None, "a0", "one"),
            insert(&b2, None, "a1", "two"),
        ],
    );
    let r = srv.sync_ok(&alice, &doc, &cb, 0, vec![]);
    assert_eq!(
        (r["sessions"].as_i64(), r["mode"].as_str()),
        (Some(2), Some("full"))
    );
    let (head, lease) = seqs(&r);
    assert_eq!(head, 2);

    let mut open = Open::new(&base, &alice, &doc, &cb, head, lease);
    assert!(
        open.sse
            .header("content-type")
            .is_some_and(|c| c.starts_with("text/event-stream")),
        "{:?}",
        open.sse.headers
    );
    assert_eq!(
        open.sse.header("cache-control").as_deref(),
        Some("no-cache")
    );
    assert_eq!(open.sse.header("x-accel-buffering").as_deref(), Some("no"));

    // An op from the other client: headSeq moves.
    let r = srv.sync_ok(&alice, &doc, &ca, 2, vec![set_content(&b1, "one!", 1)]);
    assert_eq!(r["results"][0]["status"], "applied", "{r}");
    assert_eq!(r["headSeq"], 3);
    open.expect_woken(&base, &alice, &doc, &cb, &r);
    let lease_after_op = r["leaseSeq"].as_i64().unwrap();

    // A lease change from the other client (hold another block): only leaseSeq moves.
    let r = sync_hold(&srv, &alice, &doc, &ca, 3, json!([b2]));
    assert_eq!(r["leases"]["granted"], json!([b2]), "{r}");
    assert_eq!(r["headSeq"], 3);
    assert!(r["leaseSeq"].as_i64().unwrap() > lease_after_op, "{r}");
    open.expect_woken(&base, &alice, &doc, &cb, &r);

    // Releasing it is a lease change too.
    let r = sync_hold(&srv, &alice, &doc, &ca, 3, json!([]));
    open.expect_woken(&base, &alice, &doc, &cb, &r);

    // The woken client's own /sync sees exactly what the channels carried.
    let mine = srv.sync_ok(&alice, &doc, &cb, 3, vec![]);
    assert_eq!(seqs(&mine), seqs(&r));
}

/// A node's stream of a document is never a person's, even the document's owner's: without
/// a cluster it is not there (a JSON 404); on PostgreSQL (each test server a one-node
/// cluster) it is refused without the cluster's secret (a JSON 403).
#[test]
fn the_nodes_stream_of_a_document_is_not_a_persons() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Alone");
    let (s, v) = srv.get(&alice, &format!("/cluster/v1/docs/{doc}/stream"));
    let want = match on_postgres() {
        true => (403, Some("forbidden")),
        false => (404, Some("not_found")),
    };
    assert_eq!((s, v["error"]["code"].as_str()), want, "{v}");
}

#[test]
fn channels_refuse_documents_the_user_may_not_read() {
    let srv = TestServer::start();
    let base = srv.url("");
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let doc = srv.create_doc(&alice, "Alice only");
    srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        0,
        vec![insert(&id("blk_"), None, "a0", "x")],
    );
    let missing = id("doc_");

    let mut ws = Ws::connect(&base, Some(&bob)).expect("bob's WebSocket");
    for d in [&doc, &missing] {
        let j = ws.join(d, Some("cl_bob"));
        assert_eq!(
            j,
            json!({"type": "ERROR", "room": format!("doc:{d}"), "code": "not_found"})
        );
        let mut sse = Sse::open(&base, &bob, d, None);
        assert_eq!(sse.wait_status(WAKE), Some(404), "SSE for {d}");
        let body = sse.body(WAKE);
        assert!(
            !body.contains("event:"),
            "404 must come before any event: {body}"
        );
        let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        assert_eq!(v["error"]["code"], "not_found", "{body}");
        let (s, v) = LongPoll::start(&base, &bob, d, 0, 0, 1, None).finish(WAKE);
        assert_eq!(s, 404, "long-poll for {d}: {v}");
        assert_eq!(v["error"]["code"], "not_found");
    }
    // A refused JOIN leaves no membership: alice's changes do not reach bob.
    srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        1,
        vec![insert(&id("blk_"), None, "a1", "y")],
    );
    ws.send(json!({"type": "PING"}));
    ws.wait_for(WAKE, "PONG", |m| m["type"] == "PONG");
    assert!(
        !ws.seen.iter().any(|m| m["type"] == "DOC_SEQ"),
        "{:?}",
        ws.seen
    );

    // Without credentials there is no socket and no stream at all.
    match Ws::connect(&base, None) {
        Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => {
            assert_eq!(resp.status().as_u16(), 401)
        }
        Err(e) => panic!("unexpected WebSocket error: {e}"),
        Ok(_) => panic!("WebSocket without credentials was accepted"),
    }
    let mut sse = Sse::open(&base, "nope", &doc, None);
    assert_eq!(sse.wait_status(WAKE), Some(401));
}

#[test]
fn revoked_access_ends_the_stream_and_the_room() {
    let srv = TestServer::start();
    let base = srv.url("");
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let bob_id = user_id(&base, &bob);
    let doc = srv.create_doc(&alice, "Shared for a while");
    srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        0,
        vec![insert(&id("blk_"), None, "a0", "x")],
    );
    let read = json!([{"kind": "user", "id": bob_id, "access": "read"}]);
    assert_eq!(put_shares(&base, &alice, &doc, &read), 200);
    let r = srv.sync_ok(&bob, &doc, "cl_bob", 0, vec![]);
    assert_eq!(r["role"], "viewer");
    let (head, lease) = seqs(&r);

    let mut ws = Ws::connect(&base, Some(&bob)).expect("bob's WebSocket");
    assert_eq!(ws.join(&doc, Some("cl_bob"))["type"], "JOINED");
    let mut sse = Sse::open(&base, &bob, &doc, Some("cl_bob"));
    sse.wait_event(
        "ready",
        &json!({"docId": doc, "headSeq": head, "leaseSeq": lease}),
        WAKE,
    );

    // A share change that keeps bob's access (read → write) keeps both open.
    let write = json!([{"kind": "user", "id": bob_id, "access": "write"}]);
    assert_eq!(put_shares(&base, &alice, &doc, &write), 200);
    let r = srv.sync_ok(&bob, &doc, "cl_bob", head, vec![]);
    assert_eq!(r["role"], "editor");
    let (head, lease) = seqs(&r);
    // Both hear the change (presence may have moved on meanwhile: a later leaseSeq is fine).
    sse.wait_doc_seq_at_least(&doc, head, lease, WAKE);
    ws.wait_doc_seq_at_least(&doc, head, lease, WAKE);

    // Removing the share ends the SSE stream and sends ERROR forbidden for the room.
    assert_eq!(put_shares(&base, &alice, &doc, &json!([])), 200);
    sse.wait_end(WAKE);
    let room = format!("doc:{doc}");
    ws.wait_for(WAKE, "ERROR forbidden", |m| {
        m["type"] == "ERROR" && m["room"] == room.as_str() && m["code"] == "forbidden"
    });

    // The room is gone: alice's next op does not reach bob's socket (the socket stays up).
    // The PONG is the barrier: the op was acknowledged before the PING was sent, and the
    // socket hears the document's news in order with its own answers, so a DOC_SEQ for the
    // op would have come before it.
    let seen_before = ws.seen.len();
    srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        1,
        vec![insert(&id("blk_"), None, "a1", "y")],
    );
    ws.send(json!({"type": "PING"}));
    ws.wait_for(WAKE, "PONG", |m| m["type"] == "PONG");
    assert!(
        !ws.seen[seen_before..]
            .iter()
            .any(|m| m["type"] == "DOC_SEQ"),
        "DOC_SEQ after revocation: {:?}",
        ws.seen
    );
    // Coming back is refused like for any unreadable document.
    assert_eq!(ws.join(&doc, Some("cl_bob"))["code"], "not_found");
    let mut again = Sse::open(&base, &bob, &doc, Some("cl_bob"));
    assert_eq!(again.wait_status(WAKE), Some(404));
    let (s, _) = LongPoll::start(&base, &bob, &doc, 0, 0, 1, None).finish(WAKE);
    assert_eq!(s, 404);
}

#[test]
fn long_poll_times_out_at_wait_and_answers_at_once_when_behind() {
    let srv = TestServer::start();
    let base = srv.url("");
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Quiet");
    let r = srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        0,
        vec![insert(&id("blk_"), None, "a0", "x")],
    );
    let (head, lease) = seqs(&r);
    assert_eq!(head, 1);
    let same = json!({"headSeq": head, "leaseSeq": lease});

    // No change: the answer comes at `wait` with the unchanged values; 0 is clamped to 1 s.
    // Only bounds that a slow machine cannot break: not before `wait` (the poll really
    // waited), and long before the default 25 s (`wait` was obeyed), which `finish` checks.
    for wait in [1, 0] {
        let mut lp = LongPoll::start(&base, &alice, &doc, head, lease, wait, Some("cl_a"));
        let (s, v) = lp.finish(WAKE);
        let took = lp.started.elapsed();
        assert_eq!((s, &v), (200, &same), "wait={wait}");
        assert!(
            took >= Duration::from_secs(1),
            "wait={wait} answered after {took:?}, before its wait"
        );
    }
    // Without a clientId too (a plain reader opens no session).
    let mut lp = LongPoll::start(&base, &alice, &doc, head, lease, 1, None);
    assert_eq!(lp.finish(WAKE), (200, same.clone()));

    // Behind headSeq, or a different leaseSeq: at once, i.e. long before its wait of 25 s
    // (`finish` gives up after `WAKE`).
    for (since, ls) in [(0, lease), (head - 1, lease), (head, lease + 7)] {
        let mut lp = LongPoll::start(&base, &alice, &doc, since, ls, 25, Some("cl_a"));
        let (s, v) = lp.finish(WAKE);
        assert_eq!((s, &v), (200, &same), "since={since} leaseSeq={ls}");
    }

    // Bad parameters are a 400 with the JSON error shape of PROTOCOL §3, never a hang.
    for q in [
        "",
        "since=x",
        "since=1&wait=-1",
        "since=1&wait=-5",
        "since=1e400",
        "since=1&leaseSeq=1e400",
        "since=1&clientId=nope",
    ] {
        let (s, v) = srv.get(&alice, &format!("/api/v1/docs/{doc}/changes?{q}"));
        assert_eq!(s, 400, "?{q}: {v}");
        assert_eq!(v["error"]["code"], "bad_request", "?{q}: {v}");
        assert!(v["error"]["message"].is_string(), "?{q}: {v}");
    }
    // The same for every other query string.
    let (s, v) = srv.get(&alice, "/api/v1/users?nom=x");
    assert_eq!(s, 400, "{v}");
    assert_eq!(v["error"]["code"], "bad_request", "{v}");
}

#[test]
fn private_and_full_mode_switch_and_wake_the_open_client() {
    let srv = TestServer::start_with(&[STILL_CLOCK]);
    let base = srv.url("");
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let bob_id = user_id(&base, &bob);
    let doc = srv.create_doc(&alice, "Notes");
    let blk = id("blk_");
    let (ca, cb) = (id("cl_"), id("cl_"));
    let r = sync_hold(&srv, &alice, &doc, &ca, 0, json!([]));
    let r2 = srv.sync_ok(&alice, &doc, &ca, 0, vec![insert(&blk, None, "a0", "x")]);
    assert_eq!(
        (&r["mode"], &r["sessions"], &r["shared"]),
        (&json!("private"), &json!(1), &json!(false)),
        "{r}"
    );
    assert_eq!(r2["mode"], "private");
    let (head, lease) = seqs(&r2);
    // Alone, the client's own channels open no second session.
    let mut open = Open::new(&base, &alice, &doc, &ca, head, lease);
    let r = sync_hold(&srv, &alice, &doc, &ca, head, json!([blk]));
    assert_eq!(r["mode"], "private", "{r}");
    assert_eq!(
        r["leases"]["granted"],
        json!([]),
        "no leases in private mode: {r}"
    );
    assert_eq!(seqs(&r), (head, lease));

    // A second session (another tab) opens it: the first client is woken and goes full.
    let other = srv.sync_ok(&alice, &doc, &cb, head, vec![]);
    assert_eq!(
        (&other["mode"], &other["sessions"]),
        (&json!("full"), &json!(2))
    );
    open.expect_woken(&base, &alice, &doc, &ca, &other);
    let r = sync_hold(&srv, &alice, &doc, &ca, head, json!([blk]));
    assert_eq!(
        (&r["mode"], &r["sessions"]),
        (&json!("full"), &json!(2)),
        "{r}"
    );
    assert_eq!(r["leases"]["granted"], json!([blk]), "{r}");
    open.expect_woken(&base, &alice, &doc, &ca, &r);

    // The second tab leaves: woken again, back to private (and its lease is dropped).
    let (s, v) = srv.post(
        &alice,
        &format!("/api/v1/docs/{doc}/leave"),
        &json!({"clientId": cb}),
    );
    assert_eq!(s, 204, "{v}");
    let r = srv.sync_ok(&alice, &doc, &ca, head, vec![]);
    assert_eq!(
        (&r["mode"], &r["sessions"]),
        (&json!("private"), &json!(1)),
        "{r}"
    );
    open.expect_woken(&base, &alice, &doc, &ca, &r);

    // Sharing flips it to full even with one session (the channels hear about the share:
    // the mode may have changed); unsharing flips it back.
    let share = json!([{"kind": "user", "id": bob_id, "access": "read"}]);
    assert_eq!(put_shares(&base, &alice, &doc, &share), 200);
    let r = srv.sync_ok(&alice, &doc, &ca, head, vec![]);
    assert_eq!(
        (&r["mode"], &r["sessions"], &r["shared"]),
        (&json!("full"), &json!(1), &json!(true)),
        "{r}"
    );
    open.expect_woken(&base, &alice, &doc, &ca, &r);
    // The lease on blk was kept through the private spell: holding it again is no news
    // (and no wake-up: the next one on every channel is the unshare's).
    let held = sync_hold(&srv, &alice, &doc, &ca, head, json!([blk]));
    assert_eq!(held["leases"]["granted"], json!([blk]), "{held}");
    assert_eq!(seqs(&held), seqs(&r), "{held}");
    assert_eq!(put_shares(&base, &alice, &doc, &json!([])), 200);
    let r = srv.sync_ok(&alice, &doc, &ca, head, vec![]);
    assert_eq!(
        (&r["mode"], &r["shared"]),
        (&json!("private"), &json!(false)),
        "{r}"
    );
    open.expect_woken(&base, &alice, &doc, &ca, &r);
}

#[test]
fn leave_releases_leases_and_wakes_the_other_client() {
    let srv = TestServer::start_with(&[STILL_CLOCK]);
    let base = srv.url("");
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let bob_id = user_id(&base, &bob);
    let doc = srv.create_doc(&alice, "Together");
    let blk = id("blk_");
    srv.sync_ok(
        &alice,
        &doc,
        "cl_alice",
        0,
        vec![insert(&blk, None, "a0", "x")],
    );
    let write = json!([{"kind": "user", "id": bob_id, "access": "write"}]);
    assert_eq!(put_shares(&base, &alice, &doc, &write), 200);
    let r = sync_hold(&srv, &alice, &doc, "cl_alice", 1, json!([blk]));
    assert_eq!(r["leases"]["granted"], json!([blk]), "{r}");
    let r = sync_hold(&srv, &bob, &doc, "cl_bob", 0, json!([blk]));
    assert_eq!(r["leases"]["denied"][0]["blockId"], blk.as_str(), "{r}");
    assert_eq!(r["leases"]["others"][0]["clientId"], "cl_alice", "{r}");
    assert_eq!(r["leases"]["others"][0]["name"], "alice", "{r}");
    let (head, lease) = seqs(&r);

    let mut open = Open::new(&base, &bob, &doc, "cl_bob", head, lease);
    let (s, v) = srv.post(
        &alice,
        &format!("/api/v1/docs/{doc}/leave"),
        &json!({"clientId": "cl_alice"}),
    );
    assert_eq!(s, 204, "{v}");
    // Bob is woken with the new leaseSeq, which his next sync confirms.
    let r = srv.sync_ok(&bob, &doc, "cl_bob", head, vec![]);
    assert_eq!(r["leases"]["others"], json!([]), "{r}");
    assert_eq!(r["sessions"], 1, "{r}");
    assert!(r["leaseSeq"].as_i64().unwrap() > lease, "{r}");
    open.expect_woken(&base, &bob, &doc, "cl_bob", &r);
    // And he can take the lease now.
    let r = sync_hold(&srv, &bob, &doc, "cl_bob", head, json!([blk]));
    assert_eq!(r["leases"]["granted"], json!([blk]), "{r}");
    assert_eq!(r["leases"]["denied"], json!([]), "{r}");
    open.expect_woken(&base, &bob, &doc, "cl_bob", &r);
    // Leaving again (a client that is gone already) is harmless and wakes nobody: the
    // next wake-up on every channel is the one of bob's next change (his release).
    let (s, _) = srv.post(
        &alice,
        &format!("/api/v1/docs/{doc}/leave"),
        &json!({"clientId": "cl_alice"}),
    );
    assert_eq!(s, 204);
    let r = sync_hold(&srv, &bob, &doc, "cl_bob", head, json!([]));
    assert_eq!(r["leases"]["granted"], json!([]), "{r}");
    open.expect_woken(&base, &bob, &doc, "cl_bob", &r);
}

#[test]
fn websocket_ping_pong_and_bad_messages() {
    let srv = TestServer::start();
    let base = srv.url("");
    let alice = srv.add_user("alice");
    let mut ws = Ws::connect(&base, Some(&alice)).expect("WebSocket handshake");
    // Every PING is answered by exactly one PONG, the very next message.
    for _ in 0..3 {
        ws.send(json!({"type": "PING"}));
        match ws.next(WAKE) {
            WsNext::Msg(m) => assert_eq!(m, json!({"type": "PONG"})),
            other => panic!("{other:?} instead of PONG; seen {:?}", ws.seen),
        }
    }
    assert_eq!(ws.seen, vec![json!({"type": "PONG"}); 3]);
    ws.send(json!({"type": "JOIN", "room": "nope"}));
    let m = ws.wait_for(WAKE, "ERROR", |m| m["type"] == "ERROR");
    assert_eq!(m["code"], "bad_room");
    ws.send(json!({"type": "WHAT"}));
    let m = ws.wait_for(WAKE, "ERROR", |m| m["type"] == "ERROR");
    assert_eq!(m["code"], "bad_request");
    // Still alive afterwards.
    ws.send(json!({"type": "PING"}));
    ws.wait_for(WAKE, "PONG", |m| m["type"] == "PONG");
}
