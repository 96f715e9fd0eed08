//! Applying a document's requests: `/sync` (hold list, ops through the pure rules, the rows
//! queued on the writer, the reply built once they are durable), snapshots, leave and icon.

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Instant;

use actix::prelude::*;

use crate::collab::block::Block;
use crate::collab::lease::HoldOutcome;
use crate::collab::op::{Effect, LogEntry, OpKind, OpResult, OpStatus};
use crate::collab::rules::{apply_op, OpContext};
use crate::metrics::OpTally;
use crate::storage::documents::{self, DocWrite};
use crate::storage::log::LogRecord;
use crate::storage::StorageError;

use super::actor::{DocumentActor, STOP_GRACE};
use super::encoded::SharedBlocks;
use super::messages::*;

impl DocumentActor {
    pub(super) fn log_page(&mut self, last_seq: i64, ahead: bool) -> (LogPage, bool, bool) {
        let head = self.durable_seq;
        let floor = self.state.as_ref().map_or(0, |s| s.log_floor);
        if ahead || last_seq > head || last_seq < floor {
            return (LogPage::Ready(Entries::none()), false, true);
        }
        if last_seq == head {
            return (LogPage::Ready(Entries::none()), false, false);
        }
        let upto = head.min(last_seq + self.cfg.log_page as i64);
        let has_more = head > upto;
        match self.tail.page(last_seq, upto, head) {
            Some(page) => (LogPage::Ready(Entries::Encoded(page)), has_more, false),
            None => (
                LogPage::Read {
                    after: last_seq,
                    upto,
                },
                has_more,
                false,
            ),
        }
    }

    /// `ahead`: the client had seen more than this server had when the request arrived
    /// (e.g. a restored backup) — judged before this request's own ops moved the head.
    fn reply(
        &mut self,
        caller: &Caller,
        last_seq: i64,
        ahead: bool,
        results: Vec<OpResult>,
        hold: HoldOutcome,
    ) -> SyncReply {
        let now = self.clock.now_ms();
        let (page, has_more, resync) = self.log_page(last_seq, ahead);
        SyncReply {
            page,
            fields: SyncFields {
                results,
                has_more,
                head_seq: self.durable_seq,
                lease_seq: self.lease_seq,
                leases: LeasesReply {
                    granted: hold.granted,
                    denied: hold.denied,
                    others: self.leases.others(&caller.client_id, now),
                },
                role: caller.role,
                shared: caller.shared,
                sessions: self.sessions.len(),
                people: self.sessions.people(),
                mode: self.mode(caller.shared),
                resync,
                icon: self.state.as_ref().and_then(|s| s.icon.clone()),
            },
        }
    }

    pub(super) fn remember(&mut self, result: &OpResult) {
        self.recent
            .insert(result.op_id.clone(), (result.clone(), self.write_no + 1));
        self.recent_order.push_back(result.op_id.clone());
    }

    /// Keeps the in-memory idempotency map bounded. Only results already on disk are dropped,
    /// and pre-checks started before now are no longer trusted to have seen them.
    pub(super) fn trim_recent(&mut self) {
        if self.recent.len() <= self.cfg.recent_results {
            return;
        }
        let mut dropped = false;
        while self.recent.len() > self.cfg.recent_results / 2 {
            let Some(front) = self.recent_order.front() else {
                break;
            };
            match self.recent.get(front) {
                Some((_, w)) if *w > self.durable_write_no => break,
                _ => {}
            }
            let id = self.recent_order.pop_front().expect("front exists");
            self.recent.remove(&id);
            dropped = true;
        }
        if dropped {
            self.trust_precheck_after = Instant::now();
        }
    }

    pub(super) fn push_tail(&mut self, rec: Arc<LogRecord>) {
        self.tail.push(rec, self.cfg.log_tail);
    }

    /// Refuses a request whose new text would take the document past its size budget.
    /// Retries of ops already answered add nothing (they get their stored answers), and a
    /// request that adds no text (moves, deletes, leases) always passes, so a full document
    /// can still be tidied up.
    fn over_size(&self, msg: &Sync) -> Option<DocError> {
        let max = self.cfg.max_document_bytes;
        let state = self.state.as_ref()?;
        if max == 0 {
            return None;
        }
        let adds: usize = msg
            .ops
            .iter()
            .filter(|o| {
                !self.recent.contains_key(&o.op_id) && !msg.precheck.known.contains_key(&o.op_id)
            })
            .map(|o| match &o.kind {
                // An edit replaces its block's text: only growth counts.
                OpKind::SetContent {
                    block_id, content, ..
                } => match state.get(block_id) {
                    Some(b) if !b.deleted => content.len().saturating_sub(b.content.len()),
                    _ => content.len(),
                },
                other => other.added_text_bytes(),
            })
            .sum();
        let size = state.content_bytes();
        (adds > 0 && size + adds > max).then_some(DocError::DocumentFull { size, adds, max })
    }

