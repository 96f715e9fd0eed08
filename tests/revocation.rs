//! Open streams end with the credential or the access that opened them. Bob watches a shared
//! document over WebSocket and SSE while alice keeps writing; then his rights end one way or
//! another. Counted after the revoking call returned: no wake-up for a later head, and no
//! entries, ever reaches him; the SSE stream ends, the socket hears `ERROR` (and is closed
//! when the credential itself ended).

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::channels::{put_shares, user_id, Sse, SseNext, Ws, WsNext, STILL_CLOCK, WAKE};
use common::{id, insert, session_cookie, Auth, TestServer};
use serde_json::{json, Value};

/// Alice's document, shared with bob for writing (by `share`: a user share or a team).
struct Scene {
    srv: TestServer,
    alice: String,
    doc: String,
}

impl Scene {
    fn new(env: &[(&str, &str)]) -> (Scene, String) {
        let srv = TestServer::start_with(env);
        let alice = srv.add_user("alice");
        let bob = srv.add_user_with_password("bob", "correct horse battery");
        let doc = srv.create_doc(&alice, "Shared");
        srv.sync_ok(
            &alice,
            &doc,
            "cl_a",
            0,
            vec![insert("blk_0", None, "a0", "x")],
        );
        (Scene { srv, alice, doc }, bob)
    }

    fn share_with_user(&self, bob_token: &str) {
        let bob_id = user_id(&self.srv.url(""), bob_token);
        let share = json!([{"kind": "user", "id": bob_id, "access": "write"}]);
        assert_eq!(
            put_shares(&self.srv.url(""), &self.alice, &self.doc, &share),
            200
        );
    }

    fn head(&self) -> i64 {
        let r = self.srv.sync_ok(&self.alice, &self.doc, "cl_a", 0, vec![]);
        r["headSeq"].as_i64().unwrap()
    }

    /// Bob's WebSocket (joined) and SSE stream on the document, both known to deliver
    /// entries: one write by alice reaches both with its text.
    fn watch(&self, auth: &Auth) -> (Ws, Sse) {
        let base = self.srv.url("");
        let mut ws = Ws::connect_as(&base, auth).expect("bob's WebSocket");
        assert_eq!(ws.join(&self.doc, Some("cl_bob"))["type"], "JOINED");
        let mut sse = Sse::open_as(&base, auth, &self.doc, Some("cl_bob"));
        assert_eq!(sse.wait_status(WAKE), Some(200));
        let head = self.head();
        self.srv.sync_ok(
            &self.alice,
            &self.doc,
            "cl_a",
            head,
            vec![insert(&id("blk_"), None, "a1", "before")],
        );
        ws.wait_for(WAKE, "DOC_SEQ with entries", |m| {
            m["type"] == "DOC_SEQ" && m["headSeq"] == head + 1 && m["entries"].is_array()
        });
        loop {
            match sse.next(WAKE) {
                SseNext::Event(e, d) if e == "doc_seq" && d["headSeq"] == head + 1 => {
                    assert!(d["entries"].is_array(), "{d}");
                    break;
                }
                SseNext::Event(..) => {}
                other => panic!("no doc_seq on bob's SSE stream: {other:?}"),
            }
        }
        (ws, sse)
    }

    /// Alice writes as fast as her syncs return while `revoke` runs, then some more; returns
    /// the head right after `revoke` returned (every change bob may still have heard of
    /// is at or below it) and how many writes came after.
    fn revoke_while_alice_writes(&self, revoke: impl FnOnce()) -> (i64, usize) {
        let stop = Arc::new(AtomicBool::new(false));
        let (base, alice, doc) = (self.srv.url(""), self.alice.clone(), self.doc.clone());
        let flag = stop.clone();
        let writer = std::thread::spawn(move || {
            let mut n = 0;
            while !flag.load(Ordering::Acquire) {
                write(&base, &alice, &doc, &format!("during {n}"));
                n += 1;
            }
        });
        revoke();
        let revoked_at = self.head();
        stop.store(true, Ordering::Release);
        writer.join().unwrap();
        let base = self.srv.url("");
        for n in 0..20 {
            write(&base, &self.alice, &self.doc, &format!("after {n}"));
        }
        (revoked_at, 20)
    }
}

