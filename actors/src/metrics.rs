//! Prometheus metrics shared by actors, storage and the HTTP layer. Labels are bounded
//! (op kind, status, reason, channel, route pattern) — never a document or user ID.

use prometheus::{
    Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts, Registry,
};

pub struct Metrics {
    pub registry: Registry,
    pub actors_open: IntGauge,
    /// Cluster mode: documents another node owns that this node relays to its own sockets.
    pub relayed_documents: IntGauge,
    pub actor_starts: IntCounter,
    pub actor_stops: IntCounter,
    pub actor_restarts: IntCounter,
    /// Cluster mode: writes refused because another node had taken the document over.
    pub stale_writes_refused: IntCounter,
    /// Cluster mode: requests this node forwarded to a document's owner.
    pub requests_forwarded: IntCounter,
    /// Cluster mode: nodes this node's report made a majority that could not reach them.
    pub nodes_evicted: IntCounter,
    /// Streams ended because their credential ended or their user lost read access.
    pub streams_revoked: IntCounter,
    /// Writes refused by a budget: `budget` = user_rate, document_rate or document_size.
    pub quota_refusals: IntCounterVec,
    pub sync_prechecks: IntCounter,
    /// Logins refused because every password thread was busy and the queue full.
    pub logins_refused_busy: IntCounter,
    pub mailbox_depth: IntGauge,
    pub ops: IntCounterVec,
    pub rejected: IntCounterVec,
    pub lease_grants: IntCounter,
    pub lease_denials: IntCounter,
    pub sync_seconds: Histogram,
    pub commit_seconds: Histogram,
    pub commit_jobs: Histogram,
    pub http_requests: IntCounterVec,
    pub http_seconds: HistogramVec,
    pub compaction_passes: IntCounter,
    pub compaction_documents: IntCounter,
    pub compaction_log_rows: IntCounter,
    pub compaction_tombstones: IntCounter,
    pub compaction_results: IntCounter,
    pub compaction_seconds: Histogram,
    /// Versions written, by kind (auto, named, restore).
    pub versions_taken: IntCounterVec,
    /// Versions removed by their retention.
    pub versions_expired: IntCounter,
    /// Versions kept and their stored bytes (set by each compaction pass and at start).
    pub versions_kept: IntGauge,
    pub versions_bytes: IntGauge,
    /// Restores applied (not counting retries answered from memory).
    pub restores: IntCounter,
    /// Documents in the trash purged for good after the trash period.
    pub trash_purged: IntCounter,
    pub storage_full_total: IntCounter,
    pub storage_full: IntGauge,
    /// Filled at scrape time from the actors' own view.
    pub sessions: IntGauge,
    pub subscribers: prometheus::IntGaugeVec,
    pub leases_held: IntGauge,
    /// argon2 evaluations since start (filled at scrape time from the password module).
    pub argon2_runs: IntGauge,
}

fn latency_buckets() -> Vec<f64> {
    vec![
        0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    ]
}

