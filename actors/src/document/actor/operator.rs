//! What operators and the document's owner ask of a running actor: its figures (the
//! operator page), its size against the budget, and closing it when the document is deleted.

use actix::prelude::*;
use serde::Serialize;

use crate::collab::validate::DocId;
use crate::document::messages::{Channel, DocError};

use super::DocumentActor;

/// The document was deleted: answer NotFound from now on and stop.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Close;

impl Handler<Close> for DocumentActor {
    type Result = ();

    fn handle(&mut self, _msg: Close, ctx: &mut Context<Self>) {
        self.failed = Some(DocError::NotFound);
        self.state = None;
        self.blocks.clear();
        self.begin_stop(ctx);
    }
}

/// This node left the cluster (fenced) or is leaving it: stop serving the document now.
/// Whatever it still held is released when the actor stops, behind its writes.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Relinquish;

impl Handler<Relinquish> for DocumentActor {
    type Result = ();

    fn handle(&mut self, _msg: Relinquish, ctx: &mut Context<Self>) {
        self.give_up(ctx);
    }
}

/// How much text the document holds, against its budget (`limits.max_document_bytes`).
#[derive(Message, Clone)]
#[rtype(result = "Result<DocSize, DocError>")]
pub struct GetSize;

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DocSize {
    pub content_bytes: usize,
    /// 0: no limit.
    pub max_bytes: usize,
    pub blocks: usize,
}

impl Handler<GetSize> for DocumentActor {
    type Result = Result<DocSize, DocError>;

    fn handle(&mut self, _msg: GetSize, _ctx: &mut Context<Self>) -> Self::Result {
        if let Some(e) = self.refuse() {
            return Err(e);
        }
        let state = self.state.as_ref().expect("checked by refuse()");
        Ok(DocSize {
            content_bytes: state.content_bytes(),
            max_bytes: self.cfg.max_document_bytes,
            blocks: state.block_count(),
        })
    }
}

/// Operator view of one actor.
#[derive(Message)]
#[rtype(result = "ActorReport")]
pub struct GetStats;

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActorReport {
    pub doc_id: DocId,
    /// Requests sent and not yet answered (filled in by the registry).
    pub mailbox_depth: u64,
    pub uptime_ms: i64,
    pub idle_ms: i64,
    pub sync_p50_ms: f64,
    pub sync_p99_ms: f64,
    /// Recent sync latencies (ms), oldest first, for the operator page's chart.
    pub recent_sync_ms: Vec<f64>,
    pub loaded: bool,
    pub blocks: usize,
    /// Bytes of text the document holds (its size budget counts these).
    pub content_bytes: usize,
    pub head_seq: i64,
    pub durable_seq: i64,
    pub sessions: usize,
    pub leases: usize,
    pub inflight_writes: usize,
    pub websocket: usize,
    pub sse: usize,
    pub long_poll: usize,
    /// Cluster mode: other nodes' streams of this document, one per node that relays it
    /// to its own sockets.
    pub relays: usize,
    pub ops_applied: u64,
    pub conflicts: u64,
    pub rejected: u64,
}

impl Handler<GetStats> for DocumentActor {
    type Result = MessageResult<GetStats>;

    fn handle(&mut self, _msg: GetStats, _ctx: &mut Context<Self>) -> Self::Result {
        let now = self.clock.now_ms();
        let (applied, conflicts, rejected) = self.stats.outcomes();
        let state = self.state.as_ref();
        MessageResult(ActorReport {
            doc_id: self.doc_id.clone(),
            mailbox_depth: 0,
            uptime_ms: self.stats.uptime_ms(now),
            idle_ms: self.stats.idle_ms(now),
            sync_p50_ms: self.stats.percentile(0.5),
            sync_p99_ms: self.stats.percentile(0.99),
            recent_sync_ms: self.stats.recent(60),
            loaded: state.is_some(),
            blocks: state.map_or(0, |s| s.block_count()),
            content_bytes: state.map_or(0, |s| s.content_bytes()),
            head_seq: state.map_or(0, |s| s.head_seq),
            durable_seq: self.announcer.durable_head(),
            sessions: self.sessions.len(),
            leases: self.leases.len(),
            inflight_writes: self.inflight,
            websocket: self.subscribers.count(Channel::WebSocket),
            sse: self.subscribers.count(Channel::Sse),
            long_poll: self.waiters.len() + self.subscribers.count(Channel::LongPoll),
            relays: self.subscribers.count(Channel::Relay),
            ops_applied: applied,
            conflicts,
            rejected,
        })
    }
}
