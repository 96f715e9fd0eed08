//! `SetIcon`: the document's icon is not part of the op log, but it changes in the
//! document's order like everything else.

use actix::prelude::*;

use crate::document::messages::DocError;
use crate::storage::documents;

use super::DocumentActor;

#[derive(Message, Clone)]
#[rtype(result = "Result<(), DocError>")]
pub struct SetIcon {
    pub icon: Option<String>,
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
            .write(move |c| documents::set_icon(c, doc.as_str(), msg.icon.as_deref(), now));
        self.write_queued();
        Box::pin(
            actix::fut::wrap_future::<_, Self>(fut).map(|res, act, ctx| {
                let out = match res {
                    Ok(()) => {
                        // Not in the log: open editors learn the icon from their next sync.
                        act.announcer.presence_changed();
                        act.settle();
                        Ok(())
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
