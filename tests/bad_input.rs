//! Bad input end to end (PROTOCOL §3): malformed JSON, wrong field types, unknown kinds,
//! missing fields, invalid order keys, oversized content/titles/bodies, too many ops, wrong
//! content types and block IDs of another document. Every rejected request must be a `4xx`
//! with `{"error": {"code", "message"}}` and must write nothing at all; block IDs of another
//! document are answered exactly as IDs that exist nowhere (so no answer tells whether an ID
//! lives in another document) and leave the other document untouched. A proptest throws a few hundred random mutations of a valid `/sync` body at one
//! server and checks the same properties.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::db::fingerprint;
use common::*;
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, TestCaseError, TestRunner};
use reqwest::blocking::{Body, Client};
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn client() -> Client {
    Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// POST with full control over the Content-Type header (None = no header) and the body
/// (a `Body::new(reader)` body is sent chunked, without Content-Length).
fn send(
    http: &Client,
    srv: &TestServer,
    token: &str,
    path: &str,
    ct: Option<&str>,
    body: Body,
) -> (u16, String) {
    let mut req = http.post(srv.url(path)).bearer_auth(token);
    if let Some(ct) = ct {
        req = req.header("Content-Type", ct);
    }
    let r = req
        .body(body)
        .send()
        .unwrap_or_else(|e| panic!("POST {path}: {e}"));
    let status = r.status().as_u16();
    (status, r.text().unwrap_or_default())
}

/// The parts of a snapshot that only writes can change.
fn snap_core(s: &Value) -> Value {
    json!({
        "title": s["title"], "titleVersion": s["titleVersion"], "headSeq": s["headSeq"],
        "logFloor": s["logFloor"], "icon": s["icon"], "blocks": s["blocks"],
    })
}

/// Checks the error body shape; returns a complaint or None.
fn error_shape(text: &str, code: Option<&str>) -> Option<String> {
    let v: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return Some(format!("error body is not JSON ({e}): {text:?}")),
    };
    let Some(c) = v["error"]["code"].as_str() else {
        return Some(format!("no string error.code: {text}"));
    };
    match v["error"]["message"].as_str() {
        Some(m) if !m.is_empty() => {}
        _ => return Some(format!("no non-empty string error.message: {text}")),
    }
    if let Some(want) = code {
        if c != want {
            return Some(format!("error.code {c:?}, expected {want:?}: {text}"));
        }
    }
    None
}

