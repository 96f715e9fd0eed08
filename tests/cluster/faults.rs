//! Faults measured: the owner of a document paused, cut from PostgreSQL by a real network
//! fault, cut from the other nodes but not from PostgreSQL, and PostgreSQL slowed for every
//! node — each under the same load (three writers sending each op to a node chosen at random,
//! giving up on a node after 3 s as a browser would, shunning it for 30 s as nginx would, and
//! retrying the same op elsewhere; a 503 that says "ask again now" is asked again at once
//! on another node, as nginx's `proxy_next_upstream` does). Each prints the longest time no write was acknowledged
//! and the rate against the one before (the README's fault table), and has the history
//! checked: no acknowledged op lost, doubled or forked.
//!
//! The target: writes through the other nodes resume within the membership TTL (3 s here)
//! and a second.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use docsync::history_check::Recorder;
use docsync_actors::storage::postgres::testing::TempPostgres;

use super::{free_port, longest_gap, owner_on, wait_ready, Cluster, Load, Writers, SECRET};
use crate::common::netns::{Link, Net};
use crate::common::TestServer;

/// How long each fault lasts (the fault is what is tested, so this is a fixed time).
const FAULT: Duration = Duration::from_secs(10);
/// The membership TTL of the test clusters (`node_env`).
const TTL: Duration = Duration::from_secs(3);

/// What a fault cost.
struct Cost {
    /// The longest time in the fault without an acknowledged write.
    window: Duration,
    rate_before: f64,
    /// Acks per second in the fault's last four seconds.
    rate_late: f64,
    /// When the owner's membership ended (evicted or expired), from the fault's start.
    ended: Option<Duration>,
    /// When another node owned the document, from the fault's start (None: the owner kept
    /// it): the first request after `ended` claims it. The servers' own part of the window: a client still waiting on the old owner
    /// gives up only after its patience (3 s) and then tries another node.
    handed_over: Option<Duration>,
}

impl Cost {
    fn print(&self, fault: &str) {
        let handed_over = match (self.ended, self.handed_over) {
            (Some(e), Some(t)) => format!(
                "its owner out after {} ms, another node owns the document after {} ms",
                e.as_millis(),
                t.as_millis()
            ),
            (Some(e), None) => format!("its owner out after {} ms, not claimed", e.as_millis()),
            (None, _) => "the owner kept the document".into(),
        };
        eprintln!(
            "fault table | {fault} | no write acknowledged for {} ms | {handed_over} | \
             {:.0} acks/s before, {:.0}/s in the fault's last 4 s ({:.0} %)",
            self.window.as_millis(),
            self.rate_before,
            self.rate_late,
            100.0 * self.rate_late / self.rate_before
        );
    }
}

fn writers() -> Writers {
    Writers {
        patience: Duration::from_secs(3),
        random_node: true,
        shun: Duration::from_secs(30),
        all_at_first: false,
    }
}

/// Writers the proxy sends to the document's owner (`hash $doc`, which lands on the owner
/// as a rule): each stays with its node until that node fails it, then tries the next. No
/// request reaches the owner through another node, so only the nodes' own tries of each
/// other can find it cut off before these clients give up on it.
fn writers_at_the_owner() -> Writers {
    Writers {
        patience: Duration::from_secs(3),
        random_node: false,
        shun: Duration::ZERO,
        all_at_first: true,
    }
}

/// Runs `load` until its rate has settled and returns the rate just before the fault (a
/// count of acks bounds each wait; the rate is over the time it took).
fn settled_rate(load: &Load) -> f64 {
    load.wait_acked(400, Duration::from_secs(60));
    let from = Instant::now();
    load.wait_acked(800, Duration::from_secs(60));
    400.0 / from.elapsed().as_secs_f64()
}

