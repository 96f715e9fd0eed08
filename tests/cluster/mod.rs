//! Cluster mode end to end: three real `docsync` nodes on one real PostgreSQL (started by
//! the test from Debian's `postgresql-15`, fsync on), talking over real sockets. Clients
//! write through any node: the owner serves, the others forward one hop. Faults: `kill -9`
//! of the owner, the owner paused (SIGSTOP) past its membership TTL, a graceful SIGTERM
//! hand-off. Every run is recorded as a Jepsen-shaped history and checked
//! (`history_check`): every acknowledged op exactly once at the seq its ack named, no op
//! twice, no fork, contiguous seqs, real-time order.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use docsync::history_check::{self, FinalLog, LogRow, Recorder, Type};
use docsync_actors::storage::postgres::testing::TempPostgres;
use serde_json::{json, Value};

use crate::common::{id, insert, set_content, TestServer};
use crate::proxy::Nginx;

mod faults;

const SECRET: &str = "cluster-secret-for-tests-0123456789";

struct Cluster {
    pg: Arc<TempPostgres>,
    nodes: Vec<TestServer>,
    token: String,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn node_env(pg: &TempPostgres, name: &str, addr: &str) -> Vec<(String, String)> {
    vec![
        ("DOCSYNC_STORAGE__BACKEND".into(), "postgres".into()),
        ("DOCSYNC_STORAGE__POSTGRES_URL".into(), pg.url()),
        ("DOCSYNC_CLUSTER__NODE_ID".into(), name.into()),
        ("DOCSYNC_CLUSTER__INTERNAL_ADDR".into(), addr.into()),
        ("DOCSYNC_CLUSTER__SECRET".into(), SECRET.into()),
        ("DOCSYNC_CLUSTER__TTL_SECS".into(), "3".into()),
        ("DOCSYNC_CLUSTER__RENEW_MS".into(), "500".into()),
    ]
}

fn start_node(pg: &TempPostgres, name: &str, extra: &[(&str, &str)]) -> TestServer {
    let addr = format!("127.0.0.1:{}", free_port());
    let env = node_env(pg, name, &addr);
    let mut env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    env.extend_from_slice(extra);
    let node = TestServer::start_at(&addr, &env);
    wait_ready(&node);
    node
}

/// Polls `/readyz` until the node has joined the cluster (bounded). Each poll on a fresh
/// connection: one kept from before a fault may have been closed by the node meanwhile
/// (a reset is "not yet", not a failure).
fn wait_ready(node: &TestServer) {
    // A node whose database link was cut rejoins once its stuck connections recover (TCP's
    // retransmission backoff can take tens of seconds after the link heals): bounded at 60 s.
    let deadline = Instant::now() + Duration::from_secs(60);
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(5))
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let ready = || {
        client
            .get(node.url("/readyz"))
            .send()
            .is_ok_and(|r| r.status() == 200)
    };
    while !ready() {
        assert!(
            Instant::now() < deadline,
            "{} never became ready",
            node.base
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

impl Cluster {
    fn start() -> Cluster {
        Cluster::start_with(&[])
    }

    /// Three nodes, each with `extra` settings besides the cluster's.
    fn start_with(extra: &[(&str, &str)]) -> Cluster {
        let pg = Arc::new(std::thread::spawn(TempPostgres::start).join().unwrap());
        let nodes: Vec<TestServer> = ["node-a", "node-b", "node-c"]
            .iter()
            .map(|n| start_node(&pg, n, extra))
            .collect();
        let token = nodes[0].add_user("alice");
        Cluster { pg, nodes, token }
    }

    /// Which node's internal address owns `doc` now, as the database says.
    fn owner(&self, doc: &str) -> Option<String> {
        let pg = self.pg.clone();
        let doc = doc.to_string();
        std::thread::spawn(move || owner_on(&mut pg.client(), &doc))
            .join()
            .unwrap()
    }

    /// A new document `self.nodes[node]` owns: its first write there (one bullet, by the
    /// client `cl_<letter of the node>`) claims it. Returns the document and the bullet.
    fn doc_owned_by(&self, node: usize, title: &str) -> (String, String) {
        let doc = self.nodes[0].create_doc(&self.token, title);
        let blk = id("blk_");
        let name = ["node-a", "node-b", "node-c"][node];
        let client = format!("cl_{}", &name[5..]);
        self.nodes[node].sync_ok(
            &self.token,
            &doc,
            &client,
            0,
            vec![insert(&blk, None, "a0", "one")],
        );
        assert_eq!(self.owner(&doc).as_deref(), Some(name));
        (doc, blk)
    }

    fn node_index(&self, node_id: &str) -> usize {
        ["node-a", "node-b", "node-c"]
            .iter()
            .position(|n| *n == node_id)
            .expect("a node of this cluster")
    }

    /// The document's whole log, read through `node` (asked again while it answers 503: a
    /// node that has just rejoined after a fault may fence itself once more).
    fn final_log(&self, node: &TestServer, doc: &str) -> Vec<Value> {
        let mut entries = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let body = json!({"clientId": "cl_check", "lastSeq": entries.len(), "ops": []});
            let (status, r) = node.sync(&self.token, doc, &body);
            if status == 503 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
            assert_eq!(status, 200, "reading the final log: {r}");
            entries.extend(r["ops"].as_array().unwrap().iter().cloned());
            if !r["hasMore"].as_bool().unwrap() {
                return entries;
            }
        }
    }

    /// Each log entry's owner epoch, by seq, as PostgreSQL stored it (the API does not show
    /// epochs; the checker requires them never to decrease along seq).
    fn epochs(&self, doc: &str) -> BTreeMap<i64, i64> {
        let (pg, doc) = (self.pg.clone(), doc.to_string());
        std::thread::spawn(move || {
            pg.client()
                .query("SELECT seq, epoch FROM doc_ops WHERE doc_id = $1", &[&doc])
                .unwrap()
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect()
        })
        .join()
        .unwrap()
    }

    /// Checks `history` against the final logs of `docs` (every document it touched), read
    /// through `via`, with each entry's epoch from the database.
    fn check(&self, history: &Recorder, docs: &[&str], via: &TestServer) -> history_check::Verdict {
        let mut logs = BTreeMap::new();
        for doc in docs {
            let epochs = self.epochs(doc);
            let rows = self
                .final_log(via, doc)
                .iter()
                .map(|e| {
                    let seq = e["seq"].as_i64().unwrap();
                    LogRow {
                        doc: doc.to_string(),
                        seq,
                        op_id: e["opId"].as_str().unwrap().to_string(),
                        epoch: Some(*epochs.get(&seq).expect("every entry has its epoch")),
                    }
                })
                .collect();
            logs.insert(doc.to_string(), FinalLog { floor: 0, rows });
        }
        history_check::check(&history.events(), &logs)
    }
}

/// Writers that keep editing their own bullet of `doc`, each through its own node, moving
/// to the next node when one does not answer, and retrying the same op (same op ID) until
/// it is acknowledged. Every attempt is in `history`.
struct Load {
    stop: Arc<AtomicBool>,
    acked: Arc<AtomicUsize>,
    /// Attempts answered with anything but 200, or not answered (each was retried).
    failed: Arc<AtomicUsize>,
    /// When each acknowledgement arrived.
    ack_times: Arc<std::sync::Mutex<Vec<Instant>>>,
    workers: Vec<std::thread::JoinHandle<()>>,
}

/// How the writers of a `Load` behave.
#[derive(Clone, Copy)]
struct Writers {
    /// How long a writer waits for an answer before it gives up on that node.
    patience: Duration,
    /// Each attempt goes to a node chosen at random among those that have not failed this
    /// writer in the last `shun` (nginx's `max_fails=1 fail_timeout=…`); else a writer stays
    /// with its node until that node fails it.
    random_node: bool,
    shun: Duration,
    /// Every writer begins at the first node (as a proxy's `hash $doc` sends all of a
    /// document's clients to one node); else writer `w` begins at node `w`.
    all_at_first: bool,
}

impl Default for Writers {
    fn default() -> Writers {
        Writers {
            patience: Duration::from_secs(10),
            random_node: false,
            shun: Duration::ZERO,
            all_at_first: false,
        }
    }
}

impl Load {
    fn start(bases: Vec<String>, token: &str, doc: &str, history: Arc<Recorder>) -> Load {
        Load::start_shaped(bases, token, doc, history, Writers::default())
    }

    fn start_shaped(
        bases: Vec<String>,
        token: &str,
        doc: &str,
        history: Arc<Recorder>,
        shape: Writers,
    ) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let acked = Arc::new(AtomicUsize::new(0));
        let failed = Arc::new(AtomicUsize::new(0));
        let ack_times = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut workers = Vec::new();
        for w in 0..bases.len() {
            let (bases, token, doc) = (bases.clone(), token.to_string(), doc.to_string());
            let (stop, acked, history) = (stop.clone(), acked.clone(), history.clone());
            let ack_times = ack_times.clone();
            let failed = failed.clone();
            workers.push(std::thread::spawn(move || {
                let client = reqwest::blocking::Client::builder()
                    .timeout(shape.patience)
                    .build()
                    .unwrap();
                let process = format!("writer-{w}");
                let (blk, cl) = (id("blk_"), id("cl_"));
                let mut node = if shape.all_at_first { 0 } else { w };
                let mut failed_at: Vec<Option<Instant>> = vec![None; bases.len()];
                let mut version = 0;
                // The newest seq this writer has seen: it asks only for what came after, as
                // the browser does (a reply then carries a few entries, not the log's first
                // page every time).
                let mut last_seq = 0;
                while !stop.load(Ordering::Relaxed) {
                    let content = format!("writer {w} edit {}", version + 1);
                    let op = if version == 0 {
                        insert(&blk, None, &format!("a{w}"), &content)
                    } else {
                        set_content(&blk, &content, version)
                    };
                    let op_id = op["opId"].as_str().unwrap().to_string();
                    let ev = |seq| history_check::Value {
                        doc: doc.clone(),
                        op_id: op_id.clone(),
                        seq,
                        epoch: None,
                    };
                    history.record(&process, Type::Invoke, "sync", ev(None));
                    // The same op until it is acknowledged: op IDs make retries harmless.
                    // A node that just said "ask again now" is skipped once.
                    let (mut now_elsewhere, mut refused_now) = (false, None::<usize>);
                    loop {
                        if shape.random_node {
                            let up: Vec<usize> = (0..bases.len())
                                .filter(|n| failed_at[*n].is_none_or(|t| t.elapsed() >= shape.shun))
                                .filter(|n| refused_now.take_if(|r| r == n).is_none())
                                .collect();
                            node = if up.is_empty() {
                                rand::random_range(0..bases.len())
                            } else {
                                up[rand::random_range(0..up.len())]
                            };
                        }
                        let body = json!({"clientId": cl, "lastSeq": last_seq, "ops": [op]});
                        let answer = client
                            .post(format!("{}/api/v1/docs/{doc}/sync", bases[node]))
                            .bearer_auth(&token)
                            .json(&body)
                            .send();
                        // A reply whose body did not arrive in time is no answer either.
                        let answer = answer.and_then(|r| {
                            let status = r.status();
                            // The server's "ask again now" (not the owner, or not in the
                            // cluster): asked again elsewhere at once, as the deploy docs'
                            // nginx does (`proxy_next_upstream http_503`).
                            now_elsewhere = r
                                .headers()
                                .get("retry-after")
                                .is_some_and(|v| v.as_bytes() == b"0");
                            if status == 200 {
                                r.json::<Value>().map(|v| (status, v))
                            } else {
                                Ok((status, Value::String(r.text().unwrap_or_default())))
                            }
                        });
                        match answer {
                            Ok((status, v)) if status == 200 => {
                                assert_eq!(v["results"][0]["status"], "applied", "{v}");
                                last_seq = last_seq.max(v["headSeq"].as_i64().unwrap_or(0));
                                history.record(
                                    &process,
                                    Type::Ok,
                                    "sync",
                                    ev(v["results"][0]["seq"].as_i64()),
                                );
                                ack_times.lock().unwrap().push(Instant::now());
                                acked.fetch_add(1, Ordering::Relaxed);
                                break;
                            }
                            Ok((status, _)) if status.is_server_error() && now_elsewhere => {
                                failed.fetch_add(1, Ordering::Relaxed);
                                refused_now = Some(node);
                            }
                            Ok((status, _)) if status.is_server_error() => {
                                // No owner yet, or the proxy found no node that answered
                                // (502): ask again in a moment.
                                failed.fetch_add(1, Ordering::Relaxed);
                                std::thread::sleep(Duration::from_millis(20));
                            }
                            Ok((status, body)) => panic!("sync answered {status}: {body}"),
                            Err(_) => {
                                // That node is gone (or cut off): whether it applied the op
                                // is unknown until a retry tells.
                                failed.fetch_add(1, Ordering::Relaxed);
                                failed_at[node] = Some(Instant::now());
                                node = (node + 1) % bases.len();
                                std::thread::sleep(Duration::from_millis(20));
                            }
                        }
                        if stop.load(Ordering::Relaxed) {
                            history.record(&process, Type::Info, "sync", ev(None));
                            return;
                        }
                    }
                    version += 1;
                }
            }));
        }
        Load {
            stop,
            acked,
            failed,
            ack_times,
            workers,
        }
    }

    /// Waits until `n` ops in all are acknowledged (a count, not a time); the bound only
    /// keeps a broken cluster from hanging the test. Returns when the n-th ack came.
    fn wait_acked(&self, n: usize, within: Duration) -> Instant {
        let deadline = Instant::now() + within;
        while self.acked.load(Ordering::Relaxed) < n {
            assert!(
                Instant::now() < deadline,
                "only {} of {n} ops acknowledged",
                self.acked.load(Ordering::Relaxed)
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        Instant::now()
    }

    /// The longest time without any acknowledgement from `from` on (the failover pause).
    fn longest_pause_after(&self, from: Instant) -> Duration {
        longest_gap(&self.ack_times.lock().unwrap(), from, None)
    }

    fn finish(self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        for w in self.workers {
            w.join().unwrap();
        }
        self.acked.load(Ordering::Relaxed)
    }
}

/// The longest time without an acknowledgement in `acks` from `from` on — up to `until`
/// too when given (a fault's end: the time after its last ack counts).
/// The node that owns `doc` now (a live incarnation's), asked on `c`.
fn owner_on(c: &mut postgres::Client, doc: &str) -> Option<String> {
    c.query_opt(
        "SELECT n.node_id FROM documents d JOIN nodes n ON n.inc = d.owner_inc
          WHERE d.id = $1 AND n.status = 'live' AND n.expires_at > now()",
        &[&doc],
    )
    .unwrap()
    .map(|r| r.get::<_, String>(0))
}

fn longest_gap(acks: &[Instant], from: Instant, until: Option<Instant>) -> Duration {
    let mut times: Vec<Instant> = acks.iter().copied().filter(|t| *t >= from).collect();
    times.sort();
    let mut last = from;
    let mut longest = Duration::ZERO;
    for t in times.into_iter().chain(until) {
        longest = longest.max(t.saturating_duration_since(last));
        last = last.max(t);
    }
    longest
}

/// Writes through all three nodes land in one log (one owner; the others forward); the
/// owner is killed with SIGKILL; another node takes the document over once the owner's
/// membership expires, and the writers' retries land exactly once.
#[test]
fn the_owner_killed_mid_stream_loses_no_acknowledged_op() {
    let mut c = Cluster::start();
    let doc = c.nodes[0].create_doc(&c.token, "Cluster");
    let history = Arc::new(Recorder::default());
    let bases: Vec<String> = c.nodes.iter().map(|n| n.url("")).collect();
    let load = Load::start(bases, &c.token, &doc, history.clone());
    load.wait_acked(30, Duration::from_secs(60));

    let owner = c.owner(&doc).expect("an owner while writes land");
    let victim = c.node_index(&owner);
    let before = load.acked.load(Ordering::Relaxed);
    let killed = Instant::now();
    c.nodes[victim].kill9();
    load.wait_acked(before + 30, Duration::from_secs(60));
    let pause = load.longest_pause_after(killed);
    let failed = load.failed.load(Ordering::Relaxed);
    let acked = load.finish();
    let new_owner = c.owner(&doc).expect("a new owner");
    assert_ne!(new_owner, owner, "another node took the document over");
    eprintln!(
        "kill -9 of the owner: longest pause in acknowledgements {} ms (membership TTL 3 s), \
         {failed} attempts answered 503 or not at all (each retried)",
        pause.as_millis()
    );

    let via = &c.nodes[(victim + 1) % 3];
    let epochs = c.epochs(&doc);
    assert!(
        epochs.values().max() > epochs.values().min(),
        "the take-over shows in the log's epochs: {epochs:?}"
    );
    let verdict = c.check(&history, &[doc.as_str()], via);
    assert!(verdict.valid, "history check: {:#?}", verdict.violations);
    assert!(verdict.acknowledged >= acked.min(60), "{verdict:?}");
    // What a reader sees through any node that is up is the same document.
    let snaps: Vec<Value> = c
        .nodes
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != victim)
        .map(|(_, n)| n.snapshot(&c.token, &doc))
        .collect();
    assert_eq!(snaps[0]["headSeq"], snaps[1]["headSeq"]);
    assert_eq!(snaps[0]["blocks"], snaps[1]["blocks"]);
}

/// The owner is paused (SIGSTOP) past its TTL: another node claims the document and goes
/// on. When the old owner wakes up, nothing it still had in hand lands: its membership has
/// expired, it fences itself, and any write it attempts carries a stale epoch and is
/// refused by the database. The history stays whole.
#[test]
fn a_paused_owner_wakes_up_fenced_and_writes_nothing() {
    let c = Cluster::start();
    // Make node-b the owner: its first write claims the free document.
    let (doc, blk) = c.doc_owned_by(1, "Paused");

    let pid = c.nodes[1].pid().to_string();
    let signal = |sig: &str| {
        assert!(std::process::Command::new("kill")
            .args([sig, &pid])
            .status()
            .unwrap()
            .success());
    };
    signal("-STOP");
    // A request to the paused owner: it sits in its socket until the owner wakes up.
    let stale_op = set_content(&blk, "written by the paused owner", 1);
    let (base_b, token) = (c.nodes[1].url(""), c.token.clone());
    let (doc_b, op_b) = (doc.clone(), stale_op.clone());
    let stale = std::thread::spawn(move || {
        reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap()
            .post(format!("{base_b}/api/v1/docs/{doc_b}/sync"))
            .bearer_auth(&token)
            .json(&json!({"clientId": "cl_b", "lastSeq": 1, "ops": [op_b]}))
            .send()
            .map(|r| {
                let status = r.status().as_u16();
                (status, r.text().unwrap_or_default())
            })
    });
    // Through node-c: refused while node-b's membership lives, then node-c claims the
    // document by reading it — at the very head node-b's held-up write expects, so only the
    // epoch can refuse that write.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (s, v) = c.nodes[2].get(&c.token, &format!("/api/v1/docs/{doc}/snapshot"));
        if s == 200 {
            assert_eq!(v["headSeq"], 1);
            break;
        }
        assert!(Instant::now() < deadline, "node-c never took over: {s} {v}");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(c.owner(&doc).as_deref(), Some("node-c"));

    let taken_at = c.epochs(&doc)[&1];
    signal("-CONT");
    let (status, answer) = stale
        .join()
        .unwrap()
        .expect("the paused owner answers once awake");
    // Two answers are right, depending on what the woken node does first: its held-up
    // request reaches its old actor (the database refuses the stale epoch: 503), or the
    // node has already fenced itself, joined again and forwards the request to the
    // document's owner, node-c, which serves it (200). Never may the write land at the
    // epoch node-b owned the document with.
    assert!(
        status == 503 || status == 200,
        "the woken owner's held-up write: {status} {answer}"
    );
    let head = c.nodes[2].snapshot(&c.token, &doc);
    let version = head["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["id"] == blk.as_str())
        .unwrap()["version"]
        .as_i64()
        .unwrap();
    let taken = c.nodes[2].sync_ok(
        &c.token,
        &doc,
        "cl_c",
        head["headSeq"].as_i64().unwrap(),
        vec![set_content(&blk, "written by c", version)],
    );
    assert_eq!(taken["results"][0]["status"], "applied", "{taken}");
    let entries = c.final_log(&c.nodes[0], &doc);
    let ops: Vec<&str> = entries
        .iter()
        .map(|e| e["opId"].as_str().unwrap())
        .collect();
    let stale_id = stale_op["opId"].as_str().unwrap();
    if status == 503 {
        // The insert and node-c's edit; the stale op is nowhere.
        assert_eq!(entries.len(), 2, "{ops:?}");
        assert!(!ops.contains(&stale_id));
    } else {
        assert_eq!(entries.len(), 3, "{ops:?}");
        assert_eq!(ops[1], stale_id, "served once, by node-c: {ops:?}");
    }
    let epochs = c.epochs(&doc);
    for (seq, epoch) in epochs.iter().filter(|(seq, _)| **seq > 1) {
        assert!(
            *epoch > taken_at,
            "entry {seq} was written at epoch {epoch}, node-b's was {taken_at}: {epochs:?}"
        );
    }
    let snap = c.nodes[0].snapshot(&c.token, &doc);
    let text = snap["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["id"] == blk.as_str())
        .unwrap()["content"]
        .clone();
    assert_eq!(text, "written by c");
    // The woken node has fenced itself and joins again as a new incarnation.
    wait_ready(&c.nodes[1]);
}

/// SIGTERM on the owner: it finishes what is in flight, releases its documents and leaves;
/// the next write through another node is served at once — no waiting for a TTL.
#[test]
fn a_graceful_stop_hands_documents_on_at_once() {
    let mut c = Cluster::start();
    let (doc, blk) = c.doc_owned_by(0, "Handed on");
    c.nodes[0].sigterm();
    assert_eq!(c.nodes[0].wait_exit(Duration::from_secs(20)), Some(0));
    assert_eq!(c.owner(&doc), None, "released on the way out");
    let stopped = Instant::now();
    let r = c.nodes[1].sync_ok(&c.token, &doc, "cl_b", 1, vec![set_content(&blk, "two", 1)]);
    assert_eq!(r["results"][0]["status"], "applied");
    eprintln!(
        "graceful hand-off: next write served in {} ms",
        stopped.elapsed().as_millis()
    );
    assert_eq!(c.owner(&doc).as_deref(), Some("node-b"));
}

/// A TCP relay in front of PostgreSQL's socket that can be frozen: bytes keep arriving and
/// are held, none is passed on — a node cut from its database with its connections open
/// (what a frozen `socat` does). What it holds can be searched, so a test can wait until a
/// given statement is stuck in it (a barrier, not a sleep).
struct Relay {
    port: u16,
    frozen: Arc<AtomicBool>,
    held: Arc<std::sync::Mutex<Vec<u8>>>,
    /// Freeze everything the moment a client sends bytes containing this.
    trigger: Arc<std::sync::Mutex<Option<Vec<u8>>>>,
}

impl Relay {
    fn start(target: std::path::PathBuf) -> Relay {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let frozen = Arc::new(AtomicBool::new(false));
        let held = Arc::new(std::sync::Mutex::new(Vec::new()));
        let trigger: Arc<std::sync::Mutex<Option<Vec<u8>>>> = Arc::default();
        let (f, h, t) = (frozen.clone(), held.clone(), trigger.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(client) = conn else { break };
                let Ok(server) = std::os::unix::net::UnixStream::connect(&target) else {
                    continue;
                };
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let (f1, h1, t1, f2) = (f.clone(), h.clone(), t.clone(), f.clone());
                std::thread::spawn(move || pump(client, server, &f1, Some((&h1, &t1))));
                std::thread::spawn(move || pump(s2, c2, &f2, None));
            }
        });
        Relay {
            port,
            frozen,
            held,
            trigger,
        }
    }

    fn url(&self) -> String {
        format!(
            "host=127.0.0.1 port={} user=docsync dbname=postgres",
            self.port
        )
    }

    /// Freezes everything the moment a client sends `needle` (that chunk is held too).
    fn freeze_on(&self, needle: &str) {
        self.held.lock().unwrap().clear();
        *self.trigger.lock().unwrap() = Some(needle.as_bytes().to_vec());
    }

    fn thaw(&self) {
        self.frozen.store(false, Ordering::SeqCst);
    }

    /// Waits until bytes containing `needle` arrived while frozen (bounded).
    fn wait_held(&self, needle: &str, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            let found = self
                .held
                .lock()
                .unwrap()
                .windows(needle.len())
                .any(|w| w == needle.as_bytes());
            if found {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{needle} never reached the relay; it holds: {:?}",
                String::from_utf8_lossy(&self.held.lock().unwrap())
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// What a client-to-server pump watches: the held bytes, and the trigger.
type Watch<'a> = (
    &'a std::sync::Mutex<Vec<u8>>,
    &'a std::sync::Mutex<Option<Vec<u8>>>,
);

/// Copies `from` → `to`, holding whatever arrives while `frozen` (recorded in `watch`'s held
/// bytes; a chunk containing the trigger freezes everything first).
fn pump(
    mut from: impl std::io::Read,
    mut to: impl std::io::Write,
    frozen: &AtomicBool,
    watch: Option<Watch>,
) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if let Some((_, trigger)) = watch {
            let mut t = trigger.lock().unwrap();
            let hit = t
                .as_ref()
                .is_some_and(|needle| buf[..n].windows(needle.len()).any(|w| w == &needle[..]));
            if hit {
                *t = None;
                frozen.store(true, Ordering::SeqCst);
            }
        }
        if frozen.load(Ordering::SeqCst) {
            if let Some((h, _)) = watch {
                h.lock().unwrap().extend_from_slice(&buf[..n]);
            }
            while frozen.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        if to.write_all(&buf[..n]).is_err() {
            return;
        }
    }
}

/// The owner is cut from PostgreSQL (its connections stay open, nothing passes) the moment
/// its writer begins an edit's transaction: it cannot renew, so it fences itself; its
/// membership expires and another node claims the document by reading it — at the very head
/// the stuck edit expects. When the cut heals, the stuck edit reaches the database with the
/// old epoch and is refused: only the epoch can refuse it (the head still matches), so a
/// build without the epoch condition fails here. The cut node joins again.
#[test]
fn a_node_cut_from_the_database_fences_itself_and_nothing_it_held_lands() {
    let pg = Arc::new(std::thread::spawn(TempPostgres::start).join().unwrap());
    let relay = Relay::start(pg.socket_path());
    let a = start_node(&pg, "node-a", &[]);
    let b = {
        let addr = format!("127.0.0.1:{}", free_port());
        let mut env = node_env(&pg, "node-b", &addr);
        env.retain(|(k, _)| k != "DOCSYNC_STORAGE__POSTGRES_URL");
        env.push(("DOCSYNC_STORAGE__POSTGRES_URL".into(), relay.url()));
        // No automatic versions: node-b's writer then has nothing to write but the edits.
        env.push(("DOCSYNC_HISTORY__AUTO_EVERY_MINUTES".into(), "0".into()));
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let node = TestServer::start_at(&addr, &env);
        wait_ready(&node);
        node
    };
    let token = a.add_user("alice");
    let c = Cluster {
        pg,
        nodes: vec![a],
        token,
    };
    let doc = c.nodes[0].create_doc(&c.token, "Cut off");
    let blk = id("blk_");
    b.sync_ok(
        &c.token,
        &doc,
        "cl_b",
        0,
        vec![insert(&blk, None, "a0", "one")],
    );
    // A second edit: node-b now has this caller's rights and client ID in memory, so the
    // next edit goes straight to its actor and writer.
    // Edits until one goes straight to node-b's writer, with no pre-check read first (its
    // actor has loaded the answered op IDs and knows the bullet): counted, not timed.
    let prechecks = |node: &TestServer| -> f64 {
        let (_, text) = node.get_text("", "/metrics");
        text.lines()
            .find_map(|l| l.strip_prefix("docsync_sync_prechecks_total "))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0.0)
    };
    let mut version = 1;
    loop {
        let before = prechecks(&b);
        b.sync_ok(
            &c.token,
            &doc,
            "cl_b",
            version,
            vec![set_content(&blk, &format!("v{}", version + 1), version)],
        );
        version += 1;
        if prechecks(&b) == before {
            break;
        }
        assert!(version < 50, "every edit asked for a pre-check");
    }
    assert_eq!(c.owner(&doc).as_deref(), Some("node-b"));

    // The cut comes the moment node-b's writer begins the next edit's transaction (a plain
    // `START TRANSACTION`; reads open `START TRANSACTION READ ONLY`): its head-moving UPDATE
    // is then stuck in the cut, not yet run.
    relay.freeze_on("START TRANSACTION\0");
    let stuck = set_content(&blk, "written through the cut", version);
    let stuck_id = stuck["opId"].as_str().unwrap().to_string();
    let (base_b, token, doc_b) = (b.url(""), c.token.clone(), doc.clone());
    let stuck_reply = std::thread::spawn(move || {
        reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap()
            .post(format!("{base_b}/api/v1/docs/{doc_b}/sync"))
            .bearer_auth(&token)
            .json(&json!({"clientId": "cl_b", "lastSeq": version, "ops": [stuck]}))
            .send()
            .map(|r| r.status().as_u16())
    });
    relay.wait_held("START TRANSACTION\0", Duration::from_secs(20));

    // node-a takes the document over once node-b's membership has expired.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (s, v) = c.nodes[0].get(&c.token, &format!("/api/v1/docs/{doc}/snapshot"));
        if s == 200 {
            assert_eq!(v["headSeq"], version, "{v}");
            break;
        }
        assert!(Instant::now() < deadline, "node-a never took over: {s} {v}");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(c.owner(&doc).as_deref(), Some("node-a"));

    relay.thaw();
    let status = stuck_reply.join().unwrap();
    assert_ne!(
        status.ok(),
        Some(200),
        "the stuck write must not be acknowledged"
    );
    // In the database itself (node-a's actor answers from the state it loaded): no trace of
    // the stuck edit, the head where node-a found it.
    let (pg, d, op) = (c.pg.clone(), doc.clone(), stuck_id.clone());
    let (head, stuck_rows) = std::thread::spawn(move || {
        let mut db = pg.client();
        let head: i64 = db
            .query_one("SELECT head_seq FROM documents WHERE id = $1", &[&d])
            .unwrap()
            .get(0);
        let rows: i64 = db
            .query_one(
                "SELECT count(*) FROM doc_ops WHERE doc_id = $1 AND op_id = $2",
                &[&d, &op],
            )
            .unwrap()
            .get(0);
        (head, rows)
    })
    .join()
    .unwrap();
    assert_eq!(
        stuck_rows, 0,
        "the stuck edit landed after the document moved"
    );
    assert_eq!(head, version, "the head moved under the new owner");
    let entries = c.final_log(&c.nodes[0], &doc);
    let ops: Vec<&str> = entries
        .iter()
        .map(|e| e["opId"].as_str().unwrap())
        .collect();
    assert_eq!(
        entries.len() as i64,
        version,
        "only node-b's acknowledged ops are in the log: {ops:?}"
    );
    assert!(!ops.contains(&stuck_id.as_str()));
    let snap = c.nodes[0].snapshot(&c.token, &doc);
    assert_eq!(snap["headSeq"], version);
    // The cut node fenced itself and joins again once its database is back.
    wait_ready(&b);
}

/// All three nodes restarted one after the other (SIGTERM, start again) behind nginx with
/// `config/nginx/cluster.conf`, while writers keep editing through nginx: no request fails
/// (a stopping node's documents move on at once; nginx and the forwarding node take the next
/// node), and no acknowledged op is lost or doubled.
#[test]
fn a_rolling_restart_through_nginx_fails_no_request() {
    let mut c = Cluster::start();
    let addrs: Vec<String> = c
        .nodes
        .iter()
        .map(|n| n.base.trim_start_matches("http://").to_string())
        .collect();
    let nginx = Nginx::start_with(
        "cluster.conf",
        &[
            ("@NODE_A@", addrs[0].as_str()),
            ("@NODE_B@", addrs[1].as_str()),
            ("@NODE_C@", addrs[2].as_str()),
        ],
    );
    let docs: Vec<String> = (0..3)
        .map(|i| c.nodes[0].create_doc(&c.token, &format!("Rolling {i}")))
        .collect();
    let history = Arc::new(Recorder::default());
    let loads: Vec<Load> = docs
        .iter()
        .map(|d| Load::start(vec![nginx.base.clone()], &c.token, d, history.clone()))
        .collect();
    let acked = |loads: &[Load]| {
        loads
            .iter()
            .map(|l| l.acked.load(Ordering::Relaxed))
            .sum::<usize>()
    };
    let wait_more = |loads: &[Load], n: usize| {
        let target = acked(loads) + n;
        let deadline = Instant::now() + Duration::from_secs(60);
        while acked(loads) < target {
            assert!(Instant::now() < deadline, "acknowledgements stopped");
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    wait_more(&loads, 30);
    for i in 0..3 {
        c.nodes[i].sigterm();
        assert_eq!(c.nodes[i].wait_exit(Duration::from_secs(30)), Some(0));
        wait_more(&loads, 20);
        c.nodes[i].start_again();
        wait_ready(&c.nodes[i]);
        wait_more(&loads, 20);
    }
    let failed: usize = loads.iter().map(|l| l.failed.load(Ordering::Relaxed)).sum();
    let total: usize = loads.into_iter().map(Load::finish).sum();
    eprintln!("rolling restart through nginx: {total} acknowledged, {failed} failed requests");
    if failed > 0 {
        eprintln!("nginx error log:\n{}", nginx.error_log());
    }
    assert_eq!(
        failed, 0,
        "requests failed through nginx during the rolling restart"
    );
    let docs: Vec<&str> = docs.iter().map(String::as_str).collect();
    let verdict = c.check(&history, &docs, &c.nodes[0]);
    assert!(verdict.valid, "history check: {:#?}", verdict.violations);
    assert_eq!(verdict.acknowledged, total, "{verdict:?}");
}

/// The operator docs show the nginx configuration the rolling-restart test runs, verbatim.
#[test]
fn deploy_docs_show_the_cluster_nginx_config_verbatim() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let conf = std::fs::read_to_string(root.join("config/nginx/cluster.conf")).unwrap();
    let doc = std::fs::read_to_string(root.join("docs/deploy.md")).unwrap();
    assert!(
        doc.contains(&format!("```nginx\n{conf}```")),
        "docs/deploy.md must show config/nginx/cluster.conf verbatim in a ```nginx block"
    );
}

/// Compaction in cluster mode: each node's pass compacts the documents it holds (and any
/// nobody holds) and leaves the others to their owners — a pass never pulls a document away
/// from the node serving it.
#[test]
fn each_node_compacts_its_own_documents() {
    let pg = Arc::new(std::thread::spawn(TempPostgres::start).join().unwrap());
    let manual = |name: &str| {
        let addr = format!("127.0.0.1:{}", free_port());
        let mut env = node_env(&pg, name, &addr);
        env.push(("DOCSYNC_TESTING__CLOCK".into(), "manual".into()));
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let node = TestServer::start_at(&addr, &env);
        wait_ready(&node);
        node
    };
    let (a, b) = (manual("node-a"), manual("node-b"));
    let admin = a.add_admin("root");
    let token = a.add_user("alice");
    let c = Cluster {
        pg,
        nodes: vec![a, b],
        token,
    };
    // One private document served by each node, three entries in each log.
    let mut docs = Vec::new();
    for (i, node) in c.nodes.iter().enumerate() {
        let doc = c.nodes[0].create_doc(&c.token, &format!("Doc {i}"));
        let blk = id("blk_");
        node.sync_ok(
            &c.token,
            &doc,
            "cl_x",
            0,
            vec![insert(&blk, None, "a0", "1")],
        );
        node.sync_ok(&c.token, &doc, "cl_x", 1, vec![set_content(&blk, "2", 1)]);
        node.sync_ok(&c.token, &doc, "cl_x", 2, vec![set_content(&blk, "3", 2)]);
        docs.push(doc);
    }
    assert_eq!(c.owner(&docs[0]).as_deref(), Some("node-a"));
    assert_eq!(c.owner(&docs[1]).as_deref(), Some("node-b"));
    // Past the private log's retention on both nodes' clocks.
    for node in &c.nodes {
        node.advance_clock(8 * 86_400_000);
    }
    let (s, first) = c.nodes[0].post(&admin, "/api/v1/admin/compact", &json!({}));
    assert_eq!(s, 200, "{first}");
    assert_eq!(first["documents"], 1, "node-a compacts its own: {first}");
    assert_eq!(first["elsewhere"], 1, "and leaves node-b's: {first}");
    assert_eq!(
        c.owner(&docs[1]).as_deref(),
        Some("node-b"),
        "a pass never pulls a document away"
    );
    let (s, second) = c.nodes[1].post(&admin, "/api/v1/admin/compact", &json!({}));
    assert_eq!(s, 200, "{second}");
    assert_eq!(second["documents"], 1, "node-b compacts its own: {second}");
    assert!(second["logRows"].as_i64().unwrap() > 0, "{second}");
    // Both documents read the same as before from either node.
    for doc in &docs {
        let snap = c.nodes[1].snapshot(&c.token, doc);
        assert_eq!(snap["headSeq"], 3);
        assert_eq!(snap["blocks"][0]["content"], "3");
    }
}

/// PostgreSQL's primary is lost (stopped at once, as a crash) under load and its synchronous
/// standby is promoted: the nodes reach the new primary through their multi-host connection
/// string (`target_session_attrs=read-write`), and every acknowledged op is there — a commit
/// is acknowledged only once the standby has it.
#[test]
fn the_database_fails_over_to_its_synchronous_standby_and_loses_no_acknowledged_op() {
    let primary = std::thread::spawn(TempPostgres::start_primary)
        .join()
        .unwrap();
    let standby = {
        let p = Arc::new(primary);
        let p2 = p.clone();
        let s = std::thread::spawn(move || TempPostgres::standby_of(&p2))
            .join()
            .unwrap();
        (Arc::try_unwrap(p).ok().expect("one owner"), s)
    };
    let (primary, standby) = standby;
    let ((h1, p1), (h2, p2)) = (primary.host_port(), standby.host_port());
    let url = format!(
        "host={h1},{h2} port={p1},{p2} user=docsync dbname=postgres \
         target_session_attrs=read-write connect_timeout=2"
    );
    let nodes: Vec<TestServer> = ["node-a", "node-b", "node-c"]
        .iter()
        .map(|name| {
            let addr = format!("127.0.0.1:{}", free_port());
            let mut env = node_env(&primary, name, &addr);
            env.retain(|(k, _)| k != "DOCSYNC_STORAGE__POSTGRES_URL");
            env.push(("DOCSYNC_STORAGE__POSTGRES_URL".into(), url.clone()));
            let env: Vec<(&str, &str)> =
                env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            let node = TestServer::start_at(&addr, &env);
            wait_ready(&node);
            node
        })
        .collect();
    let token = nodes[0].add_user("alice");
    let doc = nodes[0].create_doc(&token, "Failover");
    let history = Arc::new(Recorder::default());
    let bases: Vec<String> = nodes.iter().map(|n| n.url("")).collect();
    let load = Load::start(bases, &token, &doc, history.clone());
    load.wait_acked(30, Duration::from_secs(60));

    let before = load.acked.load(Ordering::Relaxed);
    let lost_at = Instant::now();
    primary.stop();
    standby.promote();
    load.wait_acked(before + 30, Duration::from_secs(90));
    let pause = load.longest_pause_after(lost_at);
    let failed = load.failed.load(Ordering::Relaxed);
    let acked = load.finish();
    eprintln!(
        "primary lost, standby promoted: longest pause in acknowledgements {} ms, \
         {failed} attempts answered 5xx or not at all (each retried)",
        pause.as_millis()
    );
    // The nodes fenced themselves when their presence connections broke; they are back.
    for node in &nodes {
        wait_ready(node);
    }
    let c = Cluster {
        pg: Arc::new(standby),
        nodes,
        token,
    };
    let verdict = c.check(&history, &[doc.as_str()], &c.nodes[0]);
    assert!(verdict.valid, "history check: {:#?}", verdict.violations);
    assert_eq!(verdict.acknowledged, acked, "{verdict:?}");
}

/// A WebSocket on a node that does not own the document: its room is relayed from the
/// owner (changes made there reach the socket), and when the owner dies the room comes home
/// to the socket's node, which takes the document over; the socket hears on, no reconnect.
#[test]
fn a_websocket_room_is_relayed_from_the_owner_and_follows_the_document() {
    let mut c = Cluster::start();
    let (doc, blk) = c.doc_owned_by(1, "Relayed");

    let mut ws = crate::common::channels::Ws::connect(&c.nodes[2].base, Some(&c.token))
        .expect("WebSocket to node-c");
    assert_eq!(ws.join(&doc, None)["type"], "JOINED");
    c.nodes[1].sync_ok(&c.token, &doc, "cl_b", 1, vec![set_content(&blk, "two", 1)]);
    ws.wait_for(Duration::from_secs(10), "DOC_SEQ 2 from the owner", |m| {
        m["type"] == "DOC_SEQ" && m["docId"] == doc.as_str() && m["headSeq"] == 2
    });
    assert_eq!(
        c.owner(&doc).as_deref(),
        Some("node-b"),
        "relayed, not moved"
    );

    c.nodes[1].kill9();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (s, v) = c.nodes[2].sync(
            &c.token,
            &doc,
            &json!({"clientId": "cl_c", "lastSeq": 2, "ops": [set_content(&blk, "three", 2)]}),
        );
        if s == 200 {
            assert_eq!(v["results"][0]["status"], "applied", "{v}");
            break;
        }
        assert!(Instant::now() < deadline, "node-c never took over: {s} {v}");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(c.owner(&doc).as_deref(), Some("node-c"));
    ws.wait_for(
        Duration::from_secs(10),
        "DOC_SEQ 3 from node-c itself",
        |m| m["type"] == "DOC_SEQ" && m["docId"] == doc.as_str() && m["headSeq"] == 3,
    );
}

/// Wake-up channels on a node that does not own the document share one stream from the
/// owner: three WebSocket rooms of two people, an SSE stream and long-polls on node-c cost
/// node-b one relay subscriber (no WebSocket, no SSE stream there; node-c forwards none of
/// them), and each change reaches them all, the rooms with its entries.
/// Rights are node-c's to keep per room: when one reader's share is removed (through
/// node-a, a third node) that room hears `forbidden` and nothing of the next change, while
/// the others hear on. When the rooms are gone the relay lets go of the owner's stream.
#[test]
fn rooms_on_one_node_share_one_stream_from_the_owner_and_keep_their_own_rights() {
    use crate::common::channels::{
        put_shares, seqs, subscribers, user_id, wait_subscribers, LongPoll, Sse, Ws,
    };
    const WAIT: Duration = Duration::from_secs(30);
    let c = Cluster::start();
    let (doc, blk) = c.doc_owned_by(1, "Fan-out");
    let base = &c.nodes[0].base;
    let bob = c.nodes[0].add_user("bob");
    let shares = json!([{"kind": "user", "id": user_id(base, &bob), "access": "read"}]);
    assert_eq!(put_shares(base, &c.token, &doc, &shares), 200);

    let relay = &c.nodes[2].base;
    let mut alice_1 = Ws::connect(relay, Some(&c.token)).expect("WebSocket to node-c");
    let mut alice_2 = Ws::connect(relay, Some(&c.token)).expect("WebSocket to node-c");
    let mut bob_ws = Ws::connect(relay, Some(&bob)).expect("WebSocket to node-c");
    for ws in [&mut alice_1, &mut alice_2, &mut bob_ws] {
        assert_eq!(ws.join(&doc, None)["type"], "JOINED");
    }
    let mut sse = Sse::open(relay, &c.token, &doc, None);
    assert_eq!(sse.wait_status(Duration::from_secs(10)), Some(200));
    wait_subscribers(&c.nodes[1], "relay", 1, Duration::from_secs(10));
    // A long-poll on node-c waits on the same relay: told at once where the document stands
    // when it is behind, else by the next change.
    let (s, now) = LongPoll::start(relay, &c.token, &doc, 0, 0, 25, None).finish(WAIT);
    assert_eq!((s, now["headSeq"].as_i64()), (200, Some(1)), "{now}");
    let mut waiting = LongPoll::start(relay, &c.token, &doc, 1, seqs(&now).1, 25, None);
    assert_eq!(
        subscribers(&c.nodes[1], "websocket"),
        0,
        "no socket on the owner"
    );
    assert_eq!(
        subscribers(&c.nodes[1], "sse"),
        0,
        "no per-room stream either"
    );
    assert_eq!(
        c.owner(&doc).as_deref(),
        Some("node-b"),
        "relayed, not moved"
    );

    // The owner's stream of the document is a node's only: a person, even its owner, is
    // refused it with a JSON error, and so is a node that names itself without the secret.
    let stream = format!("/cluster/v1/docs/{doc}/stream");
    let (s, v) = c.nodes[1].get(&c.token, &stream);
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (403, Some("forbidden")),
        "{v}"
    );
    let claimed = reqwest::blocking::Client::new()
        .get(c.nodes[1].url(&stream))
        .header("x-docsync-forwarded-by", "node-x")
        .header("x-docsync-cluster-secret", "a guess")
        .send()
        .expect("GET");
    assert_eq!(claimed.status(), 403);

    c.nodes[1].sync_ok(&c.token, &doc, "cl_b", 1, vec![set_content(&blk, "two", 1)]);
    for ws in [&mut alice_1, &mut alice_2, &mut bob_ws] {
        let m = ws.wait_for(Duration::from_secs(10), "DOC_SEQ 2", |m| {
            m["type"] == "DOC_SEQ" && m["docId"] == doc.as_str() && m["headSeq"] == 2
        });
        assert_eq!(
            m["entries"][0]["seq"], 2,
            "the change itself comes along: {m}"
        );
    }
    sse.wait_doc_seq_at_least(&doc, 2, 0, Duration::from_secs(10));
    // (A presence change may answer it first: then it asks again from there.)
    for _ in 0..5 {
        let (s, v) = waiting.finish(WAIT);
        assert_eq!(s, 200, "{v}");
        if v["headSeq"] == 2 {
            break;
        }
        let (head, lease) = seqs(&v);
        waiting = LongPoll::start(relay, &c.token, &doc, head, lease, 25, None);
    }

    assert_eq!(put_shares(base, &c.token, &doc, &json!([])), 200);
    bob_ws.wait_for(Duration::from_secs(10), "ERROR forbidden", |m| {
        m["type"] == "ERROR" && m["code"] == "forbidden"
    });
    c.nodes[1].sync_ok(
        &c.token,
        &doc,
        "cl_b",
        2,
        vec![set_content(&blk, "three", 2)],
    );
    for ws in [&mut alice_1, &mut alice_2] {
        ws.wait_for(Duration::from_secs(10), "DOC_SEQ 3", |m| {
            m["type"] == "DOC_SEQ" && m["headSeq"] == 3
        });
    }
    sse.wait_doc_seq_at_least(&doc, 3, 0, Duration::from_secs(10));
    // What Bob's socket was sent before this answer is in by now.
    bob_ws.send(json!({"type": "PING"}));
    bob_ws.wait_for(Duration::from_secs(5), "PONG", |m| m["type"] == "PONG");
    assert!(
        bob_ws.seen.iter().all(|m| m["headSeq"].as_i64() < Some(3)),
        "Bob heard of a change after his share was removed: {:?}",
        bob_ws.seen
    );

    let (_, metrics) = c.nodes[2].get_text("", "/metrics");
    assert!(
        metrics.contains("docsync_requests_forwarded_total 0\n"),
        "node-c forwarded none of its streams or long-polls"
    );
    drop((alice_1, alice_2, bob_ws, sse));
    wait_subscribers(&c.nodes[1], "relay", 0, Duration::from_secs(30));
}

/// A bullet guest's SSE stream and long-poll on a node that does not own the document are
/// served by the owner (forwarded: only the owner can cut their view), never by the node's
/// relay: the stream hears a change inside their bullet.
#[test]
fn a_bullet_guests_stream_on_another_node_is_served_by_the_owner() {
    use crate::common::channels::{subscribers, user_id, wait_subscribers, LongPoll, Sse};
    let c = Cluster::start();
    let (doc, blk) = c.doc_owned_by(1, "Guest");
    let carol = c.nodes[0].add_user("carol");
    let shares =
        json!([{"kind": "user", "id": user_id(&c.nodes[0].base, &carol), "access": "read"}]);
    let (s, v) = c.nodes[0].put(
        &c.token,
        &format!("/api/v1/docs/{doc}/blocks/{blk}/shares"),
        &shares,
    );
    assert_eq!(s, 200, "{v}");

    let mut sse = Sse::open(&c.nodes[2].base, &carol, &doc, None);
    assert_eq!(sse.wait_status(Duration::from_secs(10)), Some(200));
    wait_subscribers(&c.nodes[1], "sse", 1, Duration::from_secs(10));
    assert_eq!(subscribers(&c.nodes[1], "relay"), 0, "not through a relay");
    c.nodes[1].sync_ok(&c.token, &doc, "cl_b", 1, vec![set_content(&blk, "two", 1)]);
    sse.wait_doc_seq_at_least(&doc, 2, 0, Duration::from_secs(10));
    // Her long-poll too: answered by the owner (her view has news for a tab that has none).
    let (s, v) = LongPoll::start(&c.nodes[2].base, &carol, &doc, 0, 0, 25, None)
        .finish(Duration::from_secs(30));
    assert_eq!(s, 200, "{v}");
    assert!(v["headSeq"].as_i64() > Some(0), "{v}");
    assert_eq!(c.owner(&doc).as_deref(), Some("node-b"));
}

/// A client's streams count against the client, wherever they arrive: the node they reach
/// counts them by the client's address (as the proxy in front says), not by the node's, so
/// streams through one node do not share one per-address limit. Without it the last stream
/// below, from a second address, is refused as if it came from the first.
#[test]
fn streams_through_another_node_count_against_the_client_not_the_node() {
    use crate::common::channels::{put_shares, user_id, Sse};
    let c = Cluster::start_with(&[
        ("DOCSYNC_SERVER__TRUSTED_PROXIES", "127.0.0.1"),
        ("DOCSYNC_LIMITS__MAX_STREAMS_PER_USER", "2"),
        ("DOCSYNC_LIMITS__MAX_STREAMS_PER_ADDRESS", "4"),
    ]);
    let (doc, _) = c.doc_owned_by(1, "Streams");
    let (bob, carol) = (c.nodes[0].add_user("bob"), c.nodes[0].add_user("carol"));
    let base = &c.nodes[1].base;
    let shares = json!([
        {"kind": "user", "id": user_id(base, &bob), "access": "read"},
        {"kind": "user", "id": user_id(base, &carol), "access": "read"},
    ]);
    assert_eq!(put_shares(base, &c.token, &doc, &shares), 200);
    // Every stream arrives at node-c, which forwards it to node-b.
    let open = |token: &str, from: &str| {
        let auth = crate::common::Auth::Bearer(token);
        let mut s = Sse::open_with(
            &c.nodes[2].base,
            &auth,
            &doc,
            None,
            &[("x-forwarded-for", from)],
        );
        let status = s.wait_status(Duration::from_secs(10));
        (s, status)
    };
    let mut held = Vec::new();
    for token in [&c.token, &c.token, &bob, &bob] {
        let (s, status) = open(token, "198.51.100.1");
        assert_eq!(status, Some(200), "four streams from the first address");
        held.push(s);
    }
    let (_over, status) = open(&carol, "198.51.100.1");
    assert_eq!(
        status,
        Some(429),
        "the first address is at its limit on the owner"
    );
    let (other, status) = open(&carol, "198.51.100.2");
    assert_eq!(
        status,
        Some(200),
        "a second client through the same node has its own limit"
    );
    held.push(other);
    assert_eq!(
        c.owner(&doc).as_deref(),
        Some("node-b"),
        "forwarded, not moved"
    );
}

/// A webhook on a two-node cluster: every entry — written through either node, into
/// documents each node owns, numbered by the feed across nodes — reaches the receiver once,
/// in the feed's order (the other node's writes wake the deliverer by notification).
#[test]
fn a_webhook_is_delivered_once_in_feed_order_by_one_node_of_the_cluster() {
    use crate::common::receiver::{Received, Receiver};
    let pg = Arc::new(std::thread::spawn(TempPostgres::start).join().unwrap());
    let hooks = [
        (
            "DOCSYNC_WEBHOOKS__KEY",
            "7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a",
        ),
        ("DOCSYNC_WEBHOOKS__ALLOW_PRIVATE_TARGETS", "true"),
    ];
    let (a, b) = (
        start_node(&pg, "node-a", &hooks),
        start_node(&pg, "node-b", &hooks),
    );
    let token = a.add_user("alice");
    let recv = Receiver::start();
    let (s, hook) = a.post(
        &token,
        "/api/v1/webhooks",
        &json!({"url": recv.url, "events": ["ops"], "secret": "cluster-webhook-secret-01"}),
    );
    assert_eq!(s, 201, "{hook}");
    let c = Cluster {
        pg,
        nodes: vec![a, b],
        token,
    };
    // One document first served by each node; writes to both through both nodes.
    let mut docs = Vec::new();
    for (i, node) in c.nodes.iter().enumerate() {
        let doc = c.nodes[0].create_doc(&c.token, &format!("Doc {i}"));
        node.sync_ok(
            &c.token,
            &doc,
            "cl_w",
            0,
            vec![insert(&id("blk_"), None, "a0", "first")],
        );
        docs.push(doc);
    }
    assert_eq!(c.owner(&docs[0]).as_deref(), Some("node-a"));
    assert_eq!(c.owner(&docs[1]).as_deref(), Some("node-b"));
    let keys = ["a1", "a2", "a3", "a4", "a5", "a6"];
    for (n, key) in keys.iter().enumerate() {
        for (d, doc) in docs.iter().enumerate() {
            let node = &c.nodes[(n + d) % 2];
            let head = node.snapshot(&c.token, doc)["headSeq"].as_i64().unwrap();
            node.sync_ok(
                &c.token,
                doc,
                "cl_w",
                head,
                vec![insert(&id("blk_"), None, key, "more")],
            );
        }
    }
    let total = 2 + keys.len() * 2;
    let acked = |r: &[Received]| -> Vec<(String, i64)> {
        r.iter()
            .filter(|x| x.answered == Some(200))
            .flat_map(Received::doc_seqs)
            .collect()
    };
    let got = recv.wait_for("every entry", |r| acked(r).len() >= total);
    let (s, feed) = c.nodes[1].get(&c.token, "/api/v1/feed?limit=1000");
    assert_eq!(s, 200, "{feed}");
    let in_feed: Vec<(String, i64)> = feed["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["docId"].as_str().unwrap().to_string(),
                e["seq"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(in_feed.len(), total);
    assert_eq!(acked(&got), in_feed, "each entry once, in the feed's order");
    let mut ids: Vec<&str> = got.iter().map(Received::delivery).collect();
    ids.dedup();
    assert_eq!(
        ids.len(),
        got.len(),
        "no delivery sent twice (both nodes healthy)"
    );
}

/// What the other nodes probe before they report a node: it answers, to a node only, as the
/// incarnation it is now — and once that incarnation is ended (evicted here, as a majority
/// would), never as it again: fenced it answers as none (503), joined again as a new one.
#[test]
fn a_node_answers_the_others_as_the_incarnation_it_is_and_never_as_an_ended_one() {
    let pg = Arc::new(std::thread::spawn(TempPostgres::start).join().unwrap());
    let node = start_node(&pg, "node-a", &[]);
    let url = node.url("/cluster/v1/member");
    let http = reqwest::blocking::Client::new();
    let ask = |headers: &[(&str, &str)]| -> (u16, Value) {
        let mut req = http.get(&url);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let r = req.send().unwrap();
        let status = r.status().as_u16();
        (status, r.json().unwrap_or(Value::Null))
    };
    let as_node = [
        ("x-docsync-forwarded-by", "node-b"),
        ("x-docsync-cluster-secret", SECRET),
    ];
    let inc_now = || -> String {
        let pg = pg.clone();
        std::thread::spawn(move || {
            pg.client()
                .query_one(
                    "SELECT inc FROM nodes WHERE node_id = 'node-a' AND status = 'live'
                      ORDER BY expires_at DESC LIMIT 1",
                    &[],
                )
                .unwrap()
                .get::<_, String>(0)
        })
        .join()
        .unwrap()
    };
    let first = inc_now();
    let (s, v) = ask(&as_node);
    assert_eq!((s, v["inc"].as_str()), (200, Some(first.as_str())), "{v}");
    // Not to a person, nor to a node without the secret.
    let token = node.add_user("alice");
    let (s, v) = ask(&[("authorization", &format!("Bearer {token}"))]);
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (403, Some("forbidden")),
        "{v}"
    );
    let (s, v) = ask(&[("x-docsync-forwarded-by", "node-b")]);
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (403, Some("forbidden")),
        "{v}"
    );

    // Its incarnation ended behind its back: its next renewal fails and it fences itself.
    let ended = first.clone();
    let pg2 = pg.clone();
    std::thread::spawn(move || {
        pg2.client()
            .execute(
                "UPDATE nodes SET status = 'evicted', expires_at = now() WHERE inc = $1",
                &[&ended],
            )
            .unwrap()
    })
    .join()
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut answers = Vec::new();
    loop {
        let (s, v) = ask(&as_node);
        answers.push((s, v["inc"].as_str().map(String::from)));
        if s == 200 && v["inc"].as_str() != Some(first.as_str()) {
            break;
        }
        assert!(Instant::now() < deadline, "never joined again: {answers:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Once it stopped answering as the ended one, it never did again.
    let gone = answers
        .iter()
        .position(|(_, inc)| inc.as_deref() != Some(first.as_str()))
        .unwrap();
    assert!(
        answers[gone..]
            .iter()
            .all(|(s, inc)| inc.as_deref() != Some(first.as_str()) && (*s == 200 || *s == 503)),
        "{answers:?}"
    );
    assert_eq!(
        answers.last().unwrap().1.as_deref(),
        Some(inc_now().as_str())
    );
}
