//! Teams run docsync themselves (PROTOCOL §9): admins manage people, invitations and reset
//! links; people change their own name, password and sessions; API tokens have scopes and
//! expiries; every security event is in the audit log. Real server, real SQLite file.

use crate::common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use common::{insert, session_cookie, Auth, TestServer};
use serde_json::{json, Value};

const PW: &str = "correct horse battery";

/// A server with the movable clock, an admin (`root`, by the CLI) and their token.
fn server() -> (TestServer, String) {
    let srv = TestServer::start_with(&[("DOCSYNC_TESTING__CLOCK", "manual")]);
    let (ok, out, err) = srv.cli_stdin(
        &["user", "add", "root", "--admin", "--password-stdin"],
        &format!("{PW}\n"),
    );
    assert!(ok, "{err}");
    let token = out
        .lines()
        .find_map(|l| l.strip_prefix("token: "))
        .unwrap()
        .trim()
        .to_string();
    (srv, token)
}

fn person<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["people"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("{name} not in {list}"))
}

fn actions(srv: &TestServer, admin: &str, query: &str) -> Vec<String> {
    let (s, page) = srv.get(admin, &format!("/api/v1/admin/audit{query}"));
    assert_eq!(s, 200, "{page}");
    page["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap().to_string())
        .collect()
}

/// The secret part of a link path (`/invite/…`).
fn secret(link: &Value) -> String {
    link["link"]
        .as_str()
        .unwrap()
        .strip_prefix("/invite/")
        .unwrap()
        .to_string()
}

fn accept(srv: &TestServer, secret: &str, body: &Value) -> common::Reply {
    let origin = srv.origin();
    srv.send(
        "POST",
        &format!("/api/v1/invites/{secret}/accept"),
        &Auth::None,
        &[("Origin", origin.as_str())],
        Some(body),
    )
}

#[test]
fn admins_create_change_and_remove_people_and_nothing_is_lost() {
    let (srv, root) = server();
    // Created with a password: can log in at once.
    let (s, made) = srv.post(
        &root,
        "/api/v1/admin/users",
        &json!({"name": "ann", "displayName": "Ann Example", "password": PW}),
    );
    assert_eq!(s, 201, "{made}");
    assert!(made["setPassword"].is_null());
    let ann_id = made["person"]["id"].as_str().unwrap().to_string();
    assert_eq!(srv.login("ann", PW, &[]).status, 200);
    // Bad input changes nothing.
    for (body, code, why) in [
        (json!({"name": "ANN"}), 409, "a name taken in any case"),
        (json!({"name": "a b"}), 400, "a name with a space"),
        (
            json!({"name": "carl", "password": "password123"}),
            400,
            "a common password",
        ),
        (
            json!({"name": "carl", "password": "short"}),
            400,
            "a short password",
        ),
        (
            json!({"name": "carl", "surprise": 1}),
            400,
            "an unknown field",
        ),
    ] {
        let (s, e) = srv.post(&root, "/api/v1/admin/users", &body);
        assert_eq!(s, code, "{why}: {e}");
        assert!(e["error"]["code"].is_string(), "{e}");
    }
    let (_, list) = srv.get(&root, "/api/v1/admin/users");
    assert_eq!(list["people"].as_array().unwrap().len(), 2, "{list}");
    // Without a password: a link to choose one.
    let (s, bo) = srv.post(&root, "/api/v1/admin/users", &json!({"name": "bo"}));
    assert_eq!(s, 201, "{bo}");
    let link = secret(&bo["setPassword"]);
    let (s, face) = srv.get("", &format!("/api/v1/invites/{link}"));
    assert_eq!(
        (s, face["kind"].as_str(), face["userName"].as_str()),
        (200, Some("reset"), Some("bo"))
    );
    let r = accept(&srv, &link, &json!({"password": "bo's own phrase"}));
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(session_cookie(&r).is_some(), "signed in");
    assert_eq!(srv.login("bo", "bo's own phrase", &[]).status, 200);
    let r = accept(&srv, &link, &json!({"password": "another phrase"}));
    assert_eq!(r.status, 409, "used: {}", r.body);

    // Search, and the list's faces.
    let (_, found) = srv.get(&root, "/api/v1/admin/users?q=EXAMPLE");
    assert_eq!(found["people"].as_array().unwrap().len(), 1, "{found}");
    let ann = person(&found, "ann");
    assert_eq!(
        (
            ann["active"].as_bool(),
            ann["isAdmin"].as_bool(),
            ann["signIn"].as_str()
        ),
        (Some(true), Some(false), Some("password"))
    );
    assert!(ann["lastSeenAt"].is_i64(), "signed in once: {ann}");

    // Admin granted, then the last-admin rules.
    let root_id = person(&srv.get(&root, "/api/v1/admin/users").1, "root")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (s, e) = srv.patch(
        &root,
        &format!("/api/v1/admin/users/{root_id}"),
        &json!({"admin": false}),
    );
    assert_eq!(s, 409, "the last admin stays one: {e}");
    let (s, e) = srv.patch(
        &root,
        &format!("/api/v1/admin/users/{root_id}"),
        &json!({"active": false}),
    );
    assert_eq!(s, 400, "nobody deactivates themselves: {e}");
    let r = srv.send(
        "DELETE",
        &format!("/api/v1/admin/users/{root_id}"),
        &Auth::Bearer(&root),
        &[],
        Some(&json!({"transferTo": ann_id})),
    );
    assert_eq!(r.status, 400, "nobody removes themselves: {}", r.body);
    let (s, p) = srv.patch(
        &root,
        &format!("/api/v1/admin/users/{ann_id}"),
        &json!({"admin": true, "displayName": "Ann E."}),
    );
    assert_eq!(
        (s, p["isAdmin"].as_bool(), p["displayName"].as_str()),
        (200, Some(true), Some("Ann E."))
    );

    // Bo owns a document shared with ann, a folder and a team; bo is removed with a transfer.
    let bo_token = {
        let r = srv.login("bo", "bo's own phrase", &[]);
        session_cookie(&r).unwrap()
    };
    let origin = srv.origin();
    let as_bo = |method: &str, path: &str, body: Option<&Value>| {
        srv.send(
            method,
            path,
            &Auth::Cookie(&bo_token),
            &[("Origin", origin.as_str())],
            body,
        )
    };
    let r = as_bo("POST", "/api/v1/docs", Some(&json!({"title": "Bo's plan"})));
    assert_eq!(r.status, 201, "{}", r.body);
    let doc = r.body["docId"].as_str().unwrap().to_string();
    let r = as_bo(
        "POST",
        &format!("/api/v1/docs/{doc}/sync"),
        Some(
            &json!({"clientId": "cl_bo", "lastSeq": 0, "ops": [insert("blk_bo", None, "a0", "bo's words")]}),
        ),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        as_bo(
            "POST",
            "/api/v1/folders",
            Some(&json!({"name": "Bo's folder"}))
        )
        .status,
        201
    );
    let bo_id = bo["person"]["id"].as_str().unwrap().to_string();
    let (s, e) = srv.patch(
        &root,
        &format!("/api/v1/admin/users/{bo_id}"),
        &json!({"active": false}),
    );
    assert_eq!(s, 200, "{e}");
    let r = srv.send(
        "DELETE",
        &format!("/api/v1/admin/users/{ann_id}"),
        &Auth::Bearer(&root),
        &[],
        Some(&json!({"transferTo": bo_id})),
    );
    assert_eq!(r.status, 400, "not to a deactivated person: {}", r.body);
    let r = srv.send(
        "DELETE",
        &format!("/api/v1/admin/users/{bo_id}"),
        &Auth::Bearer(&root),
        &[],
        Some(&json!({"transferTo": ann_id})),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.body["transferred"],
        json!({"documents": 1, "folders": 1, "teams": 0})
    );
    let ann_token = session_cookie(&srv.login("ann", PW, &[])).unwrap();
    let snap = srv.send(
        "GET",
        &format!("/api/v1/docs/{doc}/snapshot"),
        &Auth::Cookie(&ann_token),
        &[],
        None,
    );
    assert_eq!(
        snap.status, 200,
        "ann owns bo's document now: {}",
        snap.body
    );
    assert_eq!(snap.body["blocks"][0]["content"], "bo's words");
    let (_, list) = srv.get(&root, "/api/v1/admin/users");
    assert!(list["people"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["name"] != "bo"));

    let log = actions(&srv, &root, "");
    for a in [
        "user.created",
        "admin.granted",
        "user.renamed",
        "user.deactivated",
        "user.deleted",
        "invite.created",
        "invite.used",
        "password.reset",
        "login.ok",
    ] {
        assert!(log.iter().any(|l| l == a), "{a} in the audit log: {log:?}");
    }
}

#[test]
fn invitations_count_their_uses_expire_and_can_be_revoked() {
    let (srv, root) = server();
    let (s, inv) = srv.post(
        &root,
        "/api/v1/admin/invites",
        &json!({"expiresInHours": 2, "maxUses": 2}),
    );
    assert_eq!(s, 201, "{inv}");
    let link = secret(&inv);
    let (s, face) = srv.get("", &format!("/api/v1/invites/{link}"));
    assert_eq!(
        (s, face["kind"].as_str(), face["role"].as_str()),
        (200, Some("join"), Some("member"))
    );
    for (body, code, why) in [
        (json!({"password": PW}), 400, "no name"),
        (json!({"name": "root", "password": PW}), 409, "a name taken"),
        (
            json!({"name": "cyra", "password": "I am cyra, hi"}),
            400,
            "a password with the name in it",
        ),
    ] {
        let r = accept(&srv, &link, &body);
        assert_eq!(r.status, code, "{why}: {}", r.body);
    }
    for name in ["cy", "di"] {
        let r = accept(
            &srv,
            &link,
            &json!({"name": name, "displayName": name.to_uppercase(), "password": PW}),
        );
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.body["displayName"], name.to_uppercase());
    }
    let r = accept(&srv, &link, &json!({"name": "ed", "password": PW}));
    assert_eq!(r.status, 409, "used up: {}", r.body);
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("used up"),
        "{}",
        r.body
    );
    let (_, all) = srv.get(&root, "/api/v1/admin/invites");
    let used: Vec<&str> = all["invites"][0]["usedBy"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["userName"].as_str().unwrap())
        .collect();
    assert_eq!(used, ["cy", "di"], "{all}");
    assert!(
        !all.to_string().contains(&link),
        "the secret is never listed"
    );

    // Expiry by the server's clock; revocation.
    let (_, later) = srv.post(
        &root,
        "/api/v1/admin/invites",
        &json!({"expiresInHours": 1, "maxUses": 5}),
    );
    let (_, gone) = srv.post(
        &root,
        "/api/v1/admin/invites",
        &json!({"expiresInHours": 24, "maxUses": 5, "role": "admin"}),
    );
    srv.advance_clock(3_600_000);
    let r = accept(
        &srv,
        &secret(&later),
        &json!({"name": "fay", "password": PW}),
    );
    assert_eq!(r.status, 409, "expired: {}", r.body);
    let id = gone["invite"]["inviteId"].as_str().unwrap();
    assert_eq!(
        srv.delete(&root, &format!("/api/v1/admin/invites/{id}")),
        204
    );
    assert_eq!(
        srv.delete(&root, &format!("/api/v1/admin/invites/{id}")),
        404
    );
    let r = accept(
        &srv,
        &secret(&gone),
        &json!({"name": "fay", "password": PW}),
    );
    assert_eq!(r.status, 409, "revoked: {}", r.body);
    let (s, _) = srv.get("", "/api/v1/invites/dsi_nothing");
    assert_eq!(s, 404);
    for (body, why) in [
        (json!({"expiresInHours": 0, "maxUses": 1}), "no lifetime"),
        (json!({"expiresInHours": 1, "maxUses": 0}), "no use"),
        (
            json!({"expiresInHours": 1, "maxUses": 1, "role": "owner"}),
            "an unknown role",
        ),
    ] {
        let (s, e) = srv.post(&root, "/api/v1/admin/invites", &body);
        assert_eq!(s, 400, "{why}: {e}");
    }
    // Someone who is not an admin cannot make links.
    let cy = session_cookie(&srv.login("cy", PW, &[])).unwrap();
    let origin = srv.origin();
    let r = srv.send(
        "POST",
        "/api/v1/admin/invites",
        &Auth::Cookie(&cy),
        &[("Origin", origin.as_str())],
        Some(&json!({"expiresInHours": 1, "maxUses": 1})),
    );
    assert_eq!(r.status, 403);
    // A link's use is not a credential from another site.
    let (_, fresh) = srv.post(
        &root,
        "/api/v1/admin/invites",
        &json!({"expiresInHours": 1, "maxUses": 1}),
    );
    let r = srv.send(
        "POST",
        &format!("/api/v1/invites/{}/accept", secret(&fresh)),
        &Auth::None,
        &[("Origin", "http://evil.example")],
        Some(&json!({"name": "gus", "password": PW})),
    );
    assert_eq!(r.status, 403, "cross-origin: {}", r.body);
}

