//! The API document (`GET /api/v1/openapi.json`) against the server that serves it: every
//! route of the route table is in it, and for every endpoint a request shaped as PROTOCOL
//! describes it validates against the document's request schema, is sent for real, and its
//! real answer validates against the document's response schema for the status it got —
//! errors included. A schema that drifts from what the server decodes or encodes fails here.

use crate::common::{self, *};
use serde_json::{json, Value};

struct ApiDoc {
    doc: Value,
}

impl ApiDoc {
    fn fetch(srv: &TestServer) -> ApiDoc {
        let r = srv.send("GET", "/api/v1/openapi.json", &Auth::None, &[], None);
        assert_eq!(r.status, 200, "served without credentials: {}", r.body);
        assert_eq!(r.body["openapi"], "3.1.0");
        ApiDoc { doc: r.body }
    }

    /// The operation for `method` on the templated `path` (`/api/v1/docs/{id}/sync`).
    fn operation(&self, method: &str, path: &str) -> &Value {
        let op = &self.doc["paths"][path][method.to_lowercase()];
        assert!(op.is_object(), "{method} {path} is not in the API document");
        op
    }

    /// Validates `instance` against `schema`, whose `$ref`s point into the document.
    fn check(&self, what: &str, schema: &Value, instance: &Value) {
        let mut root = schema.clone();
        root["components"] = self.doc["components"].clone();
        root["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
        let validator = jsonschema::validator_for(&root)
            .unwrap_or_else(|e| panic!("{what}: the document's schema does not compile: {e}"));
        let errors: Vec<String> = validator
            .iter_errors(instance)
            .map(|e| format!("{} at {}", e, e.instance_path))
            .collect();
        assert!(
            errors.is_empty(),
            "{what}: {instance} does not fit the document: {errors:?}"
        );
    }

    /// Whether the document's request schema refuses `body` (a request meant to be invalid).
    fn refuses_request(&self, method: &str, path: &str, body: &Value) -> bool {
        let mut root = self.operation(method, path)["requestBody"]["content"]["application/json"]
            ["schema"]
            .clone();
        root["components"] = self.doc["components"].clone();
        root["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
        !jsonschema::validator_for(&root)
            .expect("the document's schema compiles")
            .is_valid(body)
    }

    fn check_request(&self, method: &str, path: &str, body: &Value) {
        let schema =
            &self.operation(method, path)["requestBody"]["content"]["application/json"]["schema"];
        assert!(
            schema.is_object(),
            "{method} {path}: a body is sent, none is declared"
        );
        self.check(&format!("{method} {path} request"), schema, body);
    }

    fn check_response(&self, method: &str, path: &str, status: u16, body: &Value) {
        let response = &self.operation(method, path)["responses"][status.to_string()];
        assert!(
            response.is_object(),
            "{method} {path}: status {status} is not declared ({body})"
        );
        let content = &response["content"];
        if status == 204 || content.is_null() {
            return;
        }
        let schema = &content["application/json"]["schema"];
        if schema.is_object() {
            self.check(&format!("{method} {path} → {status}"), schema, body);
        }
    }
}

/// One call: the body is checked against the document before it is sent, the answer after.
struct Caller<'a> {
    srv: &'a TestServer,
    api: &'a ApiDoc,
    /// Operations called, as `METHOD template`.
    called: std::cell::RefCell<Vec<String>>,
}

impl Caller<'_> {
    /// `template` names the operation; `path` is the URL actually called.
    fn call(
        &self,
        token: &str,
        method: &str,
        template: &str,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        if let Some(b) = &body {
            self.api.check_request(method, template, b);
        }
        self.send(token, method, template, path, body)
    }

    /// A request the document itself says is invalid (it must: the server and the document
    /// agree on what is refused); the answer is still held to the document.
    fn call_invalid(
        &self,
        token: &str,
        method: &str,
        template: &str,
        path: &str,
        body: Value,
    ) -> (u16, Value) {
        assert!(
            self.api.refuses_request(method, template, &body),
            "{method} {template}: the document accepts {body}, which the server refuses"
        );
        self.send(token, method, template, path, Some(body))
    }

