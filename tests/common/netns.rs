//! Real network faults for the cluster tests: Linux network namespaces joined by veth pairs
//! (`ip netns`, `ip link`); a cut is the `blackhole` queueing discipline on both ends of a
//! link (every packet dropped, no reset, no error: a silent partition). The kernels here have
//! no `netem`, so delays are made by a relay in the test instead. The test creates everything
//! itself and removes it when dropped. Needs root (the test command runs as root in CI and
//! here).
//!
//! ```text
//!            veth a (10.S.0.0/30)              veth b (10.S.1.0/30)
//!   root ns ─────────────────────── pg ns ─────────────────────── victim ns
//!      │         PostgreSQL listens here on 10.S.0.2 and 10.S.1.2       │
//!      └──────────────────────── veth c (10.S.2.0/30) ─────────────────┘
//!   nodes in the root ns bind 10.S.2.1:port; the victim node binds 10.S.2.2:port
//! ```
//!
//! So the victim can be cut from PostgreSQL (link b) or from the other nodes (link c) alone.

use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

static NEXT: AtomicU32 = AtomicU32::new(0);

pub struct Net {
    tag: String,
    subnet: u32,
}

/// Which link a fault is put on.
#[derive(Clone, Copy, Debug)]
pub enum Link {
    /// The victim ↔ PostgreSQL.
    VictimToDatabase,
    /// The victim ↔ the other nodes (and the test's own clients).
    VictimToNodes,
}

fn ip(args: &[&str]) {
    let out = Command::new("ip")
        .args(args)
        .output()
        .expect("run ip (iproute2)");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Net {
    pub fn new() -> Net {
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        // Unique among tests running side by side and among concurrent test processes.
        let tag = format!("ds{}{n}", std::process::id() % 10_000);
        let subnet = 100 + (std::process::id() % 100 + n * 7) % 150;
        let net = Net { tag, subnet };
        let (pg, v) = (net.pg_ns(), net.victim_ns());
        for ns in [&pg, &v] {
            ip(&["netns", "add", ns]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        let s = net.subnet;
        // (this end's namespace or None for the root, name, address) for both ends.
        let links = [
            (
                (None, "a0", format!("10.{s}.0.1/30")),
                (Some(&pg), "a1", format!("10.{s}.0.2/30")),
            ),
            (
                (Some(&v), "b0", format!("10.{s}.1.1/30")),
                (Some(&pg), "b1", format!("10.{s}.1.2/30")),
            ),
            (
                (None, "c0", format!("10.{s}.2.1/30")),
                (Some(&v), "c1", format!("10.{s}.2.2/30")),
            ),
        ];
        for ((ns0, n0, a0), (ns1, n1, a1)) in &links {
            let (n0, n1) = (net.dev(n0), net.dev(n1));
            ip(&["link", "add", &n0, "type", "veth", "peer", "name", &n1]);
            for (ns, dev, addr) in [(ns0, &n0, a0), (ns1, &n1, a1)] {
                if let Some(ns) = ns {
                    ip(&["link", "set", dev, "netns", ns]);
                    ip(&["-n", ns, "addr", "add", addr, "dev", dev]);
                    ip(&["-n", ns, "link", "set", dev, "up"]);
                } else {
                    ip(&["addr", "add", addr, "dev", dev]);
                    ip(&["link", "set", dev, "up"]);
                }
            }
        }
        net
    }

    fn dev(&self, end: &str) -> String {
        format!("{}{end}", self.tag)
    }

    pub fn pg_ns(&self) -> String {
        format!("{}pg", self.tag)
    }

    pub fn victim_ns(&self) -> String {
        format!("{}v", self.tag)
    }

    /// Where the root namespace's nodes reach PostgreSQL.
    pub fn db_from_root(&self) -> String {
        format!("10.{}.0.2", self.subnet)
    }

    /// Where the victim reaches PostgreSQL.
    pub fn db_from_victim(&self) -> String {
        format!("10.{}.1.2", self.subnet)
    }

    /// The address root-namespace nodes bind (reachable from the victim too).
    pub fn root_host(&self) -> String {
        format!("10.{}.2.1", self.subnet)
    }

    /// The address the victim binds.
    pub fn victim_host(&self) -> String {
        format!("10.{}.2.2", self.subnet)
    }

    /// The two ends of `link`: (namespace or None for the root, device).
    fn ends(&self, link: Link) -> [(Option<String>, String); 2] {
        match link {
            Link::VictimToDatabase => [
                (Some(self.victim_ns()), self.dev("b0")),
                (Some(self.pg_ns()), self.dev("b1")),
            ],
            Link::VictimToNodes => [
                (None, self.dev("c0")),
                (Some(self.victim_ns()), self.dev("c1")),
            ],
        }
    }

    /// Drops everything on `link`, both ways (a silent partition: no reset, no error).
    pub fn cut(&self, link: Link) {
        for (ns, dev) in self.ends(link) {
            let mut cmd: Vec<&str> = Vec::new();
            if let Some(ns) = &ns {
                cmd.extend(["-n", ns.as_str()]);
            }
            cmd.extend(["qdisc", "replace", "dev", dev.as_str(), "root", "blackhole"]);
            let out = Command::new("tc").args(&cmd).output().expect("run tc");
            assert!(
                out.status.success(),
                "tc {}: {}",
                cmd.join(" "),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }

    /// Takes every fault off `link`.
    pub fn heal(&self, link: Link) {
        for (ns, dev) in self.ends(link) {
            let mut cmd: Vec<&str> = Vec::new();
            if let Some(ns) = &ns {
                cmd.extend(["-n", ns.as_str()]);
            }
            cmd.extend(["qdisc", "del", "dev", dev.as_str(), "root"]);
            // Nothing to take off is fine.
            let _ = Command::new("tc").args(&cmd).output();
        }
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        // Deleting a namespace deletes the veth ends inside it and so their peers.
        for ns in [self.victim_ns(), self.pg_ns()] {
            let _ = Command::new("ip").args(["netns", "del", &ns]).output();
        }
    }
}