/// Bob types in a loop (with a token and in a browser session) while an admin deactivates
/// him: not one request sent after the call returned is accepted, his sessions and tokens
/// are gone, he cannot log in; reactivated, he logs in again (old token still gone).
#[test]
fn deactivation_stops_a_typing_person_at_once() {
    let (srv, root) = server();
    let alice = srv.add_user("alice");
    let bob = srv.add_user_with_password("bob", PW);
    let doc = srv.create_doc(&alice, "Shared");
    srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        0,
        vec![insert("blk_0", None, "a0", "x")],
    );
    let (_, me) = srv.get(&bob, "/api/v1/me");
    let bob_id = me["id"].as_str().unwrap().to_string();
    let (s, _) = srv.put(
        &alice,
        &format!("/api/v1/docs/{doc}/shares"),
        &json!([{"kind": "user", "id": bob_id, "access": "write"}]),
    );
    assert_eq!(s, 200);
    let cookie = session_cookie(&srv.login("bob", PW, &[])).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let returned = Arc::new(AtomicBool::new(false));
    let sent_after = Arc::new(AtomicUsize::new(0));
    let typists: Vec<_> = [Auth::Bearer(&bob), Auth::Cookie(&cookie)]
        .iter()
        .enumerate()
        .map(|(n, auth)| {
            let auth = match auth {
                Auth::Bearer(t) => (true, t.to_string()),
                Auth::Cookie(c) => (false, c.to_string()),
                Auth::None => unreachable!(),
            };
            let (base, origin, doc) = (srv.url(""), srv.origin(), doc.clone());
            let (stop, returned, sent) = (stop.clone(), returned.clone(), sent_after.clone());
            // Each typist answers with the statuses of the requests it sent after the
            // deactivation call returned.
            std::thread::spawn(move || {
                let http = reqwest::blocking::Client::new();
                let (mut i, mut after_statuses) = (0, Vec::new());
                while !stop.load(Ordering::SeqCst) {
                    i += 1;
                    // Read before sending: a request counted "after" was sent after.
                    let after = returned.load(Ordering::SeqCst);
                    let op = insert(
                        &format!("blk_{n}_{i}"),
                        None,
                        &format!("b{n}{i:05}V"),
                        "typed",
                    );
                    let mut rb = http
                        .post(format!("{base}/api/v1/docs/{doc}/sync"))
                        .header("Origin", &origin)
                        .json(
                            &json!({"clientId": format!("cl_bob{n}"), "lastSeq": 0, "ops": [op]}),
                        );
                    rb = if auth.0 {
                        rb.bearer_auth(&auth.1)
                    } else {
                        rb.header("Cookie", format!("docsync_session={}", auth.1))
                    };
                    let status = rb.send().unwrap().status().as_u16();
                    if after {
                        after_statuses.push(status);
                        sent.fetch_add(1, Ordering::SeqCst);
                    }
                }
                after_statuses
            })
        })
        .collect();
    // Some typing lands first.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while srv.snapshot(&alice, &doc)["blocks"]
        .as_array()
        .unwrap()
        .len()
        < 6
    {
        assert!(
            std::time::Instant::now() < deadline,
            "bob's typing never landed"
        );
    }
    let (s, p) = srv.patch(
        &root,
        &format!("/api/v1/admin/users/{bob_id}"),
        &json!({"active": false}),
    );
    returned.store(true, Ordering::SeqCst);
    assert_eq!((s, p["active"].as_bool()), (200, Some(false)), "{p}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while sent_after.load(Ordering::SeqCst) < 40 && std::time::Instant::now() < deadline {
        std::thread::yield_now();
    }
    stop.store(true, Ordering::SeqCst);
    let after: Vec<u16> = typists
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    assert!(
        after.len() >= 2,
        "bob kept typing after the call: {after:?}"
    );
    assert!(
        after.iter().all(|s| *s == 401),
        "every request sent after the call returned is refused as signed out: {after:?}"
    );
    let r = srv.login("bob", PW, &[]);
    assert_eq!(
        (r.status, r.body["error"]["code"].as_str()),
        (403, Some("deactivated")),
        "{}",
        r.body
    );
    let r = srv.login("bob", "wrong password!", &[]);
    assert_eq!(
        r.status, 401,
        "a wrong password says nothing more: {}",
        r.body
    );
    // Reactivated: a password login works; the old token and session stay ended.
    let (s, _) = srv.patch(
        &root,
        &format!("/api/v1/admin/users/{bob_id}"),
        &json!({"active": true}),
    );
    assert_eq!(s, 200);
    assert_eq!(srv.login("bob", PW, &[]).status, 200);
    assert_eq!(srv.get(&bob, "/api/v1/me").0, 401);
    let r = srv.send("GET", "/api/v1/me", &Auth::Cookie(&cookie), &[], None);
    assert_eq!(r.status, 401);
    let log = actions(&srv, &root, "?action=user");
    assert_eq!(
        log[..2],
        ["user.reactivated", "user.deactivated"],
        "{log:?}"
    );
}

