//! What a vanished, greedy or slow client can hold on the server:
//! a closed SSE stream or long-poll is released at once (not at the next keep-alive write),
//! wake-up channels are bounded per user and per client address (429 `too_many_streams`),
//! and a request body must arrive within `server.body_read_timeout_secs` (408).
//!
//! The clients are raw TCP sockets so each test decides exactly how a connection ends.
//! Every wait polls a count the server exposes (`GET /metrics`) with a generous bound.

use crate::common;

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use common::channels::{put_shares, seqs, user_id, wait_subscribers, Ws};
use common::{insert, TestServer};
use serde_json::{json, Value};

/// Far longer than any bound below: no keep-alive write can be what finds a closed peer.
const NO_KEEPALIVE: (&str, &str) = ("DOCSYNC_SERVER__SSE_KEEPALIVE_SECS", "3600");

fn connect(s: &TestServer) -> TcpStream {
    let c = TcpStream::connect(s.base.trim_start_matches("http://")).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    c
}

/// Sends a GET with a bearer token and extra header lines; returns the socket.
fn raw_get(s: &TestServer, token: &str, path: &str, extra: &str) -> TcpStream {
    let mut c = connect(s);
    let req = format!(
        "GET {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\nAccept: text/event-stream\r\n{extra}\r\n",
        s.base.trim_start_matches("http://")
    );
    c.write_all(req.as_bytes()).unwrap();
    c
}

/// Reads until `needle` has arrived (bounded by the socket's read timeout); returns the text.
fn read_until(c: &mut TcpStream, needle: &str) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains(needle) {
        match c.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) => panic!("reading: {e}; so far {:?}", String::from_utf8_lossy(&got)),
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// Opens an SSE stream and reads its `ready` event (the slot and subscription now exist).
fn open_sse(s: &TestServer, token: &str, doc: &str, extra: &str) -> TcpStream {
    let mut c = raw_get(s, token, &format!("/api/v1/docs/{doc}/events"), extra);
    let text = read_until(&mut c, "event: ready");
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    c
}

/// Closes like a browser tab does: FIN, after everything sent to us was read (so the kernel
/// sends no RST, which the server would notice on its own anyway).
fn close(c: TcpStream) {
    c.shutdown(Shutdown::Both).unwrap();
    drop(c);
}

fn setup(s: &TestServer, name: &str) -> (String, String) {
    let token = s.add_user(name);
    let doc = s.create_doc(&token, "streams");
    (token, doc)
}

#[test]
fn a_closed_sse_stream_is_released_at_once() {
    let s = TestServer::start_with(&[NO_KEEPALIVE]);
    let (token, doc) = setup(&s, "ann");
    let streams: Vec<_> = (0..20).map(|_| open_sse(&s, &token, &doc, "")).collect();
    wait_subscribers(&s, "sse", 20, Duration::from_secs(10));
    for c in streams {
        close(c);
    }
    // Before the fix these stayed until the next keep-alive write (here an hour away).
    wait_subscribers(&s, "sse", 0, Duration::from_secs(10));
    // The slots came back too: the user can open the same number again at once.
    let again: Vec<_> = (0..20).map(|_| open_sse(&s, &token, &doc, "")).collect();
    wait_subscribers(&s, "sse", 20, Duration::from_secs(10));
    drop(again);
}

#[test]
fn a_closed_long_poll_is_released_at_once() {
    let s = TestServer::start();
    let (token, doc) = setup(&s, "ann");
    let polls: Vec<_> = (0..10)
        .map(|_| {
            raw_get(
                &s,
                &token,
                &format!("/api/v1/docs/{doc}/changes?since=0&wait=25"),
                "",
            )
        })
        .collect();
    wait_subscribers(&s, "long_poll", 10, Duration::from_secs(10));
    for c in polls {
        close(c);
    }
    // Well inside the 25 s wait: the handler went with the socket, the actor's next tick
    // forgets the waiter.
    wait_subscribers(&s, "long_poll", 0, Duration::from_secs(10));
}

#[test]
fn a_long_poll_still_answers_a_change() {
    // The half-close change must not cut a waiting client that keeps its socket open.
    let s = TestServer::start();
    let (token, doc) = setup(&s, "ann");
    let mut c = raw_get(
        &s,
        &token,
        &format!("/api/v1/docs/{doc}/changes?since=0&wait=25"),
        "",
    );
    wait_subscribers(&s, "long_poll", 1, Duration::from_secs(10));
    let r = s.sync_ok(
        &token,
        &doc,
        "cl_streams1",
        0,
        vec![insert("blk_streams1", None, "a0", "x")],
    );
    let (head, _) = seqs(&r);
    let text = read_until(&mut c, "leaseSeq");
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(text.contains(&format!("\"headSeq\":{head}")), "{text}");
}

/// Lets each of `readers` read `doc` (owned by `owner`).
fn share_read(s: &TestServer, owner: &str, doc: &str, readers: &[&str]) {
    let shares: Vec<Value> = readers
        .iter()
        .map(|t| json!({"kind": "user", "id": user_id(&s.base, t), "access": "read"}))
        .collect();
    assert_eq!(put_shares(&s.base, owner, doc, &Value::Array(shares)), 200);
}

/// Status and JSON error code of the response on `c` (read to the end of the body).
fn status_and_code(c: &mut TcpStream) -> (u16, String) {
    let text = read_until(c, "}}");
    let status = text[9..12].parse().unwrap();
    let body = &text[text.find("\r\n\r\n").expect("head") + 4..];
    let v: Value = serde_json::from_str(body.trim()).unwrap_or(Value::Null);
    let code = v["error"]["code"].as_str().unwrap_or("").to_string();
    (status, code)
}

