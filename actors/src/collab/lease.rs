//! Per-block leases (PROTOCOL §2.1 rule 10): who owns a bullet for the next 20 s.
//! Pure and in memory: a lease is a promise between live clients, so a server restart
//! simply lets clients ask again. Time is passed in, never read.

use std::collections::HashMap;

use serde::Serialize;

use super::block::Author;

/// The pseudo block ID under which the document title is leased.
pub const TITLE_LEASE: &str = "title";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub client_id: String,
    pub holder: Author,
    pub expires_at: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Denied {
    pub block_id: String,
    pub held_by: Author,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OtherLease {
    pub block_id: String,
    pub client_id: String,
    pub user_id: String,
    pub name: String,
    pub expires_in_ms: i64,
}

/// What a `hold` list did: the granted and denied IDs and whether anyone else could notice
/// (a new, released or taken-over lease), which is what bumps `leaseSeq`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct HoldOutcome {
    pub granted: Vec<String>,
    pub denied: Vec<Denied>,
    pub changed: bool,
}

#[derive(Debug, Default, Clone)]
pub struct LeaseTable {
    leases: HashMap<String, Lease>,
    ttl_ms: i64,
}

impl LeaseTable {
    pub fn new(ttl_ms: i64) -> LeaseTable {
        LeaseTable {
            leases: HashMap::new(),
            ttl_ms,
        }
    }

    pub fn ttl_ms(&self) -> i64 {
        self.ttl_ms
    }

    pub fn len(&self) -> usize {
        self.leases.len()
    }

    pub fn is_empty(&self) -> bool {
        self.leases.is_empty()
    }

    /// The live lease on `block_id` held by someone else, if any: another person's client.
    /// A lease of another client of the same user (their other tab or device) does not
    /// count — the one in use takes the bullet over, so nobody is locked out by themselves.
    pub fn held_by_other(
        &self,
        block_id: &str,
        client_id: &str,
        user_id: &str,
        now: i64,
    ) -> Option<&Lease> {
        self.leases.get(block_id).filter(|l| {
            l.client_id != client_id && l.holder.user_id != user_id && l.expires_at > now
        })
    }

    /// Grants one lease unconditionally (new blocks and conflict copies belong to their author).
    pub fn grant(&mut self, block_id: &str, client_id: &str, holder: &Author, now: i64) -> bool {
        let lease = Lease {
            client_id: client_id.to_string(),
            holder: holder.clone(),
            expires_at: now + self.ttl_ms,
        };
        let changed = self
            .leases
            .get(block_id)
            .is_none_or(|l| l.client_id != client_id || l.expires_at <= now);
        self.leases.insert(block_id.to_string(), lease);
        changed
    }

    /// Applies a client's complete `hold` list: grant or renew what is free, expired, its own
    /// or its user's (taken over from their other client); deny what another person's live
    /// client holds; release its leases not listed.
    pub fn hold(
        &mut self,
        client_id: &str,
        holder: &Author,
        wanted: &[String],
        now: i64,
    ) -> HoldOutcome {
        let mut out = HoldOutcome::default();
        let before = self.leases.len();
        self.leases
            .retain(|id, l| l.client_id != client_id || wanted.iter().any(|w| w == id));
        out.changed |= self.leases.len() != before;
        for id in wanted {
            if let Some(other) = self.held_by_other(id, client_id, &holder.user_id, now) {
                if !out.denied.iter().any(|d| &d.block_id == id) {
                    out.denied.push(Denied {
                        block_id: id.clone(),
                        held_by: other.holder.clone(),
                    });
                }
                continue;
            }
            out.changed |= self.grant(id, client_id, holder, now);
            if !out.granted.contains(id) {
                out.granted.push(id.clone());
            }
        }
        out
    }

    /// Drops every lease of a client (leave, session expiry). Returns whether any existed.
    pub fn release_client(&mut self, client_id: &str) -> bool {
        let before = self.leases.len();
        self.leases.retain(|_, l| l.client_id != client_id);
        self.leases.len() != before
    }

