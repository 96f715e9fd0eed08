//! Configuration: the embedded `config/default.toml`, then an optional local file, then
//! `DOCSYNC_SECTION__KEY` environment variables. Unknown keys and bad values stop the start
//! with a message that names the key; other `DOCSYNC_*` variables (Kubernetes service links)
//! are not configuration and are ignored.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use config::{Config, Environment, File, FileFormat};
use serde::Deserialize;

use docsync_actors::storage::Synchronous;

pub const DEFAULT_TOML: &str = include_str!("../config/default.toml");

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    pub server: ServerSettings,
    pub storage: StorageSettings,
    pub cluster: ClusterSettings,
    pub limits: LimitSettings,
    pub actors: ActorSettings,
    pub compaction: CompactionSettings,
    pub history: HistorySettings,
    pub auth: AuthSettings,
    pub audit: AuditSettings,
    pub sharing: SharingSettings,
    pub webhooks: WebhookSettings,
    pub logging: LoggingSettings,
    pub testing: TestingSettings,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestingSettings {
    /// Fault injection for the crash tests. The check that uses it is compiled only into
    /// debug builds (`cfg(debug_assertions)`, what `cargo test` builds), and a release
    /// build refuses to start with it set, so production can never panic on purpose.
    #[serde(deserialize_with = "debug_builds_only")]
    pub panic_marker: String,
    pub clock: ClockKind,
    /// Where the manual clock starts (ms since the epoch). Fixed, not the time of the start,
    /// so a test sees the same hour and day whenever it runs; the suite runs once more with
    /// this set to 23:50 UTC to prove nothing depends on the hour.
    pub clock_origin_ms: i64,
}

fn debug_builds_only<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let marker = String::deserialize(d)?;
    if cfg!(not(debug_assertions)) && !marker.is_empty() {
        return Err(serde::de::Error::custom(
            "fault injection exists only in debug builds; leave it empty",
        ));
    }
    Ok(marker)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClockKind {
    System,
    Manual,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompactionSettings {
    pub run_at_start: bool,
    pub interval_hours: f64,
    pub shared_log_days: f64,
    pub private_log_days: f64,
    pub tombstone_days: f64,
    pub results_days: f64,
}

impl CompactionSettings {
    pub fn retention(&self) -> docsync_actors::storage::compaction::Retention {
        let ms = |days: f64| (days * 86_400_000.0) as i64;
        docsync_actors::storage::compaction::Retention {
            shared_log_ms: ms(self.shared_log_days),
            private_log_ms: ms(self.private_log_days),
            tombstone_ms: ms(self.tombstone_days),
            results_ms: ms(self.results_days),
        }
    }
}

/// Versions and the trash (PROTOCOL §8).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistorySettings {
    pub auto_every_minutes: f64,
    pub hourly_days: f64,
    pub daily_days: f64,
    pub trash_days: f64,
}

impl HistorySettings {
    pub fn versions(&self) -> docsync_actors::storage::versions::VersionPolicy {
        docsync_actors::storage::versions::VersionPolicy {
            auto_every_ms: (self.auto_every_minutes * 60_000.0) as i64,
            hourly_ms: (self.hourly_days * 86_400_000.0) as i64,
            daily_ms: (self.daily_days * 86_400_000.0) as i64,
        }
    }

