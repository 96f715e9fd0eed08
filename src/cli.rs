//! Command line: `serve`, and the admin commands that work on the database directly.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Parser, Subcommand};

use docsync_actors::clock::unix_ms;
use docsync_actors::storage::audit::{self, actions};
use docsync_actors::storage::sqlite::backup;
use docsync_actors::storage::{accounts, invites, people, sharing, Storage};
use serde_json::json;

use crate::auth::password;

use crate::config::{BackendKind, Settings};
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
    /// Run the server. Every setting can also come from the configuration file (--config)
    /// or a `DOCSYNC_SECTION__KEY` environment variable, e.g. `DOCSYNC_SERVER__BIND`
    /// (README "Configuration"); the flags below override both.
    Serve {
        /// On an empty database, create demo users and a sample document and print tokens.
        #[arg(long)]
        demo: bool,
        /// Address and port to listen on, e.g. 0.0.0.0:8080; overrides `server.bind`.
        #[arg(long, value_name = "ADDR:PORT")]
        bind: Option<String>,
        /// The SQLite database file (created if missing); overrides `storage.path`.
        #[arg(long, value_name = "FILE")]
        data: Option<PathBuf>,
        /// Serve the web app from this folder, re-read on every request (for developing
        /// static/ without rebuilding); overrides `server.static_dir`.
        #[arg(long, value_name = "DIR")]
        static_dir: Option<PathBuf>,
    },
    /// Create the database (SQLite: the file at `storage.path` and its folder; PostgreSQL:
    /// the schema) and apply migrations. The only command besides `serve` that creates one:
    /// the others refuse a database that is not there, so a typo in a path never starts an
    /// empty one.
    Init,
    /// Manage users.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// Manage teams.
    Team {
        #[command(subcommand)]
        command: TeamCommand,
    },
    /// Make an invitation link: whoever opens it chooses a user name and password and is in.
    /// Prints the link's path; open it on the server's address.
    Invite {
        /// The new accounts are admins.
        #[arg(long)]
        admin: bool,
        /// How long the link works (1 to 720 hours).
        #[arg(long, default_value_t = 72)]
        hours: i64,
        /// How many people may use it (1 to 1000).
        #[arg(long, default_value_t = 1)]
        uses: i64,
    },
    /// Copy the database to FILE with SQLite's online backup; safe while the server runs.
    Backup { file: PathBuf },
    /// Write everything USER can read into DIR: each document as Markdown and OPML, each
    /// bullet shared with them, and manifest.json (folders, documents, who has access).
    /// Safe while the server runs; DIR must be empty or new.
    Export {
        #[arg(long, value_name = "DIR")]
        to: PathBuf,
        /// Whose workspace (a user name): what they can read is what is written.
        #[arg(long, value_name = "USER")]
        user: String,
    },
    /// Move this node's SQLite database into an empty PostgreSQL database for cluster mode:
    /// every row, in one transaction (all or nothing). Refuses while a server has the
    /// SQLite database open, and refuses a PostgreSQL database that already has data.
    ImportToPostgres {
        /// The PostgreSQL database, e.g. "host=db.internal user=docsync dbname=docsync".
        #[arg(long, value_name = "CONNECTION")]
        postgres: String,
    },
    /// Run one compaction pass now (log floor, tombstone purge, old idempotency results).
    /// With --server, asks a running server to do it (admin token); without, works on the
    /// database directly and refuses while a server has it open.
    Compact {
        /// Required: compaction is not something to trigger by accident.
        #[arg(long)]
        now: bool,
        /// URL of a running server, e.g. http://127.0.0.1:8080
        #[arg(long, requires = "token")]
        server: Option<String>,
        /// An admin user's API token (with --server).
        #[arg(long)]
        token: Option<String>,
    },
}