#[test]
fn token_scopes_and_expiry_hold_on_every_path() {
    let (srv, root) = server();
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Doc");
    srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        0,
        vec![insert("blk_0", None, "a0", "x")],
    );
    let make = |token: &str, body: Value| {
        let (s, t) = srv.post(token, "/api/v1/tokens", &body);
        assert_eq!(s, 201, "{t}");
        t["token"].as_str().unwrap().to_string()
    };
    let read = make(&alice, json!({"name": "reader", "scope": "read"}));
    let write = make(
        &alice,
        json!({"label": "writer", "scope": "write", "expiresInDays": 1}),
    );
    assert!(read.starts_with("dsr_") && write.starts_with("dsw_"));
    // Reads work with a read token.
    assert_eq!(
        srv.get(&read, &format!("/api/v1/docs/{doc}/snapshot")).0,
        200
    );
    assert_eq!(srv.get(&read, "/api/v1/docs").0, 200);
    let (s, pulled) = srv.sync(
        &read,
        &doc,
        &json!({"clientId": "cl_r", "lastSeq": 0, "ops": []}),
    );
    assert_eq!(s, 200, "a pull without ops: {pulled}");
    // Every write path: 403 `scope`, nothing changed.
    let writes: Vec<(&str, String, Value)> = vec![
        (
            "POST",
            format!("/api/v1/docs/{doc}/sync"),
            json!({"clientId": "cl_r", "lastSeq": 0, "ops": [insert("blk_r", None, "a1", "no")]}),
        ),
        ("PUT", format!("/api/v1/docs/{doc}/shares"), json!([])),
        ("PATCH", format!("/api/v1/docs/{doc}"), json!({"icon": "x"})),
        (
            "POST",
            format!("/api/v1/docs/{doc}/versions"),
            json!({"name": "v"}),
        ),
        ("DELETE", format!("/api/v1/docs/{doc}"), Value::Null),
        ("POST", "/api/v1/docs".into(), json!({"title": "new"})),
        ("POST", "/api/v1/folders".into(), json!({"name": "f"})),
        ("POST", "/api/v1/teams".into(), json!({"name": "t"})),
        ("POST", "/api/v1/tokens".into(), json!({"label": "more"})),
        (
            "PATCH",
            "/api/v1/me".into(),
            json!({"displayName": "Mallory"}),
        ),
        ("GET", "/api/v1/admin/users".into(), Value::Null),
        ("GET", "/api/v1/admin/audit".into(), Value::Null),
    ];
    for (method, path, body) in &writes {
        let b = (!body.is_null()).then_some(body);
        let r = srv.send(method, path, &Auth::Bearer(&read), &[], b);
        assert_eq!(
            (r.status, r.body["error"]["code"].as_str()),
            (403, Some("scope")),
            "{method} {path}: {}",
            r.body
        );
    }
    // And every other operation the API document lists that is not a read: refused before
    // its handler (a pull with `/sync`, leaving a document and logging out are reads).
    let (_, api) = srv.get("", "/api/v1/openapi.json");
    let mut swept = 0;
    for (template, item) in api["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            let m = method.to_uppercase();
            let reads = m == "GET"
                || template.ends_with("/sync")
                || template.ends_with("/leave")
                || template == "/api/v1/auth/logout";
            if reads || template.contains("/testing/") {
                continue;
            }
            let path = template
                .replace("{id}", &doc)
                .replace("{blockId}", "blk_0")
                .replace("{versionId}", "ver_x")
                .replace("{token}", "dsi_x")
                .replace("{tag}", "t");
            let r = srv.send(&m, &path, &Auth::Bearer(&read), &[], Some(&json!({})));
            assert_eq!(
                (r.status, r.body["error"]["code"].as_str()),
                (403, Some("scope")),
                "{m} {template}: {}",
                r.body
            );
            swept += 1;
        }
    }
    assert!(swept >= 30, "the sweep reached {swept} operations");
    let snap = srv.snapshot(&alice, &doc);
    assert_eq!(
        snap["blocks"].as_array().unwrap().len(),
        1,
        "nothing written: {snap}"
    );
    // A write token writes, but never reaches the admin endpoints, and cannot make an
    // admin token; an admin's admin token does.
    let (s, _) = srv.sync(
        &write,
        &doc,
        &json!({"clientId": "cl_w", "lastSeq": 0, "ops": [insert("blk_w", None, "a2", "yes")]}),
    );
    assert_eq!(s, 200);
    let (s, e) = srv.post(&write, "/api/v1/tokens", &json!({"scope": "admin"}));
    assert_eq!(
        (s, e["error"]["code"].as_str()),
        (403, Some("scope")),
        "{e}"
    );
    let root_write = make(&root, json!({"scope": "write"}));
    let (s, e) = srv.get(&root_write, "/api/v1/admin/users");
    assert_eq!((s, e["error"]["code"].as_str()), (403, Some("scope")));
    assert_eq!(srv.get(&root, "/api/v1/admin/users").0, 200);
    // Expiry by the server's clock: 401.
    let (_, list) = srv.get(&alice, "/api/v1/tokens");
    let listed = list["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["label"] == "writer")
        .unwrap();
    assert_eq!(listed["scope"], "write");
    assert!(listed["expiresAt"].is_i64());
    srv.advance_clock(86_400_000);
    assert_eq!(srv.get(&write, "/api/v1/me").0, 401);
    assert_eq!(srv.get(&read, "/api/v1/me").0, 200, "no expiry: still good");
    let (s, _) = srv.post(&alice, "/api/v1/tokens", &json!({"expiresInDays": 0}));
    assert_eq!(s, 400);
}

