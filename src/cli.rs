//! Command line: `serve`, and the admin commands that work on the database directly.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use docsync_actors::storage::{accounts, unix_ms, Storage};

use crate::config::Settings;
use crate::server;

#[derive(Parser, Debug)]
#[command(
    name = "docsync",
    version,
    about = "Live collaborative outliner notes server"
)]
pub struct Cli {
    /// Configuration file (default: config/local.toml if it exists).
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the server.
    Serve {
        /// On an empty database, create demo users and a sample document and print tokens.
        #[arg(long)]
        demo: bool,
    },
    /// Manage users.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
}

#[derive(Subcommand, Debug)]
pub enum UserCommand {
    /// Create a user and print an API token for it.
    Add {
        name: String,
        /// Name shown to others (default: NAME).
        #[arg(long)]
        display_name: Option<String>,
        #[arg(long)]
        admin: bool,
    },
    /// Print a new API token for an existing user.
    Token {
        name: String,
        #[arg(long, default_value = "cli")]
        label: String,
    },
}

fn valid_username(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

pub fn run(cli: Cli) -> anyhow::Result<()> {
    let settings = Settings::load(cli.config.as_deref())?;
    match cli.command {
        Command::Serve { demo } => {
            crate::telemetry::init(&settings.logging);
            server::serve(settings, demo)
        }
        Command::User { command } => {
            let (storage, writer) = Storage::open(&server::storage_config(&settings))?;
            let out = user_command(&storage, command);
            drop(storage);
            let _ = writer.join();
            out
        }
    }
}

fn user_command(storage: &Storage, command: UserCommand) -> anyhow::Result<()> {
    let now = unix_ms();
    match command {
        UserCommand::Add {
            name,
            display_name,
            admin,
        } => {
            if !valid_username(&name) {
                anyhow::bail!("user name: 1–64 characters of letters, digits, '_', '-', '.'");
            }
            let display = display_name.unwrap_or_else(|| name.clone());
            let (user, token) = storage.writer.call_blocking(move |c| {
                let u = accounts::create_user(c, &name, &display, admin, now)?;
                let t = accounts::create_token(c, &u.id, "cli", now)?;
                Ok((u, t))
            })?;
            println!("created user {} ({})", user.name, user.id);
            println!("token: {token}");
        }
        UserCommand::Token { name, label } => {
            let token = storage.writer.call_blocking(move |c| {
                let u = accounts::user_by_name(c, &name)?.ok_or_else(|| {
                    docsync_actors::storage::StorageError::NotFound(format!("user {name}"))
                })?;
                accounts::create_token(c, &u.id, &label, now)
            })?;
            println!("token: {token}");
        }
    }
    Ok(())
}
