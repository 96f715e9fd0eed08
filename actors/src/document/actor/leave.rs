//! `Leave`: a tab closed the document (PROTOCOL §3); its session and leases end now rather
//! than when they time out.

use actix::prelude::*;

use crate::collab::validate::ClientId;
use crate::document::messages::DocError;

use super::DocumentActor;

#[derive(Message, Clone)]
#[rtype(result = "Result<(), DocError>")]
pub struct Leave {
    pub client: ClientId,
}

impl Handler<Leave> for DocumentActor {
    type Result = Result<(), DocError>;

    fn handle(&mut self, msg: Leave, _ctx: &mut Context<Self>) -> Self::Result {
        if let Some(e) = self.refuse() {
            return Err(e);
        }
        let had_session = self.sessions.remove(&msg.client);
        // Its stream may close only after this: it must not bring the session back.
        self.subscribers.left(&msg.client);
        let had_leases = self.leases.release_client(msg.client.as_str());
        // A guest tab that comes back reloads its view.
        self.guests.forget(msg.client.as_str());
        if had_session || had_leases {
            self.announcer.presence_changed();
        }
        self.settle();
        Ok(())
    }
}
