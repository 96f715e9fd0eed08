//! A PostgreSQL of the tests' own: `initdb` into a temporary folder and `pg_ctl start` on a
//! free port, listening on a Unix socket in that folder only, with `fsync=on` (a crash test
//! against a database that does not sync would prove nothing). Debian's `postgresql-15`
//! provides the binaries (`.ci/run` installs it); as root, they run as the `postgres` user.

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct TempPostgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    opts: String,
    /// The network namespace the server runs in (`start_in_netns`), if any.
    netns: Option<String>,
    /// Stopped by the test (nothing to stop when dropped).
    stopped: std::sync::atomic::AtomicBool,
}

fn bin_dir() -> PathBuf {
    for v in ["15", "16", "17"] {
        let p = PathBuf::from(format!("/usr/lib/postgresql/{v}/bin"));
        if p.join("initdb").exists() {
            return p;
        }
    }
    panic!("PostgreSQL binaries not found under /usr/lib/postgresql/*/bin: install Debian's postgresql-15 (bash .ci/run does)");
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

fn run(bin: &Path, tool: &str, args: &[&str]) {
    run_in(None, bin, tool, args)
}

/// `run` inside the network namespace `netns` (what it starts stays there).
fn run_in(netns: Option<&str>, bin: &Path, tool: &str, args: &[&str]) {
    let exe = bin.join(tool);
    let mut cmd = match netns {
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns]);
            c
        }
        None if is_root() => Command::new("runuser"),
        None => Command::new(&exe),
    };
    if netns.is_some() {
        cmd.args(["runuser", "-u", "postgres", "--"]).arg(&exe);
    } else if is_root() {
        cmd.args(["-u", "postgres", "--"]).arg(&exe);
    }
    let out = cmd
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running {tool}: {e}"));
    assert!(
        out.status.success(),
        "{tool} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A folder the server's user owns.
fn server_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    if is_root() {
        let ok = Command::new("chown")
            .args(["postgres:postgres"])
            .arg(dir.path())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        assert!(ok, "chown of the test database folder to postgres");
    }
    dir
}

impl TempPostgres {
    pub fn start() -> TempPostgres {
        TempPostgres::start_with("")
    }

    /// A primary that commits only once its synchronous standby has the commit too
    /// (`synchronous_standby_names = '*'`): start `standby_of` it before writing.
    pub fn start_primary() -> TempPostgres {
        TempPostgres::start_with(
            " -c wal_level=replica -c max_wal_senders=4 -c synchronous_standby_names='*'",
        )
    }

    /// A streaming standby of `primary` (a base backup of it), on a port of its own.
    pub fn standby_of(primary: &TempPostgres) -> TempPostgres {
        let bin = bin_dir();
        let dir = server_dir();
        let data = dir.path().join("data");
        let (primary_dir, primary_port) = (
            primary.dir.path().display().to_string(),
            primary.port.to_string(),
        );
        run(
            &bin,
            "pg_basebackup",
            &[
                "-D",
                data.to_str().expect("utf-8 path"),
                "-h",
                &primary_dir,
                "-p",
                &primary_port,
                "-U",
                "docsync",
                "-R",
                "-X",
                "stream",
            ],
        );
        let port = free_port();
        let opts = format!(
            "-k {} -p {port} -c fsync=on -c synchronous_commit=on -c listen_addresses='' -c hot_standby=on",
            dir.path().display()
        );
        let standby = TempPostgres {
            dir,
            bin,
            port,
            opts,
            netns: None,
            stopped: Default::default(),
        };
        standby.start_again();
        standby
    }

    /// Makes a standby the primary (`pg_ctl promote`, waiting until it takes writes).
    pub fn promote(&self) {
        let data = self.dir.path().join("data");
        run(
            &self.bin,
            "pg_ctl",
            &["-D", data.to_str().expect("utf-8 path"), "-w", "promote"],
        );
    }

    /// The postmaster's process ID (from `postmaster.pid`).
    pub fn postmaster_pid(&self) -> Option<u32> {
        let pid = std::fs::read_to_string(self.dir.path().join("data/postmaster.pid")).ok()?;
        pid.lines().next()?.trim().parse().ok()
    }

