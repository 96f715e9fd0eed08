//! Folders renamed, moved and deleted over HTTP: owner only, no cycles, a move changes who
//! reaches the documents inside (folder shares are inherited), and deleting a folder never
//! deletes a document — its contents move to its parent.

use crate::common::TestServer;
use serde_json::{json, Value};

fn folder(srv: &TestServer, token: &str, name: &str, parent: Option<&str>) -> String {
    let (s, v) = srv.post(
        token,
        "/api/v1/folders",
        &json!({"name": name, "parentId": parent}),
    );
    assert_eq!(s, 201, "create folder {name}: {v}");
    v["folderId"].as_str().unwrap().to_string()
}

fn folders(srv: &TestServer, token: &str) -> Vec<Value> {
    let (s, v) = srv.get(token, "/api/v1/folders");
    assert_eq!(s, 200, "{v}");
    v["folders"].as_array().cloned().unwrap_or_default()
}

fn user_id(srv: &TestServer, token: &str, name: &str) -> String {
    let (s, v) = srv.get(token, &format!("/api/v1/users?name={name}"));
    assert_eq!(s, 200, "{v}");
    v["id"].as_str().unwrap().to_string()
}

#[test]
fn folders_are_renamed_moved_and_deleted_by_their_owner_without_losing_a_document() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let mallory = srv.add_user("mallory");
    let bob_id = user_id(&srv, &alice, "bob");
    let a = folder(&srv, &alice, "Work", None);
    let b = folder(&srv, &alice, "Plans", Some(&a));
    let doc = srv.create_doc(&alice, "Roadmap");
    let (s, v) = srv.patch(
        &alice,
        &format!("/api/v1/docs/{doc}"),
        &json!({"folderId": b}),
    );
    assert!(s == 200 || s == 204, "{s} {v}");
    let (s, v) = srv.put(
        &alice,
        &format!("/api/v1/folders/{a}/shares"),
        &json!([{"kind": "user", "id": bob_id, "access": "read"}]),
    );
    assert_eq!(s, 200, "{v}");
    let snap = format!("/api/v1/docs/{doc}/snapshot");
    assert_eq!(
        srv.get(&bob, &snap).0,
        200,
        "bob reads through the share on Work"
    );

    // rename: owner only; a reader may not, a stranger does not even see it
    let (s, v) = srv.patch(
        &alice,
        &format!("/api/v1/folders/{a}"),
        &json!({"name": " Office "}),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["name"], "Office");
    assert_eq!(
        srv.patch(
            &bob,
            &format!("/api/v1/folders/{a}"),
            &json!({"name": "Mine"})
        )
        .0,
        403
    );
    assert_eq!(
        srv.patch(
            &mallory,
            &format!("/api/v1/folders/{a}"),
            &json!({"name": "Mine"})
        )
        .0,
        404
    );

    // bad input: a clear 400, nothing changed
    for body in [
        json!({}),
        json!({"name": ""}),
        json!({"name": "x", "colour": "red"}),
        json!({"name": 3}),
    ] {
        let (s, v) = srv.patch(&alice, &format!("/api/v1/folders/{a}"), &body);
        assert_eq!(s, 400, "{body}: {v}");
        assert!(v["error"]["message"].is_string(), "{v}");
    }
    // no cycles: Office into Plans (inside it), or into itself
    for parent in [&b, &a] {
        let (s, v) = srv.patch(
            &alice,
            &format!("/api/v1/folders/{a}"),
            &json!({"parentId": parent}),
        );
        assert_eq!(s, 400, "{v}");
    }
    assert!(folders(&srv, &alice)
        .iter()
        .any(|f| f["folderId"] == a.as_str() && f["parentId"].is_null() && f["name"] == "Office"));

    // move Plans to the top level: it leaves Office, and bob's share on Office no longer reaches the doc
    let (s, v) = srv.patch(
        &alice,
        &format!("/api/v1/folders/{b}"),
        &json!({"parentId": null}),
    );
    assert_eq!(s, 200, "{v}");
    assert!(v["parentId"].is_null(), "{v}");
    assert_eq!(
        srv.get(&bob, &snap).0,
        404,
        "the move ended bob's inherited access"
    );
    // and back under Office: he reads again
    assert_eq!(
        srv.patch(
            &alice,
            &format!("/api/v1/folders/{b}"),
            &json!({"parentId": a})
        )
        .0,
        200
    );
    assert_eq!(srv.get(&bob, &snap).0, 200);

    // delete Office: only its owner; Plans and the document move up, nothing is deleted
    assert_eq!(srv.delete(&bob, &format!("/api/v1/folders/{a}")), 403);
    assert_eq!(srv.delete(&mallory, &format!("/api/v1/folders/{a}")), 404);
    assert_eq!(srv.delete(&alice, &format!("/api/v1/folders/{a}")), 204);
    let left = folders(&srv, &alice);
    assert!(left.iter().all(|f| f["folderId"] != a.as_str()));
    assert!(left
        .iter()
        .any(|f| f["folderId"] == b.as_str() && f["parentId"].is_null()));
    assert_eq!(srv.get(&alice, &snap).0, 200, "the document is still there");
    assert_eq!(
        srv.get(&bob, &snap).0,
        404,
        "the share on the deleted folder ended"
    );
    assert_eq!(srv.delete(&alice, &format!("/api/v1/folders/{b}")), 204);
    let (s, v) = srv.get(&alice, "/api/v1/docs");
    assert_eq!(s, 200);
    let listed = v["docs"]
        .as_array()
        .or(v["documents"].as_array())
        .cloned()
        .unwrap_or_default();
    let d = listed
        .iter()
        .find(|d| d["docId"] == doc.as_str())
        .expect("the doc is listed");
    assert!(d["folderId"].is_null(), "at the top level now: {d}");
    assert_eq!(srv.delete(&alice, &format!("/api/v1/folders/{b}")), 404);
}

