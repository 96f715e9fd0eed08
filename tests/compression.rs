//! Compressed responses (`Content-Encoding`) end to end: the snapshot comes gzipped when the
//! client accepts gzip and decodes to exactly the plain JSON; one encoded snapshot per head
//! is shared by every caller at that head and never outlives it; small answers and wake-up
//! streams are never compressed.

use crate::common;

use std::io::Read;
use std::time::Duration;

use reqwest::blocking::{Client, Response};
use serde_json::{json, Value};

use common::channels::{put_shares, user_id, Sse, SseNext};
use common::{id, insert, set_content, TestServer};
use docsync_actors::collab::order_key::n_keys_between;

fn client() -> Client {
    Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

fn get(s: &TestServer, token: &str, path: &str, accept_encoding: Option<&str>) -> Response {
    let mut req = client().get(s.url(path)).bearer_auth(token);
    if let Some(enc) = accept_encoding {
        req = req.header("Accept-Encoding", enc);
    }
    let r = req.send().expect("GET");
    assert_eq!(r.status().as_u16(), 200, "GET {path}");
    r
}

fn header(r: &Response, name: &str) -> Option<String> {
    r.headers()
        .get(name)
        .map(|v| v.to_str().unwrap().to_string())
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .expect("a valid gzip body (CRC and length checked)");
    out
}

/// A document with `n` top-level blocks; returns (doc, headSeq, block IDs).
fn doc_with_blocks(s: &TestServer, token: &str, n: usize) -> (String, i64, Vec<String>) {
    let doc = s.create_doc(token, "compressed");
    let keys = n_keys_between(None, None, n).unwrap();
    let ids: Vec<String> = (0..n).map(|_| id("blk_")).collect();
    let ops = ids
        .iter()
        .zip(&keys)
        .enumerate()
        .map(|(i, (b, k))| insert(b, None, k, &format!("bullet {i} with a #tag and some text")))
        .collect();
    let v = s.sync_ok(token, &doc, &id("cl_"), 0, ops);
    (doc, v["headSeq"].as_i64().unwrap(), ids)
}

#[test]
fn snapshot_with_gzip_decodes_to_the_plain_json() {
    let s = TestServer::start();
    let alice = s.add_user("alice");
    let (doc, head, _) = doc_with_blocks(&s, &alice, 200);
    let path = format!("/api/v1/docs/{doc}/snapshot");

    let plain = get(&s, &alice, &path, None);
    assert_eq!(header(&plain, "content-encoding"), None);
    let plain: Value = serde_json::from_slice(&plain.bytes().unwrap()).unwrap();
    assert_eq!(plain["headSeq"], head);
    assert_eq!(plain["blocks"].as_array().unwrap().len(), 200);

    // What browsers send: gzip is served (encoded once per head), br and zstd are not needed.
    for accept in ["gzip", "gzip, deflate, br, zstd", "br;q=1.0, gzip;q=0.8"] {
        let r = get(&s, &alice, &path, Some(accept));
        assert_eq!(header(&r, "content-encoding").as_deref(), Some("gzip"));
        assert_eq!(header(&r, "vary").as_deref(), Some("Accept-Encoding"));
        // The security headers still apply.
        assert_eq!(
            header(&r, "x-content-type-options").as_deref(),
            Some("nosniff")
        );
        let wire = r.bytes().unwrap();
        let decoded: Value = serde_json::from_slice(&gunzip(&wire)).unwrap();
        assert_eq!(decoded, plain, "Accept-Encoding: {accept}");
        assert!(
            wire.len() * 3 < serde_json::to_vec(&plain).unwrap().len(),
            "gzip should shrink the snapshot: {} bytes",
            wire.len()
        );
    }

    // A client that accepts only another codec gets it from the compression middleware.
    for enc in ["br", "zstd"] {
        let r = get(&s, &alice, &path, Some(enc));
        assert_eq!(header(&r, "content-encoding").as_deref(), Some(enc));
    }
    let r = get(&s, &alice, &path, Some("identity"));
    assert_eq!(header(&r, "content-encoding"), None);
    let same: Value = serde_json::from_slice(&r.bytes().unwrap()).unwrap();
    assert_eq!(same, plain);
}

#[test]
fn one_encoded_snapshot_per_head_and_never_a_stale_one() {
    let s = TestServer::start();
    let alice = s.add_user("alice");
    let bob = s.add_user("bob");
    // Enough blocks for the actor to keep the shared encoding (small documents re-encode).
    let (doc, head, ids) = doc_with_blocks(&s, &alice, 150);
    let bob_id = user_id(&s.base, &bob);
    let shares = json!([{"kind": "user", "id": bob_id, "access": "read"}]);
    assert_eq!(put_shares(&s.base, &alice, &doc, &shares), 200);
    let path = format!("/api/v1/docs/{doc}/snapshot");

    // Two requests at the same head: byte for byte the same body, plain and gzipped.
    for enc in [None, Some("gzip")] {
        let a = get(&s, &alice, &path, enc).bytes().unwrap();
        let b = get(&s, &alice, &path, enc).bytes().unwrap();
        assert_eq!(a, b, "Accept-Encoding: {enc:?}");
    }

    // Another caller at the same head shares the blocks but keeps its own fields.
    let owner = s.snapshot(&alice, &doc);
    let viewer = s.snapshot(&bob, &doc);
    assert_eq!(
        (owner["role"].clone(), viewer["role"].clone()),
        (json!("owner"), json!("viewer"))
    );
    assert_eq!(owner["blocks"], viewer["blocks"]);
    assert_eq!(owner["headSeq"], head);

    // After an edit the snapshot shows it, plain and gzipped (no stale encoding).
    let edited = set_content(&ids[7], "edited after the first snapshot", 1);
    let v = s.sync_ok(&alice, &doc, &id("cl_"), head, vec![edited]);
    let new_head = v["headSeq"].as_i64().unwrap();
    assert_eq!(new_head, head + 1);
    let plain = s.snapshot(&bob, &doc);
    let gz = get(&s, &alice, &path, Some("gzip")).bytes().unwrap();
    let gz: Value = serde_json::from_slice(&gunzip(&gz)).unwrap();
    for snap in [&plain, &gz] {
        assert_eq!(snap["headSeq"], new_head);
        let block = snap["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["id"] == ids[7].as_str())
            .expect("the edited block");
        assert_eq!(block["content"], "edited after the first snapshot");
        assert_eq!(block["version"], 2);
    }
    assert_eq!(plain["blocks"], gz["blocks"]);
}

#[test]
fn small_answers_are_not_compressed_large_ones_are() {
    let s = TestServer::start();
    let alice = s.add_user("alice");
    let (doc, head, _) = doc_with_blocks(&s, &alice, 200);
    // A pull with nothing new: a few hundred bytes, sent as they are.
    let r = client()
        .post(s.url(&format!("/api/v1/docs/{doc}/sync")))
        .bearer_auth(&alice)
        .header("Accept-Encoding", "gzip, deflate, br, zstd")
        .header("Content-Type", "application/json")
        .body(json!({"clientId": id("cl_"), "lastSeq": head}).to_string())
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(header(&r, "content-encoding"), None);
    let v: Value = serde_json::from_slice(&r.bytes().unwrap()).unwrap();
    assert_eq!(v["headSeq"], head);

    // A long-poll answer likewise.
    let r = get(
        &s,
        &alice,
        &format!("/api/v1/docs/{doc}/changes?since=0&leaseSeq=0&wait=1"),
        Some("gzip"),
    );
    assert_eq!(header(&r, "content-encoding"), None);

    // The markdown export (streamed) is compressed like any large answer.
    let r = get(
        &s,
        &alice,
        &format!("/api/v1/docs/{doc}/markdown"),
        Some("gzip"),
    );
    assert_eq!(header(&r, "content-encoding").as_deref(), Some("gzip"));
    let text = String::from_utf8(gunzip(&r.bytes().unwrap())).unwrap();
    assert!(text.contains("bullet 199 with a #tag"), "{text}");
}

#[test]
fn an_event_stream_is_never_compressed_and_delivers_at_once() {
    let s = TestServer::start();
    let alice = s.add_user("alice");
    let (doc, head, ids) = doc_with_blocks(&s, &alice, 20);
    // `Sse::open` asks for gzip, like a browser.
    let mut sse = Sse::open(&s.base, &alice, &doc, None);
    assert_eq!(sse.wait_status(Duration::from_secs(5)), Some(200));
    assert_eq!(sse.header("content-encoding").as_deref(), Some("identity"));
    match sse.next(Duration::from_secs(5)) {
        SseNext::Event(e, _) => assert_eq!(e, "ready"),
        other => panic!("no first event within 5 s: {other:?}"),
    }
    // A change is told at once, not held back in a compressor's buffer.
    s.sync_ok(
        &alice,
        &doc,
        &id("cl_"),
        head,
        vec![set_content(&ids[0], "wake up", 1)],
    );
    loop {
        match sse.next(Duration::from_secs(5)) {
            SseNext::Event(e, d) if e == "doc_seq" && d["headSeq"] == head + 1 => break,
            SseNext::Event(..) => {}
            other => panic!("no doc_seq within 5 s: {other:?}; so far {:?}", sse.raw),
        }
    }
}

/// The web app's files: gzipped once and kept (the same bytes on every request, decoding to
/// exactly the file), plain for a client that does not take gzip, and `Compress` negotiates
/// the others (a client that takes only zstd still gets a compressed answer).
#[test]
fn app_files_are_gzipped_once_and_kept() {
    let s = TestServer::start();
    let plain = client()
        .get(s.url("/engine/model.js"))
        .header("Accept-Encoding", "identity")
        .send()
        .unwrap();
    assert_eq!(plain.status().as_u16(), 200);
    assert_eq!(header(&plain, "content-encoding"), None);
    let plain = plain.bytes().unwrap();
    assert!(plain.len() > 10_000, "the model module");
    let gz = |enc: &str| {
        let r = client()
            .get(s.url("/engine/model.js"))
            .header("Accept-Encoding", enc)
            .send()
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
        assert_eq!(header(&r, "vary").as_deref(), Some("Accept-Encoding"));
        (header(&r, "content-encoding"), r.bytes().unwrap())
    };
    let (enc1, first) = gz("gzip, deflate, br, zstd");
    let (enc2, second) = gz("gzip");
    assert_eq!(enc1.as_deref(), Some("gzip"));
    assert_eq!(enc2.as_deref(), Some("gzip"));
    assert_eq!(first, second, "made once, the same bytes every time");
    assert!(first.len() < plain.len() / 2);
    assert_eq!(gunzip(&first), plain.to_vec());
    let (enc, _) = gz("zstd");
    assert_eq!(
        enc.as_deref(),
        Some("zstd"),
        "Compress handles the other encodings"
    );
}
