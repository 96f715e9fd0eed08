//! Compaction of one document in its own op order (PROTOCOL §6): purge whole tombstone
//! subtrees past retention with a `purge` log entry, raise the log floor, then delete old
//! log rows and idempotency results in small writer jobs.

use std::collections::HashSet;
use std::sync::Arc;

use actix::prelude::*;
use serde::Serialize;

use crate::collab::op::{Effect, LogEntry};
use crate::document::messages::DocError;
use crate::storage::compaction::{self, Retention};
use crate::storage::documents::{self, DocWrite};
use crate::storage::feed;
use crate::storage::log::LogRecord;

use super::DocumentActor;

/// Log rows deleted per writer job, so a big backlog never holds the writer for long.
const COMPACT_CHUNK: usize = 2_000;

/// Compaction of this document, in its op order.
#[derive(Message, Clone)]
#[rtype(result = "Result<CompactOutcome, DocError>")]
pub struct Compact {
    pub now: i64,
    pub shared: bool,
    pub retention: Retention,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompactOutcome {
    pub log_rows: u64,
    pub tombstones: u64,
    pub results: u64,
    pub log_floor: i64,
}

impl Handler<Compact> for DocumentActor {
    type Result = ResponseActFuture<Self, Result<CompactOutcome, DocError>>;

    fn handle(&mut self, msg: Compact, ctx: &mut Context<Self>) -> Self::Result {
        if let Some(e) = self.refuse() {
            return Box::pin(actix::fut::ready(Err(e)));
        }
        self.tick(ctx);
        let state = self.state.as_mut().expect("checked by refuse()");
        let r = msg.retention;
        let tomb_cutoff = msg.now - r.tombstone_ms;
        let due: HashSet<String> = state
            .blocks()
            .filter(|b| b.deleted && b.deleted_at.is_some_and(|t| t < tomb_cutoff))
            .map(|b| b.id.clone())
            .collect();
        // Only whole tombstone subtrees go, so no block is ever left with a missing parent.
        let mut purge: Vec<String> = due
            .iter()
            .filter(|id| state.subtree(id).iter().all(|b| due.contains(&b.id)))
            .cloned()
            .collect();
        purge.sort();
        let head_before = state.head_seq;
        let mut write = DocWrite {
            doc_id: self.doc_id.as_str().to_string(),
            expect_head: head_before,
            head_after: head_before,
            now: msg.now,
            ..DocWrite::default()
        };
        if !purge.is_empty() {
            state.head_seq += 1;
            let effect = Effect::Purge {
                block_ids: purge.clone(),
            };
            crate::collab::replay::apply_effect(state, &effect);
            let entry = LogEntry {
                seq: state.head_seq,
                op_id: format!("op_purge_{}", uuid::Uuid::now_v7().simple()),
                kind: "purge".into(),
                client_id: "server".into(),
                user_id: "system".into(),
                at: msg.now,
                effects: vec![effect],
            };
            write.head_after = state.head_seq;
            write.purged = purge.clone();
            write.log.push(Arc::new(LogRecord::from_entry(&entry)));
        }
        for rec in &write.log {
            self.tail.push(rec.clone(), self.cfg.log_tail);
        }
        let tombstones = purge.len() as u64;
        let log_cutoff = msg.now
            - if msg.shared {
                r.shared_log_ms
            } else {
                r.private_log_ms
            };
        let results_cutoff = msg.now - r.results_ms;
        let head_after = write.head_after;
        let doc = self.doc_id.as_str().to_string();
        let storage = self.storage.clone();
        self.write_queued();
        let epoch = self.ownership.epoch();
        let first = self.storage.write(move |c| {
            if !write.log.is_empty() {
                documents::apply_write(c, &write, epoch)?;
            }
            // The purge entry itself is new, so it always stays above the floor.
            compaction::raise_floor(c, &write.doc_id, log_cutoff, head_before)
        });
        let fut = actix::fut::wrap_future::<_, Self>(first)
            .map(move |res, act, ctx| match res {
                Ok(floor) => {
                    if let Some(s) = act.state.as_mut() {
                        s.log_floor = floor;
                    }
                    act.tail.drop_through(floor);
                    act.announcer.committed(head_after);
                    act.settle();
                    Ok(floor)
                }
                Err(e) => {
                    act.poison(ctx, &e.to_string());
                    Err(DocError::Storage(e.to_string()))
                }
            })
            .then(move |res, _act, _ctx| {
                let work = async move {
                    let floor = res?;
                    let mut out = CompactOutcome {
                        tombstones,
                        log_floor: floor,
                        ..CompactOutcome::default()
                    };
                    loop {
                        let d = doc.clone();
                        let n = storage
                            .write(move |c| {
                                compaction::delete_log_chunk(c, &d, floor, COMPACT_CHUNK)
                            })
                            .await
                            .map_err(|e| DocError::Storage(e.to_string()))?;
                        out.log_rows += n as u64;
                        if n < COMPACT_CHUNK {
                            break;
                        }
                    }
                    let d = doc.clone();
                    storage
                        .write(move |c| {
                            compaction::delete_block_changes(c, &d, floor)?;
                            // The feed keeps the row at the floor: a reader behind it resyncs.
                            feed::forget_before(c, &d, floor)
                        })
                        .await
                        .map_err(|e| DocError::Storage(e.to_string()))?;
                    loop {
                        let d = doc.clone();
                        let n = storage
                            .write(move |c| {
                                compaction::delete_results_chunk(
                                    c,
                                    &d,
                                    results_cutoff,
                                    COMPACT_CHUNK,
                                )
                            })
                            .await
                            .map_err(|e| DocError::Storage(e.to_string()))?;
                        out.results += n as u64;
                        if n < COMPACT_CHUNK {
                            break;
                        }
                    }
                    Ok(out)
                };
                actix::fut::wrap_future::<_, Self>(work)
            })
            .map(|res, act, ctx| {
                act.write_answered(ctx);
                res
            });
        Box::pin(fut)
    }
}
