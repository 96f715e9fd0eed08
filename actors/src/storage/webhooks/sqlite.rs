//! Webhooks' rows on SQLite (twins of `postgres.rs`).

use rusqlite::{params, Connection, OptionalExtension};

use super::types::{from_columns, json_list, Columns, Delivery, Webhook};
use crate::storage::error::Result;

const HOOK: &str = "SELECT w.id, w.created_by, w.url, w.events, w.doc_ids, w.created_at, w.cursor,
        w.paused_at, w.paused_reason, w.pending_id, w.pending_after, w.pending_to, w.attempts,
        w.failing_since, w.next_attempt_at, w.delivered_at, u.name
    FROM webhooks w LEFT JOIN users u ON u.id = w.created_by";

fn hook_from_row(r: &rusqlite::Row) -> rusqlite::Result<Columns> {
    Ok(Columns {
        id: r.get(0)?,
        created_by: r.get(1)?,
        url: r.get(2)?,
        events: r.get(3)?,
        doc_ids: r.get(4)?,
        created_at: r.get(5)?,
        cursor: r.get(6)?,
        paused_at: r.get(7)?,
        paused_reason: r.get(8)?,
        pending_id: r.get(9)?,
        pending_after: r.get(10)?,
        pending_to: r.get(11)?,
        attempts: r.get(12)?,
        failing_since: r.get(13)?,
        next_attempt_at: r.get(14)?,
        delivered_at: r.get(15)?,
        created_by_name: r.get(16)?,
    })
}

pub fn insert(conn: &Connection, h: &Webhook, secret_sealed: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO webhooks (id, created_by, url, events, doc_ids, secret_sealed, created_at,
                               cursor)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            h.id,
            h.created_by,
            h.url,
            json_list(&h.events),
            h.doc_ids.as_deref().map(json_list),
            secret_sealed,
            h.created_at,
            h.cursor_pos
        ],
    )?;
    Ok(())
}

pub fn list(conn: &Connection) -> Result<Vec<Webhook>> {
    let mut st = conn.prepare(&format!("{HOOK} ORDER BY w.created_at, w.id"))?;
    let rows = st.query_map([], hook_from_row)?;
    rows.map(|r| from_columns(r?)).collect()
}

pub fn by_id(conn: &Connection, id: &str) -> Result<Option<Webhook>> {
    conn.query_row(&format!("{HOOK} WHERE w.id = ?1"), [id], hook_from_row)
        .optional()?
        .map(from_columns)
        .transpose()
}

pub fn secret_sealed(conn: &Connection, id: &str) -> Result<Option<String>> {
    Ok(conn
        .query_row(
            "SELECT secret_sealed FROM webhooks WHERE id = ?1",
            [id],
            |r| r.get(0),
        )
        .optional()?)
}

pub fn delete(conn: &Connection, id: &str) -> Result<bool> {
    conn.execute("DELETE FROM webhook_deliveries WHERE webhook_id = ?1", [id])?;
    Ok(conn.execute("DELETE FROM webhooks WHERE id = ?1", [id])? > 0)
}

pub fn claim(conn: &Connection, id: &str, node: &str, now: i64, until: i64) -> Result<bool> {
    Ok(conn.execute(
        "UPDATE webhooks SET lease_node = ?2, lease_until = ?4
          WHERE id = ?1 AND (lease_node IS NULL OR lease_node = ?2 OR lease_until < ?3)",
        params![id, node, now, until],
    )? > 0)
}

pub fn skip_to(conn: &Connection, id: &str, cursor: i64) -> Result<()> {
    conn.execute(
        "UPDATE webhooks SET cursor = ?2
          WHERE id = ?1 AND pending_id IS NULL AND cursor < ?2",
        params![id, cursor],
    )?;
    Ok(())
}

pub fn set_pending(
    conn: &Connection,
    id: &str,
    delivery_id: &str,
    after: i64,
    to: i64,
) -> Result<bool> {
    Ok(conn.execute(
        "UPDATE webhooks SET pending_id = ?2, pending_after = ?3, pending_to = ?4, attempts = 0
          WHERE id = ?1 AND pending_id IS NULL AND cursor = ?3",
        params![id, delivery_id, after, to],
    )? > 0)
}

pub fn delivered(conn: &Connection, id: &str, delivery_id: &str, now: i64) -> Result<()> {
    conn.execute(
        "UPDATE webhooks SET cursor = pending_to, pending_id = NULL, pending_after = NULL,
                pending_to = NULL, attempts = 0, failing_since = NULL, next_attempt_at = NULL,
                delivered_at = ?3
          WHERE id = ?1 AND pending_id = ?2",
        params![id, delivery_id, now],
    )?;
    Ok(())
}

pub fn failed(
    conn: &Connection,
    id: &str,
    attempts: i64,
    failing_since: i64,
    next_attempt_at: i64,
) -> Result<()> {
    conn.execute(
        "UPDATE webhooks SET attempts = ?2, failing_since = ?3, next_attempt_at = ?4
          WHERE id = ?1",
        params![id, attempts, failing_since, next_attempt_at],
    )?;
    Ok(())
}

pub fn pause(conn: &Connection, id: &str, now: i64, reason: &str) -> Result<bool> {
    Ok(conn.execute(
        "UPDATE webhooks SET paused_at = ?2, paused_reason = ?3
          WHERE id = ?1 AND paused_at IS NULL",
        params![id, now, reason],
    )? > 0)
}

pub fn resume(conn: &Connection, id: &str) -> Result<bool> {
    Ok(conn.execute(
        "UPDATE webhooks SET paused_at = NULL, paused_reason = NULL, attempts = 0,
                failing_since = NULL, next_attempt_at = NULL
          WHERE id = ?1",
        [id],
    )? > 0)
}

pub fn record(conn: &Connection, webhook_id: &str, d: &Delivery, keep: i64) -> Result<()> {
    conn.execute(
        "INSERT INTO webhook_deliveries (webhook_id, delivery_id, attempt, at, entries, cursor,
                                         outcome, status, error, ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            webhook_id,
            d.delivery_id,
            d.attempt,
            d.at,
            d.entries,
            d.cursor,
            d.outcome,
            d.status,
            d.error,
            d.ms
        ],
    )?;
    conn.execute(
        "DELETE FROM webhook_deliveries WHERE webhook_id = ?1 AND id <= (
             SELECT id FROM webhook_deliveries WHERE webhook_id = ?1
              ORDER BY id DESC LIMIT 1 OFFSET ?2)",
        params![webhook_id, keep],
    )?;
    Ok(())
}

pub fn deliveries(conn: &Connection, webhook_id: &str, limit: i64) -> Result<Vec<Delivery>> {
    let mut st = conn.prepare(
        "SELECT delivery_id, attempt, at, entries, cursor, outcome, status, error, ms
           FROM webhook_deliveries WHERE webhook_id = ?1 ORDER BY id DESC LIMIT ?2",
    )?;
    let rows = st.query_map(params![webhook_id, limit], |r| {
        Ok(Delivery {
            delivery_id: r.get(0)?,
            attempt: r.get(1)?,
            at: r.get(2)?,
            entries: r.get(3)?,
            cursor: r.get(4)?,
            outcome: r.get(5)?,
            status: r.get(6)?,
            error: r.get(7)?,
            ms: r.get(8)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