    fn send(
        &self,
        token: &str,
        method: &str,
        template: &str,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let auth = if token.is_empty() {
            Auth::None
        } else {
            Auth::Bearer(token)
        };
        let origin = self.srv.origin();
        let r = self.srv.send(
            method,
            path,
            &auth,
            &[("Origin", origin.as_str())],
            body.as_ref(),
        );
        self.api.check_response(method, template, r.status, &r.body);
        self.called
            .borrow_mut()
            .push(format!("{method} {template}"));
        (r.status, r.body)
    }
}

/// The routes of `src/http/mod.rs`'s table as `(METHOD, path)`, `/api/v1` scope applied.
fn route_table() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/http/mod.rs"))
        .expect("route table");
    let table = &text[text.find("pub fn routes").expect("routes()")..];
    let scope_at = table.find("web::scope(\"/api/v1\")").expect("api scope");
    let mut out = Vec::new();
    let mut rest = table;
    let mut offset = 0;
    while let Some(i) = rest.find(".route(") {
        let after = &rest[i + 7..];
        let q1 = after.find('"').expect("path literal");
        let q2 = q1 + 1 + after[q1 + 1..].find('"').expect("path end");
        let path = &after[q1 + 1..q2];
        let m = after.find("web::").expect("method") + 5;
        let method = &after[m..m + after[m..].find('(').expect("method call")];
        let scoped = offset + i > scope_at;
        let full = if scoped {
            format!("/api/v1{path}")
        } else {
            path.to_string()
        };
        out.push((method.to_uppercase(), full));
        offset += i + 7;
        rest = &rest[i + 7..];
    }
    out
}

#[test]
fn every_api_route_is_in_the_document_and_nothing_else() {
    let srv = TestServer::start();
    let api = ApiDoc::fetch(&srv);
    let routes = route_table();
    assert!(routes.len() > 40, "the route table was read: {routes:?}");
    let mut expected: Vec<String> = routes
        .iter()
        // Pages of the web app, the test hooks and the document itself are not the API.
        .filter(|(_, p)| {
            p.starts_with("/api/v1/") || ["/healthz", "/readyz", "/metrics"].contains(&p.as_str())
        })
        .filter(|(_, p)| !p.starts_with("/api/v1/testing/") && p != "/api/v1/openapi.json")
        .map(|(m, p)| format!("{m} {p}").replace("{docId}", "{id}"))
        .collect();
    expected.sort();
    let mut documented: Vec<String> = Vec::new();
    for (path, item) in api.doc["paths"].as_object().expect("paths") {
        for method in item.as_object().expect("path item").keys() {
            documented.push(format!("{} {path}", method.to_uppercase()));
        }
    }
    documented.sort();
    assert_eq!(documented, expected);
    // Every operation says what an error looks like.
    for line in &documented {
        let (method, path) = line.split_once(' ').unwrap();
        let op = api.operation(method, path);
        assert!(op["summary"].is_string(), "{line} has a summary");
    }
}

