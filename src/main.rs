//! `docsync` binary: see `cli.rs` for the commands.

use clap::Parser;

fn main() {
    let cli = docsync::cli::Cli::parse();
    if matches!(cli.command, docsync::cli::Command::Serve { .. }) {
        // A long-running server gives memory freed after bursts back (see `memory`).
        docsync::memory::start_trimming();
    }
    if let Err(e) = docsync::cli::run(cli) {
        eprintln!("docsync: {e:#}");
        std::process::exit(2);
    }
}