#[test]
fn people_change_their_name_password_and_sessions_themselves() {
    let (srv, _root) = server();
    srv.add_user_with_password("cleo", PW);
    let origin = srv.origin();
    let login_as =
        |agent: &str| session_cookie(&srv.login("cleo", PW, &[("User-Agent", agent)])).unwrap();
    let laptop = login_as("Laptop Firefox");
    let phone = login_as("Phone Safari");
    let send = |cookie: &str, method: &str, path: &str, body: Option<&Value>| {
        srv.send(
            method,
            path,
            &Auth::Cookie(cookie),
            &[("Origin", origin.as_str())],
            body,
        )
    };
    let r = send(
        &laptop,
        "PATCH",
        "/api/v1/me",
        Some(&json!({"displayName": "Cleo P."})),
    );
    assert_eq!(
        (r.status, r.body["displayName"].as_str()),
        (200, Some("Cleo P.")),
        "{}",
        r.body
    );
    let r = send(
        &laptop,
        "PATCH",
        "/api/v1/me",
        Some(&json!({"displayName": "   "})),
    );
    assert_eq!(r.status, 400);
    // The sessions list: both, this one marked, with the browser each was made in.
    let r = send(&laptop, "GET", "/api/v1/me/sessions", None);
    let sessions = r.body["sessions"].as_array().unwrap().clone();
    assert_eq!(sessions.len(), 2, "{}", r.body);
    let current: Vec<&Value> = sessions.iter().filter(|s| s["current"] == true).collect();
    assert_eq!(current.len(), 1);
    assert_eq!(current[0]["userAgent"], "Laptop Firefox");
    let phone_id = sessions
        .iter()
        .find(|s| s["userAgent"] == "Phone Safari")
        .unwrap()["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    // Signing the phone out from the laptop.
    assert_eq!(
        send(
            &laptop,
            "DELETE",
            &format!("/api/v1/me/sessions/{phone_id}"),
            None
        )
        .status,
        204
    );
    assert_eq!(send(&phone, "GET", "/api/v1/me", None).status, 401);
    assert_eq!(
        send(
            &laptop,
            "DELETE",
            &format!("/api/v1/me/sessions/{phone_id}"),
            None
        )
        .status,
        404
    );
    assert_eq!(
        send(&laptop, "DELETE", "/api/v1/me/sessions/not-an-id", None).status,
        404
    );
    // A password change: the wrong current one is refused; the right one ends every other
    // session and keeps this one.
    let tablet = login_as("Tablet");
    let r = send(
        &laptop,
        "POST",
        "/api/v1/me/password",
        Some(&json!({"current": "not it at all", "new": "a brand new phrase"})),
    );
    assert_eq!(r.status, 403, "{}", r.body);
    let r = send(
        &laptop,
        "POST",
        "/api/v1/me/password",
        Some(&json!({"current": PW, "new": "12345678"})),
    );
    assert_eq!(r.status, 400, "weak: {}", r.body);
    let r = send(
        &laptop,
        "POST",
        "/api/v1/me/password",
        Some(&json!({"current": PW, "new": "a brand new phrase"})),
    );
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(
        send(&tablet, "GET", "/api/v1/me", None).status,
        401,
        "other sessions end"
    );
    assert_eq!(
        send(&laptop, "GET", "/api/v1/me", None).status,
        200,
        "this one goes on"
    );
    assert_eq!(srv.login("cleo", PW, &[]).status, 401);
    assert_eq!(srv.login("cleo", "a brand new phrase", &[]).status, 200);
}

#[test]
fn the_audit_log_filters_pages_exports_and_forgets() {
    let (srv, root) = server();
    srv.add_user_with_password("dora", PW);
    for _ in 0..3 {
        assert_eq!(srv.login("dora", "not the password", &[]).status, 401);
    }
    assert_eq!(srv.login("dora", PW, &[("X-Test", "1")]).status, 200);
    let failed = actions(&srv, &root, "?action=login.failed");
    assert_eq!(failed.len(), 3);
    let logins = actions(&srv, &root, "?action=login");
    assert_eq!(
        logins.len(),
        4,
        "dora's 3 failed and 1 good login: {logins:?}"
    );
    assert_eq!(
        actions(&srv, &root, "?actor=dora&action=login").len(),
        1,
        "failed logins have no actor"
    );
    // Pages of two, by `next`.
    let (_, p1) = srv.get(&root, "/api/v1/admin/audit?limit=2&action=login");
    let next = p1["next"].as_i64().unwrap();
    let (_, p2) = srv.get(
        &root,
        &format!("/api/v1/admin/audit?limit=2&action=login&before={next}"),
    );
    assert_eq!(p2["entries"].as_array().unwrap().len(), 2);
    assert!(p2["entries"][0]["id"].as_i64().unwrap() < next);
    let row = &p1["entries"][0];
    assert_eq!(
        (
            row["action"].as_str(),
            row["actorName"].as_str(),
            row["target"].as_str()
        ),
        (Some("login.ok"), Some("dora"), Some("user:dora"))
    );
    assert!(!row["ip"].as_str().unwrap().is_empty());
    // JSON lines.
    let (s, text) = srv.get_text(&root, "/api/v1/admin/audit?format=jsonl&action=login");
    assert_eq!(s, 200);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    let (s, _) = srv.get(&root, "/api/v1/admin/audit?limit=0");
    assert_eq!(s, 400);
    // Kept `audit.keep_days` (365): a compaction pass past that forgets them.
    srv.advance_clock(366 * 86_400_000);
    let (s, pass) = srv.post(&root, "/api/v1/admin/compact", &json!({}));
    assert_eq!(s, 200, "{pass}");
    assert!(pass["audit"].as_i64().unwrap() >= 4, "{pass}");
    assert_eq!(actions(&srv, &root, "?action=login").len(), 0);
}

#[test]
fn shares_and_the_trash_are_in_the_audit_log() {
    let (srv, root) = server();
    let ann = srv.add_user("ann");
    let bob = srv.add_user("bob");
    let (_, b) = srv.get(&bob, "/api/v1/me");
    let bob_id = b["id"].as_str().unwrap();
    let doc = srv.create_doc(&ann, "Plans");
    let shares = format!("/api/v1/docs/{doc}/shares");
    for access in ["read", "write"] {
        let (s, _) = srv.put(
            &ann,
            &shares,
            &json!([{"kind": "user", "id": bob_id, "access": access}]),
        );
        assert_eq!(s, 200);
    }
    assert_eq!(srv.put(&ann, &shares, &json!([])).0, 200);
    let (s, f) = srv.post(&ann, "/api/v1/folders", &json!({"name": "Team"}));
    assert_eq!(s, 201);
    let folder = f["folderId"].as_str().unwrap();
    let (s, _) = srv.put(
        &ann,
        &format!("/api/v1/folders/{folder}/shares"),
        &json!([{"kind": "user", "id": bob_id, "access": "read"}]),
    );
    assert_eq!(s, 200);
    assert_eq!(srv.delete(&ann, &format!("/api/v1/docs/{doc}")), 204);
    assert_eq!(srv.delete(&ann, &format!("/api/v1/trash/{doc}")), 204);
    let (_, page) = srv.get(&root, "/api/v1/admin/audit?actor=ann");
    let rows: Vec<(String, String, Value)> = page["entries"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .map(|e| {
            (
                e["action"].as_str().unwrap().to_string(),
                e["target"].as_str().unwrap().to_string(),
                e["detail"].clone(),
            )
        })
        .collect();
    let d = format!("doc:{doc}");
    let f = format!("folder:{folder}");
    let expected = [
        (
            "share.added",
            &d,
            json!({"kind": "user", "id": bob_id, "access": "read"}),
        ),
        (
            "share.added",
            &d,
            json!({"kind": "user", "id": bob_id, "access": "write", "from": "read"}),
        ),
        (
            "share.removed",
            &d,
            json!({"kind": "user", "id": bob_id, "access": "write"}),
        ),
        (
            "share.added",
            &f,
            json!({"kind": "user", "id": bob_id, "access": "read"}),
        ),
        ("document.trashed", &d, json!({})),
        ("document.purged", &d, json!({})),
    ];
    assert_eq!(rows.len(), expected.len(), "{rows:#?}");
    for (row, (action, target, detail)) in rows.iter().zip(expected) {
        assert_eq!((row.0.as_str(), &row.1, &row.2), (action, target, &detail));
    }
}

/// The same from a shell: list, deactivate, reactivate, remove with a transfer, invite —
/// on the database the running server uses, which sees each change.
#[test]
fn the_cli_manages_people_too() {
    let (srv, root) = server();
    let ann = srv.add_user_with_password("ann", PW);
    srv.add_user("bob");
    let doc = srv.create_doc(&ann, "Ann's notes");
    let (ok, out, err) = srv.cli(&["user", "list"]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("NAME"), "{out}");
    assert_eq!(lines.len(), 4, "root, ann, bob: {out}");
    let (ok, _, err) = srv.cli(&["user", "deactivate", "ann"]);
    assert!(ok, "{err}");
    // The server sees another process's change within its refresh.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while srv.get(&ann, "/api/v1/me").0 != 401 {
        assert!(
            std::time::Instant::now() < deadline,
            "ann's token still works"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let (ok, out, _) = srv.cli(&["user", "list"]);
    assert!(ok);
    let ann_line = out.lines().find(|l| l.starts_with("ann ")).unwrap();
    assert!(
        ann_line.contains(" no "),
        "listed as not active: {ann_line}"
    );
    let (ok, _, err) = srv.cli(&["user", "reactivate", "ann"]);
    assert!(ok, "{err}");
    assert_eq!(srv.login("ann", PW, &[]).status, 200);
    // Removal needs an heir; the documents go to them.
    let (ok, _, err) = srv.cli(&["user", "remove", "ann"]);
    assert!(!ok, "--transfer-to is required: {err}");
    let (ok, out, err) = srv.cli(&["user", "remove", "ann", "--transfer-to", "bob"]);
    assert!(ok, "{err}");
    assert!(out.contains("1 documents"), "{out}");
    let (_, list) = srv.get(&root, "/api/v1/admin/users");
    assert!(list["people"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["name"] != "ann"));
    let db = srv.db();
    let owner: String = db
        .query_row(
            "SELECT u.name FROM documents d JOIN users u ON u.id = d.owner_id WHERE d.id = ?1",
            [&doc],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(owner, "bob");
    // An invitation made by the CLI works in the app.
    let (ok, out, err) = srv.cli(&["invite", "--uses", "1", "--hours", "2"]);
    assert!(ok, "{err}");
    let link = out
        .lines()
        .find_map(|l| l.strip_prefix("link: "))
        .unwrap()
        .trim()
        .to_string();
    let secret = link.strip_prefix("/invite/").unwrap();
    let r = accept(&srv, secret, &json!({"name": "cy", "password": PW}));
    assert_eq!(r.status, 200, "{}", r.body);
    let (ok, _, err) = srv.cli(&["invite", "--uses", "0"]);
    assert!(!ok && err.contains("--uses"), "{err}");
    let actions = actions(&srv, &root, "?actor=cli");
    assert_eq!(
        actions[..4],
        [
            "invite.created",
            "user.deleted",
            "user.reactivated",
            "user.deactivated"
        ]
    );
    assert!(
        actions.contains(&"user.created".to_string()),
        "`user add` too: {actions:?}"
    );
}

/// A deactivated person's bullets are free at once: their leases end with their rights.
#[test]
fn deactivation_releases_the_persons_leases() {
    let (srv, root) = server();
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let doc = srv.create_doc(&alice, "Shared");
    srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        0,
        vec![insert("blk_0", None, "a0", "x")],
    );
    let (_, me) = srv.get(&bob, "/api/v1/me");
    let bob_id = me["id"].as_str().unwrap().to_string();
    let (s, _) = srv.put(
        &alice,
        &format!("/api/v1/docs/{doc}/shares"),
        &json!([{"kind": "user", "id": bob_id, "access": "write"}]),
    );
    assert_eq!(s, 200);
    let (s, held) = srv.sync(
        &bob,
        &doc,
        &json!({"clientId": "cl_b", "lastSeq": 0, "ops": [], "leases": {"hold": ["blk_0"]}}),
    );
    assert_eq!(s, 200, "{held}");
    let others = |r: &Value| {
        r["leases"]["others"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    let seen = srv.sync_ok(&alice, &doc, "cl_a", 0, vec![]);
    assert_eq!(others(&seen).len(), 1, "bob holds the bullet: {seen}");
    let (s, _) = srv.patch(
        &root,
        &format!("/api/v1/admin/users/{bob_id}"),
        &json!({"active": false}),
    );
    assert_eq!(s, 200);
    // The actor re-checks lease holders when the access epoch moves; a barrier of syncs.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let now = srv.sync_ok(&alice, &doc, "cl_a", 0, vec![]);
        if others(&now).is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "bob's lease outlived his account: {now}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
