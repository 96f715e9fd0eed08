//! The audit log's rows on SQLite (twins of `postgres.rs`).

use rusqlite::{params, Connection};

use super::types::{AuditEvent, AuditFilter, AuditRow};
use crate::storage::error::Result;

pub fn insert_row(conn: &Connection, at: i64, e: &AuditEvent, detail: &str) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO audit_log (at, actor_id, actor_name, action, target, ip, detail)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        at,
        e.actor_id,
        e.actor_name,
        e.action,
        e.target,
        e.ip,
        detail
    ])?;
    Ok(())
}

pub fn list_rows(conn: &Connection, f: &AuditFilter) -> Result<Vec<AuditRow>> {
    let mut st = conn.prepare_cached(
        "SELECT id, at, actor_id, actor_name, action, target, ip, detail FROM audit_log
         WHERE (?1 IS NULL OR id < ?1)
           AND (?2 IS NULL OR actor_id = ?2 OR actor_name = ?2 COLLATE NOCASE)
           AND (?3 IS NULL OR action = ?3 OR substr(action, 1, length(?3) + 1) = ?3 || '.')
         ORDER BY id DESC LIMIT ?4",
    )?;
    let rows = st.query_map(params![f.before, f.actor, f.action, f.limit], |r| {
        let detail: String = r.get(7)?;
        Ok(AuditRow {
            id: r.get(0)?,
            at: r.get(1)?,
            actor_id: r.get(2)?,
            actor_name: r.get(3)?,
            action: r.get(4)?,
            target: r.get(5)?,
            ip: r.get(6)?,
            detail: serde_json::from_str(&detail).unwrap_or(serde_json::Value::Null),
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

pub fn delete_before(conn: &Connection, at: i64) -> Result<u64> {
    Ok(conn.execute("DELETE FROM audit_log WHERE at < ?1", [at])? as u64)
}