/// One insert by alice at the current head.
fn write(base: &str, alice: &str, doc: &str, text: &str) {
    let url = format!("{base}/api/v1/docs/{doc}/sync");
    let (_, r) = common::channels::http_json(
        "POST",
        &url,
        alice,
        Some(&json!({"clientId": "cl_a", "lastSeq": 0, "ops": []})),
    );
    let head = r["headSeq"].as_i64().unwrap();
    let body = json!({"clientId": "cl_a", "lastSeq": head, "ops": [insert(&id("blk_"), None, "a2", text)]});
    let (status, r) = common::channels::http_json("POST", &url, alice, Some(&body));
    assert_eq!(status, 200, "{r}");
}

/// Reads bob's WebSocket until `code` is heard (and, with `closes`, the close); returns
/// every message. Panics if it does not come within the bound.
fn ws_until_end(ws: &mut Ws, code: &str, closes: bool) -> Vec<Value> {
    let mut got = Vec::new();
    let mut errored = false;
    loop {
        match ws.next(WAKE) {
            WsNext::Msg(m) => {
                if m["type"] == "ERROR" && m["code"] == code {
                    errored = true;
                    if !closes {
                        got.push(m);
                        return got;
                    }
                }
                got.push(m);
            }
            WsNext::Closed(c) => {
                assert!(
                    closes && errored,
                    "closed ({c:?}) without ERROR {code}: {got:?}"
                );
                assert_eq!(c, Some(1008), "closed as a policy end");
                return got;
            }
            WsNext::Timeout => panic!("no ERROR {code} on bob's socket: {got:?}"),
        }
    }
}

/// Reads bob's SSE stream to its end; returns its events.
fn sse_until_end(sse: &mut Sse) -> Vec<Value> {
    let mut got = Vec::new();
    loop {
        match sse.next(WAKE) {
            SseNext::Event(_, d) => got.push(d),
            SseNext::End => return got,
            SseNext::Timeout => panic!("bob's SSE stream did not end: {got:?}"),
        }
    }
}

/// Nothing bob heard is about a head above `revoked_at`.
fn heard_nothing_after(what: &str, msgs: &[Value], revoked_at: i64) {
    let late: Vec<&Value> = msgs
        .iter()
        .filter(|m| m["headSeq"].as_i64().is_some_and(|h| h > revoked_at))
        .collect();
    assert!(
        late.is_empty(),
        "{what}: {} wake-ups after the revocation: {late:?}",
        late.len()
    );
}

/// Bob watches with `auth`; `revoke` ends that credential while alice writes.
fn credential_ends(scene: &Scene, auth: &Auth, revoke: impl FnOnce()) {
    let (mut ws, mut sse) = scene.watch(auth);
    let (at, after) = scene.revoke_while_alice_writes(revoke);
    assert!(after > 0);
    heard_nothing_after("SSE", &sse_until_end(&mut sse), at);
    heard_nothing_after(
        "WebSocket",
        &ws_until_end(&mut ws, "unauthorized", true),
        at,
    );
    // The credential is refused everywhere now.
    let again = Sse::open_as(&scene.srv.url(""), auth, &scene.doc, None).wait_status(WAKE);
    assert_eq!(again, Some(401));
}

/// Bob watches with his token; `revoke` takes his read access while alice writes.
fn access_ends(scene: &Scene, bob: &str, revoke: impl FnOnce()) {
    let (mut ws, mut sse) = scene.watch(&Auth::Bearer(bob));
    let (at, _) = scene.revoke_while_alice_writes(revoke);
    heard_nothing_after("SSE", &sse_until_end(&mut sse), at);
    heard_nothing_after("WebSocket", &ws_until_end(&mut ws, "forbidden", false), at);
    // The socket stays for other rooms; this one hears nothing more (PONG is the barrier).
    write(&scene.srv.url(""), &scene.alice, &scene.doc, "later");
    ws.send(json!({"type": "PING"}));
    let seen = ws.seen.len();
    ws.wait_for(WAKE, "PONG", |m| m["type"] == "PONG");
    heard_nothing_after("WebSocket after ERROR", &ws.seen[seen..], at);
}

