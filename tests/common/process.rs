//! Process control for shutdown tests: SIGTERM and waiting for the exit.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use super::TestServer;

impl TestServer {
    /// Sends SIGTERM (a graceful stop) without waiting.
    pub fn sigterm(&self) {
        let pid = self.pid().to_string();
        let ok = std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("run kill")
            .success();
        assert!(ok, "kill -TERM {pid} failed");
    }

    /// Waits up to `limit` for the server process to exit; returns its exit code.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<i32> {
        let deadline = Instant::now() + limit;
        let child = self.child.as_mut()?;
        loop {
            if let Some(status) = child.try_wait().expect("try_wait") {
                self.child = None;
                return Some(status.code().unwrap_or(-1));
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Starts the server again on the same database and port after it exited.
    pub fn start_again(&mut self) {
        self.restart_after_kill();
    }
}