    /// Runs the rules for every op of a request; returns the results and the rows to write.
    fn apply_ops(
        &mut self,
        msg: &Sync,
        now: i64,
        leases_enabled: bool,
    ) -> (Vec<OpResult>, DocWrite, bool, OpTally) {
        let state = self.state.as_mut().expect("checked by refuse()");
        let mut write = DocWrite {
            doc_id: self.doc_id.clone(),
            expect_head: state.head_seq,
            head_after: state.head_seq,
            now,
            tags: crate::storage::derived::TagBound(self.cfg.max_tags_per_block),
            ..DocWrite::default()
        };
        let mut results = Vec::with_capacity(msg.ops.len());
        let mut tally = OpTally::default();
        let mut changed: Vec<Arc<Block>> = Vec::new();
        let mut lease_changed = false;
        let mut fresh: Vec<OpResult> = Vec::new();
        let mut seen_in_request: HashSet<&str> = HashSet::new();
        for op in &msg.ops {
            if let Some((r, _)) = self.recent.get(&op.op_id) {
                results.push(r.clone());
                continue;
            }
            if let Some(r) = msg.precheck.known.get(&op.op_id) {
                results.push(r.clone());
                continue;
            }
            if !seen_in_request.insert(op.op_id.as_str()) {
                // Same op twice in one request: the second gets the first's answer.
                let first = fresh.iter().find(|r| r.op_id == op.op_id).cloned();
                results.extend(first);
                continue;
            }
            // Fault injection for the crash tests, compiled into debug builds only.
            #[cfg(debug_assertions)]
            if let (Some(marker), crate::collab::op::OpKind::SetContent { content, .. }) =
                (&self.cfg.panic_marker, &op.kind)
            {
                if content == marker {
                    panic!("fault injection: panic marker in set_content");
                }
            }
            let ctx = OpContext {
                client_id: &msg.caller.client_id,
                author: &msg.caller.author,
                now,
                foreign: &msg.precheck.foreign,
                leases_enabled,
                max_depth: self.cfg.max_depth,
            };
            let applied = apply_op(state, &self.leases, &ctx, op);
            let mut result = applied.result;
            if !applied.effects.is_empty() {
                state.head_seq += 1;
                result.seq = Some(state.head_seq);
                for e in &applied.effects {
                    match e {
                        Effect::Block { block } => {
                            changed.retain(|b| b.id != block.id);
                            changed.push(block.clone());
                        }
                        Effect::Title {
                            title,
                            title_version,
                        } => write.title = Some((title.clone(), *title_version)),
                        Effect::Purge { block_ids } => {
                            write.purged.extend(block_ids.iter().cloned())
                        }
                    }
                }
                let entry = LogEntry {
                    seq: state.head_seq,
                    op_id: op.op_id.clone(),
                    kind: op.kind.name().to_string(),
                    client_id: msg.caller.client_id.clone(),
                    user_id: msg.caller.author.user_id.clone(),
                    at: now,
                    effects: applied.effects,
                };
                write.log.push(Arc::new(LogRecord::from_entry(&entry)));
            }
            for id in &applied.lease_grants {
                lease_changed |=
                    self.leases
                        .grant(id, &msg.caller.client_id, &msg.caller.author, now);
            }
            match result.status {
                OpStatus::Applied => self.counters.applied += 1,
                OpStatus::Conflict => self.counters.conflicts += 1,
                OpStatus::Rejected => self.counters.rejected += 1,
            }
            let status = match result.status {
                OpStatus::Applied => "applied",
                OpStatus::Conflict => "conflict",
                OpStatus::Rejected => "rejected",
            };
            tally.add(op.kind.name(), status, result.reason.map(|r| r.as_str()));
            write.results.push((
                result.op_id.clone(),
                serde_json::to_string(&result).expect("result serialises"),
            ));
            fresh.push(result.clone());
            results.push(result);
        }
        write.head_after = state.head_seq;
        write.blocks = changed;
        for r in &fresh {
            self.remember(r);
        }
        (results, write, lease_changed, tally)
    }
}

