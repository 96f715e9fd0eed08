//! One change is one wake-up (PROTOCOL §4), over real sockets: a `/sync` by a client new to
//! the document (new session, new lease, new head) reaches every WebSocket and SSE
//! subscriber as exactly one `DOC_SEQ` / `doc_seq`. Counted up to a fence: a later change
//! whose wake-up must arrive after everything the first one caused (one ordered stream per
//! subscriber), so no time window decides the count.

use crate::common;

use std::time::Duration;

use common::channels::*;
use common::*;
use serde_json::{json, Value};

const WITHIN: Duration = Duration::from_secs(10);

/// `DOC_SEQ` messages (WebSocket) up to and including the one with `fence_head`.
fn ws_wakes_until(ws: &mut Ws, fence_head: i64) -> Vec<Value> {
    let mut out = Vec::new();
    loop {
        let m = ws.wait_for(WITHIN, "DOC_SEQ", |m| m["type"] == "DOC_SEQ");
        let done = m["headSeq"] == fence_head;
        out.push(m);
        if done {
            return out;
        }
    }
}

/// `doc_seq` events (SSE) up to and including the one with `fence_head`.
fn sse_wakes_until(sse: &mut Sse, fence_head: i64) -> Vec<Value> {
    let mut out = Vec::new();
    loop {
        match sse.next(WITHIN) {
            SseNext::Event(name, data) if name == "doc_seq" => {
                let done = data["headSeq"] == fence_head;
                out.push(data);
                if done {
                    return out;
                }
            }
            SseNext::Event(..) => {}
            other => panic!("SSE: {other:?} while waiting for doc_seq; seen {out:?}"),
        }
    }
}

#[test]
fn a_new_clients_sync_is_one_wake_up_on_every_channel() {
    let srv = TestServer::start();
    let base = srv.url("");
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Watched");
    let reader = id("cl_");
    // Two readers already watching: one over WebSocket, one over SSE.
    let r = srv.sync_ok(&alice, &doc, &reader, 0, vec![]);
    let (head, _) = seqs(&r);
    let mut ws = Ws::connect(&base, Some(&alice)).expect("ws");
    assert_eq!(ws.join(&doc, Some(&reader))["type"], "JOINED");
    let mut sse = Sse::open(&base, &alice, &doc, Some(&reader));
    assert!(matches!(sse.next(WITHIN), SseNext::Event(ref n, _) if n == "ready"));

    // A client new to the document: its session, its lease and its op are one change.
    let writer = id("cl_");
    let blk = id("blk_");
    let body = json!({"clientId": writer, "lastSeq": head,
        "ops": [insert(&blk, None, "a0", "hello")], "leases": {"hold": [blk]}});
    let (s, first) = srv.sync(&alice, &doc, &body);
    assert_eq!(s, 200, "{first}");
    let (first_head, first_lease) = seqs(&first);
    assert_eq!(first_head, head + 1);

    // The fence: the same client again (same session, same lease), one more op.
    let body = json!({"clientId": writer, "lastSeq": first_head,
        "ops": [set_content(&blk, "hello again", 1)], "leases": {"hold": [blk]}});
    let (s, fence) = srv.sync(&alice, &doc, &body);
    assert_eq!(s, 200, "{fence}");
    let (fence_head, fence_lease) = seqs(&fence);
    assert_eq!(
        fence_lease, first_lease,
        "the fence itself brings no lease news"
    );

    for (channel, wakes) in [
        ("WebSocket", ws_wakes_until(&mut ws, fence_head)),
        ("SSE", sse_wakes_until(&mut sse, fence_head)),
    ] {
        let heads: Vec<(i64, i64)> = wakes.iter().map(seqs).collect();
        assert_eq!(
            heads,
            [(first_head, first_lease), (fence_head, fence_lease)],
            "{channel}: one wake-up per change, the first carrying its lease news; got {wakes:?}"
        );
    }
}

/// The seqs of a wake-up's entries (empty when it carries none).
fn entry_seqs(wake: &Value) -> Vec<i64> {
    wake["entries"]
        .as_array()
        .map(|a| a.iter().map(|e| e["seq"].as_i64().unwrap()).collect())
        .unwrap_or_default()
}