fn login(scene: &Scene) -> String {
    let r = scene.srv.login("bob", "correct horse battery", &[]);
    assert_eq!(r.status, 200, "{}", r.body);
    session_cookie(&r).expect("session cookie")
}

/// A second token of bob's: `(tokenId, token)`.
fn new_token(scene: &Scene, bob: &str) -> (String, String) {
    let (s, r) = scene
        .srv
        .post(bob, "/api/v1/tokens", &json!({"label": "laptop"}));
    assert_eq!(s, 201, "{r}");
    (
        r["tokenId"].as_str().unwrap().into(),
        r["token"].as_str().unwrap().into(),
    )
}

#[test]
fn a_deleted_token_ends_its_streams_and_frees_their_slots() {
    let (scene, bob) = Scene::new(&[]);
    scene.share_with_user(&bob);
    let (tid, leaked) = new_token(&scene, &bob);
    credential_ends(&scene, &Auth::Bearer(&leaked), || {
        assert_eq!(
            scene.srv.delete(&bob, &format!("/api/v1/tokens/{tid}")),
            204
        );
    });

    // A leaked token's streams fill every slot of its user; deleting it frees them.
    let (tid, leaked) = new_token(&scene, &bob);
    let base = scene.srv.url("");
    let held: Vec<Sse> = (0..64)
        .map(|_| {
            let mut s = Sse::open(&base, &leaked, &scene.doc, None);
            assert_eq!(s.wait_status(WAKE), Some(200));
            s
        })
        .collect();
    let mut refused = Sse::open(&base, &bob, &scene.doc, None);
    assert_eq!(refused.wait_status(WAKE), Some(429), "the slots are full");
    assert_eq!(
        scene.srv.delete(&bob, &format!("/api/v1/tokens/{tid}")),
        204
    );
    for mut s in held {
        sse_until_end(&mut s);
    }
    let mut mine = Sse::open(&base, &bob, &scene.doc, None);
    assert_eq!(
        mine.wait_status(WAKE),
        Some(200),
        "bob's own stream gets a slot again"
    );
}

#[test]
fn logging_out_ends_the_sessions_streams() {
    let (scene, bob) = Scene::new(&[]);
    scene.share_with_user(&bob);
    let cookie = login(&scene);
    let origin = scene.srv.origin();
    credential_ends(&scene, &Auth::Cookie(&cookie), || {
        let r = scene.srv.send(
            "POST",
            "/api/v1/auth/logout",
            &Auth::Cookie(&cookie),
            &[("Origin", origin.as_str())],
            None,
        );
        assert!(r.status < 300, "logout: {} {}", r.status, r.body);
    });
}