impl Handler<Sync> for DocumentActor {
    type Result = ResponseActFuture<Self, Result<SyncReply, DocError>>;

    fn handle(&mut self, msg: Sync, ctx: &mut Context<Self>) -> Self::Result {
        if let Some(e) = self.refuse() {
            return Box::pin(actix::fut::ready(Err(e)));
        }
        if !msg.ops.is_empty() && msg.precheck_at < self.trust_precheck_after {
            return Box::pin(actix::fut::ready(Err(DocError::StalePrecheck)));
        }
        if let Some(e) = self.over_size(&msg) {
            self.cfg
                .metrics
                .quota_refusals
                .with_label_values(&["document_size"])
                .inc();
            return Box::pin(actix::fut::ready(Err(e)));
        }
        let now = self.clock.now_ms();
        let ahead = msg.last_seq > self.durable_seq;
        self.see(&msg.caller, now);
        // Viewers never hold leases: a read-only user must not lock editors out.
        let leases_enabled =
            self.mode(msg.caller.shared) == Mode::Full && msg.caller.role.can_write();
        let hold = match (&msg.hold, leases_enabled) {
            (Some(list), true) => {
                self.leases
                    .hold(&msg.caller.client_id, &msg.caller.author, list, now)
            }
            (Some(_), false) => HoldOutcome {
                changed: self.leases.release_client(&msg.caller.client_id),
                ..HoldOutcome::default()
            },
            (None, _) => HoldOutcome::default(),
        };
        self.cfg
            .metrics
            .lease_grants
            .inc_by(hold.granted.len() as u64);
        self.cfg
            .metrics
            .lease_denials
            .inc_by(hold.denied.len() as u64);
        let received = Instant::now();
        let mut lease_changed = hold.changed;
        if msg.ops.is_empty() {
            if lease_changed {
                self.presence_changed();
            }
            self.settle();
            let reply = self.reply(&msg.caller, msg.last_seq, ahead, Vec::new(), hold);
            return Box::pin(actix::fut::ready(Ok(reply)));
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            self.apply_ops(&msg, now, leases_enabled)
        }));
        let (results, write, grants_changed, tally) = match outcome {
            Ok(v) => v,
            Err(_) => {
                self.poison(ctx, "panic while applying ops");
                return Box::pin(actix::fut::ready(Err(DocError::Internal(
                    "the document could not apply this request; it has been reloaded".into(),
                ))));
            }
        };
        lease_changed |= grants_changed;
        if lease_changed {
            self.presence_changed();
        }
        for rec in &write.log {
            self.push_tail(rec.clone());
        }
        self.write_no += 1;
        let my_write = self.write_no;
        self.inflight += 1;
        // This request's session and lease news wait for its commit (see `settle`).
        self.sync_writes += 1;
        let head_after = write.head_after;
        let fut = self
            .storage
            .write(move |c| documents::apply_write(c, &write));
        let caller = msg.caller;
        let last_seq = msg.last_seq;
        Box::pin(
            actix::fut::wrap_future::<_, Self>(fut).map(move |res, act, ctx| {
                act.inflight -= 1;
                act.sync_writes -= 1;
                if res.is_ok() {
                    tally.record(&act.cfg.metrics);
                }
                let out = match res {
                    Ok(()) if act.failed.is_none() => {
                        act.durable_write_no = act.durable_write_no.max(my_write);
                        act.durable_seq = act.durable_seq.max(head_after);
                        act.announce();
                        act.trim_recent();
                        act.record_latency(received);
                        Ok(act.reply(&caller, last_seq, ahead, results, hold))
                    }
                    Ok(()) => Err(DocError::Restarting),
                    // Already reloading: whatever failed here is retried on the fresh actor.
                    Err(_) if act.failed.is_some() => Err(DocError::Restarting),
                    Err(StorageError::ForeignBlock(id)) => {
                        // Another document took this block ID between our pre-check and our
                        // write; nothing of this request landed. A fresh pre-check turns the
                        // op into what a taken or unknown ID gets (`duplicate_block`, …).
                        act.poison(ctx, &format!("block {id} was taken by another document"));
                        Err(DocError::StalePrecheck)
                    }
                    Err(e) => {
                        act.poison(ctx, &e.to_string());
                        Err(e.into())
                    }
                };
                if act.stopping && act.inflight == 0 {
                    ctx.run_later(STOP_GRACE, |act, ctx| act.stop_if_idle(ctx));
                }
                out
            }),
        )
    }
}

