//! The compaction supervisor: one pass at start, then every `interval`. It never touches a
//! document's rows itself: for each document due it sends that document's actor a `Compact`
//! message (starting the actor if needed), so compaction takes its place in the document's
//! op order. Documents are done one after another so a pass never floods the writer.
//!
//! The same pass applies the versions' own retention (automatic versions thinned to daily,
//! then removed; named ones never) and purges for good the documents that stayed in the
//! trash past `history.trash_days`. Neither needs a document's op order: versions are not
//! part of the document's state, and a trashed document has no readers (and so no actor
//! taking ops) — its actor is closed first all the same.

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use serde::Serialize;

use crate::ask::ask;
use crate::clock::SharedClock;
use crate::collab::validate::DocId;
use crate::document::{Compact, DocError};
use crate::membership::ThisNode;
use crate::metrics::Metrics;
use crate::registry::{CloseDocument, Documents};
use crate::storage::cluster::ownership;
use crate::storage::compaction::{self, Retention};
use crate::storage::versions::{self, VersionPolicy};
use crate::storage::{audit, documents, roles, trash, Storage};

#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PassSummary {
    pub documents: u64,
    pub log_rows: u64,
    pub tombstones: u64,
    pub results: u64,
    /// Automatic versions removed by their retention.
    pub versions: u64,
    /// Documents purged for good from the trash.
    pub trashed: u64,
    /// Audit log rows older than `audit.keep_days`, forgotten.
    pub audit: u64,
    /// Cluster mode: due documents left to the node that holds them.
    pub elsewhere: u64,
    pub failed: u64,
    pub duration_ms: u64,
}

/// Run one pass now (operators, tests); answers when it is done.
#[derive(Message)]
#[rtype(result = "PassSummary")]
pub struct RunPass;

pub struct CompactionSupervisor {
    storage: Storage,
    registry: Documents,
    clock: SharedClock,
    retention: Retention,
    interval: Duration,
    run_at_start: bool,
    metrics: Arc<Metrics>,
    versions: VersionPolicy,
    trash_ms: i64,
    audit_ms: i64,
    /// Cluster mode: this node. A pass then compacts only the documents this node holds or
    /// nobody live holds (each owner's pass does its own), and the cluster-wide parts run on
    /// one node at a time (`ownership::compaction_turn`).
    this_node: Option<Arc<ThisNode>>,
}

impl CompactionSupervisor {
    pub fn new(
        storage: Storage,
        registry: Documents,
        clock: SharedClock,
        retention: Retention,
        interval: Duration,
        run_at_start: bool,
        metrics: Arc<Metrics>,
    ) -> Self {
        CompactionSupervisor {
            storage,
            registry,
            clock,
            retention,
            interval,
            run_at_start,
            metrics,
            versions: VersionPolicy::default(),
            trash_ms: 30 * 86_400_000,
            audit_ms: 365 * 86_400_000,
            this_node: None,
        }
    }

    /// Cluster mode: passes on this node leave other nodes' documents to their owners.
    pub fn in_cluster(mut self, this_node: Arc<ThisNode>) -> Self {
        self.this_node = Some(this_node);
        self
    }

    /// How long versions and trashed documents are kept (`[history]`).
    pub fn with_history(mut self, versions: VersionPolicy, trash_ms: i64) -> Self {
        self.versions = versions;
        self.trash_ms = trash_ms;
        self
    }

    /// How long the audit log keeps a row (`audit.keep_days`).
    pub fn with_audit(mut self, keep_ms: i64) -> Self {
        self.audit_ms = keep_ms;
        self
    }

