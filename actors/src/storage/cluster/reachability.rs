//! Whether the other nodes can reach a node. Membership says a node is alive for the
//! database; it can still be cut off from the other nodes, renewing as ever while every
//! request forwarded to it fails — and then its documents would stay unavailable for as long
//! as the cut lasts. A node that cannot reach an incarnation says so (`suspect`); other nodes
//! check what is suspected themselves (`peers`, then their own probe). When more than half
//! of the live incarnations other than the suspect have said so within the TTL, its
//! membership ends at once (`evicted`): its next renewal fails, it fences itself and joins
//! again as a new incarnation, and its documents can be claimed. A node that only it cannot
//! reach evicts nobody: it is in the minority.
//!
//! Speed: a node whose request to another has waited too long says so at once (`doubt`, a
//! notification with no row), so every node tries the doubted one now, each within the
//! probe's patience, and a majority forms in about one probe's time rather than one after
//! another; an eviction is announced the same way, so requests waiting on the evicted node
//! ask again now. Both are only wake-ups: each node also looks on a timer.
//!
//! Safety does not rest on this: a wrongly evicted node's writes are refused by the epoch
//! like those of any node that lost its documents.

use std::time::Duration;

use postgres::GenericClient;

use super::super::db::Db;
use super::super::error::Result;
use super::membership::Member;
use super::node_news::NODES_CHANNEL;

/// `me` is waiting on the incarnation `doubted` longer than it should: asks every node to
/// try it now (`NodeNews`). Writes nothing; a node that then cannot reach it says so with
/// `suspect`.
pub fn doubt(db: &mut Db, doubted: &str) -> Result<()> {
    match db {
        Db::Sqlite(_) => Ok(()),
        Db::Postgres(t, _) => {
            t.execute("SELECT pg_notify($1, $2)", &[&NODES_CHANNEL, &doubted])?;
            Ok(())
        }
    }
}

/// `me` could not reach the incarnation `suspect`. Returns true when this made a majority of
/// the other live incarnations and the suspect's membership ended now.
pub fn suspect(db: &mut Db, me: &Member, suspect: &str, ttl: Duration) -> Result<bool> {
    match db {
        Db::Sqlite(_) => Ok(false),
        Db::Postgres(t, _) => suspect_pg(&mut **t, me, suspect, ttl),
    }
}

/// A live incarnation other than this node's, as `peers` lists it.
#[derive(Debug, Clone)]
pub struct Peer {
    pub member: Member,
    /// Someone suspected it within the TTL, or it is among the doubted: try it now.
    pub wanted: bool,
}

/// The live incarnations other than `me`, each marked `wanted` when someone has suspected it
/// within `ttl` or it is among `doubted`: for this node to try (the wanted ones at once) and
/// to say so if it cannot reach them either.
pub fn peers(db: &mut Db, me: &Member, ttl: Duration, doubted: &[String]) -> Result<Vec<Peer>> {
    match db {
        Db::Sqlite(_) => Ok(Vec::new()),
        Db::Postgres(t, _) => peers_pg(&mut **t, me, ttl, doubted),
    }
}

fn suspect_pg(
    c: &mut impl GenericClient,
    me: &Member,
    suspect: &str,
    ttl: Duration,
) -> Result<bool> {
    let ttl = ttl.as_secs_f64();
    c.execute(
        "INSERT INTO node_suspicions (suspect_inc, by_inc, at) VALUES ($1, $2, now())
         ON CONFLICT (suspect_inc, by_inc) DO UPDATE SET at = now()",
        &[&suspect, &me.inc],
    )?;
    // Suspicions of incarnations long gone go with each new one (the table stays small).
    c.execute(
        "DELETE FROM node_suspicions WHERE at < now() - make_interval(secs => $1)",
        &[&(ttl * 10.0)],
    )?;
    let evicted = c.execute(
        "UPDATE nodes SET status = 'evicted', expires_at = least(expires_at, now())
          WHERE inc = $1 AND status = 'live'
            AND 2 * (SELECT count(*) FROM node_suspicions s JOIN nodes n ON n.inc = s.by_inc
                      WHERE s.suspect_inc = $1 AND s.by_inc <> $1
                        AND s.at > now() - make_interval(secs => $2)
                        AND docsync_alive(n.status, n.expires_at, n.presence_key))
              > (SELECT count(*) FROM nodes n
                  WHERE n.inc <> $1 AND docsync_alive(n.status, n.expires_at, n.presence_key))",
        &[&suspect, &ttl],
    )? == 1;
    // Sent with the commit: on an eviction, requests waiting on the evicted node ask again
    // now; else every node tries the suspect now (a suspicion is a doubt confirmed).
    let news = if evicted { "" } else { suspect };
    c.execute("SELECT pg_notify($1, $2)", &[&NODES_CHANNEL, &news])?;
    Ok(evicted)
}

fn peers_pg(
    c: &mut impl GenericClient,
    me: &Member,
    ttl: Duration,
    doubted: &[String],
) -> Result<Vec<Peer>> {
    let rows = c.query(
        "SELECT n.node_id, n.inc, n.internal_addr,
                n.inc = ANY($3)
                OR EXISTS (SELECT 1 FROM node_suspicions s
                            WHERE s.suspect_inc = n.inc
                              AND s.at > now() - make_interval(secs => $2)) AS wanted
           FROM nodes n
          WHERE n.inc <> $1 AND docsync_alive(n.status, n.expires_at, n.presence_key)",
        &[&me.inc, &ttl.as_secs_f64(), &doubted],
    )?;
    Ok(rows
        .iter()
        .map(|r| Peer {
            member: Member::from_row(r),
            wanted: r.get("wanted"),
        })
        .collect())
}
