//! Cluster membership of this node (cluster mode): the `Membership` actor registers an
//! incarnation in PostgreSQL and renews it every `renew_every` with a TTL on the database's
//! clock. When it has not renewed for `ttl − margin` of its own monotonic time — counted from
//! the *start* of the last renewal that succeeded, which is no later than the database's
//! moment of it — the database may already count it dead and let another node claim its
//! documents, so it **fences itself**: it tells its listener (`Fenced`: stop the actors,
//! close the streams, answer not ready) and stops renewing. Once the database answers
//! again it registers a new incarnation (`Joined`); an expired one is never revived.
//!
//! Correctness does not rest on this timing: a fenced-late node's writes are refused by the
//! epoch (`storage::documents::apply_write`). The timing keeps it from serving
//! stale reads and from trying.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix::prelude::*;

use crate::storage::cluster::membership::{self as cluster, Member};
use crate::storage::postgres::PgPool;
use crate::storage::StorageError;

/// Told to whoever runs the node.
#[derive(Message, Debug, Clone, PartialEq, Eq)]
#[rtype(result = "()")]
pub enum MembershipEvent {
    /// This incarnation is registered and alive.
    Joined(Member),
    /// This incarnation may be dead for the cluster: stop serving as it.
    Fenced(Member),
}

#[derive(Debug, Clone)]
pub struct MembershipConfig {
    pub node_id: String,
    pub internal_addr: String,
    pub ttl: Duration,
    pub renew_every: Duration,
    /// Fence this long before the TTL runs out (`ttl − margin`).
    pub margin: Duration,
}

impl Default for MembershipConfig {
    fn default() -> Self {
        MembershipConfig {
            node_id: String::new(),
            internal_addr: String::new(),
            ttl: Duration::from_secs(5),
            renew_every: Duration::from_secs(1),
            margin: Duration::from_secs(1),
        }
    }
}

enum Standing {
    /// Not registered (at start, after fencing): register on the next tick — after marking
    /// the fenced incarnation, if any, as such (its row may not have expired yet).
    Out(Option<Member>),
    /// Registered; `since` is when the last successful renewal (or the registration) began.
    In { member: Member, since: Instant },
}

pub struct Membership {
    /// `None` only while being dropped (see `Drop`).
    pool: Option<PgPool>,
    cfg: MembershipConfig,
    listener: Recipient<MembershipEvent>,
    standing: Standing,
    /// One database call at a time.
    busy: bool,
    /// The connection holding this incarnation's presence lock (`cluster::register_present`);
    /// renewals run on it. Taken out and dropped on a blocking thread when fenced.
    presence: Arc<Mutex<Option<Presence>>>,
}

type Presence = r2d2::PooledConnection<r2d2_postgres::PostgresConnectionManager<postgres::NoTls>>;

impl Membership {
    pub fn new(pool: PgPool, cfg: MembershipConfig, listener: Recipient<MembershipEvent>) -> Self {
        Membership {
            pool: Some(pool),
            cfg,
            listener,
            standing: Standing::Out(None),
            busy: false,
            presence: Arc::default(),
        }
    }