    fn pass(&self) -> impl std::future::Future<Output = PassSummary> + use<> {
        let storage = self.storage.clone();
        let registry = self.registry.clone();
        let clock = self.clock.clone();
        let retention = self.retention;
        let metrics = self.metrics.clone();
        let (policy, trash_ms, audit_ms) = (self.versions, self.trash_ms, self.audit_ms);
        let this_node = self.this_node.clone();
        async move {
            let started = Instant::now();
            let now = clock.now_ms();
            let mut summary = PassSummary::default();
            purge_trash(
                &storage,
                &registry,
                (now, now - trash_ms),
                &mut summary,
                &metrics,
            )
            .await;
            expire_versions(&storage, now, &policy, &mut summary, &metrics).await;
            forget_audit(&storage, now - audit_ms, &mut summary).await;
            let due = match storage
                .read(move |c| compaction::due_documents(c, now, &retention))
                .await
            {
                Ok(d) => d,
                Err(e) => {
                    tracing::error!(error = %e, "compaction: cannot list documents");
                    return summary;
                }
            };
            for doc_id in due {
                // IDs the server made itself; one that is not an ID names no document.
                let Ok(doc) = DocId::parse(&doc_id) else {
                    tracing::warn!(doc = %doc_id, "compaction: skipping a malformed document ID");
                    continue;
                };
                if let Some(node) = &this_node {
                    if !node.holds(&doc_id) && held_elsewhere(&storage, node, &doc_id).await {
                        summary.elsewhere += 1;
                        continue;
                    }
                }
                let d = doc_id.clone();
                let shared = storage
                    .read(move |c| roles::is_shared(c, &d))
                    .await
                    .unwrap_or(true);
                let compact = Compact {
                    now,
                    shared,
                    retention,
                };
                let outcome = ask(&registry, &doc, compact).await;
                match outcome {
                    Ok(c) => {
                        summary.documents += 1;
                        summary.log_rows += c.log_rows;
                        summary.tombstones += c.tombstones;
                        summary.results += c.results;
                    }
                    // Claimed by another node meanwhile: its pass does it.
                    Err(DocError::NotFound) | Err(DocError::NotOwner) => {}
                    Err(e) => {
                        summary.failed += 1;
                        tracing::warn!(doc = %doc_id, error = %e, "compaction of a document failed");
                    }
                }
            }
            summary.duration_ms = started.elapsed().as_millis() as u64;
            metrics.compaction_passes.inc();
            metrics.compaction_documents.inc_by(summary.documents);
            metrics.compaction_log_rows.inc_by(summary.log_rows);
            metrics.compaction_tombstones.inc_by(summary.tombstones);
            metrics.compaction_results.inc_by(summary.results);
            metrics
                .compaction_seconds
                .observe(started.elapsed().as_secs_f64());
            tracing::info!(
                documents = summary.documents,
                log_rows = summary.log_rows,
                tombstones = summary.tombstones,
                results = summary.results,
                versions = summary.versions,
                trashed = summary.trashed,
                failed = summary.failed,
                duration_ms = summary.duration_ms,
                "compaction pass done"
            );
            summary
        }
    }
}

/// Purges for good every document trashed before `cutoff`: its actor closed first (queued
/// writes stay ahead of the purge in the writer queue), then every row, versions included.
/// `at`: (now, the moment before which trashed documents go).
async fn purge_trash(
    storage: &Storage,
    registry: &Documents,
    at: (i64, i64),
    summary: &mut PassSummary,
    metrics: &Metrics,
) {
    let (now, cutoff) = at;
    let due = match storage.read(move |c| trash::due(c, cutoff)).await {
        Ok(d) => d,
        Err(e) => {
            tracing::error!(error = %e, "compaction: cannot list the trash");
            return;
        }
    };
    for doc_id in due {
        if let Ok(doc) = DocId::parse(&doc_id) {
            let _ = registry.send(CloseDocument { doc_id: doc }).await;
        }
        let d = doc_id.clone();
        let purged = storage
            .write(move |c| {
                // Another node's pass is at it, or restored in the meantime: not ours.
                if !ownership::compaction_turn(c)? || !trash::due(c, cutoff)?.contains(&d) {
                    return Ok(false);
                }
                let purged = documents::delete(c, &d)?;
                if purged {
                    let event = audit::AuditEvent {
                        actor_name: Some("compaction".into()),
                        action: audit::actions::DOCUMENT_PURGED,
                        target: format!("doc:{d}"),
                        detail: serde_json::json!({"reason": "trash_days"}),
                        ..Default::default()
                    };
                    audit::record(c, now, &event)?;
                }
                Ok(purged)
            })
            .await;
        match purged {
            Ok(true) => {
                summary.trashed += 1;
                metrics.trash_purged.inc();
                tracing::info!(doc = %doc_id, "purged from the trash for good");
            }
            Ok(false) => {}
            Err(e) => {
                summary.failed += 1;
                tracing::warn!(doc = %doc_id, error = %e, "purging a trashed document failed");
            }
        }
    }
}

