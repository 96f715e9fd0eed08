//! `Sync` (PROTOCOL §3): the hold list, the ops through the pure rules, the rows queued on
//! the writer, and the reply built once they are durable.

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Instant;

use actix::prelude::*;

use crate::collab::block::Block;
use crate::collab::lease::HoldOutcome;
use crate::collab::op::{Effect, LogEntry, Op, OpKind, OpResult, OpStatus};
use crate::collab::rules::{apply_op, OpContext};
use crate::collab::sync_request::SyncRequest;
use crate::document::guests::{self, Catch, Confined};
use crate::document::messages::{Caller, DocError, Mode};
use crate::document::sync_reply::{Entries, LeasesReply, LogPage, SyncFields, SyncReply};
use crate::metrics::OpTally;
use crate::storage::documents::{self, DocWrite};
use crate::storage::log::{LogRecord, Precheck};
use crate::storage::roles::BulletRoot;
use crate::storage::StorageError;

use super::DocumentActor;

/// A checked sync request of one tab (or of the server itself, seeding a document), with
/// the idempotency pre-check read for it — or without, first: the actor answers
/// `StalePrecheck` ("read it and send again") only when one of the ops needs it (an op ID
/// that may be a retry, a block this document does not have).
#[derive(Message, Clone)]
#[rtype(result = "Result<SyncReply, DocError>")]
pub struct Sync {
    /// Its `client` is the request's tab; `None` only for the server's own seeding.
    caller: Caller,
    last_seq: i64,
    ops: Vec<Op>,
    /// `None` keeps whatever is held.
    hold: Option<Vec<String>>,
    /// The pre-check and when it was read: the actor trusts it only if it is younger than
    /// anything the actor forgot (`RecentResults::trusts`). `None`: not read.
    precheck: Option<(Precheck, Instant)>,
    /// An op ID answered as applied together with the ops, with no op of its own: a
    /// restore's `opIdPrefix`, so a retry of the whole batch is recognised as one.
    marker: Option<String>,
}

impl Sync {
    /// A tab's request; the caller's client is the request's.
    pub fn new(
        caller: Caller,
        request: SyncRequest,
        precheck: Option<(Precheck, Instant)>,
    ) -> Sync {
        Sync {
            caller: Caller {
                client: Some(request.client),
                ..caller
            },
            last_seq: request.last_seq,
            ops: request.ops,
            hold: request.hold,
            precheck,
            marker: None,
        }
    }

    /// The ops of a restore (PROTOCOL §8), by the restoring tab, answered as one batch
    /// under `marker` (the request's `opIdPrefix`). `precheck` must cover `marker`.
    pub(crate) fn batch(
        caller: Caller,
        ops: Vec<Op>,
        marker: String,
        last_seq: i64,
        precheck: Option<(Precheck, Instant)>,
    ) -> Sync {
        Sync {
            caller,
            last_seq,
            ops,
            hold: None,
            precheck,
            marker: Some(marker),
        }
    }

    /// Ops the server applies in a user's name without a tab (a sample document): no
    /// session is opened, no lease taken.
    pub fn seed(caller: Caller, ops: Vec<Op>, read_at: Instant) -> Sync {
        Sync {
            caller: Caller {
                client: None,
                ..caller
            },
            last_seq: 0,
            ops,
            hold: None,
            precheck: Some((Precheck::default(), read_at)),
            marker: None,
        }
    }

    /// The same request from a caller who already has the log up to `last_seq` (a
    /// server-side import sending batch after batch: each reply carries only the new
    /// entries).
    pub fn after(self, last_seq: i64) -> Sync {
        Sync { last_seq, ..self }
    }

    fn known(&self, op_id: &str) -> Option<&OpResult> {
        self.precheck.as_ref().and_then(|(p, _)| p.known.get(op_id))
    }
}

/// No blocks belong to another document as far as a request without a pre-check knows
/// (it names only blocks this document has: `needs_precheck`).
static NO_FOREIGN: std::sync::LazyLock<HashSet<String>> = std::sync::LazyLock::new(HashSet::new);

/// What applying a request's ops produced.
struct Applied {
    results: Vec<OpResult>,
    write: DocWrite,
    lease_changed: bool,
    tally: OpTally,
}

impl DocumentActor {
    /// The log entries a client that has seen `last_seq` gets, whether there are more, and
    /// whether it must reload (`resync`).
    fn log_page(&mut self, last_seq: i64, ahead: bool) -> (LogPage, bool, bool) {
        let head = self.announcer.durable_head();
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
        let (page, has_more, resync, head_seq) = match caller.bullets() {
            None => {
                let (page, has_more, resync) = self.log_page(last_seq, ahead);
                (page, has_more, resync, self.announcer.durable_head())
            }
            Some(roots) => self.guest_page(caller, roots, last_seq, now),
        };
        let (others, people, sessions) = self.presence_for(caller, now);
        let icon = match caller.bullets() {
            None => self.state.as_ref().and_then(|s| s.icon.clone()),
            Some(_) => None,
        };
        SyncReply {
            page,
            fields: SyncFields {
                results,
                has_more,
                head_seq,
                lease_seq: self.announcer.lease_seq(),
                leases: LeasesReply {
                    granted: hold.granted,
                    denied: hold.denied,
                    others,
                },
                role: caller.role,
                bullet_guest: caller.bullets().is_some(),
                shared: caller.shared,
                sessions,
                people,
                mode: self.mode(caller.shared),
                resync,
                icon,
            },
        }
    }

