//! Webhooks (PROTOCOL §11) against a real receiver on a real socket (`common::receiver`):
//! signed batches of feed entries in feed order, the rights of the webhook's creator asked
//! for every batch, retries of the same delivery (same ID, same bytes) with backoff, a pause
//! after the retry window or at once on a 4xx, resume, a kill -9 mid-delivery that repeats
//! only under the same delivery ID, and bad input refused. Runs on PostgreSQL too.

use std::collections::HashMap;

use ring::hmac;
use serde_json::{json, Value};

use crate::common::receiver::{Received, Receiver};
use crate::common::{self, *};

const SECRET: &str = "a-receivers-secret-0123456789";
const HOUR: i64 = 3_600_000;

/// Quick retries, a short receiver timeout, a receiver on 127.0.0.1 allowed.
const FAST: [(&str, &str); 4] = [
    ("DOCSYNC_WEBHOOKS__RETRY_FIRST_MS", "20"),
    ("DOCSYNC_WEBHOOKS__RETRY_MAX_SECS", "1"),
    ("DOCSYNC_WEBHOOKS__TIMEOUT_SECS", "2"),
    ("DOCSYNC_WEBHOOKS__ALLOW_PRIVATE_TARGETS", "true"),
];

fn start(extra: &[(&str, &str)]) -> TestServer {
    let mut env = FAST.to_vec();
    env.extend_from_slice(extra);
    TestServer::start_with(&env)
}

fn hook(srv: &TestServer, token: &str, url: &str, doc_ids: Option<Vec<&str>>) -> Value {
    let mut body = json!({"url": url, "events": ["ops"], "secret": SECRET});
    if let Some(ids) = doc_ids {
        body["docIds"] = json!(ids);
    }
    let (s, v) = srv.post(token, "/api/v1/webhooks", &body);
    assert_eq!(s, 201, "POST /webhooks: {v}");
    assert!(
        v.get("secret").is_none(),
        "the secret is never answered: {v}"
    );
    v
}

fn add(srv: &TestServer, token: &str, doc: &str, text: &str) {
    let head = srv.snapshot(token, doc)["headSeq"].as_i64().unwrap();
    let r = srv.sync_ok(
        token,
        doc,
        &format!("cl_hook_{}", &token[token.len() - 8..]),
        head,
        vec![insert(&id("blk_"), None, &order_key(head), text)],
    );
    assert_eq!(r["results"][0]["status"], "applied", "{r}");
}

/// An order key after every earlier one (`b` and two base-62 digits).
fn order_key(n: i64) -> String {
    const DIGITS: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let n = n as usize;
    format!("b{}{}", DIGITS[n / 62] as char, DIGITS[n % 62] as char)
}

/// Every (docId, seq) of the feed as `token` reads it from the start.
fn feed_doc_seqs(srv: &TestServer, token: &str) -> Vec<(String, i64)> {
    let (s, page) = srv.get(token, "/api/v1/feed?limit=1000");
    assert_eq!(s, 200, "{page}");
    page["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["docId"].as_str().unwrap().into(),
                e["seq"].as_i64().unwrap(),
            )
        })
        .collect()
}

/// The entries acknowledged by the receiver (answered 2xx), each delivery once, in order.
fn acknowledged(received: &[Received]) -> Vec<(String, i64)> {
    received
        .iter()
        .filter(|r| r.answered.is_some_and(|s| (200..300).contains(&s)))
        .flat_map(|r| r.doc_seqs())
        .collect()
}

fn verify(r: &Received) {
    let key = hmac::Key::new(hmac::HMAC_SHA256, SECRET.as_bytes());
    let sig = r.header("x-docsync-signature").expect("signature header");
    let hex_sig = sig.strip_prefix("sha256=").expect("sha256=");
    let tag = hex::decode(hex_sig).expect("hex");
    assert!(
        hmac::verify(&key, &r.raw, &tag).is_ok(),
        "signature over the exact body"
    );
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.body["deliveryId"].as_str(), Some(r.delivery()));
    assert_eq!(r.body["cursor"].as_str(), r.header("x-docsync-cursor"));
}

fn webhook(srv: &TestServer, token: &str, id: &str) -> Value {
    let (s, v) = srv.get(token, &format!("/api/v1/webhooks/{id}"));
    assert_eq!(s, 200, "{v}");
    v
}