#[test]
fn a_password_change_from_the_cli_ends_the_sessions_streams() {
    let (scene, bob) = Scene::new(&[]);
    scene.share_with_user(&bob);
    let cookie = login(&scene);
    credential_ends(&scene, &Auth::Cookie(&cookie), || {
        let (ok, _, err) = scene
            .srv
            .cli_stdin(&["user", "passwd", "bob"], "a new secret phrase\n");
        assert!(ok, "{err}");
        // Another process changed the database: the server sees it within its refresh;
        // the revocation counts from when the server refuses the session.
        let deadline = std::time::Instant::now() + WAKE;
        while scene
            .srv
            .send("GET", "/api/v1/me", &Auth::Cookie(&cookie), &[], None)
            .status
            != 401
        {
            assert!(
                std::time::Instant::now() < deadline,
                "session still accepted"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    });
}

#[test]
fn a_session_that_expires_by_the_servers_clock_ends_its_streams() {
    let (scene, bob) = Scene::new(&[STILL_CLOCK]);
    scene.share_with_user(&bob);
    let cookie = login(&scene);
    credential_ends(&scene, &Auth::Cookie(&cookie), || {
        scene.srv.advance_clock(336 * 3_600_000 + 1_000);
        assert_eq!(
            scene
                .srv
                .send("GET", "/api/v1/me", &Auth::Cookie(&cookie), &[], None)
                .status,
            401
        );
    });
}

#[test]
fn removal_from_the_team_by_the_cli_ends_the_streams() {
    let (scene, bob) = Scene::new(&[]);
    let (ok, _, err) = scene.srv.cli(&["team", "add", "crew", "--owner", "alice"]);
    assert!(ok, "{err}");
    let (ok, _, err) = scene.srv.cli(&["team", "members", "crew", "alice", "bob"]);
    assert!(ok, "{err}");
    let (s, teams) = scene.srv.get(&scene.alice, "/api/v1/teams");
    assert_eq!(s, 200);
    let list = teams
        .as_array()
        .or_else(|| teams["teams"].as_array())
        .unwrap();
    let team = list.iter().find(|t| t["name"] == "crew").expect("crew")["teamId"].clone();
    let share = json!([{"kind": "team", "id": team, "access": "write"}]);
    assert_eq!(
        put_shares(&scene.srv.url(""), &scene.alice, &scene.doc, &share),
        200
    );
    access_ends(&scene, &bob, || {
        let (ok, _, err) = scene.srv.cli(&["team", "members", "crew", "alice"]);
        assert!(ok, "{err}");
        let deadline = std::time::Instant::now() + WAKE;
        while scene
            .srv
            .sync(
                &bob,
                &scene.doc,
                &json!({"clientId": "cl_b2", "lastSeq": 0, "ops": []}),
            )
            .0
            != 404
        {
            assert!(std::time::Instant::now() < deadline, "bob still reads");
            std::thread::sleep(Duration::from_millis(20));
        }
    });
}

#[test]
fn a_removed_share_ends_the_streams() {
    let (scene, bob) = Scene::new(&[]);
    scene.share_with_user(&bob);
    access_ends(&scene, &bob, || {
        assert_eq!(
            put_shares(&scene.srv.url(""), &scene.alice, &scene.doc, &json!([])),
            200
        );
    });
}

#[test]
fn a_waiting_long_poll_answers_401_or_404_when_its_rights_end() {
    let (scene, bob) = Scene::new(&[]);
    scene.share_with_user(&bob);
    let base = scene.srv.url("");
    let (tid, leaked) = new_token(&scene, &bob);
    let head = scene.head();
    // Both wait for a change (lease news from the first poll's presence may answer one
    // at once: poll again with the lease it saw).
    let wait_on = |token: &str| {
        let (s, r) = common::channels::LongPoll::start(&base, token, &scene.doc, head, 0, 1, None)
            .finish(WAKE);
        assert_eq!(s, 200, "{r}");
        let lease = r["leaseSeq"].as_i64().unwrap();
        common::channels::LongPoll::start(&base, token, &scene.doc, head, lease, 25, None)
    };
    let mut by_token = wait_on(&leaked);
    let mut by_share = wait_on(&bob);
    assert!(!by_token.is_finished() && !by_share.is_finished());
    assert_eq!(
        scene.srv.delete(&bob, &format!("/api/v1/tokens/{tid}")),
        204
    );
    assert_eq!(by_token.finish(WAKE).0, 401);
    assert_eq!(put_shares(&base, &scene.alice, &scene.doc, &json!([])), 200);
    assert_eq!(by_share.finish(WAKE).0, 404);
}

#[test]
fn deactivating_a_person_ends_their_streams_of_every_credential() {
    let (scene, bob) = Scene::new(&[]);
    scene.share_with_user(&bob);
    let root = scene.srv.add_admin("root");
    let bob_id = user_id(&scene.srv.url(""), &bob);
    let cookie = login(&scene);
    // Bob watches in a browser session; the call ends his streams, and his token with them.
    credential_ends(&scene, &Auth::Cookie(&cookie), || {
        let (s, p) = scene.srv.patch(
            &root,
            &format!("/api/v1/admin/users/{bob_id}"),
            &json!({"active": false}),
        );
        assert_eq!(s, 200, "{p}");
    });
    assert_eq!(scene.srv.get(&bob, "/api/v1/me").0, 401);
}