    /// A bullet guest's page: not the log, but what changed in their view since they were
    /// last sent it (`GuestViews`), with the cursor that goes with it.
    fn guest_page(
        &mut self,
        caller: &Caller,
        roots: &[BulletRoot],
        last_seq: i64,
        now: i64,
    ) -> (LogPage, bool, bool, i64) {
        let head = self.announcer.durable_head();
        let (Some(client), Some(state)) = (caller.client.as_ref(), self.state.as_ref()) else {
            return (LogPage::Ready(Entries::none()), false, true, head);
        };
        match self
            .guests
            .catch_up(client.as_str(), state, roots, last_seq, head, now)
        {
            Catch::Resync => (LogPage::Ready(Entries::none()), false, true, head),
            Catch::Caught { seq, entry } => {
                let records = entry
                    .map(|e| vec![Arc::new(LogRecord::from_entry(&e))])
                    .unwrap_or_default();
                (LogPage::Ready(Entries::Records(records)), false, false, seq)
            }
        }
    }

    /// Whether a request sent without a pre-check needs one: an op that is neither in
    /// memory nor surely new may be a retry of an op answered long ago, and a block this
    /// document does not have may belong to another one — both are known only to the
    /// database.
    fn needs_precheck(&self, msg: &Sync) -> bool {
        let Some(state) = &self.state else {
            return true;
        };
        msg.ops.iter().any(|op| {
            let answered = self.recent.get(&op.op_id).is_some();
            let unsure = !answered && !self.recent.surely_new(&op.op_id);
            unsure
                || op
                    .kind
                    .referenced_blocks()
                    .iter()
                    .any(|b| state.get(b).is_none() && !state.is_purged(b))
        })
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
            .filter(|o| self.recent.get(&o.op_id).is_none() && msg.known(&o.op_id).is_none())
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
    fn apply_ops(&mut self, msg: &Sync, now: i64, leases_enabled: bool) -> Applied {
        let client = msg.caller.client_str();
        let author = &msg.caller.author;
        let state = self.state.as_mut().expect("checked by refuse()");
        let mut write = DocWrite {
            doc_id: self.doc_id.as_str().to_string(),
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
            if let Some(r) = self.recent.get(&op.op_id) {
                results.push(r.clone());
                continue;
            }
            if let Some(r) = msg.known(&op.op_id) {
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
            if let (Some(marker), OpKind::SetContent { content, .. }) =
                (&self.cfg.panic_marker, &op.kind)
            {
                if content == marker {
                    panic!("fault injection: panic marker in set_content");
                }
            }
            let ctx = OpContext {
                client_id: client,
                author,
                now,
                foreign: msg
                    .precheck
                    .as_ref()
                    .map_or(&*NO_FOREIGN, |(p, _)| &p.foreign),
                leases_enabled,
                max_depth: self.cfg.max_depth,
            };
            // A bullet guest's op is confined to their view first (`guests::confine`).
            let confined;
            let (op, mut applied) = match msg.caller.bullets() {
                None => (op, apply_op(state, &self.leases, &ctx, op)),
                Some(roots) => match guests::confine(state, roots, op) {
                    Confined::Apply(o) => {
                        confined = o;
                        let mut applied = apply_op(state, &self.leases, &ctx, &confined);
                        for e in &mut applied.effects {
                            if let Effect::Block { block } = e {
                                if let Some(kept) =
                                    guests::keep_inside(state, roots, &confined, block)
                                {
                                    *block = kept;
                                }
                            }
                        }
                        (&confined, applied)
                    }
                    Confined::Answer(result) => (
                        op,
                        crate::collab::rules::Applied {
                            result,
                            effects: Vec::new(),
                            lease_grants: Vec::new(),
                        },
                    ),
                },
            };
            let effects = std::mem::take(&mut applied.effects);
            let mut result = applied.result;
            if !effects.is_empty() {
                state.head_seq += 1;
                result.seq = Some(state.head_seq);
                for e in &effects {
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
                    client_id: client.to_string(),
                    user_id: author.user_id.clone(),
                    at: now,
                    effects,
                };
                write.log.push(Arc::new(LogRecord::from_entry(&entry)));
            }
            for id in &applied.lease_grants {
                lease_changed |= self.leases.grant(id, client, author, now);
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
        if let Some(marker) = &msg.marker {
            let done = OpResult::applied(marker, None);
            write.results.push((
                marker.clone(),
                serde_json::to_string(&done).expect("result serialises"),
            ));
            fresh.push(done);
        }
        write.head_after = state.head_seq;
        self.announcer.touched(
            changed
                .iter()
                .map(|b| b.id.as_str())
                .chain(write.purged.iter().map(String::as_str)),
        );
        write.blocks = changed;
        self.recent.remember(&fresh);
        Applied {
            results,
            write,
            lease_changed,
            tally,
        }
    }
}

impl Handler<Sync> for DocumentActor {
    type Result = ResponseActFuture<Self, Result<SyncReply, DocError>>;

    fn handle(&mut self, msg: Sync, ctx: &mut Context<Self>) -> Self::Result {
        if let Some(e) = self.refuse_for(&msg.caller) {
            return Box::pin(actix::fut::ready(Err(e)));
        }
        let precheck_missing = match &msg.precheck {
            _ if msg.ops.is_empty() => false,
            Some((_, read_at)) => !self.recent.trusts(*read_at),
            None => self.needs_precheck(&msg),
        };
        if precheck_missing {
            self.cfg.metrics.sync_prechecks.inc();
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
        let ahead = msg.last_seq > self.announcer.durable_head();
        let author = &msg.caller.author;
        self.see(
            msg.caller.client.as_ref(),
            &author.user_id,
            &author.name,
            now,
        );
        let client = msg.caller.client_str();
        // Viewers never hold leases: a read-only user must not lock editors out.
        let leases_enabled =
            self.mode(msg.caller.shared) == Mode::Full && msg.caller.role.can_write();
        // A bullet guest holds leases only on blocks of their view they may write.
        let wished = match (&msg.hold, msg.caller.bullets(), self.state.as_ref()) {
            (Some(list), Some(roots), Some(doc)) => Some(guests::writable_only(doc, roots, list)),
            (list, _, _) => list.clone(),
        };
        let held_before = match &wished {
            Some(_) => self.leases.held_by_client(client, now),
            None => Vec::new(),
        };
        let hold = match (&wished, leases_enabled) {
            (Some(list), true) => self.leases.hold(client, author, list, now),
            (Some(_), false) => HoldOutcome {
                changed: self.leases.release_client(client),
                ..HoldOutcome::default()
            },
            (None, _) => HoldOutcome::default(),
        };
        if hold.changed {
            // The blocks whose lease came or went: what decides which guests hear of it.
            let held_after = self.leases.held_by_client(client, now);
            let moved = held_after
                .iter()
                .filter(|b| !held_before.contains(b))
                .chain(held_before.iter().filter(|b| !held_after.contains(b)));
            self.announcer.touched(moved.map(String::as_str));
        }
        self.cfg
            .metrics
            .lease_grants
            .inc_by(hold.granted.len() as u64);
        self.cfg
            .metrics
            .lease_denials
            .inc_by(hold.denied.len() as u64);
        let received = Instant::now();
        let last_seq = msg.last_seq;
        if msg.ops.is_empty() {
            if hold.changed {
                self.announcer.presence_changed();
            }
            self.settle();
            let reply = self.reply(&msg.caller, last_seq, ahead, Vec::new(), hold);
            return Box::pin(actix::fut::ready(Ok(reply)));
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            self.apply_ops(&msg, now, leases_enabled)
        }));
        let Applied {
            results,
            write,
            lease_changed,
            tally,
        } = match outcome {
            Ok(v) => v,
            Err(_) => {
                self.poison(ctx, "panic while applying ops");
                return Box::pin(actix::fut::ready(Err(DocError::Internal(
                    "the document could not apply this request; it has been reloaded".into(),
                ))));
            }
        };
        if hold.changed || lease_changed {
            self.announcer.presence_changed();
        }
        for rec in &write.log {
            self.tail.push(rec.clone(), self.cfg.log_tail);
        }
        let my_write = self.recent.queue_write();
        self.write_queued();
        // This request's session and lease news wait for its commit (see `settle`).
        self.announcer.sync_write_queued();
        let head_after = write.head_after;
        let epoch = self.ownership.epoch();
        let fut = self
            .storage
            .write(move |c| documents::apply_write(c, &write, epoch));
        let caller = msg.caller;
        Box::pin(
            actix::fut::wrap_future::<_, Self>(fut).map(move |res, act, ctx| {
                act.announcer.sync_write_answered();
                if res.is_ok() {
                    act.stats.count(tally.outcomes());
                    tally.record(&act.cfg.metrics);
                }
                let out = match res {
                    Ok(()) if act.failed.is_none() => {
                        act.recent.committed(my_write);
                        act.announcer.committed(head_after);
                        act.announce();
                        act.stats.answered(received);
                        Ok(act.reply(&caller, last_seq, ahead, results, hold))
                    }
                    Ok(()) => Err(DocError::Restarting),
                    // Already reloading: whatever failed here is retried on the fresh actor.
                    Err(_) if act.failed.is_some() => Err(DocError::Restarting),
                    Err(StorageError::NotOwner { .. }) => {
                        act.lost_ownership(ctx);
                        Err(DocError::NotOwner)
                    }
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
                act.write_answered(ctx);
                out
            }),
        )
    }
}
