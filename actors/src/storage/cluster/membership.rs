//! Membership: one `nodes` row per incarnation of a node (`inc`, random per start), alive
//! while `expires_at` — set from the database's clock, never the node's — lies ahead. A node
//! renews every second with a TTL of a few; one that could not renew in time must fence
//! itself (stop its actors, close its streams) and register again as a new incarnation:
//! `renew` never brings an expired incarnation back.

use std::time::Duration;

use postgres::Client;

use super::super::error::Result;

/// This node as the cluster knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub node_id: String,
    pub inc: String,
    pub internal_addr: String,
}

impl Member {
    /// From a row of `node_id, inc, internal_addr` (in that order).
    pub(crate) fn from_row(r: &postgres::Row) -> Member {
        Member {
            node_id: r.get(0),
            inc: r.get(1),
            internal_addr: r.get(2),
        }
    }
}

fn interval(ttl: Duration) -> f64 {
    ttl.as_secs_f64()
}

/// Registers a new incarnation of `node_id`, alive for `ttl` from now (database time).
pub fn register(
    c: &mut Client,
    node_id: &str,
    internal_addr: &str,
    ttl: Duration,
) -> Result<Member> {
    let inc = format!("inc_{}", uuid::Uuid::new_v4().simple());
    c.execute(
        "INSERT INTO nodes (inc, node_id, internal_addr, status, expires_at)
         VALUES ($1, $2, $3, 'live', now() + make_interval(secs => $4))",
        &[&inc, &node_id, &internal_addr, &interval(ttl)],
    )?;
    Ok(Member {
        node_id: node_id.to_string(),
        inc,
        internal_addr: internal_addr.to_string(),
    })
}

/// Registers like `register`, and takes the incarnation's presence lock on `c`: while `c`'s
/// session lives the incarnation is present; when the process dies (its connections closed
/// by the kernel) the lock goes at once and so does the incarnation's claim on anything.
/// `c` must stay open — and be used for the renewals — for as long as the node serves.
pub fn register_present(
    c: &mut Client,
    node_id: &str,
    internal_addr: &str,
    ttl: Duration,
) -> Result<Member> {
    let key: i64 = c
        .query_one("SELECT nextval('node_presence_keys')", &[])?
        .get(0);
    c.execute("SELECT pg_advisory_lock(1983, $1::int)", &[&(key as i32)])?;
    let m = register(c, node_id, internal_addr, ttl)?;
    c.execute(
        "UPDATE nodes SET presence_key = $2 WHERE inc = $1",
        &[&m.inc, &key],
    )?;
    Ok(m)
}

/// Extends a live incarnation by `ttl`; false when it had already expired (or left): the
/// node must fence itself and register anew.
pub fn renew(c: &mut Client, m: &Member, ttl: Duration) -> Result<bool> {
    Ok(c.execute(
        "UPDATE nodes SET expires_at = now() + make_interval(secs => $2)
          WHERE inc = $1 AND status = 'live' AND expires_at > now()",
        &[&m.inc, &interval(ttl)],
    )? == 1)
}

/// The incarnation leaves (graceful shutdown) or is fenced: it is not alive any more.
pub fn end(c: &mut Client, m: &Member, fenced: bool) -> Result<()> {
    let status = if fenced { "fenced" } else { "left" };
    c.execute(
        "UPDATE nodes SET status = $2, expires_at = least(expires_at, now()) WHERE inc = $1",
        &[&m.inc, &status],
    )?;
    Ok(())
}

/// Every incarnation alive now.
pub fn live(c: &mut Client) -> Result<Vec<Member>> {
    let rows = c.query(
        "SELECT node_id, inc, internal_addr FROM nodes
          WHERE docsync_alive(status, expires_at, presence_key) ORDER BY node_id, inc",
        &[],
    )?;
    Ok(rows.iter().map(Member::from_row).collect())
}
