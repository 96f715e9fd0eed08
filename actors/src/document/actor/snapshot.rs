//! `Snapshot` (PROTOCOL §3): the whole document at its durable head, for one caller — or,
//! for a bullet guest (PROTOCOL §10), their view of it: the subtrees of their shared
//! bullets, each root at the top level, the first root's text as the title, and the
//! presence inside them only.

use std::sync::Arc;

use actix::prelude::*;
use serde::Serialize;

use crate::collab::lease::OtherLease;
use crate::collab::validate::DocId;
use crate::document::encoded::SharedBlocks;
use crate::document::messages::{Caller, DocError, Mode};
use crate::document::sessions::Person;
use crate::storage::roles::Role;

use super::DocumentActor;

#[derive(Message, Clone)]
#[rtype(result = "Result<SnapshotReply, DocError>")]
pub struct Snapshot {
    pub caller: Caller,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotOthers {
    pub others: Vec<OtherLease>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotReply {
    pub doc_id: DocId,
    pub title: String,
    pub title_version: i64,
    pub icon: Option<String>,
    pub head_seq: i64,
    pub log_floor: i64,
    pub lease_seq: u64,
    pub role: Role,
    /// The caller sees only the bullets shared with them (PROTOCOL §10): the title is their
    /// shared bullet's text, not the document's, and not theirs to change.
    pub bullet_guest: bool,
    pub shared: bool,
    pub mode: Mode,
    pub sessions: usize,
    /// Who has the document open, one entry per person.
    pub people: Vec<Person>,
    pub leases: SnapshotOthers,
    /// The same for every caller at this head and encoded once for all of them: not part
    /// of this struct's encoding; the HTTP layer adds it as `blocks` (`SharedBlocks::json`).
    #[serde(skip)]
    pub blocks: Arc<SharedBlocks>,
}

impl Handler<Snapshot> for DocumentActor {
    type Result = ResponseActFuture<Self, Result<SnapshotReply, DocError>>;

    fn handle(&mut self, msg: Snapshot, _ctx: &mut Context<Self>) -> Self::Result {
        if let Some(e) = self.refuse_for(&msg.caller) {
            return Box::pin(actix::fut::ready(Err(e)));
        }
        let now = self.clock.now_ms();
        let caller = &msg.caller;
        self.see(
            caller.client.as_ref(),
            &caller.author.user_id,
            &caller.author.name,
            now,
        );
        self.settle();
        let (others, people, sessions) = self.presence_for(caller, now);
        let state = self.state.as_ref().expect("checked by refuse()");
        let (blocks, title, icon) = match caller.bullets() {
            None => (
                self.blocks.at(state),
                state.title.clone(),
                state.icon.clone(),
            ),
            Some(roots) => {
                let client = caller.client.as_ref().map(|c| c.as_str());
                let seen = self.guests.open(client, state, roots, state.head_seq);
                let title = seen
                    .first()
                    .map(|b| b.block.content.clone())
                    .unwrap_or_default();
                (SharedBlocks::new(state.head_seq, seen), title, None)
            }
        };
        let reply = SnapshotReply {
            doc_id: self.doc_id.clone(),
            title,
            title_version: state.title_version,
            icon,
            head_seq: state.head_seq,
            log_floor: state.log_floor,
            lease_seq: self.announcer.lease_seq(),
            role: caller.role,
            bullet_guest: caller.bullets().is_some(),
            shared: caller.shared,
            mode: self.mode(caller.shared),
            sessions,
            people,
            leases: SnapshotOthers { others },
            blocks,
        };
        self.when_durable(reply.head_seq, reply)
    }
}
