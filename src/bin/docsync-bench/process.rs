//! What Linux says about a process: the server we started (its memory and CPU time are its
//! own, so the load generator's cost never shows up in them) or the bench itself.

/// The server's resident set size in KiB (`VmRSS` of `/proc/<pid>/status`).
pub fn rss_kib(pid: Option<u32>) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{}/status", pid?)).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// CPU seconds (user + system, all threads) the process `pid` has used so far, from
/// `/proc/<pid>/stat`; `None` for a process that is not ours or not there.
pub fn cpu_secs(pid: Option<u32>) -> Option<f64> {
    cpu_secs_of(&format!("/proc/{}/stat", pid?))
}

/// CPU seconds the bench itself has used so far (all its threads).
pub fn own_cpu_secs() -> Option<f64> {
    cpu_secs_of("/proc/self/stat")
}

fn cpu_secs_of(stat_path: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(stat_path).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count after the last ')'.
    // There, field 3 (state) is index 0, so utime (14) and stime (15) are 11 and 12.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    // SAFETY: sysconf only reads a configuration value.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (ticks > 0).then(|| (utime + stime) as f64 / ticks as f64)
}

/// CPU time of a process over a measured window.
pub struct CpuMeter {
    pid: Option<u32>,
    start: Option<f64>,
}

impl CpuMeter {
    pub fn start(pid: Option<u32>) -> CpuMeter {
        CpuMeter {
            pid,
            start: cpu_secs(pid),
        }
    }

    /// CPU seconds used since `start`.
    pub fn elapsed(&self) -> Option<f64> {
        Some(cpu_secs(self.pid)? - self.start?)
    }
}