    pub fn trash_ms(&self) -> i64 {
        (self.trash_days * 86_400_000.0) as i64
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSettings {
    pub bind: String,
    pub workers: usize,
    pub client_request_timeout_secs: u64,
    /// Seconds a client has to send a whole request body once its headers are in (actix's
    /// `client_request_timeout` covers only the headers); slower gets 408 and is closed.
    pub body_read_timeout_secs: u64,
    /// Seconds between SSE comment lines. The comment keeps proxies from timing the stream
    /// out and, being a write, finds peers gone without closing their socket (a reset from
    /// their host; an unreachable host only when TCP stops retransmitting).
    pub sse_keepalive_secs: u64,
    pub shutdown_timeout_secs: u64,
    /// Empty: the web app compiled into the binary; a folder: served from disk.
    pub static_dir: PathBuf,
    /// Peers whose `X-Forwarded-Host` / `Forwarded` headers are believed (reverse proxies
    /// we run); from anyone else those headers are ignored.
    pub trusted_proxies: Vec<std::net::IpAddr>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StorageSettings {
    pub backend: BackendKind,
    /// PostgreSQL connection string (backend = "postgres").
    pub postgres_url: String,
    pub path: PathBuf,
    pub synchronous: Synchronous,
    pub read_pool_size: u32,
    pub group_commit_max: usize,
    pub cache_kib: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    Sqlite,
    Postgres,
}

/// Cluster mode (storage.backend = "postgres"): who this node is to the others.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterSettings {
    /// This node's name (stable across restarts); empty: the host name.
    pub node_id: String,
    /// `host:port` where the other nodes reach this one's HTTP port.
    pub internal_addr: String,
    /// Shared by the nodes; marks a forwarded request as coming from one of them.
    pub secret: String,
    /// A node that has not renewed for this long is dead to the others.
    pub ttl_secs: f64,
    pub renew_ms: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitSettings {
    pub max_body_bytes: usize,
    pub max_ops_per_sync: usize,
    pub max_content_bytes: usize,
    pub max_title_bytes: usize,
    pub max_hold: usize,
    /// Most levels a block tree may have (PROTOCOL deviation, see docs/ARCHITECTURE.md).
    pub max_depth: usize,
    pub max_tags_per_block: usize,
    pub user_write_bytes_per_minute: u64,
    pub doc_write_bytes_per_minute: u64,
    pub max_document_bytes: usize,
    /// Most open wake-up channels (SSE streams, waiting long-polls, WebSocket connections)
    /// per user and per client address; 429 `too_many_streams` beyond.
    pub max_streams_per_user: usize,
    pub max_streams_per_address: usize,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActorSettings {
    pub arbiters: usize,
    pub lease_ttl_ms: i64,
    pub session_ttl_secs: i64,
    pub idle_stop_secs: i64,
    pub log_tail: usize,
    pub log_page: usize,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthSettings {
    pub session_ttl_hours: i64,
    pub secure_cookies: bool,
    pub login_max_failures: u32,
    pub login_window_secs: u64,
    pub trust_forwarded_for: bool,
    pub password_threads: usize,
    pub password_queue: usize,
    pub oidc: OidcSettings,
}

/// Single sign-on with OpenID Connect (`[auth.oidc]`); off while `issuer` is empty.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OidcSettings {
    pub issuer: String,
    pub client_id: String,
    pub client_secret: String,
    /// This server's address as people reach it; the provider sends them back to
    /// `<public_url>/auth/oidc/callback`.
    pub public_url: String,
    /// The login page's button: "Sign in with <label>".
    pub label: String,
    /// A first sign-in makes an account when the provider vouches for an email of one of
    /// these domains; otherwise it needs an invitation link.
    pub allowed_domains: Vec<String>,
    /// Whether password sign-in stays on beside single sign-on.
    pub password_login: bool,
}

impl OidcSettings {
    pub fn enabled(&self) -> bool {
        !self.issuer.is_empty()
    }
}

/// Sharing one bullet (PROTOCOL §10).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SharingSettings {
    /// Editors of a document may share its bullets (the owner always may).
    pub editors_share_bullets: bool,
}

/// Webhooks (PROTOCOL §11): delivery, retries and the key that seals their secrets.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookSettings {
    /// A receiver that answers 5xx or not at all is retried this long, then the webhook pauses.
    pub retry_hours: f64,
    /// The first retry waits this long, each next one twice as long, at most `retry_max_secs`.
    pub retry_first_ms: u64,
    pub retry_max_secs: u64,
    /// A receiver has this long to answer a delivery.
    pub timeout_secs: u64,
    /// Entries per delivery at most, and bytes of its body (one entry is always sent).
    pub batch_entries: usize,
    pub batch_bytes: usize,
    /// The key that seals the secrets at rest, 64 hex digits; empty: a key file beside the
    /// SQLite database, made on first start. Cluster mode needs it (the same on every node).
    pub key: String,
    /// Let people who are not admins send to loopback and private network addresses.
    pub allow_private_targets: bool,
    /// The deliverers' scheduling priority (0–19, higher yields more to edits).
    pub nice: i32,
    /// A webhook catching up sends at most this many entries per second.
    pub max_entries_per_sec: u64,
}

/// The audit log of security events (PROTOCOL §9).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditSettings {
    /// Rows older than this many days are forgotten by compaction.
    pub keep_days: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoggingSettings {
    pub level: String,
    pub format: LogFormat,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The message already names the key; kept as text so it is printed once.
    #[error("configuration: {0}")]
    Load(String),
    #[error("configuration: {key} = {value}: {why}")]
    Invalid {
        key: &'static str,
        value: String,
        why: &'static str,
    },
    #[error("configuration file {0} does not exist")]
    MissingFile(PathBuf),
}

impl From<config::ConfigError> for ConfigError {
    fn from(e: config::ConfigError) -> Self {
        ConfigError::Load(e.to_string())
    }
}

/// The `DOCSYNC_SECTION__KEY` variables of `vars`: only those are configuration (a typo in
/// one stays a start-up error). Anything else starting with `DOCSYNC_` is not ours — e.g. the
/// service links Kubernetes injects for a Service named `docsync` (`DOCSYNC_SERVICE_HOST`,
/// `DOCSYNC_PORT=tcp://…`) — and is ignored, logged at debug.
fn settings_from_env(
    vars: impl Iterator<Item = (String, String)>,
) -> std::collections::HashMap<String, String> {
    vars.filter(|(name, _)| {
        let Some(rest) = name.strip_prefix("DOCSYNC_") else {
            return false;
        };
        let ours = matches!(rest.split_once("__"), Some((section, key)) if !section.is_empty() && !key.is_empty());
        if !ours {
            tracing::debug!(variable = %name, "ignoring environment variable: not DOCSYNC_SECTION__KEY");
        }
        ours
    })
    .collect()
}

impl Settings {
    /// Loads defaults, then `file` (or `config/local.toml` if present), then the environment.
    pub fn load(file: Option<&Path>) -> Result<Settings, ConfigError> {
        let mut b = Config::builder().add_source(File::from_str(DEFAULT_TOML, FileFormat::Toml));
        match file {
            Some(f) if !f.exists() => return Err(ConfigError::MissingFile(f.to_path_buf())),
            Some(f) => b = b.add_source(File::from(f)),
            None => b = b.add_source(File::with_name("config/local.toml").required(false)),
        }
        b = b.add_source(
            Environment::with_prefix("DOCSYNC")
                .prefix_separator("_")
                .separator("__")
                .try_parsing(true)
                .list_separator(",")
                .with_list_parse_key("server.trusted_proxies")
                .with_list_parse_key("auth.oidc.allowed_domains")
                .source(Some(settings_from_env(std::env::vars()))),
        );
        let s: Settings = b.build()?.try_deserialize()?;
        s.validate()?;
        Ok(s)
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        fn bad(key: &'static str, value: impl ToString, why: &'static str) -> ConfigError {
            ConfigError::Invalid {
                key,
                value: value.to_string(),
                why,
            }
        }
        if self.server.bind.parse::<SocketAddr>().is_err() {
            return Err(bad(
                "server.bind",
                &self.server.bind,
                "expected IP:PORT, e.g. 127.0.0.1:8080",
            ));
        }
        let static_dir = &self.server.static_dir;
        if !static_dir.as_os_str().is_empty() && !static_dir.is_dir() {
            return Err(bad(
                "server.static_dir",
                static_dir.display(),
                "not a folder (leave it empty to serve the files compiled into the binary)",
            ));
        }
        if self.server.body_read_timeout_secs == 0 {
            return Err(bad(
                "server.body_read_timeout_secs",
                0,
                "must be at least 1",
            ));
        }
        if self.server.sse_keepalive_secs == 0 {
            return Err(bad("server.sse_keepalive_secs", 0, "must be at least 1"));
        }
        if self.storage.path.as_os_str().is_empty() {
            return Err(bad("storage.path", "\"\"", "must name a file"));
        }
        let w = &self.webhooks;
        if !w.key.is_empty() && (w.key.len() != 64 || hex::decode(&w.key).is_err()) {
            return Err(bad(
                "webhooks.key",
                "(hidden)",
                "64 hex digits (e.g. `openssl rand -hex 32`), or empty for a key file",
            ));
        }
        if !(0..=19).contains(&w.nice) {
            return Err(bad("webhooks.nice", w.nice, "0 to 19"));
        }
        if w.batch_entries == 0 || w.batch_entries > 1000 {
            return Err(bad("webhooks.batch_entries", w.batch_entries, "1 to 1000"));
        }
        if w.max_entries_per_sec == 0 {
            return Err(bad("webhooks.max_entries_per_sec", 0, "must be at least 1"));
        }
        if w.timeout_secs == 0 || w.retry_first_ms == 0 || w.retry_max_secs == 0 {
            return Err(bad(
                "webhooks",
                "0",
                "timeout_secs, retry_first_ms and retry_max_secs must be at least 1",
            ));
        }
        if w.retry_hours.is_nan() || w.retry_hours <= 0.0 {
            return Err(bad(
                "webhooks.retry_hours",
                w.retry_hours,
                "must be above 0",
            ));
        }
        if self.storage.backend == BackendKind::Postgres {
            if self.storage.postgres_url.is_empty() {
                return Err(bad(
                    "storage.postgres_url",
                    "\"\"",
                    "backend = \"postgres\" needs a connection string",
                ));
            }
            if self
                .cluster
                .internal_addr
                .parse::<std::net::SocketAddr>()
                .is_err()
            {
                return Err(bad(
                    "cluster.internal_addr",
                    format!("{:?}", self.cluster.internal_addr),
                    "cluster mode needs host:port where the other nodes reach this one",
                ));
            }
            if self.cluster.secret.len() < 16 {
                return Err(bad(
                    "cluster.secret",
                    "(hidden)",
                    "cluster mode needs a secret of at least 16 characters, the same on every node",
                ));
            }
            if self.cluster.ttl_secs.is_nan() || self.cluster.ttl_secs < 2.0 {
                return Err(bad(
                    "cluster.ttl_secs",
                    self.cluster.ttl_secs,
                    "must be at least 2",
                ));
            }
            if self.cluster.renew_ms == 0
                || self.cluster.renew_ms as f64 >= self.cluster.ttl_secs * 1000.0 / 2.0
            {
                return Err(bad(
                    "cluster.renew_ms",
                    self.cluster.renew_ms,
                    "must be above 0 and below half of cluster.ttl_secs",
                ));
            }
        }
        if self.storage.read_pool_size == 0 {
            return Err(bad("storage.read_pool_size", 0, "must be at least 1"));
        }
        if self.storage.cache_kib < 64 {
            return Err(bad(
                "storage.cache_kib",
                self.storage.cache_kib,
                "must be at least 64",
            ));
        }
        if self.storage.group_commit_max == 0 {
            return Err(bad("storage.group_commit_max", 0, "must be at least 1"));
        }
        let l = &self.limits;
        if l.max_body_bytes < 1024 {
            return Err(bad(
                "limits.max_body_bytes",
                l.max_body_bytes,
                "must be at least 1024",
            ));
        }
        for (key, rate) in [
            (
                "limits.user_write_bytes_per_minute",
                l.user_write_bytes_per_minute,
            ),
            (
                "limits.doc_write_bytes_per_minute",
                l.doc_write_bytes_per_minute,
            ),
        ] {
            if rate != 0 && rate < l.max_body_bytes as u64 {
                return Err(bad(
                    key,
                    rate,
                    "must be 0 (off) or at least limits.max_body_bytes",
                ));
            }
        }
        if l.max_tags_per_block == 0 {
            return Err(bad("limits.max_tags_per_block", 0, "must be at least 1"));
        }
        if l.max_ops_per_sync == 0 {
            return Err(bad("limits.max_ops_per_sync", 0, "must be at least 1"));
        }
        if l.max_content_bytes == 0 || l.max_content_bytes > l.max_body_bytes {
            return Err(bad(
                "limits.max_content_bytes",
                l.max_content_bytes,
                "must be between 1 and limits.max_body_bytes",
            ));
        }
        if l.max_title_bytes == 0 {
            return Err(bad("limits.max_title_bytes", 0, "must be at least 1"));
        }
        if !(1..=100_000).contains(&l.max_depth) {
            return Err(bad(
                "limits.max_depth",
                l.max_depth,
                "must be between 1 and 100000",
            ));
        }
        if l.max_streams_per_user == 0 {
            return Err(bad("limits.max_streams_per_user", 0, "must be at least 1"));
        }
        if l.max_streams_per_address < l.max_streams_per_user {
            return Err(bad(
                "limits.max_streams_per_address",
                l.max_streams_per_address,
                "must be at least limits.max_streams_per_user",
            ));
        }
        let h = &self.history;
        if h.auto_every_minutes.is_nan() || h.auto_every_minutes < 0.0 {
            return Err(bad(
                "history.auto_every_minutes",
                h.auto_every_minutes,
                "must be 0 (off) or more",
            ));
        }
        if h.hourly_days.is_nan()
            || h.hourly_days < 0.0
            || h.daily_days.is_nan()
            || h.daily_days < h.hourly_days
        {
            return Err(bad(
                "history.daily_days",
                h.daily_days,
                "must be at least history.hourly_days (and neither negative)",
            ));
        }
        if h.trash_days.is_nan() || h.trash_days < 0.0 {
            return Err(bad("history.trash_days", h.trash_days, "must be 0 or more"));
        }
        let a = &self.actors;
        if a.lease_ttl_ms < 1000 {
            return Err(bad(
                "actors.lease_ttl_ms",
                a.lease_ttl_ms,
                "must be at least 1000",
            ));
        }
        if a.session_ttl_secs < 1 {
            return Err(bad(
                "actors.session_ttl_secs",
                a.session_ttl_secs,
                "must be at least 1",
            ));
        }
        if a.idle_stop_secs < 1 {
            return Err(bad(
                "actors.idle_stop_secs",
                a.idle_stop_secs,
                "must be at least 1",
            ));
        }
        if a.log_page == 0 || a.log_page > 10_000 {
            return Err(bad(
                "actors.log_page",
                a.log_page,
                "must be between 1 and 10000",
            ));
        }
        let c = &self.compaction;
        if c.interval_hours.is_nan() || c.interval_hours <= 0.0 {
            return Err(bad(
                "compaction.interval_hours",
                c.interval_hours,
                "must be above 0",
            ));
        }
        for (key, v) in [
            ("compaction.shared_log_days", c.shared_log_days),
            ("compaction.private_log_days", c.private_log_days),
            ("compaction.tombstone_days", c.tombstone_days),
            ("compaction.results_days", c.results_days),
        ] {
            if v.is_nan() || v < 0.0 {
                return Err(bad(key, v, "must be 0 or more"));
            }
        }
        if self.auth.session_ttl_hours < 1 {
            return Err(bad(
                "auth.session_ttl_hours",
                self.auth.session_ttl_hours,
                "must be at least 1",
            ));
        }
        let oidc = &self.auth.oidc;
        if oidc.enabled() {
            for (key, value) in [
                ("auth.oidc.client_id", &oidc.client_id),
                ("auth.oidc.public_url", &oidc.public_url),
            ] {
                if value.is_empty() {
                    return Err(bad(key, "\"\"", "must be set when auth.oidc.issuer is"));
                }
            }
            let url_ok = |u: &str| u.starts_with("https://") || u.starts_with("http://");
            if !url_ok(&oidc.issuer) {
                return Err(bad(
                    "auth.oidc.issuer",
                    &oidc.issuer,
                    "must be an http(s) URL",
                ));
            }
            if !url_ok(&oidc.public_url) {
                return Err(bad(
                    "auth.oidc.public_url",
                    &oidc.public_url,
                    "must be an http(s) URL",
                ));
            }
        } else if !oidc.password_login {
            return Err(bad(
                "auth.oidc.password_login",
                false,
                "cannot be off without single sign-on (nobody could sign in)",
            ));
        }
        if self.audit.keep_days < 1 {
            return Err(bad(
                "audit.keep_days",
                self.audit.keep_days,
                "must be at least 1",
            ));
        }
        if self.auth.login_max_failures == 0 {
            return Err(bad("auth.login_max_failures", 0, "must be at least 1"));
        }
        if self.auth.password_threads == 0 {
            return Err(bad("auth.password_threads", 0, "must be at least 1"));
        }
        if tracing_subscriber::EnvFilter::try_new(&self.logging.level).is_err() {
            return Err(bad(
                "logging.level",
                &self.logging.level,
                "not a valid level filter",
            ));
        }
        Ok(())
    }

    pub fn bind_addr(&self) -> SocketAddr {
        self.server.bind.parse().expect("validated")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_load_and_validate() {
        let s: Settings = Config::builder()
            .add_source(File::from_str(DEFAULT_TOML, FileFormat::Toml))
            .build()
            .unwrap()
            .try_deserialize()
            .unwrap();
        s.validate().unwrap();
        assert_eq!(s.limits.max_ops_per_sync, 500);
    }

    #[test]
    fn bad_value_names_the_key() {
        let mut s: Settings = Config::builder()
            .add_source(File::from_str(DEFAULT_TOML, FileFormat::Toml))
            .build()
            .unwrap()
            .try_deserialize()
            .unwrap();
        s.server.bind = "nonsense".into();
        let e = s.validate().unwrap_err().to_string();
        assert!(e.contains("server.bind"), "{e}");
    }

    #[test]
    fn max_depth_defaults_to_1000_and_must_be_positive() {
        let mut s: Settings = Config::builder()
            .add_source(File::from_str(DEFAULT_TOML, FileFormat::Toml))
            .build()
            .unwrap()
            .try_deserialize()
            .unwrap();
        assert_eq!(s.limits.max_depth, 1000);
        s.limits.max_depth = 0;
        let e = s.validate().unwrap_err().to_string();
        assert!(e.contains("limits.max_depth"), "{e}");
    }
}