#[derive(Subcommand, Debug)]
pub enum TeamCommand {
    /// Create a team owned by a user.
    Add {
        name: String,
        #[arg(long)]
        owner: String,
    },
    /// Set a team's members (user names); the owner always stays a member.
    Members { team: String, users: Vec<String> },
    /// List teams with their members.
    List,
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
        /// Read a password (for browser login) from the first line of standard input.
        #[arg(long)]
        password_stdin: bool,
    },
    /// Set a user's password from standard input; ends their login sessions.
    Passwd { name: String },
    /// Print a new API token for an existing user.
    Token {
        name: String,
        #[arg(long, default_value = "cli")]
        label: String,
    },
    /// List every user: name, display name, admin, active, last sign-in.
    List,
    /// Deactivate a user: every session and token of theirs ends now; their documents stay.
    Deactivate { name: String },
    /// Let a deactivated user sign in again (their old tokens stay deleted).
    Reactivate { name: String },
    /// Remove a user; their documents, folders and teams go to --transfer-to.
    Remove {
        name: String,
        #[arg(long, value_name = "USER")]
        transfer_to: String,
    },
}

pub fn run(cli: Cli) -> anyhow::Result<()> {
    let settings = Settings::load(cli.config.as_deref())?;
    match cli.command {
        Command::Serve {
            demo,
            bind,
            data,
            static_dir,
        } => {
            let mut settings = settings;
            if let Some(bind) = bind {
                settings.server.bind = bind;
            }
            if let Some(file) = data {
                settings.storage.path = file;
            }
            if let Some(dir) = static_dir {
                settings.server.static_dir = dir;
            }
            // The flags are settings too: checked the same way (a bad one names its key).
            settings.validate()?;
            crate::telemetry::init(&settings.logging);
            server::serve(settings, demo)
        }
        Command::Init => init(&settings),
        Command::User { command } => {
            existing_database(&settings, cli.config.as_deref())?;
            with_storage(&settings, |s| user_command(s, command))
        }
        Command::Team { command } => {
            existing_database(&settings, cli.config.as_deref())?;
            with_storage(&settings, |s| team_command(s, command))
        }
        Command::Invite { admin, hours, uses } => {
            existing_database(&settings, cli.config.as_deref())?;
            with_storage(&settings, |s| invite(s, admin, hours, uses))
        }
        Command::Backup { file } => {
            existing_database(&settings, cli.config.as_deref())?;
            backup(&settings, &file)
        }
        Command::Export { to, user } => {
            existing_database(&settings, cli.config.as_deref())?;
            with_storage(&settings, |s| export(s, &user, &to))
        }
        Command::ImportToPostgres { postgres } => {
            existing_database(&settings, cli.config.as_deref())?;
            import_to_postgres(&settings, &postgres)
        }
        Command::Compact { now, server, token } => {
            if !now {
                anyhow::bail!("add --now to run a compaction pass");
            }
            match (server, token) {
                (Some(url), Some(token)) => compact_remote(&url, &token),
                _ => {
                    existing_database(&settings, cli.config.as_deref())?;
                    server::compact_offline(settings)
                }
            }
        }
    }
}

/// Refuses to go on when the SQLite database the settings name does not exist: an admin
/// command run from another folder, or with another configuration, must not create an empty
/// database and report success into it. (PostgreSQL: the connection names the database, and
/// an empty one has no users to act on; its migrations run as on every start.)
fn existing_database(settings: &Settings, config: Option<&std::path::Path>) -> anyhow::Result<()> {
    if settings.storage.backend != BackendKind::Sqlite || settings.storage.path.exists() {
        return Ok(());
    }
    let from = match config {
        Some(file) => format!("storage.path in {}", file.display()),
        None => "storage.path (config/local.toml if it exists, else the default)".into(),
    };
    anyhow::bail!(
        "no database at {} ({from}). Name the server's with --config FILE or \
         DOCSYNC_STORAGE__PATH, or create a new one with `docsync init`.",
        settings.storage.path.display()
    )
}