#[test]
fn wake_ups_carry_small_changes_contiguous_with_the_previous_one() {
    let srv = TestServer::start();
    let base = srv.url("");
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Carried");
    let reader = id("cl_");
    let (start, _) = seqs(&srv.sync_ok(&alice, &doc, &reader, 0, vec![]));
    let mut ws = Ws::connect(&base, Some(&alice)).expect("ws");
    assert_eq!(ws.join(&doc, Some(&reader))["type"], "JOINED");
    let mut sse = Sse::open(&base, &alice, &doc, Some(&reader));
    assert!(matches!(sse.next(WITHIN), SseNext::Event(ref n, _) if n == "ready"));

    // Small changes from one writer in turn, then four writers at once (their commits
    // may share a transaction and their wake-ups may cover several entries), then one
    // change too big to travel with its wake-up.
    let writer = id("cl_");
    let mut head = start;
    for i in 0..5 {
        let blk = id("blk_");
        let ops = vec![insert(&blk, None, &format!("a{i}"), "small")];
        head = seqs(&srv.sync_ok(&alice, &doc, &writer, head, ops)).0;
    }
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let (srv_url, alice, doc) = (base.clone(), alice.clone(), doc.clone());
            std::thread::spawn(move || {
                let client = id("cl_");
                for i in 0..5 {
                    let ops = vec![insert(&id("blk_"), None, &format!("b{w}{i}"), "concurrent")];
                    let body = json!({"clientId": client, "lastSeq": 0, "ops": ops});
                    sync_at(&srv_url, &alice, &doc, &body);
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let big = "x".repeat(8 * 1024);
    let last = seqs(&srv.sync_ok(
        &alice,
        &doc,
        &writer,
        0,
        vec![insert(&id("blk_"), None, "a9", &big)],
    ))
    .0;
    assert_eq!(last, start + 5 + 20 + 1);

    let ws_wakes = ws_wakes_until(&mut ws, last);
    let sse_wakes = sse_wakes_until(&mut sse, last);
    for (channel, wakes) in [("WebSocket", &ws_wakes), ("SSE", &sse_wakes)] {
        let mut prev = start;
        let mut carried = Vec::new();
        for w in wakes.iter() {
            let (h, _) = seqs(w);
            let got = entry_seqs(w);
            if !got.is_empty() {
                // Exactly the entries since the previous wake-up: a client whose lastSeq is
                // that head applies them; any other client sees the gap and pulls.
                let want: Vec<i64> = (prev + 1..=h).collect();
                assert_eq!(got, want, "{channel}: entries of {w}");
                carried.extend(w["entries"].as_array().unwrap().iter().cloned());
            }
            prev = h;
        }
        let big_wake = wakes.last().unwrap();
        assert!(
            big_wake.get("entries").is_none(),
            "{channel}: an 8 KiB change is pulled, not carried: {big_wake}"
        );
        assert!(
            carried.len() >= 5,
            "{channel}: the writer's small changes one by one were carried; got {wakes:?}"
        );
        // What was carried is what /sync serves for the same seqs (a reader that fell
        // behind pulls exactly these).
        let pulled = srv.sync_ok(&alice, &doc, &reader, start, vec![]);
        let pulled = pulled["ops"].as_array().unwrap();
        for e in &carried {
            let seq = e["seq"].as_i64().unwrap();
            assert_eq!(
                e,
                &pulled[(seq - start - 1) as usize],
                "{channel}: entry {seq}"
            );
        }
    }
}

#[test]
fn a_reader_who_lost_access_hears_no_entries() {
    let srv = TestServer::start();
    let base = srv.url("");
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let doc = srv.create_doc(&alice, "Shared");
    let bob_id = user_id(&base, &bob);
    let share = json!([{"kind": "user", "id": bob_id, "access": "read"}]);
    assert_eq!(put_shares(&base, &alice, &doc, &share), 200);
    let mut ws = Ws::connect(&base, Some(&bob)).expect("ws");
    assert_eq!(ws.join(&doc, Some(&id("cl_")))["type"], "JOINED");

    let writer = id("cl_");
    let blk = id("blk_");
    let head = seqs(&srv.sync_ok(
        &alice,
        &doc,
        &writer,
        0,
        vec![insert(&blk, None, "a0", "seen")],
    ))
    .0;
    let w = ws.wait_for(WITHIN, "DOC_SEQ", |m| {
        m["type"] == "DOC_SEQ" && m["headSeq"] == head
    });
    assert_eq!(
        entry_seqs(&w),
        [head],
        "while bob reads, entries come along: {w}"
    );

    // Bob loses access; alice writes at once. Whatever bob still hears before his room is
    // closed says only that something moved.
    let before = ws.seen.len();
    assert_eq!(put_shares(&base, &alice, &doc, &json!([])), 200);
    let secret = vec![set_content(&blk, "not for bob", 1)];
    srv.sync_ok(&alice, &doc, &writer, head, secret);
    ws.wait_for(WITHIN, "ERROR forbidden", |m| {
        m["type"] == "ERROR" && m["code"] == "forbidden"
    });
    for m in &ws.seen[before..] {
        assert!(m.get("entries").is_none(), "bob lost access but heard {m}");
    }
}