impl Metrics {
    pub fn new() -> Metrics {
        let registry = Registry::new_custom(Some("docsync".into()), None).expect("registry");
        let m = Metrics {
            actors_open: IntGauge::new("document_actors", "Open document actors").unwrap(),
            relayed_documents: IntGauge::new(
                "relayed_documents",
                "Cluster mode: documents another node owns whose changes this node relays to its own sockets (one stream from the owner each)",
            )
            .unwrap(),
            actor_starts: IntCounter::new("actor_starts_total", "Document actors started").unwrap(),
            actor_stops: IntCounter::new("actor_stops_total", "Document actors stopped").unwrap(),
            actor_restarts: IntCounter::new(
                "actor_restarts_total",
                "Document actors that threw their state away after a failure and were reloaded",
            )
            .unwrap(),
            stale_writes_refused: IntCounter::new(
                "stale_writes_refused_total",
                "Cluster mode: writes refused because another node had taken the document over",
            )
            .unwrap(),
            requests_forwarded: IntCounter::new(
                "requests_forwarded_total",
                "Cluster mode: requests forwarded one hop to the document's owner",
            )
            .unwrap(),
            nodes_evicted: IntCounter::new(
                "nodes_evicted_total",
                "Cluster mode: nodes evicted when this node's report made a majority that could not reach them",
            )
            .unwrap(),
            streams_revoked: IntCounter::new(
                "streams_revoked_total",
                "Open streams ended because their credential ended or their user lost access",
            )
            .unwrap(),
            quota_refusals: IntCounterVec::new(
                Opts::new(
                    "quota_refusals_total",
                    "Writes refused by a write budget (429 write_budget / 413 document_full)",
                ),
                &["budget"],
            )
            .unwrap(),
            sync_prechecks: IntCounter::new(
                "sync_prechecks_total",
                "Writes whose document could not tell their ops new by itself and asked for the \
                 database pre-check (an op ID that may be a retry, a block it does not have)",
            )
            .unwrap(),
            logins_refused_busy: IntCounter::new(
                "logins_refused_busy_total",
                "Logins refused with 503 because the password threads and their queue were full",
            )
            .unwrap(),
            mailbox_depth: IntGauge::new(
                "actor_mailbox_depth",
                "Requests sent to document actors and not yet taken up (all actors)",
            )
            .unwrap(),
            ops: IntCounterVec::new(
                Opts::new("ops_total", "Ops answered, by kind and status"),
                &["kind", "status"],
            )
            .unwrap(),
            rejected: IntCounterVec::new(
                Opts::new("ops_rejected_total", "Rejected ops by reason"),
                &["reason"],
            )
            .unwrap(),
            lease_grants: IntCounter::new("lease_grants_total", "Leases granted or taken over")
                .unwrap(),
            lease_denials: IntCounter::new("lease_denials_total", "Lease requests denied").unwrap(),
            sync_seconds: Histogram::with_opts(
                HistogramOpts::new(
                    "sync_seconds",
                    "/sync latency at the server (request to reply)",
                )
                .buckets(latency_buckets()),
            )
            .unwrap(),
            commit_seconds: Histogram::with_opts(
                HistogramOpts::new(
                    "sqlite_commit_seconds",
                    "Writer transactions (group commits), begin to commit",
                )
                .buckets(latency_buckets()),
            )
            .unwrap(),
            commit_jobs: Histogram::with_opts(
                HistogramOpts::new(
                    "sqlite_commit_jobs",
                    "Jobs (syncs and other writes) per group commit",
                )
                .buckets(vec![
                    1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0,
                ]),
            )
            .unwrap(),
            http_requests: IntCounterVec::new(
                Opts::new(
                    "http_requests_total",
                    "HTTP requests by route pattern, method and status",
                ),
                &["route", "method", "status"],
            )
            .unwrap(),
            http_seconds: HistogramVec::new(
                HistogramOpts::new(
                    "http_request_seconds",
                    "HTTP request duration by route pattern",
                )
                .buckets(latency_buckets()),
                &["route"],
            )
            .unwrap(),
            compaction_passes: IntCounter::new("compaction_passes_total", "Compaction passes run")
                .unwrap(),
            compaction_documents: IntCounter::new(
                "compaction_documents_total",
                "Documents compacted",
            )
            .unwrap(),
            compaction_log_rows: IntCounter::new(
                "compaction_log_rows_total",
                "Log rows removed below the floor",
            )
            .unwrap(),
            compaction_tombstones: IntCounter::new(
                "compaction_tombstones_total",
                "Tombstones purged for good",
            )
            .unwrap(),
            compaction_results: IntCounter::new(
                "compaction_results_total",
                "Idempotency results removed",
            )
            .unwrap(),
            compaction_seconds: Histogram::with_opts(
                HistogramOpts::new("compaction_pass_seconds", "Duration of compaction passes")
                    .buckets(vec![0.01, 0.1, 1.0, 10.0, 60.0, 300.0, 1800.0]),
            )
            .unwrap(),
            versions_taken: IntCounterVec::new(
                Opts::new("versions_taken_total", "Versions written, by kind"),
                &["kind"],
            )
            .unwrap(),
            versions_expired: IntCounter::new(
                "versions_expired_total",
                "Automatic versions removed by their retention",
            )
            .unwrap(),
            versions_kept: IntGauge::new("versions_kept", "Versions kept (all documents)").unwrap(),
            versions_bytes: IntGauge::new(
                "versions_bytes",
                "Stored (compressed) bytes of all kept versions",
            )
            .unwrap(),
            restores: IntCounter::new("restores_total", "Versions restored").unwrap(),
            trash_purged: IntCounter::new(
                "trash_purged_total",
                "Documents purged for good after the trash period",
            )
            .unwrap(),
            storage_full_total: IntCounter::new(
                "storage_full_total",
                "Writes refused because the database or its disk is full (answered 507)",
            )
            .unwrap(),
            storage_full: IntGauge::new(
                "storage_full",
                "1 while writes fail for lack of space, 0 once a write commits again",
            )
            .unwrap(),
            sessions: IntGauge::new(
                "sessions",
                "Open editor sessions (clientIds) over all documents",
            )
            .unwrap(),
            subscribers: prometheus::IntGaugeVec::new(
                Opts::new("subscribers", "Wake-up channel subscribers by channel"),
                &["channel"],
            )
            .unwrap(),
            leases_held: IntGauge::new("leases_held", "Live block leases over all documents")
                .unwrap(),
            argon2_runs: IntGauge::new(
                "argon2_runs",
                "Password hashes computed or checked since start (one per login attempt)",
            )
            .unwrap(),
            registry,
        };
        let r = &m.registry;
        r.register(Box::new(m.actors_open.clone())).unwrap();
        r.register(Box::new(m.relayed_documents.clone())).unwrap();
        r.register(Box::new(m.actor_starts.clone())).unwrap();
        r.register(Box::new(m.actor_stops.clone())).unwrap();
        r.register(Box::new(m.actor_restarts.clone())).unwrap();
        r.register(Box::new(m.stale_writes_refused.clone()))
            .unwrap();
        r.register(Box::new(m.requests_forwarded.clone())).unwrap();
        r.register(Box::new(m.nodes_evicted.clone())).unwrap();
        r.register(Box::new(m.streams_revoked.clone())).unwrap();
        r.register(Box::new(m.logins_refused_busy.clone())).unwrap();
        r.register(Box::new(m.quota_refusals.clone())).unwrap();
        r.register(Box::new(m.sync_prechecks.clone())).unwrap();
        r.register(Box::new(m.mailbox_depth.clone())).unwrap();
        r.register(Box::new(m.ops.clone())).unwrap();
        r.register(Box::new(m.rejected.clone())).unwrap();
        r.register(Box::new(m.lease_grants.clone())).unwrap();
        r.register(Box::new(m.lease_denials.clone())).unwrap();
        r.register(Box::new(m.sync_seconds.clone())).unwrap();
        r.register(Box::new(m.commit_seconds.clone())).unwrap();
        r.register(Box::new(m.commit_jobs.clone())).unwrap();
        r.register(Box::new(m.http_requests.clone())).unwrap();
        r.register(Box::new(m.http_seconds.clone())).unwrap();
        r.register(Box::new(m.compaction_passes.clone())).unwrap();
        r.register(Box::new(m.compaction_documents.clone()))
            .unwrap();
        r.register(Box::new(m.compaction_log_rows.clone())).unwrap();
        r.register(Box::new(m.compaction_tombstones.clone()))
            .unwrap();
        r.register(Box::new(m.compaction_results.clone())).unwrap();
        r.register(Box::new(m.compaction_seconds.clone())).unwrap();
        r.register(Box::new(m.versions_taken.clone())).unwrap();
        r.register(Box::new(m.versions_expired.clone())).unwrap();
        r.register(Box::new(m.versions_kept.clone())).unwrap();
        r.register(Box::new(m.versions_bytes.clone())).unwrap();
        r.register(Box::new(m.restores.clone())).unwrap();
        r.register(Box::new(m.trash_purged.clone())).unwrap();
        r.register(Box::new(m.storage_full_total.clone())).unwrap();
        r.register(Box::new(m.storage_full.clone())).unwrap();
        r.register(Box::new(m.sessions.clone())).unwrap();
        r.register(Box::new(m.subscribers.clone())).unwrap();
        r.register(Box::new(m.leases_held.clone())).unwrap();
        r.register(Box::new(m.argon2_runs.clone())).unwrap();
        m
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

/// The ops of one request as `ops_total` and `ops_rejected_total` count them, held until
/// the request's write committed. Counting while applying counted an op twice whenever its
/// first write was refused (disk full, a block taken by another document) and the client
/// sent it again: once for the attempt that never reached the disk, once for the one that
/// did. An op counts once, when it is on disk.
#[derive(Debug, Default)]
pub struct OpTally(Vec<(&'static str, &'static str, Option<&'static str>)>);

impl OpTally {
    pub fn add(&mut self, kind: &'static str, status: &'static str, reason: Option<&'static str>) {
        self.0.push((kind, status, reason));
    }

    /// `(applied, conflicts, rejected)` among the ops, for the actor's own figures.
    pub fn outcomes(&self) -> (u64, u64, u64) {
        let count = |s: &str| self.0.iter().filter(|(_, st, _)| *st == s).count() as u64;
        (count("applied"), count("conflict"), count("rejected"))
    }

    /// Counts the ops: call once their write committed.
    pub fn record(self, m: &Metrics) {
        for (kind, status, reason) in self.0 {
            m.ops.with_label_values(&[kind, status]).inc();
            if let Some(r) = reason {
                m.rejected.with_label_values(&[r]).inc();
            }
        }
    }
}