/// `docsync init`: the database created and migrated (nothing else written); says whether
/// it was there already.
fn init(settings: &Settings) -> anyhow::Result<()> {
    let existed = settings.storage.backend == BackendKind::Sqlite && settings.storage.path.exists();
    with_storage(settings, |_| Ok(()))?;
    match settings.storage.backend {
        BackendKind::Sqlite if existed => println!(
            "database {} was there already (migrations applied)",
            settings.storage.path.display()
        ),
        BackendKind::Sqlite => println!("created database {}", settings.storage.path.display()),
        BackendKind::Postgres => println!("PostgreSQL database ready (migrations applied)"),
    }
    Ok(())
}

/// `docsync backup FILE`: the storage layer's online backup (safe while the server runs).
fn backup(settings: &Settings, file: &std::path::Path) -> anyhow::Result<()> {
    let size = backup::online_backup(&settings.storage.path, file)?;
    println!(
        "backup written to {} ({size} bytes, integrity ok)",
        file.display()
    );
    Ok(())
}

/// `docsync import-to-postgres --postgres CONNECTION`: a single node's SQLite database into
/// an empty PostgreSQL one (migrated first), reporting rows per table.
fn import_to_postgres(settings: &Settings, url: &str) -> anyhow::Result<()> {
    use docsync_actors::storage::cluster::import;
    use docsync_actors::storage::postgres::{check_settings, migrate};
    let _lock = server::lock_database(settings)?;
    let sqlite = rusqlite::Connection::open_with_flags(
        &settings.storage.path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )?;
    let mut pg = postgres::Client::connect(url, postgres::NoTls)?;
    check_settings(&mut pg)?;
    migrate::apply(&mut pg)?;
    let summary = import::import(&sqlite, &mut pg)?;
    println!("{}", serde_json::to_string(&summary)?);
    Ok(())
}

/// `docsync export`: the files into `dir` as they come (one document in memory at a time).
fn export(storage: &Storage, name: &str, dir: &std::path::Path) -> anyhow::Result<()> {
    if dir.exists() && std::fs::read_dir(dir)?.next().is_some() {
        anyhow::bail!(
            "{} is not empty; export into a new or empty folder",
            dir.display()
        );
    }
    let who = name.to_string();
    let user = storage
        .read_blocking(move |c| accounts::user_by_name(c, &who))?
        .with_context(|| format!("no user named {name}"))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let exporter = crate::workspace::export::Exporter {
        storage,
        now: unix_ms(),
    };
    let counts = rt.block_on(exporter.run(&user, |f| {
        let path = dir.join(&f.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, f.bytes)
    }))?;
    println!(
        "exported {} documents and {} shared bullets ({} bullets, {} files) to {}",
        counts.documents,
        counts.shared_bullets,
        counts.bullets,
        counts.files,
        dir.display()
    );
    Ok(())
}

fn compact_remote(url: &str, token: &str) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let resp = reqwest::Client::new()
            .post(format!(
                "{}/api/v1/admin/compact",
                url.trim_end_matches('/')
            ))
            .bearer_auth(token)
            .send()
            .await?;
        let status = resp.status();
        let text = resp.text().await?;
        if !status.is_success() {
            anyhow::bail!("server answered {status}: {text}");
        }
        println!("{text}");
        Ok(())
    })
}

fn with_storage(
    settings: &Settings,
    f: impl FnOnce(&Storage) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let (storage, writer) = Storage::open(&server::storage_config(settings, None))?;
    let out = f(&storage);
    drop(storage);
    let _ = writer.join();
    out
}

fn read_password() -> anyhow::Result<String> {
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    let pw = line.trim_end_matches(['\r', '\n']).to_string();
    password::check_strength(&pw).map_err(|e| anyhow::anyhow!(e))?;
    Ok(pw)
}

/// Who the audit log names for what the CLI does (someone with a shell on the server).
const CLI_ACTOR: &str = "cli";

fn cli_event(action: &'static str, target: String, detail: serde_json::Value) -> audit::AuditEvent {
    audit::AuditEvent {
        actor_id: None,
        actor_name: Some(CLI_ACTOR.into()),
        action,
        target,
        ip: String::new(),
        detail,
    }
}

