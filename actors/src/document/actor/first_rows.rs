//! `FirstRows`: the first rows of the document at its durable head, as a new reader sees
//! them (`collab::first_rows`) — for a device that has no copy of a big document to draw
//! while the whole snapshot is on its way. A plain read: no session, no presence.

use actix::prelude::*;
use serde::Serialize;

use crate::collab::first_rows::{first_rows, FirstRow};
use crate::collab::validate::DocId;
use crate::document::guests::root_ids;
use crate::document::messages::{Caller, DocError};

use super::DocumentActor;

#[derive(Message, Clone)]
#[rtype(result = "Result<FirstRowsReply, DocError>")]
pub struct FirstRows {
    pub caller: Caller,
    /// At most this many rows.
    pub count: usize,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FirstRowsReply {
    pub doc_id: DocId,
    /// The document's title; a bullet guest's first shared bullet's text.
    pub title: String,
    pub icon: Option<String>,
    pub head_seq: i64,
    pub bullet_guest: bool,
    pub rows: Vec<FirstRow>,
}

impl Handler<FirstRows> for DocumentActor {
    type Result = ResponseActFuture<Self, Result<FirstRowsReply, DocError>>;

    fn handle(&mut self, msg: FirstRows, _ctx: &mut Context<Self>) -> Self::Result {
        if let Some(e) = self.refuse_for(&msg.caller) {
            return Box::pin(actix::fut::ready(Err(e)));
        }
        self.stats.active(self.clock.now_ms());
        let state = self.state.as_ref().expect("checked by refuse()");
        let roots = msg.caller.bullets().map(root_ids);
        let rows = first_rows(state, roots.as_deref(), msg.count);
        let (title, icon) = match &roots {
            None => (state.title.clone(), state.icon.clone()),
            Some(_) => (
                rows.first().map(|r| r.content.clone()).unwrap_or_default(),
                None,
            ),
        };
        let reply = FirstRowsReply {
            doc_id: self.doc_id.clone(),
            title,
            icon,
            head_seq: state.head_seq,
            bullet_guest: roots.is_some(),
            rows,
        };
        self.when_durable(reply.head_seq, reply)
    }
}