#[test]
fn requests_shaped_as_the_protocol_says_and_the_real_answers_fit_the_document() {
    let srv = TestServer::start();
    let api = ApiDoc::fetch(&srv);
    let c = Caller {
        srv: &srv,
        api: &api,
        called: Default::default(),
    };
    let alice = srv.add_user_with_password("alice", "correct horse battery");
    let bob = srv.add_user("bob");
    let bob_id = common::channels::user_id(&srv.url(""), &bob);

    // Accounts.
    let (s, _) = c.call(
        "",
        "POST",
        "/api/v1/auth/login",
        "/api/v1/auth/login",
        Some(json!({"username": "alice", "password": "correct horse battery"})),
    );
    assert_eq!(s, 200);
    let (s, _) = c.call(
        "",
        "POST",
        "/api/v1/auth/login",
        "/api/v1/auth/login",
        Some(json!({"username": "alice", "password": "wrong"})),
    );
    assert_eq!(s, 401);
    assert_eq!(
        c.call(&alice, "GET", "/api/v1/me", "/api/v1/me", None).0,
        200
    );
    assert_eq!(c.call("", "GET", "/api/v1/me", "/api/v1/me", None).0, 401);
    let (s, token) = c.call(
        &alice,
        "POST",
        "/api/v1/tokens",
        "/api/v1/tokens",
        Some(json!({"label": "script"})),
    );
    assert_eq!(s, 201);
    assert_eq!(
        c.call(&alice, "GET", "/api/v1/tokens", "/api/v1/tokens", None)
            .0,
        200
    );
    let token_id = token["tokenId"].as_str().unwrap();
    let path = format!("/api/v1/tokens/{token_id}");
    assert_eq!(
        c.call(&alice, "DELETE", "/api/v1/tokens/{id}", &path, None)
            .0,
        204
    );

    // Folders, teams, documents.
    let (s, folder) = c.call(
        &alice,
        "POST",
        "/api/v1/folders",
        "/api/v1/folders",
        Some(json!({"name": "Projects"})),
    );
    assert_eq!(s, 201);
    let folder = folder["folderId"].as_str().unwrap().to_string();
    let (s, _) = c.call(
        &alice,
        "POST",
        "/api/v1/folders",
        "/api/v1/folders",
        Some(json!({"name": ""})),
    );
    assert_eq!(s, 400);
    let (s, doc) = c.call(
        &alice,
        "POST",
        "/api/v1/docs",
        "/api/v1/docs",
        Some(json!({"title": "Plan", "folderId": folder})),
    );
    assert_eq!(s, 201);
    let doc = doc["docId"].as_str().unwrap().to_string();
    let d = |tail: &str| format!("/api/v1/docs/{doc}{tail}");
    assert_eq!(
        c.call(&alice, "GET", "/api/v1/docs", "/api/v1/docs", None)
            .0,
        200
    );
    assert_eq!(
        c.call(&alice, "GET", "/api/v1/folders", "/api/v1/folders", None)
            .0,
        200
    );
    let (s, team) = c.call(
        &alice,
        "POST",
        "/api/v1/teams",
        "/api/v1/teams",
        Some(json!({"name": "Core"})),
    );
    assert_eq!(s, 201);
    let team = team["teamId"].as_str().unwrap().to_string();
    let members = format!("/api/v1/teams/{team}/members");
    let (s, _) = c.call(
        &alice,
        "PUT",
        "/api/v1/teams/{id}/members",
        &members,
        Some(json!({"members": [bob_id]})),
    );
    assert_eq!(s, 200);
    assert_eq!(
        c.call(&bob, "GET", "/api/v1/teams", "/api/v1/teams", None)
            .0,
        200
    );
    let (s, _) = c.call(
        &alice,
        "GET",
        "/api/v1/users",
        "/api/v1/users?name=bob",
        None,
    );
    assert_eq!(s, 200);
    let (s, _) = c.call(
        &alice,
        "GET",
        "/api/v1/users",
        "/api/v1/users?name=nobody",
        None,
    );
    assert_eq!(s, 404);
    let (s, _) = c.call(
        &alice,
        "GET",
        "/api/v1/users/search",
        "/api/v1/users/search?q=bo",
        None,
    );
    assert_eq!(s, 200);
    let (s, _) = c.call(
        &alice,
        "GET",
        "/api/v1/users/search",
        "/api/v1/users/search?q=",
        None,
    );
    assert_eq!(s, 400);

    // Shares: a user, a team.
    let shares = json!([
        {"kind": "user", "id": bob_id, "access": "write"},
        {"kind": "team", "id": team, "access": "read"},
    ]);
    let (s, _) = c.call(
        &alice,
        "PUT",
        "/api/v1/docs/{id}/shares",
        &d("/shares"),
        Some(shares),
    );
    assert_eq!(s, 200);
    assert_eq!(
        c.call(
            &alice,
            "GET",
            "/api/v1/docs/{id}/shares",
            &d("/shares"),
            None
        )
        .0,
        200
    );
    assert_eq!(
        c.call(&bob, "GET", "/api/v1/docs/{id}/shares", &d("/shares"), None)
            .0,
        403
    );
    assert_eq!(
        c.call(&bob, "GET", "/api/v1/docs/{id}/access", &d("/access"), None)
            .0,
        200
    );
    let fshares = format!("/api/v1/folders/{folder}/shares");
    let (s, _) = c.call(
        &alice,
        "PUT",
        "/api/v1/folders/{id}/shares",
        &fshares,
        Some(json!([{"kind": "user", "id": bob_id, "access": "read"}])),
    );
    assert_eq!(s, 200);
    assert_eq!(
        c.call(&alice, "GET", "/api/v1/folders/{id}/shares", &fshares, None)
            .0,
        200
    );

    // The data path, every op kind (PROTOCOL §2).
    let (s, snap) = c.call(
        &alice,
        "GET",
        "/api/v1/docs/{id}/snapshot",
        &d("/snapshot?clientId=cl_alice"),
        None,
    );
    assert_eq!(s, 200);
    assert_eq!(snap["blocks"], json!([]));
    let (a, b) = (id("blk_"), id("blk_"));
    let ops = json!([
        {"opId": id("op_"), "kind": "insert", "blockId": a, "parentId": null, "orderKey": "a0",
         "content": "Buy #milk, see [[doc_elsewhere]]"},
        {"opId": id("op_"), "kind": "insert", "blockId": b, "parentId": a, "orderKey": "a0",
         "content": "", "type": "todo", "checked": false},
        {"opId": id("op_"), "kind": "set_content", "blockId": b, "content": "oat", "baseVersion": 1},
        {"opId": id("op_"), "kind": "set_props", "blockId": b, "props": {"checked": true}},
        {"opId": id("op_"), "kind": "move", "blockId": b, "parentId": null, "orderKey": "a1"},
        {"opId": id("op_"), "kind": "delete", "blockId": b},
        {"opId": id("op_"), "kind": "restore", "blockId": b},
        {"opId": id("op_"), "kind": "set_title", "title": "Plan B", "baseVersion": 0},
        {"opId": id("op_"), "kind": "set_content", "blockId": a, "content": "stale", "baseVersion": 0},
    ]);
    let (s, reply) = c.call(
        &alice,
        "POST",
        "/api/v1/docs/{id}/sync",
        &d("/sync"),
        Some(json!({"clientId": "cl_alice", "lastSeq": 0, "ops": ops,
                    "leases": {"hold": [a]}})),
    );
    assert_eq!(s, 200, "{reply}");
    let statuses: Vec<&str> = reply["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses.last(), Some(&"conflict"), "{reply}");
    assert!(reply["ops"].as_array().unwrap().len() >= 8, "{reply}");
    let (s, _) = c.call(
        &bob,
        "POST",
        "/api/v1/docs/{id}/sync",
        &d("/sync"),
        Some(json!({"clientId": "cl_bob", "lastSeq": 0, "leases": {"hold": [a]}})),
    );
    assert_eq!(s, 200);
    let (s, _) = c.call_invalid(
        &alice,
        "POST",
        "/api/v1/docs/{id}/sync",
        &d("/sync"),
        json!({"clientId": "not a client", "lastSeq": 0}),
    );
    assert_eq!(s, 400);
    assert_eq!(
        c.call(
            &alice,
            "GET",
            "/api/v1/docs/{id}/snapshot",
            &d("/snapshot"),
            None
        )
        .0,
        200
    );
    let (s, first) = c.call(
        &alice,
        "GET",
        "/api/v1/docs/{id}/first-rows",
        &d("/first-rows?count=5"),
        None,
    );
    assert_eq!(s, 200);
    assert!(!first["rows"].as_array().unwrap().is_empty(), "{first}");
    assert_eq!(
        c.call(
            &alice,
            "GET",
            "/api/v1/docs/{id}/first-rows",
            &d("/first-rows?count=0"),
            None
        )
        .0,
        400
    );
    // A bullet shared with someone who has no other access (PROTOCOL §10).
    let gwen = srv.add_user("gwen");
    let gwen_id = common::channels::user_id(&srv.url(""), &gwen);
    let bullet = d(&format!("/blocks/{a}/shares"));
    let (s, _) = c.call(
        &alice,
        "PUT",
        "/api/v1/docs/{id}/blocks/{blockId}/shares",
        &bullet,
        Some(json!([{"kind": "user", "id": gwen_id, "access": "write"}])),
    );
    assert_eq!(s, 200);
    let (s, _) = c.call(
        &alice,
        "GET",
        "/api/v1/docs/{id}/blocks/{blockId}/shares",
        &bullet,
        None,
    );
    assert_eq!(s, 200);
    let (s, _) = c.call(
        &alice,
        "GET",
        "/api/v1/docs/{id}/blocks/{blockId}/access",
        &d(&format!("/blocks/{a}/access")),
        None,
    );
    assert_eq!(s, 200);
    let (s, shared) = c.call(
        &gwen,
        "GET",
        "/api/v1/shared/bullets",
        "/api/v1/shared/bullets",
        None,
    );
    assert_eq!(s, 200);
    assert_eq!(shared["bullets"][0]["blockId"], a.as_str(), "{shared}");
    let head = reply["headSeq"].as_i64().unwrap();
    let (s, _) = c.call(
        &alice,
        "GET",
        "/api/v1/docs/{id}/changes",
        &d(&format!("/changes?since={}&wait=1", head - 1)),
        None,
    );
    assert_eq!(s, 200);
    // The change feed: a page with entries, validated against the document.
    let (s, page) = c.call(&alice, "GET", "/api/v1/feed", "/api/v1/feed?limit=2", None);
    assert_eq!(s, 200);
    assert_eq!(page["entries"].as_array().map(Vec::len), Some(2), "{page}");
    // Webhooks: made, listed, read, its log, resumed, deleted.
    let (s, hook) = c.call(
        &alice,
        "POST",
        "/api/v1/webhooks",
        "/api/v1/webhooks",
        Some(
            json!({"url": "https://hooks.example.com/docsync", "events": ["ops"],
                    "secret": "0123456789abcdef0123"}),
        ),
    );
    assert_eq!(s, 201, "{hook}");
    let wh = format!("/api/v1/webhooks/{}", hook["id"].as_str().unwrap());
    assert_eq!(
        c.call(&alice, "GET", "/api/v1/webhooks", "/api/v1/webhooks", None)
            .0,
        200
    );
    assert_eq!(
        c.call(&alice, "GET", "/api/v1/webhooks/{id}", &wh, None).0,
        200
    );
    let (s, log) = c.call(
        &alice,
        "GET",
        "/api/v1/webhooks/{id}/deliveries",
        &format!("{wh}/deliveries?limit=10"),
        None,
    );
    assert_eq!(s, 200, "{log}");
    let (s, _) = c.call(
        &alice,
        "POST",
        "/api/v1/webhooks/{id}/resume",
        &format!("{wh}/resume"),
        None,
    );
    assert_eq!(s, 200);
    assert_eq!(
        c.call(&alice, "DELETE", "/api/v1/webhooks/{id}", &wh, None)
            .0,
        204
    );
    let (s, _) = c.call(
        &alice,
        "POST",
        "/api/v1/docs/{id}/leave",
        &d("/leave"),
        Some(json!({"clientId": "cl_alice"})),
    );
    assert_eq!(s, 204);
    assert_eq!(
        c.call(&alice, "GET", "/api/v1/docs/{id}/usage", &d("/usage"), None)
            .0,
        200
    );
    let (s, _) = c.call(
        &alice,
        "PATCH",
        "/api/v1/docs/{id}",
        &d(""),
        Some(json!({"icon": "🌱", "folderId": null})),
    );
    assert_eq!(s, 204);

    // Reading.
    let (s, md) = c.call(
        &alice,
        "GET",
        "/api/v1/docs/{id}/markdown",
        &d("/markdown"),
        None,
    );
    assert_eq!(s, 200);
    assert!(md.as_str().is_some_and(|t| t.contains("stale")), "{md}");
    // Whole workspaces: an import with a link between its documents, and the export.
    let (s, report) = c.call(
        &alice,
        "POST",
        "/api/v1/import",
        "/api/v1/import",
        Some(json!({"newFolder": "Imported", "documents": [
            {"file": "pages/A.md", "title": "A", "items": [{"depth": 0, "content": "see [[B]]", "type": "todo", "checked": true}]},
            {"file": "pages/B.md", "title": "B", "folder": "more", "items": [{"depth": 0, "content": "b", "ref": "r1"}], "notes": ["none"]}
        ]})),
    );
    assert_eq!(s, 201, "{report}");
    assert_eq!(report["links"], 1, "{report}");
    let (s, _) = c.call_invalid(
        &alice,
        "POST",
        "/api/v1/import",
        "/api/v1/import",
        json!({"documents": [{"file": "a", "items": []}]}),
    );
    assert_eq!(s, 400);
    let (s, _) = c.call(&alice, "GET", "/api/v1/export", "/api/v1/export", None);
    assert_eq!(s, 200);
    let history = d(&format!("/blocks/{b}/history?limit=2"));
    let (s, h) = c.call(
        &alice,
        "GET",
        "/api/v1/docs/{id}/blocks/{blockId}/history",
        &history,
        None,
    );
    assert_eq!(s, 200);
    assert_eq!(h["more"], true, "{h}");
    let bad = d("/blocks/nope/history");
    let (s, _) = c.call(
        &alice,
        "GET",
        "/api/v1/docs/{id}/blocks/{blockId}/history",
        &bad,
        None,
    );
    assert_eq!(s, 400);
    assert_eq!(
        c.call(
            &alice,
            "GET",
            "/api/v1/docs/{id}/backlinks",
            &d("/backlinks"),
            None
        )
        .0,
        200
    );
    assert_eq!(
        c.call(
            &alice,
            "GET",
            "/api/v1/search",
            "/api/v1/search?q=oat",
            None
        )
        .0,
        200
    );
    assert_eq!(
        c.call(&alice, "GET", "/api/v1/tags", "/api/v1/tags", None)
            .0,
        200
    );
    assert_eq!(
        c.call(
            &alice,
            "GET",
            "/api/v1/tags/{tag}",
            "/api/v1/tags/milk",
            None
        )
        .0,
        200
    );

    // History: versions, diff, restore, conflicts.
    let vpath = d("/versions");
    let (s, v) = c.call(
        &alice,
        "POST",
        "/api/v1/docs/{id}/versions",
        &vpath,
        Some(json!({"name": "Draft"})),
    );
    assert_eq!(s, 201, "{v}");
    let (s, _) = c.call(
        &alice,
        "POST",
        "/api/v1/docs/{id}/versions",
        &vpath,
        Some(json!({"name": ""})),
    );
    assert_eq!(s, 400);
    let vid = v["versionId"].as_str().unwrap().to_string();
    let one = d(&format!("/versions/{vid}"));
    assert_eq!(
        c.call(&alice, "GET", "/api/v1/docs/{id}/versions", &vpath, None)
            .0,
        200
    );
    assert_eq!(
        c.call(
            &alice,
            "GET",
            "/api/v1/docs/{id}/versions/{versionId}",
            &one,
            None
        )
        .0,
        200
    );
    assert_eq!(
        c.call(
            &alice,
            "GET",
            "/api/v1/docs/{id}/versions/{versionId}",
            &d("/versions/ver_none"),
            None
        )
        .0,
        404
    );
    let (s, _) = c.call(
        &alice,
        "PATCH",
        "/api/v1/docs/{id}/versions/{versionId}",
        &one,
        Some(json!({"name": "Draft 1"})),
    );
    assert_eq!(s, 200);
    let (s, _) = c.call(
        &alice,
        "GET",
        "/api/v1/docs/{id}/versions/{versionId}/diff",
        &format!("{one}/diff?to=head"),
        None,
    );
    assert_eq!(s, 200);
    let (s, r) = c.call(
        &alice,
        "POST",
        "/api/v1/docs/{id}/versions/{versionId}/restore",
        &format!("{one}/restore"),
        Some(json!({"clientId": "cl_api", "opIdPrefix": "op_api_restore", "blockIds": [b]})),
    );
    assert_eq!(s, 200, "{r}");
    let (s, _) = c.call(
        &alice,
        "POST",
        "/api/v1/docs/{id}/versions/{versionId}/restore",
        &format!("{one}/restore"),
        Some(json!({"clientId": "cl_api", "opIdPrefix": "nope"})),
    );
    assert_eq!(s, 400);
    let (s, _) = c.call(
        &alice,
        "GET",
        "/api/v1/conflicts",
        &format!("/api/v1/conflicts?docId={doc}"),
        None,
    );
    assert_eq!(s, 200);
    assert_eq!(
        c.call(
            &alice,
            "GET",
            "/api/v1/conflicts",
            "/api/v1/conflicts",
            None
        )
        .0,
        200
    );
    assert_eq!(
        c.call(
            &alice,
            "DELETE",
            "/api/v1/docs/{id}/versions/{versionId}",
            &one,
            None
        )
        .0,
        204
    );

    // Leaving what was shared, renaming and deleting.
    let fpath = format!("/api/v1/folders/{folder}");
    let (s, _) = c.call(
        &alice,
        "PATCH",
        "/api/v1/folders/{id}",
        &fpath,
        Some(json!({"name": "Archive", "parentId": null})),
    );
    assert_eq!(s, 200);
    assert_eq!(
        c.call(
            &bob,
            "DELETE",
            "/api/v1/docs/{id}/shares/me",
            &d("/shares/me"),
            None
        )
        .0,
        204
    );
    let fme = format!("/api/v1/folders/{folder}/shares/me");
    assert_eq!(
        c.call(&bob, "DELETE", "/api/v1/folders/{id}/shares/me", &fme, None)
            .0,
        204
    );
    let tme = format!("/api/v1/teams/{team}/members/me");
    assert_eq!(
        c.call(&bob, "DELETE", "/api/v1/teams/{id}/members/me", &tme, None)
            .0,
        204
    );
    assert_eq!(
        c.call(&bob, "DELETE", "/api/v1/docs/{id}", &d(""), None).0,
        404
    );
    assert_eq!(
        c.call(&alice, "DELETE", "/api/v1/folders/{id}", &fpath, None)
            .0,
        204
    );
    assert_eq!(
        c.call(&alice, "DELETE", "/api/v1/docs/{id}", &d(""), None)
            .0,
        204
    );

    // The trash: the deleted document is there, comes back, goes again and is purged.
    let (s, t) = c.call(&alice, "GET", "/api/v1/trash", "/api/v1/trash", None);
    assert_eq!(s, 200);
    assert_eq!(t["documents"][0]["docId"], json!(doc), "{t}");
    let tpath = format!("/api/v1/trash/{doc}");
    assert_eq!(
        c.call(
            &alice,
            "POST",
            "/api/v1/trash/{id}/restore",
            &format!("{tpath}/restore"),
            None
        )
        .0,
        204
    );
    assert_eq!(
        c.call(
            &alice,
            "POST",
            "/api/v1/trash/{id}/restore",
            &format!("{tpath}/restore"),
            None
        )
        .0,
        404
    );
    assert_eq!(
        c.call(&alice, "DELETE", "/api/v1/docs/{id}", &d(""), None)
            .0,
        204
    );
    assert_eq!(
        c.call(&alice, "DELETE", "/api/v1/trash/{id}", &tpath, None)
            .0,
        204
    );

    // Operators.
    let root = srv.add_admin("root");
    let (s, _) = c.call(
        &root,
        "POST",
        "/api/v1/admin/compact",
        "/api/v1/admin/compact",
        None,
    );
    assert_eq!(s, 200);
    assert_eq!(
        c.call(
            &root,
            "GET",
            "/api/v1/admin/actors",
            "/api/v1/admin/actors",
            None
        )
        .0,
        200
    );
    assert_eq!(
        c.call(
            &alice,
            "GET",
            "/api/v1/admin/actors",
            "/api/v1/admin/actors",
            None
        )
        .0,
        403
    );
    // Accounts: self-service, people, invitations, teams and the audit log (PROTOCOL §9).
    let call = |token: &str, method: &str, template: &str, path: &str, body: Option<Value>| {
        c.call(token, method, template, path, body)
    };
    let (s, me) = call(
        &alice,
        "PATCH",
        "/api/v1/me",
        "/api/v1/me",
        Some(json!({"displayName": "Alice A."})),
    );
    assert_eq!(s, 200, "{me}");
    assert_eq!(
        call(
            &alice,
            "GET",
            "/api/v1/me/sessions",
            "/api/v1/me/sessions",
            None
        )
        .0,
        200
    );
    let (s, methods) = call(
        "",
        "GET",
        "/api/v1/auth/methods",
        "/api/v1/auth/methods",
        None,
    );
    assert_eq!((s, &methods["password"]), (200, &json!(true)), "{methods}");
    let none = "/api/v1/me/sessions/0000000000000000";
    assert_eq!(
        call(&alice, "DELETE", "/api/v1/me/sessions/{id}", none, None).0,
        404
    );
    let wrong = json!({"current": "not her password", "new": "a fresh phrase"});
    assert_eq!(
        call(
            &alice,
            "POST",
            "/api/v1/me/password",
            "/api/v1/me/password",
            Some(wrong)
        )
        .0,
        403
    );
    assert_eq!(
        call(
            &root,
            "GET",
            "/api/v1/admin/users",
            "/api/v1/admin/users",
            None
        )
        .0,
        200
    );
    let (s, eve) = call(
        &root,
        "POST",
        "/api/v1/admin/users",
        "/api/v1/admin/users",
        Some(json!({"name": "eve"})),
    );
    assert_eq!(s, 201, "{eve}");
    let eve_path = format!(
        "/api/v1/admin/users/{}",
        eve["person"]["id"].as_str().unwrap()
    );
    let (s, _) = call(
        &root,
        "PATCH",
        "/api/v1/admin/users/{id}",
        &eve_path,
        Some(json!({"displayName": "Eve"})),
    );
    assert_eq!(s, 200);
    let reset = format!("{eve_path}/reset-link");
    assert_eq!(
        call(
            &root,
            "POST",
            "/api/v1/admin/users/{id}/reset-link",
            &reset,
            Some(json!({}))
        )
        .0,
        201
    );
    let (s, inv) = call(
        &root,
        "POST",
        "/api/v1/admin/invites",
        "/api/v1/admin/invites",
        Some(json!({"expiresInHours": 1, "maxUses": 2})),
    );
    assert_eq!(s, 201, "{inv}");
    assert_eq!(
        call(
            &root,
            "GET",
            "/api/v1/admin/invites",
            "/api/v1/admin/invites",
            None
        )
        .0,
        200
    );
    let link = inv["link"]
        .as_str()
        .unwrap()
        .replace("/invite/", "/api/v1/invites/");
    assert_eq!(
        call("", "GET", "/api/v1/invites/{token}", &link, None).0,
        200
    );
    let accepted = format!("{link}/accept");
    let (s, joined) = call(
        "",
        "POST",
        "/api/v1/invites/{token}/accept",
        &accepted,
        Some(json!({"name": "finn", "password": "a long phrase of mine"})),
    );
    assert_eq!(s, 200, "{joined}");
    let revoke = format!(
        "/api/v1/admin/invites/{}",
        inv["invite"]["inviteId"].as_str().unwrap()
    );
    assert_eq!(
        call(&root, "DELETE", "/api/v1/admin/invites/{id}", &revoke, None).0,
        204
    );
    assert_eq!(
        call(
            &root,
            "GET",
            "/api/v1/admin/teams",
            "/api/v1/admin/teams",
            None
        )
        .0,
        200
    );
    let admin_members = format!("/api/v1/admin/teams/{team}/members");
    let (s, t) = call(
        &root,
        "PUT",
        "/api/v1/admin/teams/{id}/members",
        &admin_members,
        Some(json!({"members": []})),
    );
    assert_eq!(s, 200, "{t}");
    assert_eq!(
        call(
            &root,
            "GET",
            "/api/v1/admin/audit",
            "/api/v1/admin/audit",
            None
        )
        .0,
        200
    );
    let root_id = call(&root, "GET", "/api/v1/me", "/api/v1/me", None).1["id"].clone();
    let (s, gone) = call(
        &root,
        "DELETE",
        "/api/v1/admin/users/{id}",
        &eve_path,
        Some(json!({"transferTo": root_id})),
    );
    assert_eq!(s, 200, "{gone}");
    assert_eq!(c.call("", "GET", "/healthz", "/healthz", None).0, 200);
    assert_eq!(c.call("", "GET", "/readyz", "/readyz", None).0, 200);
    assert_eq!(c.call("", "GET", "/metrics", "/metrics", None).0, 200);
    assert_eq!(
        c.call(
            &alice,
            "POST",
            "/api/v1/auth/logout",
            "/api/v1/auth/logout",
            None
        )
        .0,
        204
    );

    // Every documented operation but the wake-up streams was called above (those are
    // tested as streams in `channels.rs`; here only that they are declared).
    let called: std::collections::BTreeSet<String> = c.called.borrow().iter().cloned().collect();
    for (path, item) in api.doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            let line = format!("{} {path}", method.to_uppercase());
            let stream = path.ends_with("/events") || path.ends_with("/ws");
            assert!(stream || called.contains(&line), "{line} was not exercised");
        }
    }
}