/// Puts the fault on (`begin`) for `FAULT`, takes it off (`end`), and measures — watching
/// meanwhile, on a connection of its own, when `doc` first has another owner.
fn under_fault(
    c: &Cluster,
    doc: &str,
    load: &Load,
    rate_before: f64,
    begin: impl FnOnce(),
    end: impl FnOnce(),
) -> Cost {
    let mut db = c.pg.client();
    let owner_before = owner_on(&mut db, doc);
    let doc = doc.to_string();
    begin();
    let from = Instant::now();
    let watch = std::thread::spawn(move || {
        let (mut ended, mut handed_over) = (None, None);
        while from.elapsed() < FAULT && handed_over.is_none() {
            let owner = owner_on(&mut db, &doc);
            if owner != owner_before {
                ended.get_or_insert(from.elapsed());
            }
            if owner.is_some() && owner != owner_before {
                handed_over = Some(from.elapsed());
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        (ended, handed_over)
    });
    std::thread::sleep(FAULT);
    let (ended, handed_over) = watch.join().unwrap();
    let acks: Vec<Instant> = load.ack_times.lock().unwrap().clone();
    end();
    let window = longest_gap(&acks, from, Some(from + FAULT));
    let late_from = from + FAULT - Duration::from_secs(4);
    let rate_late = acks.iter().filter(|t| **t >= late_from).count() as f64 / 4.0;
    Cost {
        window,
        rate_before,
        rate_late,
        ended,
        handed_over,
    }
}

/// After the fault: writes go on, the history is whole.
fn finish(c: &Cluster, load: Load, history: &Recorder, doc: &str, via: usize) {
    let now = load.acked.load(Ordering::Relaxed);
    load.wait_acked(now + 40, Duration::from_secs(60));
    load.finish();
    let verdict = c.check(history, &[doc], &c.nodes[via]);
    assert!(verdict.valid, "history check: {:#?}", verdict.violations);
}

fn assert_within_ttl(cost: &Cost, fault: &str) {
    assert!(
        cost.window <= TTL + Duration::from_secs(1),
        "{fault}: writes stopped for {} ms, beyond the TTL ({} s) and a second",
        cost.window.as_millis(),
        TTL.as_secs()
    );
}

/// The owner is paused (SIGSTOP) for 10 s under load — what a long GC pause, a frozen VM or
/// a stuck disk looks like. Writes through the other nodes resume within the TTL and a
/// second; the woken node fences itself and joins again.
#[test]
fn an_owner_paused_ten_seconds_stops_writes_no_longer_than_its_ttl() {
    let c = Cluster::start();
    let doc = c.nodes[0].create_doc(&c.token, "Stalled");
    let history = Arc::new(Recorder::default());
    let bases: Vec<String> = c.nodes.iter().map(|n| n.url("")).collect();
    let load = Load::start_shaped(bases, &c.token, &doc, history.clone(), writers());
    let rate_before = settled_rate(&load);
    let owner = c.owner(&doc).expect("an owner while writes land");
    let victim = c.node_index(&owner);
    let pid = c.nodes[victim].pid().to_string();
    let signal = |sig: &str| {
        assert!(std::process::Command::new("kill")
            .args([sig, &pid])
            .status()
            .unwrap()
            .success());
    };
    let mut new_owner = None;
    let cost = under_fault(
        &c,
        &doc,
        &load,
        rate_before,
        || signal("-STOP"),
        || {
            new_owner = c.owner(&doc);
            signal("-CONT");
        },
    );
    cost.print("owner paused (SIGSTOP) 10 s");
    assert!(
        new_owner.as_deref().is_some_and(|o| o != owner),
        "another node took the document over during the pause: {new_owner:?}"
    );
    // The woken node fences itself and joins again.
    wait_ready(&c.nodes[victim]);
    finish(&c, load, &history, &doc, (victim + 1) % 3);
    assert_within_ttl(&cost, "owner paused");
}

/// Three nodes on a PostgreSQL in a network namespace of its own; `node-c`, the victim, in
/// another, linked to the database and to the other nodes by links of its own (see
/// `common::netns`). `node-c` owns the document.
struct Faulted {
    c: Cluster,
    /// Dropped last: the processes inside go first.
    net: Net,
    doc: String,
}

fn faulted_cluster() -> Faulted {
    let net = Net::new();
    let ns = net.pg_ns();
    let pg = Arc::new(
        std::thread::spawn(move || TempPostgres::start_in_netns(&ns))
            .join()
            .unwrap(),
    );
    let node = |name: &str, netns: Option<&str>, host: String, db: String| {
        let addr = format!("{host}:{}", free_port());
        let url = pg.url_at(&db);
        let env = [
            ("DOCSYNC_STORAGE__BACKEND", "postgres"),
            ("DOCSYNC_STORAGE__POSTGRES_URL", url.as_str()),
            ("DOCSYNC_CLUSTER__NODE_ID", name),
            ("DOCSYNC_CLUSTER__INTERNAL_ADDR", addr.as_str()),
            ("DOCSYNC_CLUSTER__SECRET", SECRET),
            ("DOCSYNC_CLUSTER__TTL_SECS", "3"),
            ("DOCSYNC_CLUSTER__RENEW_MS", "500"),
        ];
        let n = TestServer::start_in(netns, &addr, &env);
        wait_ready(&n);
        n
    };
    let victim_ns = net.victim_ns();
    let nodes = vec![
        node("node-a", None, net.root_host(), net.db_from_root()),
        node("node-b", None, net.root_host(), net.db_from_root()),
        node(
            "node-c",
            Some(&victim_ns),
            net.victim_host(),
            net.db_from_victim(),
        ),
    ];
    let token = nodes[0].add_user("alice");
    let c = Cluster { pg, nodes, token };
    let (doc, _) = c.doc_owned_by(2, "Faulted");
    Faulted { c, net, doc }
}

/// Runs the load (`shape`) through all three nodes with the fault on `link` for 10 s,
/// prints its cost, checks the history; returns the cost.
fn network_fault(
    label: &str,
    shape: Writers,
    apply: impl Fn(&Net),
    heal: impl Fn(&Net),
) -> (Cost, Faulted) {
    let f = faulted_cluster();
    let history = Arc::new(Recorder::default());
    // The owner (node-c) first: where writers that all begin at one node begin.
    let bases: Vec<String> = [2, 0, 1].iter().map(|i| f.c.nodes[*i].url("")).collect();
    let load = Load::start_shaped(bases, &f.c.token, &f.doc, history.clone(), shape);
    let rate_before = settled_rate(&load);
    let cost = under_fault(
        &f.c,
        &f.doc,
        &load,
        rate_before,
        || apply(&f.net),
        || heal(&f.net),
    );
    cost.print(label);
    finish(&f.c, load, &history, &f.doc, 0);
    (cost, f)
}

/// The owner cut from PostgreSQL (every packet dropped, both ways): it cannot renew, so it
/// fences itself; its sessions stuck inside a transaction are ended by the database; another
/// node claims the document once the owner's membership expired. Healed, it joins again.
#[test]
fn an_owner_cut_from_the_database_stops_writes_no_longer_than_its_ttl() {
    let (cost, f) = network_fault(
        "owner cut from PostgreSQL 10 s",
        writers(),
        |n| n.cut(Link::VictimToDatabase),
        |n| n.heal(Link::VictimToDatabase),
    );
    assert_ne!(f.c.owner(&f.doc).as_deref(), Some("node-c"));
    wait_ready(&f.c.nodes[2]);
    assert_within_ttl(&cost, "owner cut from the database");
}

/// The owner cut from the other nodes (and from the clients) but not from PostgreSQL: it
/// renews its membership as ever, yet nobody can reach it. Its clients all write to it (the
/// proxy's `hash $doc`), so no request goes to it through another node for the first 3 s
/// (their patience): the others must find it unreachable by trying it themselves, agree on
/// it in the database, and end its membership; it fences itself, the document is claimed
/// elsewhere by the time the clients try another node. Healed, it joins again.
#[test]
fn an_owner_cut_from_the_other_nodes_stops_writes_no_longer_than_its_ttl() {
    let (cost, f) = network_fault(
        "owner cut from the other nodes 10 s (its clients at it)",
        writers_at_the_owner(),
        |n| n.cut(Link::VictimToNodes),
        |n| n.heal(Link::VictimToNodes),
    );
    assert_ne!(f.c.owner(&f.doc).as_deref(), Some("node-c"));
    wait_ready(&f.c.nodes[2]);
    assert_within_ttl(&cost, "owner cut from the other nodes");
}

/// PostgreSQL slowed for every node: everything it sends reaches the nodes 200 ms late
/// (a relay in front of it; this kernel has no `netem`). Nobody is fenced for it, the owner
/// stays, nothing is lost; writes resume at their rate once it is fast again. What it costs
/// while it lasts is printed: an op waits for the database many times over, and each wait
/// is 200 ms longer, so a write outlasts a client's patience.
#[test]
fn a_slow_database_slows_writes_and_fences_nobody() {
    let pg = Arc::new(std::thread::spawn(TempPostgres::start).join().unwrap());
    let relay = DelayRelay::start(pg.socket_path());
    let url = relay.url();
    let nodes: Vec<TestServer> = ["node-a", "node-b", "node-c"]
        .iter()
        .map(|n| super::start_node(&pg, n, &[("DOCSYNC_STORAGE__POSTGRES_URL", &url)]))
        .collect();
    let token = nodes[0].add_user("alice");
    let c = Cluster { pg, nodes, token };
    let doc = c.nodes[0].create_doc(&c.token, "Slow database");
    let history = Arc::new(Recorder::default());
    let bases: Vec<String> = c.nodes.iter().map(|n| n.url("")).collect();
    let load = Load::start_shaped(bases, &c.token, &doc, history.clone(), writers());
    let (answers, acks) = (relay.answers(), load.acked.load(Ordering::Relaxed));
    let rate_before = settled_rate(&load);
    // How many times the nodes wait for the database per acknowledged op (all nodes, all
    // work: forwarding lookups, the write, membership): what a slower database multiplies.
    let per_op =
        (relay.answers() - answers) as f64 / (load.acked.load(Ordering::Relaxed) - acks) as f64;
    let owner = c.owner(&doc);
    let cost = under_fault(
        &c,
        &doc,
        &load,
        rate_before,
        || relay.delay_ms.store(200, Ordering::SeqCst),
        || relay.delay_ms.store(0, Ordering::SeqCst),
    );
    cost.print("PostgreSQL answering 200 ms late, 10 s");
    eprintln!("fault table | (the database answered {per_op:.0} times per acknowledged op)");
    assert_eq!(c.owner(&doc), owner, "the owner kept the document");
    assert_eq!(cost.ended, None, "the owner stayed in the cluster");
    assert_eq!(cost.handed_over, None, "nobody took the document over");
    finish(&c, load, &history, &doc, 0);
}

/// A TCP relay in front of PostgreSQL's socket that hands on what the database sends
/// `delay_ms` late, in order (what the client sends passes at once).
struct DelayRelay {
    port: u16,
    delay_ms: Arc<std::sync::atomic::AtomicU64>,
    /// How many reads from the database it has handed on (about one per round trip).
    answered: Arc<std::sync::atomic::AtomicU64>,
}

impl DelayRelay {
    fn start(target: std::path::PathBuf) -> DelayRelay {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let delay_ms = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let delay = delay_ms.clone();
        let answered = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counted = answered.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut client) = conn else { break };
                // Each answer at once (Nagle would hold small ones for the client's ACK).
                let _ = client.set_nodelay(true);
                let Ok(mut server) = std::os::unix::net::UnixStream::connect(&target) else {
                    continue;
                };
                let (mut c2, mut s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut c2, &mut s2);
                });
                // Database → client: each chunk stamped with when it may go, sent in order.
                let (tx, rx) = std::sync::mpsc::channel::<(Instant, Vec<u8>)>();
                let (delay, answers) = (delay.clone(), counted.clone());
                std::thread::spawn(move || {
                    let mut buf = [0u8; 16 * 1024];
                    while let Ok(n) = server.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        answers.fetch_add(1, Ordering::Relaxed);
                        let due =
                            Instant::now() + Duration::from_millis(delay.load(Ordering::SeqCst));
                        if tx.send((due, buf[..n].to_vec())).is_err() {
                            break;
                        }
                    }
                });
                std::thread::spawn(move || {
                    for (due, bytes) in rx {
                        std::thread::sleep(due.saturating_duration_since(Instant::now()));
                        if client.write_all(&bytes).is_err() {
                            break;
                        }
                    }
                });
            }
        });
        DelayRelay {
            port,
            delay_ms,
            answered,
        }
    }

    fn answers(&self) -> u64 {
        self.answered.load(Ordering::Relaxed)
    }

    fn url(&self) -> String {
        format!(
            "host=127.0.0.1 port={} user=docsync dbname=postgres",
            self.port
        )
    }
}
