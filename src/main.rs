//! `docsync` binary: see `cli.rs` for the commands.

use clap::Parser;

fn main() {
    let cli = docsync::cli::Cli::parse();
    if let Err(e) = docsync::cli::run(cli) {
        eprintln!("docsync: {e:#}");
        std::process::exit(2);
    }
}
