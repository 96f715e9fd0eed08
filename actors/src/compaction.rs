//! The compaction supervisor: one pass at start, then every `interval`. It never touches a
//! document's rows itself: for each document due it sends that document's actor a `Compact`
//! message (starting the actor if needed), so compaction takes its place in the document's
//! op order. Documents are done one after another so a pass never floods the writer.

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use serde::Serialize;

use crate::ask::ask;
use crate::clock::SharedClock;
use crate::collab::validate::DocId;
use crate::document::{Compact, DocError};
use crate::metrics::Metrics;
use crate::registry::Documents;
use crate::storage::compaction::{self, Retention};
use crate::storage::{roles, Storage};

#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PassSummary {
    pub documents: u64,
    pub log_rows: u64,
    pub tombstones: u64,
    pub results: u64,
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
        }
    }

    fn pass(&self) -> impl std::future::Future<Output = PassSummary> + use<> {
        let storage = self.storage.clone();
        let registry = self.registry.clone();
        let clock = self.clock.clone();
        let retention = self.retention;
        let metrics = self.metrics.clone();
        async move {
            let started = Instant::now();
            let now = clock.now_ms();
            let mut summary = PassSummary::default();
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
                    Err(DocError::NotFound) => {}
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
                failed = summary.failed,
                duration_ms = summary.duration_ms,
                "compaction pass done"
            );
            summary
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