#[test]
fn streams_are_bounded_per_user_and_per_address() {
    let s = TestServer::start_with(&[
        NO_KEEPALIVE,
        ("DOCSYNC_LIMITS__MAX_STREAMS_PER_USER", "2"),
        ("DOCSYNC_LIMITS__MAX_STREAMS_PER_ADDRESS", "3"),
    ]);
    let (ann, doc) = setup(&s, "ann");
    let bob = s.add_user("bob");
    let cid = s.add_user("cid");
    share_read(&s, &ann, &doc, &[&bob, &cid]);

    let a1 = open_sse(&s, &ann, &doc, "");
    let _a2 = open_sse(&s, &ann, &doc, "");
    // Ann's third of any kind: 429 with the JSON error shape.
    let mut c = raw_get(&s, &ann, &format!("/api/v1/docs/{doc}/events"), "");
    assert_eq!(status_and_code(&mut c), (429, "too_many_streams".into()));
    let mut c = raw_get(&s, &ann, &format!("/api/v1/docs/{doc}/changes?since=0"), "");
    assert_eq!(status_and_code(&mut c), (429, "too_many_streams".into()));
    match Ws::connect(&s.base, Some(&ann)) {
        Err(tokio_tungstenite::tungstenite::Error::Http(r)) => assert_eq!(r.status(), 429),
        other => panic!("third channel as a WebSocket: {:?}", other.map(|_| ())),
    }

    // Bob from the same address gets the address's third slot; Cid then meets the address
    // limit. A forwarded address from an untrusted peer changes nothing.
    let _b1 = open_sse(&s, &bob, &doc, "");
    let mut c = raw_get(
        &s,
        &cid,
        &format!("/api/v1/docs/{doc}/events"),
        "X-Forwarded-For: 198.51.100.7\r\n",
    );
    assert_eq!(status_and_code(&mut c), (429, "too_many_streams".into()));

    // A closed stream frees its slot (RAII): Ann may open one again.
    close(a1);
    wait_subscribers(&s, "sse", 2, Duration::from_secs(10));
    let _a3 = open_sse(&s, &ann, &doc, "");
    wait_subscribers(&s, "sse", 3, Duration::from_secs(10));
}

#[test]
fn behind_a_trusted_proxy_each_forwarded_address_has_its_own_allowance() {
    let s = TestServer::start_with(&[
        NO_KEEPALIVE,
        ("DOCSYNC_SERVER__TRUSTED_PROXIES", "127.0.0.1"),
        ("DOCSYNC_LIMITS__MAX_STREAMS_PER_USER", "1"),
        ("DOCSYNC_LIMITS__MAX_STREAMS_PER_ADDRESS", "1"),
    ]);
    let (ann, doc) = setup(&s, "ann");
    let bob = s.add_user("bob");
    let cid = s.add_user("cid");
    share_read(&s, &ann, &doc, &[&bob, &cid]);
    let _a = open_sse(&s, &ann, &doc, "X-Forwarded-For: 198.51.100.7\r\n");
    // Another address through the same proxy: its own slot.
    let _b = open_sse(&s, &bob, &doc, "X-Forwarded-For: 198.51.100.8\r\n");
    wait_subscribers(&s, "sse", 2, Duration::from_secs(10));
    // A client cannot pick its address: what it wrote itself sits left of the entry the
    // proxy appended, and only that right-most entry counts (here .7, whose slot is taken).
    let mut c = raw_get(
        &s,
        &cid,
        &format!("/api/v1/docs/{doc}/events"),
        "X-Forwarded-For: 203.0.113.99, 198.51.100.7\r\n",
    );
    assert_eq!(status_and_code(&mut c), (429, "too_many_streams".into()));
}

#[test]
fn a_dribbled_body_gets_408_and_the_connection_closes() {
    let s = TestServer::start_with(&[("DOCSYNC_SERVER__BODY_READ_TIMEOUT_SECS", "1")]);
    let token = s.add_user("ann");
    let mut c = connect(&s);
    let head = format!(
        "POST /api/v1/docs HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{",
        s.base.trim_start_matches("http://")
    );
    c.write_all(head.as_bytes()).unwrap();
    let started = Instant::now();
    let (status, code) = status_and_code(&mut c);
    assert_eq!((status, code.as_str()), (408, "request_timeout"));
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    // The server hangs up instead of draining the rest: EOF (or a reset) within the bound.
    let mut rest = [0u8; 256];
    loop {
        match c.read(&mut rest) {
            Ok(0) => break,
            Ok(_) => continue,
            Err(e) if e.kind() == ErrorKind::ConnectionReset => break,
            Err(e) => panic!("connection still open after the 408: {e}"),
        }
    }
    // Nothing was created.
    let (_, docs) = s.get(&token, "/api/v1/docs");
    assert_eq!(
        docs["documents"].as_array().map_or(0, Vec::len),
        0,
        "{docs}"
    );
}

#[test]
fn a_prompt_body_is_unaffected_by_the_deadline() {
    let s = TestServer::start_with(&[("DOCSYNC_SERVER__BODY_READ_TIMEOUT_SECS", "1")]);
    let token = s.add_user("ann");
    let (status, _) = s.post(&token, "/api/v1/docs", &json!({"title": "fine"}));
    assert_eq!(status, 201);
}
