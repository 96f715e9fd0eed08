//! One change is one wake-up (PROTOCOL §4), over real sockets: a `/sync` by a client new to
//! the document (new session, new lease, new head) reaches every WebSocket and SSE
//! subscriber as exactly one `DOC_SEQ` / `doc_seq`. Counted up to a fence: a later change
//! whose wake-up must arrive after everything the first one caused (one ordered stream per
//! subscriber), so no time window decides the count.

mod common;

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