#[test]
fn who_has_access_names_every_person_and_team_with_the_enforced_role_and_path() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let carol = srv.add_user("carol");
    srv.add_user("dave");
    let mallory = srv.add_user("mallory");
    let (ok, _, err) = srv.cli(&["user", "add", "erin", "--display-name", "Erin Sommer"]);
    assert!(ok, "{err}");
    let bob_id = user_id(&srv, &alice, "bob");
    let carol_id = user_id(&srv, &alice, "carol");
    let dave_id = user_id(&srv, &alice, "dave");
    let (s, team) = srv.post(&alice, "/api/v1/teams", &json!({"name": "Writers"}));
    assert_eq!(s, 201, "{team}");
    let team_id = team["teamId"].as_str().unwrap().to_string();
    let (s, v) = srv.put(
        &alice,
        &format!("/api/v1/teams/{team_id}/members"),
        &json!({"members": [carol_id, dave_id]}),
    );
    assert_eq!(s, 200, "{v}");
    let work = folder(&srv, &alice, "Work", None);
    let plans = folder(&srv, &alice, "Plans", Some(&work));
    let doc = srv.create_doc(&alice, "Roadmap");
    let (s, _) = srv.patch(
        &alice,
        &format!("/api/v1/docs/{doc}"),
        &json!({"folderId": plans}),
    );
    assert!(s == 200 || s == 204);
    let (s, v) = srv.put(
        &alice,
        &format!("/api/v1/folders/{work}/shares"),
        &json!([{"kind": "team", "id": team_id, "access": "read"}]),
    );
    assert_eq!(s, 200, "{v}");
    let (s, v) = srv.put(
        &alice,
        &format!("/api/v1/docs/{doc}/shares"),
        &json!([{"kind": "user", "id": bob_id, "access": "write"}, {"kind": "user", "id": dave_id, "access": "write"}]),
    );
    assert_eq!(s, 200, "{v}");

    let path = format!("/api/v1/docs/{doc}/access");
    let (s, list) = srv.get(&bob, &path);
    assert_eq!(s, 200, "a reader sees who else has access: {list}");
    let people: Vec<(String, String, String)> = list["people"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_string(),
                p["role"].as_str().unwrap().to_string(),
                p["via"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        people,
        vec![
            ("alice".into(), "owner".into(), "owner".into()),
            ("bob".into(), "editor".into(), "direct".into()),
            // dave: editor directly beats viewer through the team's folder share
            ("dave".into(), "editor".into(), "direct".into()),
            // carol: her team's share of the folder the document is in
            ("carol".into(), "viewer".into(), "folder:Work".into()),
        ],
        "{list}"
    );
    let teams = list["teams"].as_array().unwrap();
    assert_eq!(teams.len(), 1, "{list}");
    assert_eq!(teams[0]["name"], "Writers");
    assert_eq!(teams[0]["access"], "read");
    assert_eq!(teams[0]["via"], "folder:Work");
    let members: Vec<&str> = teams[0]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["userId"].as_str().unwrap())
        .collect();
    let alice_id = user_id(&srv, &alice, "alice");
    assert_eq!(
        members,
        vec![alice_id.as_str(), carol_id.as_str(), dave_id.as_str()],
        "the team's members, by display name (its owner is one)"
    );
    assert!(!list.to_string().contains("mallory") && !list.to_string().contains("erin"));
    assert_eq!(srv.get(&mallory, &path).0, 404, "a stranger learns nothing");
    assert_eq!(srv.get(&carol, &path).0, 200);

    // Picking a person: by part of the name or of the display name, any case.
    let (s, found) = srv.get(&alice, "/api/v1/users/search?q=SOMM");
    assert_eq!(s, 200, "{found}");
    assert_eq!(found["users"][0]["name"], "erin", "{found}");
    assert_eq!(found["users"][0]["displayName"], "Erin Sommer");
    let (_, found) = srv.get(&alice, "/api/v1/users/search?q=a");
    let names: Vec<&str> = found["users"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["alice", "carol", "dave", "mallory"], "{found}");
    let (_, found) = srv.get(&alice, "/api/v1/users/search?q=%25");
    assert_eq!(
        found["users"],
        json!([]),
        "a % matches itself, not everyone"
    );
    assert_eq!(srv.get(&alice, "/api/v1/users/search?q=").0, 400);
    assert_eq!(srv.get(&alice, "/api/v1/users/search").0, 400);
}