    fn tick(&mut self, ctx: &mut Context<Self>) {
        // Fencing is decided by this node's clock alone, even while a call hangs.
        if let Standing::In { member, since } = &self.standing {
            if since.elapsed() + self.cfg.margin >= self.cfg.ttl {
                let m = member.clone();
                tracing::warn!(inc = %m.inc, "could not renew cluster membership in time: fencing this node");
                self.standing = Standing::Out(Some(m.clone()));
                self.listener.do_send(MembershipEvent::Fenced(m));
            }
        }
        if self.busy {
            return;
        }
        self.busy = true;
        let Some(pool) = self.pool.clone() else {
            return;
        };
        let cfg = self.cfg.clone();
        let started = Instant::now();
        match &self.standing {
            Standing::Out(fenced) => {
                let fenced = fenced.clone();
                let presence = self.presence.clone();
                let call = tokio::task::spawn_blocking(move || -> Result<Member, StorageError> {
                    // An old presence (a fenced incarnation's) goes first: its lock with it.
                    drop(presence.lock().unwrap_or_else(|e| e.into_inner()).take());
                    let mut c = pool.get()?;
                    if let Some(old) = &fenced {
                        // Its documents become claimable now, not when its row expires.
                        cluster::end(&mut c, old, true)?;
                    }
                    let member = cluster::register_present(
                        &mut c,
                        &cfg.node_id,
                        &cfg.internal_addr,
                        cfg.ttl,
                    )?;
                    *presence.lock().unwrap_or_else(|e| e.into_inner()) = Some(c);
                    Ok(member)
                });
                ctx.spawn(
                    actix::fut::wrap_future::<_, Self>(call).map(move |res, act, _| {
                        act.busy = false;
                        match res {
                            Ok(Ok(member)) => {
                                act.standing = Standing::In {
                                    member: member.clone(),
                                    since: started,
                                };
                                act.listener.do_send(MembershipEvent::Joined(member));
                            }
                            Ok(Err(e)) => tracing::warn!(error = %e, "registering in the cluster"),
                            Err(e) => tracing::warn!(error = %e, "registering in the cluster"),
                        }
                    }),
                );
            }
            Standing::In { member, .. } => {
                let m = member.clone();
                let presence = self.presence.clone();
                let call = tokio::task::spawn_blocking(move || -> Result<bool, StorageError> {
                    let mut slot = presence.lock().unwrap_or_else(|e| e.into_inner());
                    let Some(c) = slot.as_mut() else {
                        return Ok(false);
                    };
                    match cluster::renew(c, &m, cfg.ttl) {
                        // The presence connection broke: its lock is gone, so other nodes may
                        // claim this node's documents already — fence now, not at the TTL.
                        Err(e) if c.is_closed() => {
                            drop(slot.take());
                            tracing::warn!(error = %e, "lost the cluster presence connection");
                            Ok(false)
                        }
                        other => other,
                    }
                });
                ctx.spawn(
                    actix::fut::wrap_future::<_, Self>(call).map(move |res, act, _| {
                        act.busy = false;
                        let Standing::In { member, since } = &mut act.standing else {
                            return; // fenced meanwhile: this renewal counts for nothing
                        };
                        match res {
                            Ok(Ok(true)) => *since = started,
                            Ok(Ok(false)) => {
                                // The database says this incarnation is over: fence now.
                                let m = member.clone();
                                act.standing = Standing::Out(Some(m.clone()));
                                act.listener.do_send(MembershipEvent::Fenced(m));
                            }
                            Ok(Err(e)) => tracing::warn!(error = %e, "renewing cluster membership"),
                            Err(e) => tracing::warn!(error = %e, "renewing cluster membership"),
                        }
                    }),
                );
            }
        }
    }
}

impl Drop for Membership {
    fn drop(&mut self) {
        // The blocking client's connections end with a `block_on`, which must not run on
        // the actor's runtime thread: the pool goes down on a thread of its own.
        let presence = self.presence.clone();
        if let Some(pool) = self.pool.take() {
            let _ = std::thread::spawn(move || {
                drop(presence.lock().unwrap_or_else(|e| e.into_inner()).take());
                drop(pool)
            })
            .join();
        }
    }
}

impl Actor for Membership {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.tick(ctx);
        ctx.run_interval(self.cfg.renew_every, |act, ctx| act.tick(ctx));
    }
}

/// Leave the cluster (graceful shutdown): the incarnation ends at once.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Leave;

impl Handler<Leave> for Membership {
    type Result = ();

    fn handle(&mut self, _msg: Leave, ctx: &mut Context<Self>) {
        if let Standing::In { member, .. } =
            std::mem::replace(&mut self.standing, Standing::Out(None))
        {
            let pool = self.pool.clone();
            let presence = self.presence.clone();
            let _ = std::thread::spawn(move || {
                if let Some(Ok(mut c)) = pool.map(|p| p.get()) {
                    let _ = cluster::end(&mut c, &member, false);
                }
                drop(presence.lock().unwrap_or_else(|e| e.into_inner()).take());
            })
            .join();
        }
        ctx.stop();
    }
}

#[cfg(test)]
#[path = "membership_tests.rs"]
mod tests;

/// This node's current incarnation as the rest of the node sees it: set on `Joined`,
/// cleared on `Fenced`. Document actors claim their documents as it, and refuse to start
/// while it is empty (the node is not in the cluster: nothing it wrote could be trusted).
#[derive(Debug, Default)]
pub struct ThisNode {
    current: std::sync::RwLock<Option<Member>>,
    /// Documents an actor of this node holds a claim on right now: requests for them are
    /// served here without asking the database who owns them.
    held: std::sync::Mutex<std::collections::HashSet<String>>,
}

impl ThisNode {
    pub fn hold(&self, doc_id: &str) {
        self.held
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(doc_id.to_string());
    }

    pub fn let_go(&self, doc_id: &str) {
        self.held
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(doc_id);
    }

    pub fn holds(&self, doc_id: &str) -> bool {
        self.current.read().map(|c| c.is_some()).unwrap_or(false)
            && self
                .held
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains(doc_id)
    }

    pub fn current(&self) -> Option<Member> {
        self.current.read().expect("not poisoned").clone()
    }

    pub fn set(&self, member: Option<Member>) {
        *self.current.write().expect("not poisoned") = member;
    }
}