    /// Drops every lease of a user (on all their clients): they lost write access.
    pub fn release_user(&mut self, user_id: &str) -> bool {
        let before = self.leases.len();
        self.leases.retain(|_, l| l.holder.user_id != user_id);
        self.leases.len() != before
    }

    /// Users holding at least one lease.
    pub fn holders(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .leases
            .values()
            .map(|l| l.holder.user_id.clone())
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// Removes expired leases; true when something went away (others must be told).
    pub fn expire(&mut self, now: i64) -> bool {
        let before = self.leases.len();
        self.leases.retain(|_, l| l.expires_at > now);
        self.leases.len() != before
    }

    /// Earliest expiry among live leases, so the actor knows when to look again.
    pub fn next_expiry(&self) -> Option<i64> {
        self.leases.values().map(|l| l.expires_at).min()
    }

    /// Live leases of other clients, sorted by block ID for stable responses.
    pub fn others(&self, client_id: &str, now: i64) -> Vec<OtherLease> {
        let mut v: Vec<OtherLease> = self
            .leases
            .iter()
            .filter(|(_, l)| l.client_id != client_id && l.expires_at > now)
            .map(|(id, l)| OtherLease {
                block_id: id.clone(),
                client_id: l.client_id.clone(),
                user_id: l.holder.user_id.clone(),
                name: l.holder.name.clone(),
                expires_in_ms: l.expires_at - now,
            })
            .collect();
        v.sort_by(|a, b| a.block_id.cmp(&b.block_id));
        v
    }

    /// Leases held by one client (used by tests and the admin view).
    pub fn held_by_client(&self, client_id: &str, now: i64) -> Vec<String> {
        let mut v: Vec<String> = self
            .leases
            .iter()
            .filter(|(_, l)| l.client_id == client_id && l.expires_at > now)
            .map(|(id, _)| id.clone())
            .collect();
        v.sort();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who(n: &str) -> Author {
        Author {
            user_id: format!("usr_{n}"),
            name: n.into(),
        }
    }

    #[test]
    fn grant_deny_renew_release_expire() {
        let mut t = LeaseTable::new(20_000);
        let a = who("a");
        let b = who("b");
        let out = t.hold("cl_a", &a, &["blk_1".into()], 0);
        assert_eq!(out.granted, vec!["blk_1".to_string()]);
        assert!(out.changed);
        let out = t.hold("cl_b", &b, &["blk_1".into()], 1_000);
        assert!(out.granted.is_empty());
        assert_eq!(out.denied[0].held_by, a);
        // Renewal by the same client is not a visible change.
        let out = t.hold("cl_a", &a, &["blk_1".into()], 10_000);
        assert!(!out.changed);
        assert_eq!(
            t.held_by_other("blk_1", "cl_b", "usr_b", 29_999)
                .unwrap()
                .client_id,
            "cl_a"
        );
        assert!(t.held_by_other("blk_1", "cl_b", "usr_b", 30_000).is_none());
        // Expired lease may be taken over.
        let out = t.hold("cl_b", &b, &["blk_1".into()], 30_000);
        assert_eq!(out.granted.len(), 1);
        // Omitting a block releases it.
        let out = t.hold("cl_b", &b, &[], 30_001);
        assert!(out.changed);
        assert!(t.is_empty());
    }

    #[test]
    fn a_users_other_tab_never_locks_them_out() {
        let mut t = LeaseTable::new(20_000);
        let a = who("a");
        t.hold("cl_a_tab1", &a, &["blk_1".into()], 0);
        // the same person's other tab: not someone else, so it takes the bullet over
        assert!(t
            .held_by_other("blk_1", "cl_a_tab2", "usr_a", 1_000)
            .is_none());
        let out = t.hold("cl_a_tab2", &a, &["blk_1".into()], 1_000);
        assert_eq!(out.granted, vec!["blk_1".to_string()]);
        assert!(out.denied.is_empty());
        assert!(out.changed, "a takeover is news for the other tab");
        assert_eq!(
            t.held_by_client("cl_a_tab2", 1_001),
            vec!["blk_1".to_string()]
        );
        // another person is still refused
        let out = t.hold("cl_b", &who("b"), &["blk_1".into()], 2_000);
        assert_eq!(out.denied[0].held_by, a);
    }
}
