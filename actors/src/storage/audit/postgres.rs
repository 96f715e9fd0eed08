//! The audit log's rows on PostgreSQL (twins of `sqlite.rs`).

use postgres::GenericClient;

use super::types::{AuditEvent, AuditFilter, AuditRow};
use crate::storage::error::Result;

pub fn insert_row(c: &mut impl GenericClient, at: i64, e: &AuditEvent, detail: &str) -> Result<()> {
    c.execute(
        "INSERT INTO audit_log (at, actor_id, actor_name, action, target, ip, detail)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
        &[
            &at,
            &e.actor_id,
            &e.actor_name,
            &e.action,
            &e.target,
            &e.ip,
            &detail,
        ],
    )?;
    Ok(())
}

pub fn list_rows(c: &mut impl GenericClient, f: &AuditFilter) -> Result<Vec<AuditRow>> {
    Ok(c.query(
        "SELECT id, at, actor_id, actor_name, action, target, ip, detail FROM audit_log
         WHERE ($1::BIGINT IS NULL OR id < $1)
           AND ($2::TEXT IS NULL OR actor_id = $2 OR lower(actor_name) = lower($2))
           AND ($3::TEXT IS NULL OR action = $3 OR substr(action, 1, length($3) + 1) = $3 || '.')
         ORDER BY id DESC LIMIT $4",
        &[&f.before, &f.actor, &f.action, &f.limit],
    )?
    .iter()
    .map(|r| {
        let detail: String = r.get(7);
        AuditRow {
            id: r.get(0),
            at: r.get(1),
            actor_id: r.get(2),
            actor_name: r.get(3),
            action: r.get(4),
            target: r.get(5),
            ip: r.get(6),
            detail: serde_json::from_str(&detail).unwrap_or(serde_json::Value::Null),
        }
    })
    .collect())
}

pub fn delete_before(c: &mut impl GenericClient, at: i64) -> Result<u64> {
    Ok(c.execute("DELETE FROM audit_log WHERE at < $1", &[&at])?)
}
