//! Who did something and from where, for the audit rows handlers write in the same storage
//! call as the change they record (`storage::audit`).

use actix_web::HttpRequest;
use serde_json::Value;

use docsync_actors::storage::accounts::User;
use docsync_actors::storage::audit::{actions, AuditEvent};
use docsync_actors::storage::sharing::Share;

use super::state::AppState;

/// The actor of a request: their user when known, and the client address.
#[derive(Debug, Clone)]
pub struct Actor {
    pub id: Option<String>,
    pub name: Option<String>,
    pub ip: String,
}

impl Actor {
    pub fn of(state: &AppState, req: &HttpRequest, user: Option<&User>) -> Actor {
        Actor {
            id: user.map(|u| u.id.clone()),
            name: user.map(|u| u.name.clone()),
            ip: state.client_address(req),
        }
    }

    /// The same address, acting as `user` (a login that just succeeded).
    pub fn as_user(&self, user: &User) -> Actor {
        Actor {
            id: Some(user.id.clone()),
            name: Some(user.name.clone()),
            ip: self.ip.clone(),
        }
    }

    pub fn event(
        &self,
        action: &'static str,
        target: impl Into<String>,
        detail: Value,
    ) -> AuditEvent {
        AuditEvent {
            actor_id: self.id.clone(),
            actor_name: self.name.clone(),
            action,
            target: target.into(),
            ip: self.ip.clone(),
            detail,
        }
    }
}

/// What replacing `before` with `after` on `target` (`doc:ID`, `folder:ID`) added, changed
/// and removed, one audit event each (a changed access is an added share with `from`).
pub fn share_changes(
    actor: &Actor,
    target: &str,
    before: &[Share],
    after: &[Share],
) -> Vec<AuditEvent> {
    let same = |a: &Share, b: &Share| a.kind == b.kind && a.id == b.id;
    let mut out = Vec::new();
    for s in after {
        match before.iter().find(|b| same(b, s)) {
            Some(b) if b.access == s.access => {}
            Some(b) => out.push(actor.event(
                actions::SHARE_ADDED,
                target,
                serde_json::json!({"kind": s.kind, "id": s.id, "access": s.access, "from": b.access}),
            )),
            None => out.push(actor.event(
                actions::SHARE_ADDED,
                target,
                serde_json::json!({"kind": s.kind, "id": s.id, "access": s.access}),
            )),
        }
    }
    for b in before.iter().filter(|b| !after.iter().any(|s| same(b, s))) {
        out.push(actor.event(
            actions::SHARE_REMOVED,
            target,
            serde_json::json!({"kind": b.kind, "id": b.id, "access": b.access}),
        ));
    }
    out
}

/// The browser a session was made in, as the "signed in on" list shows it.
pub fn user_agent(req: &HttpRequest) -> String {
    req.headers()
        .get(actix_web::http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
}
