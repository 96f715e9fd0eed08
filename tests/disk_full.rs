//! Disk full: a write that finds no room answers `507 storage_full` (not a
//! generic 500), is counted, makes `/readyz` report not ready while writes fail, leaves
//! nothing half-written, and the server recovers by itself once space is back.
//!
//! "Full" is made deterministic without root or a tiny filesystem through the debug-build
//! hook `POST /api/v1/testing/max_page_count` (SQLite `max_page_count` on the writer's
//! connection): SQLite answers SQLITE_FULL exactly as it does for the OS's ENOSPC.

use crate::common;

use std::collections::HashMap;

use common::*;
use serde_json::{json, Value};

fn metrics(srv: &TestServer) -> HashMap<String, f64> {
    let (s, text) = srv.get_text("", "/metrics");
    assert_eq!(s, 200);
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| l.rsplit_once(' '))
        .map(|(k, v)| (k.to_string(), v.parse::<f64>().unwrap()))
        .collect()
}

fn metric(srv: &TestServer, key: &str) -> f64 {
    metrics(srv).get(key).copied().unwrap_or(0.0)
}

fn admin_token(srv: &TestServer) -> String {
    srv.add_admin("root")
}

fn set_max_pages(srv: &TestServer, admin: &str, pages: u64) -> Value {
    let (s, v) = srv.post(
        admin,
        "/api/v1/testing/max_page_count",
        &json!({"maxPageCount": pages}),
    );
    assert_eq!(s, 200, "{v}");
    v
}

const APPLIED: &str = r#"docsync_ops_total{kind="set_content",status="applied"}"#;

#[test]
fn disk_full_answers_507_reports_not_ready_and_recovers_with_nothing_half_written() {
    let srv = TestServer::start();
    let admin = admin_token(&srv);
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Filling up");
    let blk = id("blk_");
    srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        0,
        vec![insert(&blk, None, "a0", "v1")],
    );
    let (s, _) = srv.get("", "/readyz");
    assert_eq!(s, 200);
    assert_eq!(metric(&srv, "docsync_storage_full"), 0.0);

    // The database may not grow past its current size from now on.
    set_max_pages(&srv, &admin, 0);
    let applied_before = metric(&srv, APPLIED);

    // Fill: each edit carries 20 KB of text (log row, result, block row, search index), so a
    // few fit into pages the file already has and then one needs a page it cannot get.
    let mut acked: Vec<String> = Vec::new();
    let mut refused: Option<(Value, Value)> = None;
    for i in 0..200 {
        let text = format!("{i:04} {}", "x".repeat(20_000));
        let op = set_content(&blk, &text, 1 + acked.len() as i64);
        let last_seq = 1 + acked.len() as i64;
        let (s, v) = srv.sync(
            &alice,
            &doc,
            &json!({"clientId": "cl_a", "lastSeq": last_seq, "ops": [op.clone()]}),
        );
        match s {
            200 => {
                assert_eq!(v["results"][0]["status"], "applied", "{v}");
                acked.push(text);
            }
            507 => {
                refused = Some((op, v));
                break;
            }
            other => panic!("sync while filling: {other} {v}"),
        }
    }
    let (refused_op, body) = refused.expect("no 507 within 200 edits of 20 KB");
    assert_eq!(body["error"]["code"], "storage_full", "{body}");
    assert!(body["error"]["message"].is_string(), "{body}");

    // Writes straight from handlers (not through a document actor) answer the same way once
    // they need a page; small ones that still fit into the file succeed meanwhile, and do
    // not end the episode (only a write that gets a fresh page does).
    let refused_create = (0..200).find_map(|_| {
        let (s, v) = srv.post(&alice, "/api/v1/docs", &json!({"title": "x".repeat(900)}));
        match s {
            201 => None,
            507 => Some(v),
            other => panic!("create while full: {other} {v}"),
        }
    });
    let v = refused_create.expect("no 507 within 200 new documents");
    assert_eq!(v["error"]["code"], "storage_full", "{v}");

    // Counted, flagged, and not ready while writes fail; the refused edit is not counted as
    // applied (an op counts once, when it is on disk).
    let m = metrics(&srv);
    assert!(m["docsync_storage_full_total"] >= 2.0, "{m:?}");
    assert_eq!(m["docsync_storage_full"], 1.0);
    assert_eq!(
        m.get(APPLIED).copied().unwrap_or(0.0) - applied_before,
        acked.len() as f64
    );
    let (s, v) = srv.get("", "/readyz");
    assert_eq!(s, 503, "{v}");
    // A read-only probe must not clear it: still not ready on the next check.
    let (s, _) = srv.get("", "/readyz");
    assert_eq!(s, 503);
    // Reads still work.
    let snap = srv.snapshot(&alice, &doc);
    assert_eq!(snap["headSeq"], 1 + acked.len() as i64);

    // Space comes back: the next readiness check finds it by itself (no write needed).
    set_max_pages(&srv, &admin, 1 << 30);
    let (s, v) = srv.get("", "/readyz");
    assert_eq!(s, 200, "{v}");
    assert_eq!(metric(&srv, "docsync_storage_full"), 0.0);

    // Nothing of the refused request was written: retrying the very same op applies it
    // now (an op half-stored would come back as "already applied" without a new seq).
    let (s, v) = srv.sync(
        &alice,
        &doc,
        &json!({"clientId": "cl_a", "lastSeq": 1 + acked.len() as i64, "ops": [refused_op.clone()]}),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["results"][0]["status"], "applied", "{v}");
    assert_eq!(v["results"][0]["seq"], 2 + acked.len() as i64, "{v}");

    // Every acknowledged edit is there, in order, each exactly once.
    let snap = srv.snapshot(&alice, &doc);
    assert_eq!(snap["headSeq"], 2 + acked.len() as i64);
    let block = snapshot_blocks(&snap)[&blk].clone();
    assert_eq!(block["content"], refused_op["content"]);
    assert_eq!(block["version"], 2 + acked.len() as i64);
    let (s, log) = srv.sync(
        &alice,
        &doc,
        &json!({"clientId": "cl_b", "lastSeq": 0, "ops": []}),
    );
    assert_eq!(s, 200);
    let contents: Vec<&str> = log["ops"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|e| e["effects"][0]["block"]["content"].as_str().unwrap())
        .collect();
    let mut want: Vec<&str> = acked.iter().map(String::as_str).collect();
    want.push(refused_op["content"].as_str().unwrap());
    assert_eq!(contents, want);
    assert_eq!(
        metric(&srv, APPLIED) - applied_before,
        acked.len() as f64 + 1.0
    );

    // Writes work again, and a new episode starts counting from where this one ended.
    let created = srv.create_doc(&alice, "After");
    assert!(created.starts_with("doc_"));
}