/// Unix ms as an ISO 8601 time in UTC, to the minute ("2026-12-06T08:30Z").
fn iso_time(ms: i64) -> String {
    let (days, rest) = (
        ms.div_euclid(86_400_000),
        ms.rem_euclid(86_400_000) / 60_000,
    );
    // Days since 1970-01-01 to a civil date (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}Z",
        rest / 60,
        rest % 60
    )
}

fn invite(storage: &Storage, admin: bool, hours: i64, uses: i64) -> anyhow::Result<()> {
    if !(1..=720).contains(&hours) {
        anyhow::bail!("--hours: from 1 to 720");
    }
    if !(1..=1000).contains(&uses) {
        anyhow::bail!("--uses: from 1 to 1000");
    }
    let now = unix_ms();
    let (invite, secret) = storage.write_blocking(move |c| {
        let kind = invites::InviteKind::Join { admin };
        let made = invites::create(c, kind, CLI_ACTOR, now + hours * 3_600_000, uses, now)?;
        let detail = json!({"kind": "join", "role": made.0.role, "maxUses": uses});
        let target = format!("invite:{}", made.0.invite_id);
        audit::record(c, now, &cli_event(actions::INVITE_CREATED, target, detail))?;
        Ok(made)
    })?;
    println!(
        "invitation {} ({} use(s), until {})",
        invite.invite_id,
        uses,
        iso_time(invite.expires_at)
    );
    println!("link: /invite/{secret}");
    println!("open it on the server's address, e.g. https://docs.example.com/invite/{secret}");
    Ok(())
}

fn user_id(storage: &Storage, name: &str) -> anyhow::Result<String> {
    let n = name.to_string();
    storage
        .read_blocking(|c| accounts::user_by_name(c, &n))?
        .map(|u| u.id)
        .ok_or_else(|| anyhow::anyhow!("no such user: {name}"))
}

fn team_command(storage: &Storage, command: TeamCommand) -> anyhow::Result<()> {
    let now = unix_ms();
    match command {
        TeamCommand::Add { name, owner } => {
            let owner = user_id(storage, &owner)?;
            let team =
                storage.write_blocking(move |c| sharing::create_team(c, &name, &owner, now))?;
            println!("created team {} ({})", team.name, team.team_id);
        }
        TeamCommand::Members { team, users } => {
            let t = team.clone();
            let found = storage
                .read_blocking(|c| sharing::team_by_name(c, &t))?
                .ok_or_else(|| anyhow::anyhow!("no such team: {team}"))?;
            let ids = users
                .iter()
                .map(|u| user_id(storage, u))
                .collect::<anyhow::Result<Vec<_>>>()?;
            let (tid, owner) = (found.team_id.clone(), found.owner_id.clone());
            storage.write_blocking(move |c| sharing::set_members(c, &tid, &owner, &ids))?;
            println!("team {team}: {} members", users.len());
        }
        TeamCommand::List => {
            let teams = storage.read_blocking(sharing::all_teams)?;
            for t in teams {
                println!(
                    "{}\t{}\towner={}\tmembers={}",
                    t.team_id,
                    t.name,
                    t.owner_id,
                    t.members.join(",")
                );
            }
        }
    }
    Ok(())
}

