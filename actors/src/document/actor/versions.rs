//! Versions and restore in the document's op order (PROTOCOL §8). A version is the state
//! the actor holds at its current `seq`, queued on the writer behind the writes of every op
//! it contains (never a torn read). A restore is a batch of ordinary ops of the restoring
//! tab, planned against the state at the moment it is applied and run through `Sync`, right
//! after a version of the state before it.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use actix::prelude::*;
use serde::Serialize;

use crate::collab::op::OpResult;
use crate::collab::restore_plan::{plan, RestoreInput};
use crate::document::messages::{Caller, DocError};
use crate::storage::log::Precheck;
use crate::storage::versions::{VersionKind, VersionMeta, VersionState};

use super::sync::Sync;
use super::DocumentActor;

/// Keep a version of the document as it is now (a named one, or an automatic one).
#[derive(Message, Clone)]
#[rtype(result = "Result<VersionMeta, DocError>")]
pub struct TakeVersion {
    pub kind: VersionKind,
    pub name: Option<String>,
    pub created_by: Option<String>,
}

impl Handler<TakeVersion> for DocumentActor {
    type Result = ResponseActFuture<Self, Result<VersionMeta, DocError>>;

    fn handle(&mut self, msg: TakeVersion, _ctx: &mut Context<Self>) -> Self::Result {
        if let Some(e) = self.refuse() {
            return Box::pin(actix::fut::ready(Err(e)));
        }
        self.take_version(msg.kind, msg.name, msg.created_by)
    }
}

/// Restore a version's state, or some of its bullets, as ops of `caller` (whose `client` is
/// the restoring tab). `precheck` must hold what the database knows of `op_id_prefix`.
#[derive(Message, Clone)]
#[rtype(result = "Result<RestoreReply, DocError>")]
pub struct Restore {
    pub caller: Caller,
    /// How the version is called in the name of the one kept before the restore.
    pub version_label: String,
    pub version: Arc<VersionState>,
    pub only: Option<HashSet<String>>,
    pub op_id_prefix: String,
    pub precheck: (Precheck, Instant),
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RestoreReply {
    /// This `opIdPrefix` was restored before: nothing was applied now.
    pub repeated: bool,
    /// The version kept right before the restore (none for a repeat or an empty restore).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<VersionMeta>,
    /// One result per op the restore consisted of (PROTOCOL §2.1), in order.
    pub results: Vec<OpResult>,
    pub applied: usize,
    pub conflicts: usize,
    pub rejected: usize,
    pub head_seq: i64,
}

impl RestoreReply {
    fn from_results(results: Vec<OpResult>, before: Option<VersionMeta>, head_seq: i64) -> Self {
        use crate::collab::op::OpStatus;
        let count = |s: OpStatus| results.iter().filter(|r| r.status == s).count();
        RestoreReply {
            repeated: false,
            before,
            applied: count(OpStatus::Applied),
            conflicts: count(OpStatus::Conflict),
            rejected: count(OpStatus::Rejected),
            results,
            head_seq,
        }
    }
}

impl Handler<Restore> for DocumentActor {
    type Result = ResponseActFuture<Self, Result<RestoreReply, DocError>>;

    fn handle(&mut self, msg: Restore, ctx: &mut Context<Self>) -> Self::Result {
        if let Some(e) = self.refuse() {
            return Box::pin(actix::fut::ready(Err(e)));
        }
        let marker = msg.op_id_prefix.clone();
        let (precheck, read_at) = msg.precheck;
        let repeated = self.recent.get(&marker).is_some() || precheck.known.contains_key(&marker);
        if !repeated && !self.recent.trusts(read_at) {
            return Box::pin(actix::fut::ready(Err(DocError::StalePrecheck)));
        }
        let head = self.announcer.durable_head();
        if repeated {
            return Box::pin(actix::fut::ready(Ok(RestoreReply {
                repeated: true,
                ..RestoreReply::from_results(Vec::new(), None, head)
            })));
        }
        let state = self.state.as_ref().expect("checked by refuse()");
        let input = RestoreInput {
            title: &msg.version.title,
            blocks: &msg.version.blocks,
            only: msg.only.as_ref(),
            op_prefix: &marker,
        };
        let ops = plan(state, &input, &mut |_| {
            format!("blk_{}", uuid::Uuid::new_v4().simple())
        });
        if ops.is_empty() {
            return Box::pin(actix::fut::ready(Ok(RestoreReply::from_results(
                Vec::new(),
                None,
                head,
            ))));
        }
        let label = format!("Before restoring {}", msg.version_label);
        let before = self.take_version(
            VersionKind::Restore,
            Some(label),
            Some(msg.caller.author.user_id.clone()),
        );
        let sync = Sync::batch(msg.caller, ops, marker, head, Some((precheck, read_at)));
        let applied = <Self as Handler<Sync>>::handle(self, sync, ctx);
        Box::pin(before.then(move |before, _act, _ctx| {
            applied.map(move |res, act, _ctx| {
                let reply = res?;
                act.cfg.metrics.restores.inc();
                Ok(RestoreReply::from_results(
                    reply.fields.results,
                    before.ok(),
                    reply.fields.head_seq,
                ))
            })
        }))
    }
}