fn op(kind: &str, fields: Value) -> Value {
    let mut v = json!({"opId": id("op_"), "kind": kind});
    for (k, x) in fields.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

fn bytes(v: &Value) -> Vec<u8> {
    v.to_string().into_bytes()
}

// ---------------------------------------------------------------------------------------
// 1. The table of bad requests
// ---------------------------------------------------------------------------------------

struct Bad {
    name: String,
    path: String,
    ct: Option<&'static str>,
    body: Vec<u8>,
    chunked: bool,
    status: u16,
    code: &'static str,
    /// A piece the message must contain, so the request fails for the intended reason.
    needle: Option<&'static str>,
}

const MAX_BODY: usize = 8192;
const MAX_OPS: usize = 5;
const MAX_CONTENT: usize = 300;
const MAX_TITLE: usize = 60;
const MAX_HOLD: usize = 4;

#[test]
fn bad_requests_are_4xx_with_json_errors_and_write_nothing() {
    let (mb, mo, mc, mt, mh) = (
        MAX_BODY.to_string(),
        MAX_OPS.to_string(),
        MAX_CONTENT.to_string(),
        MAX_TITLE.to_string(),
        MAX_HOLD.to_string(),
    );
    let srv = TestServer::start_with(&[
        ("DOCSYNC_LIMITS__MAX_BODY_BYTES", &mb),
        ("DOCSYNC_LIMITS__MAX_OPS_PER_SYNC", &mo),
        ("DOCSYNC_LIMITS__MAX_CONTENT_BYTES", &mc),
        ("DOCSYNC_LIMITS__MAX_TITLE_BYTES", &mt),
        ("DOCSYNC_LIMITS__MAX_HOLD", &mh),
    ]);
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Table");
    let (b1, b2, b3) = (id("blk_"), id("blk_"), id("blk_"));
    srv.sync_ok(
        &alice,
        &doc,
        "cl_setup",
        0,
        vec![
            insert(&b1, None, "a0", "one #first"),
            insert(&b2, Some(&b1), "a0", "two"),
            insert(&b3, None, "a1", "three"),
            op("delete", json!({"blockId": b3})),
            op("set_title", json!({"title": "Table v2", "baseVersion": 1})),
        ],
    );
    let sync_path = format!("/api/v1/docs/{doc}/sync");
    let leave_path = format!("/api/v1/docs/{doc}/leave");

    // Valid building blocks; each bad case breaks exactly one thing.
    // Fresh op and block IDs on every call, so a case that is wrongly accepted cannot
    // turn later cases into idempotent replays.
    let v_insert = || {
        op(
            "insert",
            json!({"blockId": id("blk_"), "parentId": b1, "orderKey": "a5", "content": "new"}),
        )
    };
    let v_set = || {
        op(
            "set_content",
            json!({"blockId": b1, "content": "changed", "baseVersion": 1}),
        )
    };
    let v_props = || {
        op(
            "set_props",
            json!({"blockId": b2, "props": {"checked": true, "type": "todo"}}),
        )
    };
    let v_move = || {
        op(
            "move",
            json!({"blockId": b2, "parentId": null, "orderKey": "a3"}),
        )
    };
    let v_title = || op("set_title", json!({"title": "New title", "baseVersion": 2}));
    let base = |ops: Vec<Value>| json!({"clientId": "cl_bad", "lastSeq": 0, "ops": ops});
    let valid = || base(vec![v_insert(), v_set(), v_props(), v_move(), v_title()]);
    // `valid()` with one edit.
    let edit = |f: &dyn Fn(&mut Value)| {
        let mut v = valid();
        f(&mut v);
        bytes(&v)
    };
    let valid_text = || valid().to_string();

    let mut cases: Vec<Bad> = Vec::new();
    let mut add = |name: &str,
                   body: Vec<u8>,
                   status: u16,
                   code: &'static str,
                   needle: Option<&'static str>| {
        cases.push(Bad {
            name: name.to_string(),
            path: sync_path.clone(),
            ct: Some("application/json"),
            body,
            chunked: false,
            status,
            code,
            needle,
        })
    };
    const J: &str = "invalid_json";
    const B: &str = "bad_request";

    // Not JSON / broken JSON.
    add("not JSON", b"hello, server".to_vec(), 400, J, None);
    add("empty body", Vec::new(), 400, J, None);
    add(
        "truncated JSON",
        {
            let t = valid_text();
            t.as_bytes()[..t.len() / 2].to_vec()
        },
        400,
        J,
        None,
    );
    add(
        "truncated by one byte",
        {
            let t = valid_text();
            t.as_bytes()[..t.len() - 1].to_vec()
        },
        400,
        J,
        None,
    );
    add(
        "trailing garbage",
        format!("{} x", valid_text()).into_bytes(),
        400,
        J,
        None,
    );
    add(
        "two objects",
        format!("{}{}", valid_text(), valid_text()).into_bytes(),
        400,
        J,
        None,
    );
    add(
        "JSON array instead of object",
        bytes(&json!([valid()])),
        400,
        J,
        None,
    );
    add(
        "JSON array of the fields in order",
        bytes(&json!(["cl_bad", 0, [v_insert()]])),
        400,
        J,
        None,
    );
    add("JSON string", b"\"sync\"".to_vec(), 400, J, None);
    add("JSON null", b"null".to_vec(), 400, J, None);
    add("JSON number", b"42".to_vec(), 400, J, None);
    add("deeply nested", "[".repeat(5000).into_bytes(), 400, J, None);
    let t = valid_text();
    let mut bad_utf8 = t.clone().into_bytes();
    let pos = t.find("changed").unwrap();
    bad_utf8[pos] = 0xff;
    add("invalid UTF-8 inside a string", bad_utf8, 400, J, None);
    add(
        "lone surrogate escape",
        valid_text()
            .replace("\"changed\"", "\"\\ud800\"")
            .into_bytes(),
        400,
        J,
        None,
    );
    add(
        "duplicate key clientId",
        valid_text()
            .replacen('{', "{\"clientId\":\"cl_other\",", 1)
            .into_bytes(),
        400,
        J,
        Some("clientId"),
    );

    // clientId.
    add(
        "missing clientId",
        edit(&|v| {
            v.as_object_mut().unwrap().remove("clientId");
        }),
        400,
        J,
        Some("clientId"),
    );
    add(
        "clientId number",
        edit(&|v| v["clientId"] = json!(7)),
        400,
        J,
        Some("clientId"),
    );
    add(
        "clientId null",
        edit(&|v| v["clientId"] = Value::Null),
        400,
        J,
        Some("clientId"),
    );
    add(
        "clientId without cl_ prefix",
        edit(&|v| v["clientId"] = json!("client1")),
        400,
        B,
        Some("clientId"),
    );
    add(
        "clientId just the prefix",
        edit(&|v| v["clientId"] = json!("cl_")),
        400,
        B,
        Some("clientId"),
    );
    add(
        "clientId with a space",
        edit(&|v| v["clientId"] = json!("cl_a b")),
        400,
        B,
        Some("clientId"),
    );
    add(
        "clientId too long",
        edit(&|v| v["clientId"] = json!(format!("cl_{}", "x".repeat(200)))),
        400,
        B,
        Some("clientId"),
    );

    // lastSeq.
    add(
        "missing lastSeq",
        edit(&|v| {
            v.as_object_mut().unwrap().remove("lastSeq");
        }),
        400,
        J,
        Some("lastSeq"),
    );
    add(
        "lastSeq as string",
        edit(&|v| v["lastSeq"] = json!("0")),
        400,
        J,
        Some("lastSeq"),
    );
    add(
        "lastSeq negative",
        edit(&|v| v["lastSeq"] = json!(-1)),
        400,
        B,
        Some("lastSeq"),
    );
    add(
        "lastSeq fraction",
        edit(&|v| v["lastSeq"] = json!(1.5)),
        400,
        J,
        Some("lastSeq"),
    );
    add(
        "lastSeq beyond i64",
        valid_text()
            .replace("\"lastSeq\":0", "\"lastSeq\":18446744073709551616")
            .into_bytes(),
        400,
        J,
        None,
    );
    add(
        "lastSeq null",
        edit(&|v| v["lastSeq"] = Value::Null),
        400,
        J,
        Some("lastSeq"),
    );

    // ops container and op envelope.
    add(
        "ops is an object",
        edit(&|v| v["ops"] = json!({"0": v_set()})),
        400,
        J,
        Some("ops"),
    );
    add(
        "ops is a string",
        edit(&|v| v["ops"] = json!("insert")),
        400,
        J,
        Some("ops"),
    );
    add(
        "op is a number",
        edit(&|v| v["ops"][1] = json!(1)),
        400,
        J,
        Some("ops"),
    );
    add(
        "op missing opId",
        edit(&|v| {
            v["ops"][1].as_object_mut().unwrap().remove("opId");
        }),
        400,
        J,
        Some("opId"),
    );
    add(
        "opId number",
        edit(&|v| v["ops"][1]["opId"] = json!(12)),
        400,
        J,
        None,
    );
    add(
        "opId without op_ prefix",
        edit(&|v| v["ops"][1]["opId"] = json!("12345")),
        400,
        B,
        Some("opId"),
    );
    add(
        "opId with a slash",
        edit(&|v| v["ops"][1]["opId"] = json!("op_a/b")),
        400,
        B,
        Some("opId"),
    );
    add(
        "op missing kind",
        edit(&|v| {
            v["ops"][1].as_object_mut().unwrap().remove("kind");
        }),
        400,
        J,
        Some("kind"),
    );
    add(
        "unknown kind",
        edit(&|v| v["ops"][1]["kind"] = json!("explode")),
        400,
        J,
        Some("explode"),
    );
    add(
        "kind in other case",
        edit(&|v| v["ops"][1]["kind"] = json!("SET_CONTENT")),
        400,
        J,
        None,
    );
    add(
        "kind is a number",
        edit(&|v| v["ops"][1]["kind"] = json!(3)),
        400,
        J,
        None,
    );
    add(
        "purge kind from a client",
        edit(&|v| v["ops"][1]["kind"] = json!("purge")),
        400,
        J,
        None,
    );

    // insert fields.
    add(
        "insert missing orderKey",
        edit(&|v| {
            v["ops"][0].as_object_mut().unwrap().remove("orderKey");
        }),
        400,
        J,
        Some("orderKey"),
    );
    add(
        "insert missing blockId",
        edit(&|v| {
            v["ops"][0].as_object_mut().unwrap().remove("blockId");
        }),
        400,
        J,
        Some("blockId"),
    );
    add(
        "insert missing content",
        edit(&|v| {
            v["ops"][0].as_object_mut().unwrap().remove("content");
        }),
        400,
        J,
        Some("content"),
    );
    for key in [
        "a00",
        "",
        "!!",
        "a",
        "a0 ",
        "a0\u{e9}",
        "A00000000000000000000000000",
    ] {
        add(
            &format!("insert orderKey {key:?}"),
            edit(&|v| v["ops"][0]["orderKey"] = json!(key)),
            400,
            B,
            Some("orderKey"),
        );
    }
    add(
        "insert orderKey over 256 bytes",
        edit(&|v| v["ops"][0]["orderKey"] = json!(format!("a0{}", "V".repeat(300)))),
        400,
        B,
        Some("orderKey"),
    );
    add(
        "insert orderKey number",
        edit(&|v| v["ops"][0]["orderKey"] = json!(5)),
        400,
        J,
        None,
    );
    add(
        "insert blockId bad format",
        edit(&|v| v["ops"][0]["blockId"] = json!("b1")),
        400,
        B,
        Some("blockId"),
    );
    add(
        "insert parentId bad format",
        edit(&|v| v["ops"][0]["parentId"] = json!("doc_x")),
        400,
        B,
        Some("parentId"),
    );
    add(
        "insert parentId number",
        edit(&|v| v["ops"][0]["parentId"] = json!(1)),
        400,
        J,
        None,
    );
    add(
        "insert unknown type",
        edit(&|v| v["ops"][0]["type"] = json!("h9")),
        400,
        J,
        None,
    );
    add(
        "insert checked as string",
        edit(&|v| v["ops"][0]["checked"] = json!("yes")),
        400,
        J,
        None,
    );
    add(
        "insert language over 64 bytes",
        edit(&|v| v["ops"][0]["language"] = json!("x".repeat(65))),
        400,
        B,
        Some("language"),
    );
    add(
        "insert content over the limit",
        edit(&|v| v["ops"][0]["content"] = json!("x".repeat(MAX_CONTENT + 1))),
        400,
        B,
        Some("content"),
    );

    // set_content fields.
    add(
        "baseVersion as string",
        edit(&|v| v["ops"][1]["baseVersion"] = json!("1")),
        400,
        J,
        None,
    );
    add(
        "baseVersion missing",
        edit(&|v| {
            v["ops"][1].as_object_mut().unwrap().remove("baseVersion");
        }),
        400,
        J,
        Some("baseVersion"),
    );
    add(
        "baseVersion fraction",
        edit(&|v| v["ops"][1]["baseVersion"] = json!(1.25)),
        400,
        J,
        None,
    );
    add(
        "content as number",
        edit(&|v| v["ops"][1]["content"] = json!(17)),
        400,
        J,
        None,
    );
    add(
        "content null",
        edit(&|v| v["ops"][1]["content"] = Value::Null),
        400,
        J,
        None,
    );
    add(
        "set_content over the limit",
        edit(&|v| v["ops"][1]["content"] = json!("y".repeat(MAX_CONTENT + 1))),
        400,
        B,
        Some("content"),
    );
    // 101 × "€" is 303 bytes but only 101 characters: the limit is in bytes.
    add(
        "set_content over the limit in bytes, not chars",
        edit(&|v| v["ops"][1]["content"] = json!("€".repeat(MAX_CONTENT / 3 + 1))),
        400,
        B,
        Some("content"),
    );
    add(
        "set_content blockId bad format",
        edit(&|v| v["ops"][1]["blockId"] = json!("blk_ü")),
        400,
        B,
        Some("blockId"),
    );

    // set_props.
    add(
        "set_props unknown prop",
        edit(&|v| v["ops"][2]["props"]["color"] = json!("red")),
        400,
        J,
        Some("color"),
    );
    add(
        "set_props checked as string",
        edit(&|v| v["ops"][2]["props"]["checked"] = json!("true")),
        400,
        J,
        None,
    );
    add(
        "set_props unknown type",
        edit(&|v| v["ops"][2]["props"]["type"] = json!("h7")),
        400,
        J,
        None,
    );
    add(
        "set_props props not an object",
        edit(&|v| v["ops"][2]["props"] = json!(["checked"])),
        400,
        J,
        None,
    );
    add(
        "set_props missing props",
        edit(&|v| {
            v["ops"][2].as_object_mut().unwrap().remove("props");
        }),
        400,
        J,
        Some("props"),
    );
    add(
        "set_props language over 64 bytes",
        edit(&|v| v["ops"][2]["props"]["language"] = json!("l".repeat(65))),
        400,
        B,
        Some("language"),
    );

    // move.
    add(
        "move invalid orderKey",
        edit(&|v| v["ops"][3]["orderKey"] = json!("a00")),
        400,
        B,
        Some("orderKey"),
    );
    add(
        "move missing orderKey",
        edit(&|v| {
            v["ops"][3].as_object_mut().unwrap().remove("orderKey");
        }),
        400,
        J,
        Some("orderKey"),
    );
    add(
        "move parentId bad format",
        edit(&|v| v["ops"][3]["parentId"] = json!("blk_")),
        400,
        B,
        Some("parentId"),
    );

    // delete / restore.
    add(
        "delete blockId bad format",
        edit(&|v| v["ops"][1] = op("delete", json!({"blockId": "x"}))),
        400,
        B,
        Some("blockId"),
    );
    add(
        "restore missing blockId",
        edit(&|v| v["ops"][1] = op("restore", json!({}))),
        400,
        J,
        Some("blockId"),
    );

    // set_title.
    add(
        "title over the limit",
        edit(&|v| v["ops"][4]["title"] = json!("t".repeat(MAX_TITLE + 1))),
        400,
        B,
        Some("title"),
    );
    add(
        "title baseVersion missing",
        edit(&|v| {
            v["ops"][4].as_object_mut().unwrap().remove("baseVersion");
        }),
        400,
        J,
        Some("baseVersion"),
    );
    add(
        "title as number",
        edit(&|v| v["ops"][4]["title"] = json!(1)),
        400,
        J,
        None,
    );

    // Too many ops.
    add(
        "more ops than the limit",
        bytes(&base(
            (0..=MAX_OPS)
                .map(|i| insert(&id("blk_"), None, &format!("a{i}"), "x"))
                .collect(),
        )),
        400,
        B,
        Some("ops"),
    );

    // Leases.
    add(
        "leases not an object",
        edit(&|v| v["leases"] = json!("all")),
        400,
        J,
        Some("leases"),
    );
    add(
        "leases.hold not an array",
        edit(&|v| v["leases"] = json!({"hold": b1})),
        400,
        J,
        Some("hold"),
    );
    add(
        "leases.hold missing",
        edit(&|v| v["leases"] = json!({})),
        400,
        J,
        Some("hold"),
    );
    add(
        "leases.hold with a number",
        edit(&|v| v["leases"] = json!({"hold": [b1, 5]})),
        400,
        J,
        Some("hold"),
    );
    add(
        "leases.hold bad ID",
        edit(&|v| v["leases"] = json!({"hold": [b1, "nope"]})),
        400,
        B,
        Some("hold"),
    );
    add(
        "leases.hold over max_hold",
        edit(&|v| {
            v["leases"] = json!({"hold": (0..=MAX_HOLD).map(|_| id("blk_")).collect::<Vec<_>>()})
        }),
        400,
        B,
        Some("hold"),
    );

    // One bad op poisons the whole request: ops before it must not be applied either.
    add(
        "valid ops then an invalid orderKey",
        edit(&|v| {
            v["ops"][4] = op(
                "move",
                json!({"blockId": b2, "parentId": null, "orderKey": "!!"}),
            )
        }),
        400,
        B,
        Some("orderKey"),
    );
    add(
        "valid ops then an unknown kind",
        edit(&|v| v["ops"][4]["kind"] = json!("set_colour")),
        400,
        J,
        None,
    );
    add(
        "valid ops then content over the limit",
        edit(&|v| v["ops"][4] = set_content(&b2, &"z".repeat(MAX_CONTENT + 1), 1)),
        400,
        B,
        Some("content"),
    );
    add(
        "valid ops then a bad lease",
        edit(&|v| v["leases"] = json!({"hold": ["title", "blk_ok", "blk_!"]})),
        400,
        B,
        Some("hold"),
    );

    // Body size and content type.
    let mut padded = valid_text().into_bytes();
    padded.extend(std::iter::repeat_n(b' ', MAX_BODY + 100 - padded.len()));
    add(
        "body over max_body_bytes",
        padded.clone(),
        413,
        "payload_too_large",
        None,
    );
    cases.push(Bad {
        name: "chunked body over max_body_bytes".into(),
        path: sync_path.clone(),
        ct: Some("application/json"),
        body: padded,
        chunked: true,
        status: 413,
        code: "payload_too_large",
        needle: None,
    });
    for (name, ct) in [
        ("text/plain", Some("text/plain")),
        ("no Content-Type", None),
        ("form post", Some("application/x-www-form-urlencoded")),
        ("application/jsonx", Some("application/jsonx")),
    ] {
        cases.push(Bad {
            name: format!("Content-Type {name}"),
            path: sync_path.clone(),
            ct,
            body: valid_text().into_bytes(),
            chunked: false,
            status: 415,
            code: "unsupported_media_type",
            needle: None,
        });
    }

    // POST /api/v1/docs.
    let mut docs_case =
        |name: &str, ct: Option<&'static str>, body: Vec<u8>, status: u16, code: &'static str| {
            cases.push(Bad {
                name: format!("create doc: {name}"),
                path: "/api/v1/docs".into(),
                ct,
                body,
                chunked: false,
                status,
                code,
                needle: None,
            })
        };
    let json_ct = Some("application/json");
    docs_case("not JSON", json_ct, b"{title: x}".to_vec(), 400, J);
    docs_case("array", json_ct, b"[]".to_vec(), 400, J);
    docs_case("title number", json_ct, bytes(&json!({"title": 3})), 400, J);
    docs_case(
        "title over the limit",
        json_ct,
        bytes(&json!({"title": "t".repeat(MAX_TITLE + 1)})),
        400,
        B,
    );
    docs_case(
        "folderId",
        json_ct,
        bytes(&json!({"title": "x", "folderId": "fld_x"})),
        400,
        B,
    );
    docs_case(
        "text/plain",
        Some("text/plain"),
        bytes(&json!({"title": "x"})),
        415,
        "unsupported_media_type",
    );
    docs_case(
        "body over the limit",
        json_ct,
        bytes(&json!({"title": "x", "pad": "p".repeat(MAX_BODY)})),
        413,
        "payload_too_large",
    );

    // POST /docs/{id}/leave.
    let mut leave_case =
        |name: &str, ct: Option<&'static str>, body: Vec<u8>, status: u16, code: &'static str| {
            cases.push(Bad {
                name: format!("leave: {name}"),
                path: leave_path.clone(),
                ct,
                body,
                chunked: false,
                status,
                code,
                needle: None,
            })
        };
    leave_case("not JSON", json_ct, b"cl_setup".to_vec(), 400, J);
    leave_case("missing clientId", json_ct, bytes(&json!({})), 400, J);
    leave_case(
        "clientId number",
        json_ct,
        bytes(&json!({"clientId": 1})),
        400,
        J,
    );
    leave_case(
        "clientId bad format",
        json_ct,
        bytes(&json!({"clientId": "setup"})),
        400,
        B,
    );
    leave_case(
        "text/plain",
        Some("text/plain"),
        bytes(&json!({"clientId": "cl_setup"})),
        415,
        "unsupported_media_type",
    );

    // Run them all; collect every failure before failing. Each case is compared with the
    // state right before it, so one wrongly accepted request does not taint the others.
    let http = client();
    let db = srv.db();
    let fp_start = fingerprint(&db);
    let mut failures = Vec::new();
    for c in &cases {
        let fp0 = fingerprint(&db);
        let snap0 = snap_core(&srv.snapshot(&alice, &doc));
        let body = if c.chunked {
            Body::new(std::io::Cursor::new(c.body.clone()))
        } else {
            Body::from(c.body.clone())
        };
        let (status, text) = send(&http, &srv, &alice, &c.path, c.ct, body);
        let mut why = Vec::new();
        if status != c.status {
            why.push(format!("status {status}, expected {}", c.status));
        }
        if let Some(w) = error_shape(&text, Some(c.code)) {
            why.push(w);
        }
        if let Some(n) = c.needle {
            let msg: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            let msg = msg["error"]["message"].as_str().unwrap_or("");
            if !msg.contains(n) {
                why.push(format!("message {msg:?} does not mention {n:?}"));
            }
        }
        let fp = fingerprint(&db);
        if fp != fp0 {
            why.push(format!("database changed: {}", fp0.diff(&fp)));
        }
        if snap_core(&srv.snapshot(&alice, &doc)) != snap0 {
            why.push("snapshot changed".into());
        }
        if !why.is_empty() {
            let shown = String::from_utf8_lossy(&c.body[..c.body.len().min(160)]).into_owned();
            failures.push(format!(
                "[{}] POST {} ({:?}) body {:?}…: {} — response {status} {}",
                c.name,
                c.path,
                c.ct,
                shown,
                why.join("; "),
                &text[..text.len().min(300)]
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} bad requests misbehaved:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    assert!(cases.len() >= 90, "the table shrank: {}", cases.len());

    // Controls: the unbroken body and bodies exactly at the limits are accepted, and the
    // fingerprint notices their writes (so the checks above could have failed).
    let (s, v) = srv.post_raw(
        &alice,
        &sync_path,
        "application/json",
        valid_text().into_bytes(),
    );
    assert_eq!(s, 200, "the valid template must pass: {v}");
    let statuses: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, vec!["applied"; 5], "{v}");
    let fp1 = fingerprint(&db);
    assert_ne!(fp1, fp_start, "the fingerprint must see a write");
    // Nothing trickles in later either. The control went through the same actor and writer
    // queue as every refused /sync, so now that it is acknowledged anything a refused request
    // had queued is on disk too: the database differs from the start by exactly the
    // control's rows (one log row and one stored result per op, one new block, its derived
    // rows) and by nothing else.
    let grown = |t: &str| fp1.rows(t) as i64 - fp_start.rows(t) as i64;
    assert_eq!(
        [
            grown("doc_ops"),
            grown("doc_op_results"),
            grown("blocks"),
            grown("documents"),
            grown("feed")
        ],
        [5, 5, 1, 0, 5],
        "rows added besides the control's (doc_ops, doc_op_results, blocks, documents, feed): {}",
        fp_start.diff(&fp1)
    );
    let control_tables = [
        "blocks",
        "block_tags",
        "block_changes",
        "doc_op_results",
        "doc_ops",
        "documents",
        "markdown_cache",
        "tags",
        // The change feed's row per log entry, and its AUTOINCREMENT counter.
        "feed",
        "sqlite_sequence",
    ];
    let stray: Vec<String> = fp_start
        .changed_tables(&fp1)
        .into_iter()
        .filter(|t| !control_tables.contains(&t.as_str()) && !t.starts_with("block_search"))
        .collect();
    assert!(
        stray.is_empty(),
        "tables the control does not write changed: {stray:?} ({})",
        fp_start.diff(&fp1)
    );
    let at_limit = base(vec![
        set_content(&b2, &"€".repeat(MAX_CONTENT / 3), 1),
        op(
            "set_title",
            json!({"title": "t".repeat(MAX_TITLE), "baseVersion": 3}),
        ),
        insert(
            &id("blk_"),
            None,
            &format!("a0{}", "V".repeat(254)),
            &"c".repeat(MAX_CONTENT),
        ),
    ]);
    let mut at_limit = bytes(&at_limit);
    at_limit.extend(std::iter::repeat_n(b' ', MAX_BODY - at_limit.len()));
    assert_eq!(at_limit.len(), MAX_BODY);
    let (s, v) = srv.post_raw(&alice, &sync_path, "application/json", at_limit);
    assert_eq!(s, 200, "a body exactly at every limit is fine: {v}");
    let statuses: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, vec!["applied"; 3], "{v}");
    let full = base(
        (0..MAX_OPS)
            .map(|i| insert(&id("blk_"), None, &format!("b{i}0"), "x"))
            .collect(),
    );
    let (s, v) = srv.sync(&alice, &doc, &full);
    assert_eq!(
        (s, v["results"].as_array().map(Vec::len)),
        (200, Some(MAX_OPS)),
        "{v}"
    );
    let (s, v) = srv.sync(&alice, &doc, &json!({"clientId": "cl_bad", "lastSeq": 0, "leases": {"hold": (0..MAX_HOLD).map(|_| id("blk_")).collect::<Vec<_>>()}}));
    assert_eq!(s, 200, "max_hold IDs are fine: {v}");
}

// ---------------------------------------------------------------------------------------
// 2. Block IDs of another document
// ---------------------------------------------------------------------------------------

fn doc_rows(db: &rusqlite::Connection, doc: &str) -> Vec<String> {
    let mut out = Vec::new();
    for sql in [
        "SELECT * FROM documents WHERE id = ?1",
        "SELECT * FROM blocks WHERE doc_id = ?1 ORDER BY id",
        "SELECT * FROM doc_ops WHERE doc_id = ?1 ORDER BY seq",
        "SELECT * FROM doc_op_results WHERE doc_id = ?1 ORDER BY op_id",
        "SELECT * FROM markdown_cache WHERE doc_id = ?1 ORDER BY block_rid",
        "SELECT * FROM block_tags WHERE doc_id = ?1 ORDER BY block_id",
    ] {
        let mut stmt = db.prepare(sql).unwrap();
        let n = stmt.column_count();
        let mut rows = stmt.query([doc]).unwrap();
        while let Some(r) = rows.next().unwrap() {
            let cols: Vec<String> = (0..n)
                .map(|i| format!("{:?}", r.get_ref(i).unwrap()))
                .collect();
            out.push(format!("{sql}: {}", cols.join("|")));
        }
    }
    out
}

#[test]
fn block_ids_of_another_document_are_never_touched() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let doc_a = srv.create_doc(&alice, "A");
    let doc_b = srv.create_doc(&alice, "B");
    let doc_bob = srv.create_doc(&bob, "Bob's");
    let (a1, a2, a3) = (id("blk_"), id("blk_"), id("blk_"));
    srv.sync_ok(
        &alice,
        &doc_a,
        "cl_a",
        0,
        vec![
            insert(&a1, None, "a0", "alpha #mine"),
            insert(&a2, Some(&a1), "a0", "beta"),
            insert(&a3, None, "a1", "gamma"),
            op("delete", json!({"blockId": a3})),
        ],
    );
    let b1 = id("blk_");
    srv.sync_ok(
        &alice,
        &doc_b,
        "cl_b",
        0,
        vec![insert(&b1, None, "a0", "in B")],
    );
    let db = srv.db();
    let rows_a = doc_rows(&db, &doc_a);
    let snap_a = snap_core(&srv.snapshot(&alice, &doc_a));
    let rows_b_block = |db: &rusqlite::Connection| -> (Option<String>, String, i64) {
        db.query_row(
            "SELECT parent_id, order_key, version FROM blocks WHERE id = ?1",
            [&b1],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap()
    };
    let b1_before = rows_b_block(&db);

    let cases: Vec<(&str, Value)> = vec![
        ("set_content", set_content(&a1, "hijacked", 1)),
        (
            "set_content of a tombstone",
            set_content(&a3, "revived?", 1),
        ),
        (
            "set_props",
            op(
                "set_props",
                json!({"blockId": a1, "props": {"checked": true, "type": "todo"}}),
            ),
        ),
        (
            "move the foreign block",
            op(
                "move",
                json!({"blockId": a2, "parentId": null, "orderKey": "a5"}),
            ),
        ),
        (
            "move under a foreign parent",
            op(
                "move",
                json!({"blockId": b1, "parentId": a1, "orderKey": "a5"}),
            ),
        ),
        ("delete", op("delete", json!({"blockId": a1}))),
        ("restore", op("restore", json!({"blockId": a3}))),
        (
            "insert with an existing foreign blockId",
            insert(&a2, None, "a5", "clone"),
        ),
        (
            "insert with a foreign blockId under a foreign parent",
            insert(&a2, Some(&a1), "a5", "clone"),
        ),
    ];
    // Each op's twin names IDs that exist nowhere (an insert's twin reuses B's own block,
    // the "ID taken" case); the answers must not tell the two apart.
    let twin = |o: &Value| -> Value {
        let mut text = o.to_string();
        let taken = o["kind"] == "insert";
        for a in [&a1, &a2, &a3] {
            let stand_in = if taken && o["blockId"] == a.as_str() {
                b1.clone()
            } else {
                format!("blk_nowhere_{}", &a[4..])
            };
            text = text.replace(a.as_str(), &stand_in);
        }
        let mut t: Value = serde_json::from_str(&text).unwrap();
        if taken {
            // The ID taken here, under the same (now unknown) parent.
            t["blockId"] = json!(b1);
        }
        t["opId"] = json!(id("op_"));
        t
    };
    // What a client can read from a result, without the IDs themselves.
    let shape = |r: &Value, asked: &Value| -> Value {
        let same_id = r["blockId"] == asked["blockId"];
        json!({"status": r["status"], "reason": r["reason"], "logged": !r["seq"].is_null(),
               "sameBlockId": same_id, "copy": r["conflictBlockId"].is_string(),
               "idKind": if same_id { None } else { r["blockId"].as_str().map(|b| b.get(..7).unwrap_or(b).to_string()) }})
    };
    let mut failures = Vec::new();
    for (name, o) in &cases {
        let op_id = o["opId"].as_str().unwrap().to_string();
        let (s, v) = srv.sync(
            &alice,
            &doc_b,
            &json!({"clientId": "cl_b", "lastSeq": 0, "ops": [o]}),
        );
        let r = &v["results"][0];
        let t = twin(o);
        let (ts, tv) = srv.sync(
            &alice,
            &doc_b,
            &json!({"clientId": "cl_b", "lastSeq": 0, "ops": [t]}),
        );
        if s != 200
            || ts != 200
            || r["opId"] != op_id.as_str()
            || shape(r, o) != shape(&tv["results"][0], &t)
        {
            failures.push(format!(
                "[{name}] answered unlike an ID that exists nowhere: {s} {} vs {ts} {}",
                v["results"], tv["results"]
            ));
        }
        // The retry gets the stored answer.
        let (s2, v2) = srv.sync(
            &alice,
            &doc_b,
            &json!({"clientId": "cl_b", "lastSeq": 0, "ops": [o]}),
        );
        if s2 != 200 || v2["results"][0] != *r {
            failures.push(format!("[{name}] retry answered differently: {s2} {v2}"));
        }
        if doc_rows(&db, &doc_a) != rows_a {
            failures.push(format!("[{name}] document A's rows changed"));
        }
        if snap_core(&srv.snapshot(&alice, &doc_a)) != snap_a {
            failures.push(format!("[{name}] document A's snapshot changed"));
        }
        if rows_b_block(&db) != b1_before {
            failures.push(format!("[{name}] B's own block moved"));
        }
        let snap_b = srv.snapshot(&alice, &doc_b);
        let ids_b: Vec<&str> = snap_b["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["id"].as_str().unwrap())
            .collect();
        if ids_b
            .iter()
            .any(|i| [&a1, &a2, &a3].iter().any(|a| a.as_str() == *i))
        {
            failures.push(format!("[{name}] a block of A shows up in B: {ids_b:?}"));
        }
    }

    // Another user naming alice's block: the same answer as for a block that never was.
    let o = set_content(&a1, "bob was here", 1);
    let t = set_content(&id("blk_"), "bob was here", 1);
    let (s, v) = srv.sync(
        &bob,
        &doc_bob,
        &json!({"clientId": "cl_bob", "lastSeq": 0, "ops": [o]}),
    );
    let (_, tv) = srv.sync(
        &bob,
        &doc_bob,
        &json!({"clientId": "cl_bob", "lastSeq": 0, "ops": [t]}),
    );
    if s != 200 || shape(&v["results"][0], &o) != shape(&tv["results"][0], &t) {
        failures.push(format!(
            "[other user's block] answered unlike a block that never was: {s} {v} vs {tv}"
        ));
    }
    // All foreign ops in one request: each answered as its twin.
    let all: Vec<Value> = cases
        .iter()
        .map(|(_, o)| {
            let mut o = o.clone();
            o["opId"] = json!(id("op_"));
            o
        })
        .collect();
    let twins: Vec<Value> = all.iter().map(&twin).collect();
    let (s, v) = srv.sync(
        &alice,
        &doc_b,
        &json!({"clientId": "cl_b", "lastSeq": 0, "ops": all}),
    );
    let (ts, tv) = srv.sync(
        &alice,
        &doc_b,
        &json!({"clientId": "cl_b", "lastSeq": 0, "ops": twins}),
    );
    let shapes = |v: &Value, ops: &[Value]| -> Vec<Value> {
        v["results"]
            .as_array()
            .map(|a| a.iter().zip(ops).map(|(r, o)| shape(r, o)).collect())
            .unwrap_or_default()
    };
    if s != 200
        || ts != 200
        || shapes(&v, &all) != shapes(&tv, &twins)
        || shapes(&v, &all).len() != cases.len()
    {
        failures.push(format!(
            "[all in one request] answered unlike their twins: {s} {v} vs {ts} {tv}"
        ));
    }
    // Insert under a foreign parent: the project's rule (matrix_tests) is "top level at the
    // end of this document" — the text is kept, the foreign parent is not touched.
    let n = id("blk_");
    let (s, v) = srv.sync(
        &alice,
        &doc_b,
        &json!({"clientId": "cl_b", "lastSeq": 0, "ops": [insert(&n, Some(&a1), "a5", "orphan")]}),
    );
    if s != 200 || v["results"][0]["status"] != "applied" {
        failures.push(format!(
            "[insert under a foreign parent] expected applied, got {s} {v}"
        ));
    }
    let placed: Option<(String, Option<String>)> = db
        .query_row(
            "SELECT doc_id, parent_id FROM blocks WHERE id = ?1",
            [&n],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .ok();
    if placed != Some((doc_b.clone(), None)) {
        failures.push(format!(
            "[insert under a foreign parent] expected a top-level block of B, got {placed:?}"
        ));
    }
    // A foreign ID in leases.hold writes nothing at all.
    let before = fingerprint(&db);
    let (s, v) = srv.sync(
        &alice,
        &doc_b,
        &json!({"clientId": "cl_b", "lastSeq": 0, "leases": {"hold": [a1]}}),
    );
    if s != 200 {
        failures.push(format!("[foreign lease] expected 200, got {s} {v}"));
    }
    let after = fingerprint(&db);
    if after != before {
        failures.push(format!(
            "[foreign lease] the database changed: {}",
            before.diff(&after)
        ));
    }
    if doc_rows(&db, &doc_a) != rows_a || snap_core(&srv.snapshot(&alice, &doc_a)) != snap_a {
        failures.push("document A changed at the end".into());
    }
    // Document A still works normally for its own client.
    let r = srv.sync_ok(
        &alice,
        &doc_a,
        "cl_a",
        0,
        vec![set_content(&a1, "alpha 2", 1)],
    );
    if r["results"][0]["status"] != "applied" {
        failures.push(format!("document A's own edit failed: {r}"));
    }
    assert!(
        failures.is_empty(),
        "foreign block IDs:\n{}",
        failures.join("\n")
    );
}

/// Two documents get an insert of the same new block ID at the same moment. The ID can only
/// live in one of them; the other must answer `duplicate_block` — never a 5xx, and never a
/// block the database does not have.
#[test]
fn same_new_block_id_raced_into_two_documents() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let doc_a = srv.create_doc(&alice, "A");
    let doc_b = srv.create_doc(&alice, "B");
    for d in [&doc_a, &doc_b] {
        srv.sync_ok(
            &alice,
            d,
            "cl_w",
            0,
            vec![insert(&id("blk_"), None, "a0", "seed")],
        );
    }
    let db = srv.db();
    let mut failures = Vec::new();
    for round in 0..25 {
        let blk = id("blk_");
        let barrier = std::sync::Barrier::new(2);
        let replies: Vec<(String, u16, String)> = std::thread::scope(|s| {
            let hs: Vec<_> = [&doc_a, &doc_b]
                .into_iter()
                .map(|d| {
                    let (barrier, blk, srv, alice) = (&barrier, &blk, &srv, &alice);
                    s.spawn(move || {
                        let http = client();
                        let body = json!({"clientId": "cl_w", "lastSeq": 0, "ops": [insert(blk, None, "a1", "race")]});
                        barrier.wait();
                        let (st, text) = send(&http, srv, alice, &format!("/api/v1/docs/{d}/sync"), Some("application/json"), Body::from(body.to_string()));
                        (d.to_string(), st, text)
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let owner: Option<String> = db
            .query_row("SELECT doc_id FROM blocks WHERE id = ?1", [&blk], |r| {
                r.get(0)
            })
            .ok();
        let mut applied = 0;
        for (d, st, text) in &replies {
            if st / 100 == 5 {
                failures.push(format!("round {round}: doc {d}: {st} {text}"));
                continue;
            }
            let v: Value = serde_json::from_str(text).unwrap_or(Value::Null);
            let r = &v["results"][0];
            match r["status"].as_str() {
                Some("applied") => {
                    applied += 1;
                    if owner.as_deref() != Some(d.as_str()) {
                        failures.push(format!(
                            "round {round}: {d} says applied but the block lives in {owner:?}"
                        ));
                    }
                }
                Some("rejected") if r["reason"] == "duplicate_block" => {}
                _ => failures.push(format!("round {round}: doc {d}: unexpected {st} {text}")),
            }
        }
        if applied != 1 && failures.is_empty() {
            failures.push(format!(
                "round {round}: {applied} docs applied the insert: {replies:?}"
            ));
        }
        // Each document's view agrees with the database.
        for d in [&doc_a, &doc_b] {
            let snap = srv.snapshot(&alice, d);
            let has = snap["blocks"]
                .as_array()
                .unwrap()
                .iter()
                .any(|b| b["id"] == blk.as_str());
            if has != (owner.as_deref() == Some(d.as_str())) {
                failures.push(format!("round {round}: snapshot of {d} has the block = {has}, database owner {owner:?}"));
            }
        }
        if failures.len() > 5 {
            break;
        }
    }
    assert!(
        failures.is_empty(),
        "racing inserts of one block ID:\n{}",
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------------------
// 3. Random mutations of a valid body
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Mutation {
    DeleteKey {
        obj: usize,
        key: usize,
    },
    Replace {
        node: usize,
        value: Value,
    },
    SetString {
        node: usize,
        s: String,
    },
    SetNumber {
        node: usize,
        n: Value,
    },
    SetKind {
        op: usize,
        kind: String,
    },
    DupKey {
        obj: usize,
        key: usize,
        value: Value,
    },
    Truncate {
        at: usize,
    },
    Insert {
        at: usize,
        bytes: Vec<u8>,
    },
    Flip {
        at: usize,
        byte: u8,
    },
    Append {
        bytes: Vec<u8>,
    },
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        arb_string().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn arb_string() -> impl Strategy<Value = String> {
    prop_oneof![
        "op_[a-z0-9]{1,10}",
        "blk_[a-z0-9_-]{1,10}",
        "cl_[a-z0-9]{0,6}",
        "[a-zA-Z][0-9A-Za-z]{0,5}",
        "[a-z_]{0,12}",
        any::<String>(),
        Just(String::new()),
        "[€😀x\u{0}]{0,60}",
    ]
}

fn arb_mutation() -> impl Strategy<Value = Mutation> {
    let pick = 0usize..10_000;
    prop_oneof![
        3 => (pick.clone(), pick.clone()).prop_map(|(obj, key)| Mutation::DeleteKey { obj, key }),
        3 => (pick.clone(), arb_json()).prop_map(|(node, value)| Mutation::Replace { node, value }),
        3 => (pick.clone(), arb_string()).prop_map(|(node, s)| Mutation::SetString { node, s }),
        2 => (pick.clone(), prop_oneof![
            any::<i64>().prop_map(Value::from),
            (-3i64..5).prop_map(Value::from),
            Just(json!(1.5)),
            Just(json!(-0.0)),
            Just(json!(u64::MAX)),
        ]).prop_map(|(node, n)| Mutation::SetNumber { node, n }),
        2 => (pick.clone(), prop_oneof![
            Just("insert"), Just("set_content"), Just("set_props"), Just("move"),
            Just("delete"), Just("restore"), Just("set_title"), Just("purge"), Just("INSERT"), Just(""),
        ]).prop_map(|(op, k)| Mutation::SetKind { op, kind: k.to_string() }),
        1 => (pick.clone(), pick.clone(), arb_json()).prop_map(|(obj, key, value)| Mutation::DupKey { obj, key, value }),
        1 => pick.clone().prop_map(|at| Mutation::Truncate { at }),
        1 => (pick.clone(), prop::collection::vec(any::<u8>(), 1..6)).prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
        1 => (pick, any::<u8>()).prop_map(|(at, byte)| Mutation::Flip { at, byte }),
        1 => prop_oneof![
            Just(b"x".to_vec()),
            Just(b"}".to_vec()),
            Just(b" {}".to_vec()),
            Just(b"\n\t ".to_vec()),
            prop::collection::vec(any::<u8>(), 1..4),
        ].prop_map(|bytes| Mutation::Append { bytes }),
    ]
}

/// JSON pointers of every node, with the node itself.
fn nodes<'a>(v: &'a Value, at: String, out: &mut Vec<(String, &'a Value)>) {
    out.push((at.clone(), v));
    match v {
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                nodes(x, format!("{at}/{i}"), out);
            }
        }
        Value::Object(m) => {
            for (k, x) in m {
                nodes(
                    x,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        _ => {}
    }
}

fn pick_node(v: &Value, n: usize, want: impl Fn(&Value) -> bool) -> Option<String> {
    let mut all = Vec::new();
    nodes(v, String::new(), &mut all);
    let fit: Vec<String> = all
        .into_iter()
        .filter(|(_, x)| want(x))
        .map(|(p, _)| p)
        .collect();
    (!fit.is_empty()).then(|| fit[n % fit.len()].clone())
}

/// Writes `v` as JSON; the `dup.0`-th object (pre-order) gets one of its keys twice.
fn write_json(
    v: &Value,
    dup: Option<(usize, usize, &Value)>,
    counter: &mut usize,
    out: &mut String,
) {
    match v {
        Value::Object(m) => {
            let me = *counter;
            *counter += 1;
            out.push('{');
            let mut first = true;
            if let Some((obj, key, val)) = dup {
                if obj == me && !m.is_empty() {
                    let k = m.keys().nth(key % m.len()).unwrap();
                    out.push_str(&serde_json::to_string(k).unwrap());
                    out.push(':');
                    out.push_str(&val.to_string());
                    first = false;
                }
            }
            for (k, x) in m {
                if !first {
                    out.push(',');
                }
                first = false;
                out.push_str(&serde_json::to_string(k).unwrap());
                out.push(':');
                write_json(x, dup, counter, out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(x, dup, counter, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn count_objects(v: &Value) -> usize {
    match v {
        Value::Object(m) => 1 + m.values().map(count_objects).sum::<usize>(),
        Value::Array(a) => a.iter().map(count_objects).sum(),
        _ => 0,
    }
}

fn mutate(mut v: Value, muts: &[Mutation]) -> Vec<u8> {
    let mut dup: Option<(usize, usize, Value)> = None;
    for m in muts {
        match m {
            Mutation::DeleteKey { obj, key } => {
                if let Some(p) =
                    pick_node(&v, *obj, |x| x.as_object().is_some_and(|o| !o.is_empty()))
                {
                    let o = v.pointer_mut(&p).unwrap().as_object_mut().unwrap();
                    let k = o.keys().nth(key % o.len()).unwrap().clone();
                    o.remove(&k);
                }
            }
            Mutation::Replace { node, value } => {
                if let Some(p) = pick_node(&v, *node, |_| true) {
                    *v.pointer_mut(&p).unwrap() = value.clone();
                }
            }
            Mutation::SetString { node, s } => {
                if let Some(p) = pick_node(&v, *node, Value::is_string) {
                    *v.pointer_mut(&p).unwrap() = Value::from(s.clone());
                }
            }
            Mutation::SetNumber { node, n } => {
                if let Some(p) = pick_node(&v, *node, Value::is_number) {
                    *v.pointer_mut(&p).unwrap() = n.clone();
                }
            }
            Mutation::SetKind { op, kind } => {
                if let Some(ops) = v.get_mut("ops").and_then(Value::as_array_mut) {
                    if !ops.is_empty() {
                        let i = op % ops.len();
                        if let Some(o) = ops[i].as_object_mut() {
                            o.insert("kind".into(), Value::from(kind.clone()));
                        }
                    }
                }
            }
            Mutation::DupKey { obj, key, value } => {
                let n = count_objects(&v);
                if n > 0 {
                    dup = Some((obj % n, *key, value.clone()));
                }
            }
            _ => {}
        }
    }
    let mut text = String::new();
    write_json(
        &v,
        dup.as_ref().map(|(o, k, x)| (*o, *k, x)),
        &mut 0,
        &mut text,
    );
    let mut b = text.into_bytes();
    for m in muts {
        match m {
            Mutation::Truncate { at } => b.truncate(at % (b.len() + 1)),
            Mutation::Insert { at, bytes } => {
                let at = at % (b.len() + 1);
                b.splice(at..at, bytes.iter().copied());
            }
            Mutation::Flip { at, byte } if !b.is_empty() => {
                let at = at % b.len();
                b[at] = *byte;
            }
            Mutation::Append { bytes } => b.extend_from_slice(bytes),
            _ => {}
        }
    }
    b
}

#[test]
fn random_mutations_of_valid_bodies_never_5xx_and_never_write_on_4xx() {
    let srv = TestServer::start_with(&[
        ("DOCSYNC_ACTORS__LOG_PAGE", "20"),
        ("DOCSYNC_LIMITS__MAX_CONTENT_BYTES", "40"),
        ("DOCSYNC_LIMITS__MAX_TITLE_BYTES", "40"),
        ("DOCSYNC_LIMITS__MAX_OPS_PER_SYNC", "8"),
        ("DOCSYNC_LIMITS__MAX_BODY_BYTES", "65536"),
    ]);
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Fuzz");
    let (p1, p2) = (id("blk_"), id("blk_"));
    srv.sync_ok(
        &alice,
        &doc,
        "cl_prop",
        0,
        vec![
            insert(&p1, None, "a0", "first"),
            insert(&p2, Some(&p1), "a0", "second"),
        ],
    );
    let path = format!("/api/v1/docs/{doc}/sync");
    let http = client();
    let db = srv.db();

    let valid_body = || {
        let new = id("blk_");
        json!({
            "clientId": "cl_prop",
            "lastSeq": 0,
            "ops": [
                op("insert", json!({"blockId": new, "parentId": p1, "orderKey": "a5", "content": "hi #tag", "type": "todo", "checked": true, "language": null})),
                op("set_content", json!({"blockId": p1, "content": "text", "baseVersion": 1})),
                op("set_props", json!({"blockId": p2, "props": {"type": "code", "language": "rust", "collapsed": true, "checked": false, "conflictResolved": true}})),
                op("move", json!({"blockId": p2, "parentId": null, "orderKey": "a3"})),
                op("delete", json!({"blockId": new})),
                op("restore", json!({"blockId": new})),
                op("set_title", json!({"title": "T", "baseVersion": 1})),
            ],
            "leases": {"hold": [p1, "title"]},
        })
    };
    // The unmutated body is accepted (so mutations start from something valid).
    let (s, v) = srv.post_raw(&alice, &path, "application/json", bytes(&valid_body()));
    assert_eq!(s, 200, "valid body: {v}");
    assert_eq!(v["results"].as_array().map(Vec::len), Some(7), "{v}");

    let mut runner = TestRunner::new(ProptestConfig {
        cases: 300,
        max_shrink_iters: 200,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let tally = std::cell::RefCell::new(BTreeMap::<u16, usize>::new());
    let strategy = prop::collection::vec(arb_mutation(), 1..4);
    let result = runner.run(&strategy, |muts| {
        let body = mutate(valid_body(), &muts);
        let before = fingerprint(&db);
        let (status, text) = send(
            &http,
            &srv,
            &alice,
            &path,
            Some("application/json"),
            Body::from(body.clone()),
        );
        *tally.borrow_mut().entry(status).or_default() += 1;
        let shown = String::from_utf8_lossy(&body).into_owned();
        // serde_json is the oracle for "is this a JSON object at all": anything else (broken
        // JSON, trailing bytes, an array, a scalar) must be refused as a whole.
        let is_object = serde_json::from_slice::<Value>(&body).is_ok_and(|v| v.is_object());
        prop_assert!(
            status < 500,
            "5xx for {muts:?}\nbody {shown}\n→ {status} {text}"
        );
        prop_assert!(
            status == 200 || status == 400,
            "unexpected status for body {shown}\n→ {status} {text}"
        );
        prop_assert!(
            is_object || status == 400,
            "not a JSON object, yet {status}: body {shown:?}\n→ {}",
            &text[..text.len().min(300)]
        );
        if status == 200 {
            let v: Value = serde_json::from_str(&text)
                .map_err(|e| TestCaseError::fail(format!("200 reply is not JSON ({e}): {text}")))?;
            let results = v["results"].as_array();
            prop_assert!(results.is_some(), "200 without results for {shown}: {text}");
            if let Ok(sent) = serde_json::from_slice::<Value>(&body) {
                if let Some(ops) = sent["ops"].as_array() {
                    prop_assert_eq!(
                        results.unwrap().len(),
                        ops.len(),
                        "one result per op for {}: {}",
                        shown,
                        text
                    );
                }
            }
            for r in results.unwrap() {
                prop_assert!(
                    ["applied", "conflict", "rejected"]
                        .contains(&r["status"].as_str().unwrap_or("")),
                    "bad result {r} for {shown}"
                );
            }
        } else {
            if let Some(w) = error_shape(&text, None) {
                return Err(TestCaseError::fail(format!("{w}\nbody {shown}")));
            }
            let after = fingerprint(&db);
            prop_assert!(
                after == before,
                "rejected request wrote something ({}): body {shown} → {status} {text}",
                before.diff(&after)
            );
        }
        Ok(())
    });
    let tally = tally.into_inner();
    if let Err(e) = result {
        panic!("{e}\nstatus tally: {tally:?}");
    }
    // A useful run sees both outcomes.
    let total: usize = tally.values().sum();
    assert!(total >= 300, "ran {total} cases");
    assert!(
        tally.get(&400).copied().unwrap_or(0) >= 50,
        "too few rejections: {tally:?}"
    );
    assert!(
        tally.get(&200).copied().unwrap_or(0) >= 5,
        "too few accepted mutations: {tally:?}"
    );
    eprintln!("proptest status tally: {tally:?}");
}

/// A path segment that is not a document ID (`DocId::parse` refuses it) is answered exactly
/// as a well-formed ID of no document: 401 without credentials, then 404 `not_found`, on
/// every `/docs/{id}/…` route, and nothing is written.
#[test]
fn names_that_are_not_document_ids_answer_as_unknown_documents() {
    let srv = TestServer::start();
    let token = srv.add_user("alice");
    srv.create_doc(&token, "Kept");
    let long = format!("doc_{}", "a".repeat(100));
    let names = ["nope", "doc_", "doc_a%20b", "doc_a.b", long.as_str()];
    let routes: [(&str, &str, Option<Value>); 10] = [
        ("PATCH", "", Some(json!({"icon": "x"}))),
        ("DELETE", "", None),
        ("GET", "/shares", None),
        ("PUT", "/shares", Some(json!([]))),
        ("GET", "/events", None),
        ("GET", "/changes?since=0&wait=1", None),
        ("GET", "/snapshot", None),
        (
            "POST",
            "/sync",
            Some(json!({"clientId": "cl_x", "lastSeq": 0})),
        ),
        ("POST", "/leave", Some(json!({"clientId": "cl_x"}))),
        ("GET", "/markdown", None),
    ];
    let before = srv.fingerprint();
    for (method, rest, body) in &routes {
        let answer = |doc: &str, auth: &Auth| {
            let r = srv.send(
                method,
                &format!("/api/v1/docs/{doc}{rest}"),
                auth,
                &[],
                body.as_ref(),
            );
            (r.status, r.body["error"]["code"].clone())
        };
        let unknown = answer("doc_unknown", &Auth::Bearer(&token));
        assert_eq!(unknown.0, 404, "{method} {rest}");
        for name in names {
            assert_eq!(
                answer(name, &Auth::None).0,
                401,
                "{method} {name}{rest} without credentials"
            );
            assert_eq!(
                answer(name, &Auth::Bearer(&token)),
                unknown,
                "{method} {name}{rest}"
            );
        }
    }
    assert_eq!(srv.fingerprint(), before, "nothing written");
}