#[test]
fn the_space_hook_is_for_admins_only() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let (s, v) = srv.post(
        &alice,
        "/api/v1/testing/max_page_count",
        &json!({"maxPageCount": 0}),
    );
    assert_eq!(s, 403, "{v}");
    let (s, _) = srv.post(
        "",
        "/api/v1/testing/max_page_count",
        &json!({"maxPageCount": 0}),
    );
    assert_eq!(s, 401);
}

/// A disk with room for a page but not for a sync: readiness must not say ready (its probe
/// used to need one page while a sync needs more), and the "full" episode does not end and
/// start again with every request (one log line, one flag).
#[test]
fn an_almost_full_disk_is_not_ready_until_a_whole_write_fits() {
    let srv = TestServer::start();
    let admin = admin_token(&srv);
    let alice = srv.add_user("alice");
    let doc = srv.create_doc(&alice, "Almost");
    let blk = id("blk_");
    srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        0,
        vec![insert(&blk, None, "a0", "v1")],
    );
    set_max_pages(&srv, &admin, 0);
    let mut head = 1;
    let refused = (0..200).any(|i| {
        let op = set_content(&blk, &format!("{i} {}", "x".repeat(20_000)), head);
        let (s, v) = srv.sync(
            &alice,
            &doc,
            &json!({"clientId": "cl_a", "lastSeq": head, "ops": [op]}),
        );
        match s {
            200 => {
                head += 1;
                false
            }
            507 => true,
            other => panic!("{other} {v}"),
        }
    });
    assert!(refused, "never full");
    // A few more pages: room for the old one-page probe, not for a 20 KB edit.
    let pages = set_max_pages(&srv, &admin, 0)["pageCount"]
        .as_u64()
        .unwrap();
    set_max_pages(&srv, &admin, pages + 2);
    for _ in 0..3 {
        let (s, v) = srv.get("", "/readyz");
        assert_eq!(s, 503, "ready while a sync cannot fit: {v}");
        let op = set_content(&blk, &format!("again {}", "y".repeat(20_000)), head);
        let (s, v) = srv.sync(
            &alice,
            &doc,
            &json!({"clientId": "cl_a", "lastSeq": head, "ops": [op]}),
        );
        assert_eq!(s, 507, "{v}");
    }
    assert_eq!(metric(&srv, "docsync_storage_full"), 1.0);
    set_max_pages(&srv, &admin, 1 << 30);
    let (s, v) = srv.get("", "/readyz");
    assert_eq!(s, 200, "{v}");
}
