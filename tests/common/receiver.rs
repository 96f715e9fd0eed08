//! A webhook receiver the tests run: a real HTTP/1.1 server on a real socket (keep-alive,
//! `Content-Length` bodies) that records every request and answers with what the test
//! scripts — a status per request, or holding a request unanswered until released.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// One request as it arrived.
#[derive(Debug, Clone)]
pub struct Received {
    pub headers: Vec<(String, String)>,
    pub raw: Vec<u8>,
    pub body: Value,
    /// The status it was answered with (None: held, never answered).
    pub answered: Option<u16>,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn delivery(&self) -> &str {
        self.header("x-docsync-delivery").unwrap_or("")
    }

    /// (docId, seq) of each entry of the batch.
    pub fn doc_seqs(&self) -> Vec<(String, i64)> {
        self.body["entries"]
            .as_array()
            .map(|es| {
                es.iter()
                    .map(|e| {
                        (
                            e["docId"].as_str().unwrap_or("").to_string(),
                            e["seq"].as_i64().unwrap_or(-1),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

#[derive(Default)]
struct Script {
    /// Statuses for the next requests, in order; then `otherwise`.
    next: VecDeque<u16>,
    otherwise: u16,
    /// Hold the next request unanswered until `release`.
    hold_next: bool,
    held: bool,
    received: Vec<Received>,
}

pub struct Receiver {
    pub url: String,
    state: Arc<(Mutex<Script>, Condvar)>,
}

impl Receiver {
    /// Listens on a free port of 127.0.0.1; answers 200 until told otherwise.
    pub fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").expect("receiver port");
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let state = Arc::new((
            Mutex::new(Script {
                otherwise: 200,
                ..Script::default()
            }),
            Condvar::new(),
        ));
        let shared = state.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let shared = shared.clone();
                std::thread::spawn(move || serve(conn, &shared));
            }
        });
        Receiver { url, state }
    }

    /// The next requests are answered with these statuses, then `otherwise` on.
    pub fn answer(&self, next: &[u16], otherwise: u16) {
        let mut s = self.state.0.lock().unwrap();
        s.next = next.iter().copied().collect();
        s.otherwise = otherwise;
    }

    /// The next request is held unanswered until `release`.
    pub fn hold_next(&self) {
        self.state.0.lock().unwrap().hold_next = true;
    }

    pub fn release(&self) {
        let (m, cv) = &*self.state;
        m.lock().unwrap().held = false;
        cv.notify_all();
    }

    pub fn received(&self) -> Vec<Received> {
        self.state.0.lock().unwrap().received.clone()
    }

    /// Waits (at most 30 s) until `done` holds for what was received; returns it.
    pub fn wait_for(&self, what: &str, done: impl Fn(&[Received]) -> bool) -> Vec<Received> {
        let (m, cv) = &*self.state;
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut s = m.lock().unwrap();
        while !done(&s.received) {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "receiver: never got {what}: {:#?}",
                s.received
            );
            s = cv.wait_timeout(s, left).unwrap().0;
        }
        s.received.clone()
    }
}

fn serve(conn: TcpStream, shared: &(Mutex<Script>, Condvar)) {
    let mut out = conn.try_clone().expect("clone the socket");
    let mut reader = BufReader::new(conn);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
        let len = headers
            .iter()
            .find(|(k, _)| k == "content-length")
            .and_then(|(_, v)| v.parse::<usize>().ok())
            .unwrap_or(0);
        let mut raw = vec![0; len];
        if reader.read_exact(&mut raw).is_err() {
            return;
        }
        let body = serde_json::from_slice(&raw).unwrap_or(Value::Null);
        let (m, cv) = shared;
        let mut s = m.lock().unwrap();
        let hold = std::mem::take(&mut s.hold_next);
        let status = if hold {
            None
        } else {
            Some(s.next.pop_front().unwrap_or(s.otherwise))
        };
        s.received.push(Received {
            headers,
            raw,
            body,
            answered: status,
        });
        cv.notify_all();
        let Some(status) = status else {
            s.held = true;
            while s.held {
                s = cv.wait(s).unwrap();
            }
            return; // never answered: the connection closes
        };
        drop(s);
        let reply = format!("HTTP/1.1 {status} Scripted\r\nContent-Length: 0\r\n\r\n");
        if out.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}