fn user_command(storage: &Storage, command: UserCommand) -> anyhow::Result<()> {
    let now = unix_ms();
    match command {
        UserCommand::Add {
            name,
            display_name,
            admin,
            password_stdin,
        } => {
            crate::auth::names::check_user_name(&name).map_err(|e| anyhow::anyhow!(e))?;
            let phc = if password_stdin {
                Some(password::hash(&read_password()?)?)
            } else {
                None
            };
            let display = display_name.unwrap_or_else(|| name.clone());
            let (user, token) = storage.write_blocking(move |c| {
                let u = accounts::create_user(c, &name, &display, admin, now)?;
                if let Some(phc) = phc {
                    accounts::set_password_hash(c, &u.id, &phc)?;
                }
                let t = accounts::create_token(c, &u.id, "cli", now)?;
                let target = format!("user:{}", u.name);
                let detail = json!({"admin": admin, "by": "cli"});
                audit::record(
                    c,
                    now,
                    &cli_event(actions::USER_CREATED, target.clone(), detail),
                )?;
                let detail = json!({"label": "cli", "scope": "admin"});
                audit::record(c, now, &cli_event(actions::TOKEN_CREATED, target, detail))?;
                Ok((u, t))
            })?;
            println!("created user {} ({})", user.name, user.id);
            println!("token: {token}");
            if !password_stdin {
                println!(
                    "no password: {} cannot log in to the web app until one is set \
                     (`docsync user passwd {}`); the token works for the API",
                    user.name, user.name
                );
            }
        }
        UserCommand::Passwd { name } => {
            let id = user_id(storage, &name)?;
            let phc = password::hash(&read_password()?)?;
            let target = format!("user:{name}");
            storage.write_blocking(move |c| {
                accounts::set_password_hash(c, &id, &phc)?;
                audit::record(
                    c,
                    now,
                    &cli_event(actions::PASSWORD_RESET, target, json!({"by": "cli"})),
                )
            })?;
            println!("password of {name} changed; their login sessions have ended");
        }
        UserCommand::List => {
            let people = storage.read_blocking(people::list_people)?;
            println!(
                "{:<24} {:<28} {:<6} {:<8} LAST SIGN-IN",
                "NAME", "DISPLAY NAME", "ADMIN", "ACTIVE"
            );
            for p in people {
                let seen = p.last_seen_at.map_or("never".to_string(), iso_time);
                println!(
                    "{:<24} {:<28} {:<6} {:<8} {seen}",
                    p.name,
                    p.display_name,
                    if p.is_admin { "yes" } else { "no" },
                    if p.active { "yes" } else { "no" },
                );
            }
        }
        UserCommand::Deactivate { name } => {
            let id = user_id(storage, &name)?;
            storage.write_blocking(move |c| {
                people::deactivate(c, CLI_ACTOR, &id, now)?;
                audit::record(
                    c,
                    now,
                    &cli_event(actions::USER_DEACTIVATED, format!("user:{name}"), json!({})),
                )
            })?;
            println!("deactivated; their sessions and tokens have ended");
        }
        UserCommand::Reactivate { name } => {
            let id = user_id(storage, &name)?;
            storage.write_blocking(move |c| {
                people::reactivate(c, &id)?;
                audit::record(
                    c,
                    now,
                    &cli_event(actions::USER_REACTIVATED, format!("user:{name}"), json!({})),
                )
            })?;
            println!("reactivated; they can sign in again");
        }
        UserCommand::Remove { name, transfer_to } => {
            let id = user_id(storage, &name)?;
            let heir = user_id(storage, &transfer_to)?;
            let moved = storage.write_blocking(move |c| {
                let (_, moved) = people::remove(c, CLI_ACTOR, &id, &heir)?;
                let detail = json!({"transferTo": transfer_to, "transferred": moved});
                audit::record(
                    c,
                    now,
                    &cli_event(actions::USER_DELETED, format!("user:{name}"), detail),
                )?;
                Ok(moved)
            })?;
            println!(
                "removed; {} documents, {} folders and {} teams handed on",
                moved.documents, moved.folders, moved.teams
            );
        }
        UserCommand::Token { name, label } => {
            let token = storage.write_blocking(move |c| {
                let u = accounts::user_by_name(c, &name)?.ok_or_else(|| {
                    docsync_actors::storage::StorageError::NotFound(format!("user {name}"))
                })?;
                let token = accounts::create_token(c, &u.id, &label, now)?;
                let detail = json!({"label": label, "scope": "admin"});
                let event = cli_event(actions::TOKEN_CREATED, format!("user:{}", u.name), detail);
                audit::record(c, now, &event)?;
                Ok(token)
            })?;
            println!("token: {token}");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn iso_times() {
        assert_eq!(super::iso_time(0), "1970-01-01T00:00Z");
        assert_eq!(super::iso_time(1_796_545_398_000), "2026-12-06T08:23Z");
        assert_eq!(super::iso_time(951_782_400_000), "2000-02-29T00:00Z");
    }
}