/// Snapshots of documents with at least this many blocks share one encoding per head.
pub(super) const SHARE_FROM_BLOCKS: usize = 100;

impl Handler<Snapshot> for DocumentActor {
    type Result = ResponseActFuture<Self, Result<SnapshotReply, DocError>>;

    fn handle(&mut self, msg: Snapshot, _ctx: &mut Context<Self>) -> Self::Result {
        if let Some(e) = self.refuse() {
            return Box::pin(actix::fut::ready(Err(e)));
        }
        let now = self.clock.now_ms();
        self.see(&msg.caller, now);
        self.settle();
        let state = self.state.as_ref().expect("checked by refuse()");
        // One `ordered()` and one encoding per head, whoever asks (see `encoded`). A small
        // document's blocks are cheap to encode again and are not kept: an open actor of a
        // small document stays as small as before.
        let blocks = match &self.shared_blocks {
            Some(b) if b.head_seq() == state.head_seq => b.clone(),
            _ => {
                let ordered: Vec<SnapshotBlock> = state
                    .ordered()
                    .into_iter()
                    .map(|(depth, block)| SnapshotBlock { block, depth })
                    .collect();
                let keep = ordered.len() >= SHARE_FROM_BLOCKS;
                let b = SharedBlocks::new(state.head_seq, ordered);
                self.shared_blocks = keep.then(|| b.clone());
                b
            }
        };
        let reply = SnapshotReply {
            doc_id: state.doc_id.clone(),
            title: state.title.clone(),
            title_version: state.title_version,
            icon: state.icon.clone(),
            head_seq: state.head_seq,
            log_floor: state.log_floor,
            lease_seq: self.lease_seq,
            role: msg.caller.role,
            shared: msg.caller.shared,
            mode: self.mode(msg.caller.shared),
            sessions: self.sessions.len(),
            people: self.sessions.people(),
            leases: SnapshotOthers {
                others: self.leases.others(&msg.caller.client_id, now),
            },
            blocks,
        };
        if state.head_seq <= self.durable_seq {
            return Box::pin(actix::fut::ready(Ok(reply)));
        }
        // The state includes writes still being committed: hand it out only once they are
        // on disk (an empty job behind them in the writer queue marks that moment).
        let barrier = self.storage.write(|_| Ok(()));
        Box::pin(
            actix::fut::wrap_future::<_, Self>(barrier).map(move |res, _act, _ctx| {
                res.map(|_| reply)
                    .map_err(|e| DocError::Storage(e.to_string()))
            }),
        )
    }
}

impl Handler<Leave> for DocumentActor {
    type Result = Result<(), DocError>;

    fn handle(&mut self, msg: Leave, _ctx: &mut Context<Self>) -> Self::Result {
        if let Some(e) = self.refuse() {
            return Err(e);
        }
        let had_session = self.sessions.remove(&msg.client_id);
        let had_leases = self.leases.release_client(&msg.client_id);
        if had_session || had_leases {
            self.presence_changed();
        }
        self.settle();
        Ok(())
    }
}

impl Handler<SetIcon> for DocumentActor {
    type Result = ResponseActFuture<Self, Result<(), DocError>>;

    fn handle(&mut self, msg: SetIcon, _ctx: &mut Context<Self>) -> Self::Result {
        if let Some(e) = self.refuse() {
            return Box::pin(actix::fut::ready(Err(e)));
        }
        let state = self.state.as_mut().expect("checked by refuse()");
        state.icon = msg.icon.clone();
        let doc = self.doc_id.clone();
        let now = self.clock.now_ms();
        let fut = self
            .storage
            .write(move |c| documents::set_icon(c, &doc, msg.icon.as_deref(), now));
        self.inflight += 1;
        Box::pin(
            actix::fut::wrap_future::<_, Self>(fut).map(|res, act, ctx| {
                act.inflight -= 1;
                match res {
                    Ok(()) => {
                        // Not in the log: open editors learn the icon from their next sync.
                        act.presence_changed();
                        act.settle();
                        Ok(())
                    }
                    Err(e) => {
                        act.poison(ctx, &e.to_string());
                        Err(e.into())
                    }
                }
            }),
        )
    }
}