    /// The Unix socket folder and port, for a multi-host connection string.
    pub fn host_port(&self) -> (String, u16) {
        (self.dir.path().display().to_string(), self.port)
    }

    /// A server inside the network namespace `netns` (root only), reachable over TCP on
    /// every address of that namespace (trusting 10.0.0.0/8) besides its Unix socket.
    pub fn start_in_netns(netns: &str) -> TempPostgres {
        TempPostgres::start_inner(Some(netns), "")
    }

    /// A connection string over TCP to `host` (an address of its network namespace).
    pub fn url_at(&self, host: &str) -> String {
        format!(
            "host={host} port={} user=docsync dbname=postgres",
            self.port
        )
    }

    fn start_with(extra: &str) -> TempPostgres {
        TempPostgres::start_inner(None, extra)
    }

    fn start_inner(netns: Option<&str>, extra: &str) -> TempPostgres {
        let bin = bin_dir();
        let dir = server_dir();
        let data = dir.path().join("data");
        let data_s = data.to_str().expect("utf-8 path");
        run(
            &bin,
            "initdb",
            &[
                "-D",
                data_s,
                "-U",
                "docsync",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        let port = free_port();
        let listen = if netns.is_some() {
            // Its own namespace's addresses only; the test's clients may come over TCP.
            let hba = data.join("pg_hba.conf");
            let mut rules = std::fs::read_to_string(&hba).expect("pg_hba.conf");
            rules.push_str("host all all 10.0.0.0/8 trust\n");
            std::fs::write(&hba, rules).expect("pg_hba.conf");
            "*"
        } else {
            ""
        };
        let opts = format!(
            "-k {} -p {port} -c fsync=on -c synchronous_commit=on -c listen_addresses='{listen}'{extra}",
            dir.path().display()
        );
        let pg = TempPostgres {
            dir,
            bin,
            port,
            opts,
            netns: netns.map(str::to_string),
            stopped: Default::default(),
        };
        pg.start_again();
        pg
    }

    /// Stops the server at once (`-m immediate`: as a crash would).
    pub fn stop(&self) {
        self.stopped
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let data = self.dir.path().join("data");
        let d = data.to_str().expect("utf-8 path");
        run(
            &self.bin,
            "pg_ctl",
            &["-D", d, "-m", "immediate", "-w", "stop"],
        );
    }

    /// Starts the (stopped) server again on the same data and port.
    pub fn start_again(&self) {
        self.stopped
            .store(false, std::sync::atomic::Ordering::SeqCst);
        let data = self.dir.path().join("data");
        let log = self.dir.path().join("log");
        let d = data.to_str().expect("utf-8 path");
        let l = log.to_str().expect("utf-8 path");
        run_in(
            self.netns.as_deref(),
            &self.bin,
            "pg_ctl",
            &["-D", d, "-o", &self.opts, "-l", l, "-w", "start"],
        );
    }

    /// A connection string for this instance's `postgres` database.
    pub fn url(&self) -> String {
        format!(
            "host={} port={} user=docsync dbname=postgres",
            self.dir.path().display(),
            self.port
        )
    }

    /// The server's Unix socket (for a test's own relay in front of it).
    pub fn socket_path(&self) -> std::path::PathBuf {
        self.dir.path().join(format!(".s.PGSQL.{}", self.port))
    }

    pub fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.url(), postgres::NoTls)
            .expect("connect to the test PostgreSQL")
    }
}

impl Drop for TempPostgres {
    fn drop(&mut self) {
        // A test may have stopped it already.
        if !self.stopped.load(std::sync::atomic::Ordering::SeqCst) {
            let _ = std::panic::catch_unwind(|| self.stop());
        }
    }
}

/// Runs `f` on PostgreSQL in a transaction of its own (committed when `f` succeeds): the
/// same facade calls as on SQLite, so both backends answer through the same rules.
pub fn on_pg<T>(
    c: &mut impl postgres::GenericClient,
    f: impl FnOnce(&mut crate::storage::Db) -> crate::storage::Result<T>,
) -> crate::storage::Result<T> {
    let mut tx = c.transaction()?;
    let out = f(&mut crate::storage::Db::Postgres(&mut tx, None));
    if out.is_ok() {
        tx.commit()?;
    }
    out
}