/// How old a version reservation without its body must be before a pass clears it.
const UNFILLED_GRACE_MS: i64 = 3_600_000;

/// Forgets the audit rows recorded before `before` (one node at a time in a cluster).
async fn forget_audit(storage: &Storage, before: i64, summary: &mut PassSummary) {
    let outcome = storage
        .write(move |c| {
            if !ownership::compaction_turn(c)? {
                return Ok(0);
            }
            audit::forget_before(c, before)
        })
        .await;
    match outcome {
        Ok(n) => summary.audit += n,
        Err(e) => {
            summary.failed += 1;
            tracing::warn!(error = %e, "audit retention failed");
        }
    }
}

/// Applies the versions' retention and sets the versions' gauges.
async fn expire_versions(
    storage: &Storage,
    now: i64,
    policy: &VersionPolicy,
    summary: &mut PassSummary,
    metrics: &Metrics,
) {
    let p = *policy;
    let outcome = storage
        .write(move |c| {
            // Another node's pass is at it: the totals alone.
            if !ownership::compaction_turn(c)? {
                return Ok((0, versions::totals(c)?));
            }
            let old = versions::automatic_older_than(c, now - p.hourly_ms)?;
            let gone = versions::expired(&old, now, &p);
            let n = versions::delete_ids(c, &gone)?;
            // Reservations a crash left unfilled (a version is filled within a second).
            versions::forget_unfilled(c, now - UNFILLED_GRACE_MS)?;
            Ok((n, versions::totals(c)?))
        })
        .await;
    match outcome {
        Ok((n, (kept, bytes))) => {
            summary.versions += n as u64;
            metrics.versions_expired.inc_by(n as u64);
            metrics.versions_kept.set(kept);
            metrics.versions_bytes.set(bytes);
        }
        Err(e) => {
            summary.failed += 1;
            tracing::warn!(error = %e, "version retention failed");
        }
    }
}

impl Actor for CompactionSupervisor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        if self.run_at_start {
            ctx.wait(self.pass().into_actor(self).map(|_, _, _| ()));
        }
        ctx.run_interval(self.interval, |act, ctx| {
            // `wait`: passes never overlap.
            ctx.wait(act.pass().into_actor(act).map(|_, _, _| ()));
        });
    }
}

impl Handler<RunPass> for CompactionSupervisor {
    type Result = ResponseActFuture<Self, PassSummary>;

    fn handle(&mut self, _msg: RunPass, _ctx: &mut Context<Self>) -> Self::Result {
        Box::pin(self.pass().into_actor(self))
    }
}

/// Whether another live node holds `doc_id` now (its own pass compacts it).
async fn held_elsewhere(storage: &Storage, node: &ThisNode, doc_id: &str) -> bool {
    let me = node.current().map(|m| m.inc);
    let d = doc_id.to_string();
    match storage.read(move |c| ownership::owner(c, &d)).await {
        Ok(Some(o)) => me.as_deref() != Some(o.inc.as_str()),
        Ok(None) => false,
        // Cannot tell: leave it for the next pass rather than pull it here.
        Err(_) => true,
    }
}