/// The webhook once `done` holds for it (polled: its row changes after the receiver's answer).
fn wait_webhook(
    srv: &TestServer,
    token: &str,
    id: &str,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let h = webhook(srv, token, id);
        if done(&h) {
            return h;
        }
        assert!(std::time::Instant::now() < deadline, "never {what}: {h}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn wait_paused(srv: &TestServer, token: &str, id: &str) -> Value {
    wait_webhook(srv, token, id, "paused", |h| h["state"] == "paused")
}

#[test]
fn deliveries_are_signed_in_feed_order_and_only_what_the_creator_may_hook() {
    let srv = start(&[]);
    let admin = srv.add_admin("root");
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let base = srv.url("");
    let bob_id = common::channels::user_id(&base, &bob);
    let a = srv.create_doc(&alice, "A");
    let b = srv.create_doc(&bob, "B");
    // Bob may edit A, but A is alice's: his webhook does not carry it.
    assert_eq!(
        common::channels::put_shares(
            &base,
            &alice,
            &a,
            &json!([{"kind": "user", "id": bob_id, "access": "write"}])
        ),
        200
    );
    add(&srv, &alice, &a, "before any webhook");
    let all = Receiver::start();
    let bobs = Receiver::start();
    let everything = hook(&srv, &admin, &all.url, None);
    assert_eq!(everything["state"], "active");
    hook(&srv, &bob, &bobs.url, None);

    for i in 0..6 {
        add(&srv, &alice, &a, &format!("alice {i}"));
        add(&srv, &bob, &b, &format!("bob in B {i}"));
        add(&srv, &bob, &a, &format!("bob in A {i}"));
    }
    // The admin's webhook: every entry made since it was made, in feed order, each once
    // (bob reads both documents: his feed has every entry).
    let expected: Vec<(String, i64)> = feed_doc_seqs(&srv, &bob).split_off(1);
    assert_eq!(expected.len(), 18);
    let got = all.wait_for("every entry", |r| acknowledged(r).len() >= 18);
    assert_eq!(acknowledged(&got), expected);
    let mut ids: Vec<&str> = got.iter().map(Received::delivery).collect();
    ids.dedup();
    assert_eq!(ids.len(), got.len(), "a new delivery ID per batch");
    for r in &got {
        verify(r);
        assert_eq!(r.header("x-docsync-webhook"), everything["id"].as_str());
        assert_eq!(r.header("x-docsync-attempt"), Some("1"));
        let first = &r.body["entries"][0];
        assert!(
            first["effects"].is_array() && first["userId"].is_string(),
            "{first}"
        );
    }
    // Bob's: only B, his own document.
    let got = bobs.wait_for("B's entries", |r| acknowledged(r).len() >= 6);
    let docs: Vec<String> = acknowledged(&got).into_iter().map(|(d, _)| d).collect();
    assert_eq!(docs, vec![b.clone(); 6], "only B");

    // A webhook from the start of the feed: alice's own document, the entry made before
    // any webhook included.
    let replay = Receiver::start();
    let (s, v) = srv.post(
        &alice,
        "/api/v1/webhooks",
        &json!({"url": replay.url, "events": ["ops"], "secret": SECRET, "since": "0"}),
    );
    assert_eq!(s, 201, "{v}");
    let got = replay.wait_for("A from the start", |r| acknowledged(r).len() >= 13);
    let want: Vec<(String, i64)> = (1..=13).map(|n| (a.clone(), n)).collect();
    assert_eq!(acknowledged(&got), want);

    // The delivery log and where the webhook stands.
    let id = everything["id"].as_str().unwrap();
    let last = got_cursor(&all.received());
    let h = wait_webhook(&srv, &admin, id, "at the last cursor", |h| {
        h["cursor"] == last
    });
    let (s, log) = srv.get(&admin, &format!("/api/v1/webhooks/{id}/deliveries"));
    assert_eq!(s, 200, "{log}");
    let log = log["deliveries"].as_array().unwrap().clone();
    assert!(log
        .iter()
        .all(|d| d["outcome"] == "delivered" && d["status"] == 200));
    assert!(
        h["deliveredAt"].is_i64() && h["pendingDelivery"].is_null(),
        "{h}"
    );
    // Bob sees his own webhook only; the admin sees all three.
    let (_, mine) = srv.get(&bob, "/api/v1/webhooks");
    assert_eq!(mine["webhooks"].as_array().unwrap().len(), 1);
    let (_, every) = srv.get(&admin, "/api/v1/webhooks");
    assert_eq!(every["webhooks"].as_array().unwrap().len(), 3);
    assert_eq!(srv.get(&alice, &format!("/api/v1/webhooks/{id}")).0, 404);
    assert_eq!(srv.delete(&alice, &format!("/api/v1/webhooks/{id}")), 404);

    // Deleted: nothing more arrives (an edit after it goes nowhere).
    assert_eq!(srv.delete(&admin, &format!("/api/v1/webhooks/{id}")), 204);
    let before = all.received().len();
    add(&srv, &alice, &a, "after the delete");
    // Bob's webhook delivers nothing of A either; an entry of B proves the deliverers ran.
    add(&srv, &bob, &b, "B after the delete");
    bobs.wait_for("B's next entry", |r| acknowledged(r).len() >= 7);
    assert_eq!(
        all.received().len(),
        before,
        "a deleted webhook sends nothing"
    );
}

fn got_cursor(received: &[Received]) -> Value {
    received.last().unwrap().body["cursor"].clone()
}

#[test]
fn a_failing_receiver_gets_the_same_delivery_again_until_the_retry_window_ends() {
    let srv = start(&[common::channels::STILL_CLOCK]);
    let alice = srv.add_user("alice");
    let a = srv.create_doc(&alice, "A");
    let recv = Receiver::start();
    recv.answer(&[500, 503, 429], 200);
    let h = hook(&srv, &alice, &recv.url, Some(vec![&a]));
    let id = h["id"].as_str().unwrap().to_string();
    add(&srv, &alice, &a, "one");
    let got = recv.wait_for("the fourth attempt", |r| r.len() >= 4);
    let first = &got[0];
    for (n, r) in got.iter().enumerate() {
        assert_eq!(r.delivery(), first.delivery(), "the same delivery ID");
        assert_eq!(r.raw, first.raw, "the same bytes");
        assert_eq!(
            r.header("x-docsync-attempt"),
            Some((n + 1).to_string().as_str())
        );
        verify(r);
    }
    wait_webhook(&srv, &alice, &id, "delivered", |h| {
        h["deliveredAt"].is_i64()
    });
    let (_, log) = srv.get(&alice, &format!("/api/v1/webhooks/{id}/deliveries"));
    let outcomes: Vec<(&str, i64)> = log["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["outcome"].as_str().unwrap(),
                d["status"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        vec![
            ("delivered", 200),
            ("failed", 429),
            ("failed", 503),
            ("failed", 500)
        ],
        "newest first"
    );

    // Failing for good: retried while the clock is inside the window…
    recv.answer(&[], 500);
    add(&srv, &alice, &a, "two");
    let failing = recv.received().len();
    recv.wait_for("retries", |r| r.len() >= failing + 3);
    assert_eq!(webhook(&srv, &alice, &id)["state"], "active");
    // …and paused once it has failed for 24 hours.
    srv.advance_clock(24 * HOUR + 1);
    let paused = wait_paused(&srv, &alice, &id);
    let reason = paused["pausedReason"].as_str().unwrap();
    assert!(
        reason.contains("failed for 24 h") && reason.contains("500"),
        "{reason}"
    );
    add(&srv, &alice, &a, "three, while paused");
    let at_pause = recv.received().len();
    let pending = paused["pendingDelivery"].as_str().unwrap().to_string();

    // Resumed with the receiver mended: the pending delivery (same ID) first, then the rest.
    recv.answer(&[], 200);
    let (s, r) = srv.post(&alice, &format!("/api/v1/webhooks/{id}/resume"), &json!({}));
    assert_eq!((s, r["state"].as_str()), (200, Some("active")), "{r}");
    let got = recv.wait_for("the rest", |r| acknowledged(r).len() >= 3);
    assert_eq!(
        got[at_pause].delivery(),
        pending,
        "the pending delivery first"
    );
    let seqs: Vec<i64> = acknowledged(&got).into_iter().map(|(_, s)| s).collect();
    assert_eq!(seqs, vec![1, 2, 3], "nothing skipped, nothing twice");
}

#[test]
fn a_receiver_that_refuses_pauses_the_webhook_at_once() {
    let srv = start(&[]);
    let alice = srv.add_user("alice");
    let a = srv.create_doc(&alice, "A");
    let recv = Receiver::start();
    recv.answer(&[], 410);
    let h = hook(&srv, &alice, &recv.url, None);
    let id = h["id"].as_str().unwrap();
    add(&srv, &alice, &a, "one");
    let paused = wait_paused(&srv, &alice, id);
    assert!(
        paused["pausedReason"].as_str().unwrap().contains("410"),
        "{paused}"
    );
    assert_eq!(recv.received().len(), 1, "a 4xx is not retried");
    let (_, log) = srv.get(&alice, &format!("/api/v1/webhooks/{id}/deliveries"));
    assert_eq!(log["deliveries"][0]["outcome"], "paused");
    assert_eq!(log["deliveries"][0]["status"], 410);
}

#[test]
fn a_kill_9_mid_delivery_repeats_it_under_the_same_id_and_skips_nothing() {
    let mut srv = start(&[]);
    let alice = srv.add_user("alice");
    let a = srv.create_doc(&alice, "A");
    let recv = Receiver::start();
    hook(&srv, &alice, &recv.url, None);
    for i in 0..3 {
        add(&srv, &alice, &a, &format!("before {i}"));
    }
    recv.wait_for("the first entries", |r| acknowledged(r).len() >= 3);
    // The next delivery reaches the receiver, which has not answered when the server dies.
    recv.hold_next();
    add(&srv, &alice, &a, "in flight");
    let held = recv.wait_for("the held delivery", |r| {
        r.iter().any(|x| x.answered.is_none())
    });
    let in_flight = held.last().unwrap().clone();
    srv.kill9();
    recv.release();
    srv.restart_after_kill();
    for i in 0..3 {
        add(&srv, &alice, &a, &format!("after {i}"));
    }
    let got = recv.wait_for("everything", |r| acknowledged(r).len() >= 7);
    let again: Vec<&Received> = got
        .iter()
        .filter(|r| r.delivery() == in_flight.delivery())
        .collect();
    assert!(again.len() >= 2, "the held delivery was sent again");
    assert!(
        again.iter().all(|r| r.raw == in_flight.raw),
        "with the same bytes"
    );
    let seqs: Vec<i64> = acknowledged(&got).into_iter().map(|(_, s)| s).collect();
    assert_eq!(seqs, (1..=7).collect::<Vec<_>>(), "in order, none skipped");
    // Every delivery ID names one batch.
    let mut batches: HashMap<&str, &[u8]> = HashMap::new();
    for r in &got {
        let seen = batches.entry(r.delivery()).or_insert(&r.raw);
        assert_eq!(*seen, &r.raw[..], "one ID, one batch");
    }
}

#[test]
fn a_deactivated_creator_s_webhook_pauses_and_sends_nothing_more() {
    let srv = start(&[]);
    let admin = srv.add_admin("root");
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let base = srv.url("");
    let (alice_id, bob_id) = (
        common::channels::user_id(&base, &alice),
        common::channels::user_id(&base, &bob),
    );
    let a = srv.create_doc(&alice, "A");
    common::channels::put_shares(
        &base,
        &alice,
        &a,
        &json!([{"kind": "user", "id": bob_id, "access": "write"}]),
    );
    let recv = Receiver::start();
    let h = hook(&srv, &alice, &recv.url, Some(vec![&a]));
    add(&srv, &bob, &a, "bob's, delivered");
    recv.wait_for("bob's entry", |r| !acknowledged(r).is_empty());
    let (s, p) = srv.patch(
        &admin,
        &format!("/api/v1/admin/users/{alice_id}"),
        &json!({"active": false}),
    );
    assert_eq!(s, 200, "{p}");
    add(&srv, &bob, &a, "bob's, after alice left");
    let paused = wait_paused(&srv, &admin, h["id"].as_str().unwrap());
    assert!(
        paused["pausedReason"]
            .as_str()
            .unwrap()
            .contains("deactivated"),
        "{paused}"
    );
    assert_eq!(acknowledged(&recv.received()).len(), 1, "nothing after");
}

#[test]
fn bad_webhooks_are_refused_and_change_nothing() {
    let srv = TestServer::start();
    let admin = srv.add_admin("root");
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let bobs_doc = srv.create_doc(&bob, "B");
    let good = json!({"url": "https://hooks.example.com/x", "events": ["ops"], "secret": SECRET});
    let with = |k: &str, v: Value| {
        let mut b = good.clone();
        b[k] = v;
        b
    };
    for (body, needle) in [
        (with("url", json!("ftp://example.com/")), "url"),
        (with("url", json!("not a url")), "url"),
        (with("url", json!("http://127.0.0.1:9/")), "private network"),
        (
            with("url", json!("http://169.254.169.254/")),
            "private network",
        ),
        (with("events", json!([])), "events"),
        (
            with("events", json!(["shares"])),
            "not delivered by this server yet",
        ),
        (with("events", json!(["everything"])), "not an event"),
        (with("secret", json!("short")), "secret"),
        (with("docIds", json!([])), "docIds"),
        (
            with("docIds", json!([bobs_doc])),
            "not a document you may hook",
        ),
        (
            with("docIds", json!(["doc_nope"])),
            "not a document you may hook",
        ),
        (with("extra", json!(1)), "extra"),
        (with("since", json!("x1")), "since"),
        (with("since", json!("99999")), "past the end of the feed"),
    ] {
        let (s, v) = srv.post(&alice, "/api/v1/webhooks", &body);
        assert_eq!(s, 400, "{body}: {v}");
        let message = v["error"]["message"].as_str().unwrap_or("");
        assert!(message.contains(needle), "{body}: {v}");
    }
    let (s, _) = srv.post(&alice, "/api/v1/webhooks", &json!("[]"));
    assert_eq!(s, 400);
    assert_eq!(srv.post("", "/api/v1/webhooks", &good).0, 401);
    let (_, none) = srv.get(&alice, "/api/v1/webhooks");
    assert_eq!(none["webhooks"], json!([]), "nothing was made");
    // An admin may aim at a private address; their webhook reaches any document.
    let (s, v) = srv.post(
        &admin,
        "/api/v1/webhooks",
        &with("url", json!("http://10.0.0.5/hook")),
    );
    assert_eq!(s, 201, "{v}");
    let id = v["id"].as_str().unwrap();
    assert_eq!(srv.get(&alice, &format!("/api/v1/webhooks/{id}")).0, 404);
    assert_eq!(
        srv.get(&admin, &format!("/api/v1/webhooks/{id}/deliveries?limit=0"))
            .0,
        400
    );
    assert_eq!(srv.get(&admin, "/api/v1/webhooks/wh_nope").0, 404);
}

#[test]
fn a_host_name_that_resolves_to_a_private_address_is_not_posted_to_for_a_non_admin() {
    // the webhooks' settings without allow_private_targets
    let srv = TestServer::start_with(&FAST[..3]);
    let root = srv.add_admin("root");
    let alice = srv.add_user("alice");
    let a = srv.create_doc(&alice, "A");
    let recv = Receiver::start();
    // this machine's own name: not "localhost", so the URL passes the check made when the
    // webhook is made, but it resolves to this machine (or its private network)
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string();
    let resolved: Vec<std::net::SocketAddr> =
        std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), 80))
            .expect("this machine's name resolves")
            .collect();
    assert!(
        resolved.iter().all(|a| match a.ip() {
            std::net::IpAddr::V4(v4) => v4.is_loopback() || v4.is_private(),
            std::net::IpAddr::V6(v6) => v6.is_loopback() || (v6.segments()[0] & 0xfe00) == 0xfc00,
        }),
        "the test needs a machine whose name is a private address: {resolved:?}"
    );
    let url = recv.url.replacen("127.0.0.1", &host, 1);
    let h = hook(&srv, &alice, &url, Some(vec![&a]));
    let id = h["id"].as_str().unwrap().to_string();
    add(&srv, &alice, &a, "one");
    let failed = wait_webhook(&srv, &alice, &id, "failing", |h| {
        h["attempts"].as_i64() >= Some(1)
    });
    let (_, log) = srv.get(&alice, &format!("/api/v1/webhooks/{id}/deliveries"));
    let error = log["deliveries"][0]["error"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(error.contains("private network"), "{failed} {log}");
    assert!(
        recv.received().is_empty(),
        "nothing was posted to this machine"
    );
    // an admin's webhook to the same address is delivered
    let h = hook(&srv, &root, &url, Some(vec![&a]));
    assert_eq!(h["state"], "active");
    add(&srv, &alice, &a, "two");
    recv.wait_for("the admin's delivery", |r| !r.is_empty());
}
