//! Webhooks' rows on PostgreSQL (twins of `sqlite.rs`).

use postgres::{GenericClient, Row};

use super::types::{from_columns, json_list, Columns, Delivery, Webhook};
use crate::storage::error::Result;

const HOOK: &str = "SELECT w.id, w.created_by, w.url, w.events, w.doc_ids, w.created_at, w.cursor,
        w.paused_at, w.paused_reason, w.pending_id, w.pending_after, w.pending_to, w.attempts,
        w.failing_since, w.next_attempt_at, w.delivered_at, u.name
    FROM webhooks w LEFT JOIN users u ON u.id = w.created_by";

fn hook_from_row(r: &Row) -> Columns {
    Columns {
        id: r.get(0),
        created_by: r.get(1),
        url: r.get(2),
        events: r.get(3),
        doc_ids: r.get(4),
        created_at: r.get(5),
        cursor: r.get(6),
        paused_at: r.get(7),
        paused_reason: r.get(8),
        pending_id: r.get(9),
        pending_after: r.get(10),
        pending_to: r.get(11),
        attempts: r.get(12),
        failing_since: r.get(13),
        next_attempt_at: r.get(14),
        delivered_at: r.get(15),
        created_by_name: r.get(16),
    }
}

pub fn insert(c: &mut impl GenericClient, h: &Webhook, secret_sealed: &str) -> Result<()> {
    c.execute(
        "INSERT INTO webhooks (id, created_by, url, events, doc_ids, secret_sealed, created_at,
                               cursor)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        &[
            &h.id,
            &h.created_by,
            &h.url,
            &json_list(&h.events),
            &h.doc_ids.as_deref().map(json_list),
            &secret_sealed,
            &h.created_at,
            &h.cursor_pos,
        ],
    )?;
    Ok(())
}

pub fn list(c: &mut impl GenericClient) -> Result<Vec<Webhook>> {
    c.query(&format!("{HOOK} ORDER BY w.created_at, w.id"), &[])?
        .iter()
        .map(|r| from_columns(hook_from_row(r)))
        .collect()
}

pub fn by_id(c: &mut impl GenericClient, id: &str) -> Result<Option<Webhook>> {
    c.query_opt(&format!("{HOOK} WHERE w.id = $1"), &[&id])?
        .map(|r| from_columns(hook_from_row(&r)))
        .transpose()
}

pub fn secret_sealed(c: &mut impl GenericClient, id: &str) -> Result<Option<String>> {
    Ok(
        c.query_opt("SELECT secret_sealed FROM webhooks WHERE id = $1", &[&id])?
            .map(|r| r.get(0)),
    )
}

pub fn delete(c: &mut impl GenericClient, id: &str) -> Result<bool> {
    c.execute(
        "DELETE FROM webhook_deliveries WHERE webhook_id = $1",
        &[&id],
    )?;
    Ok(c.execute("DELETE FROM webhooks WHERE id = $1", &[&id])? > 0)
}

pub fn claim(
    c: &mut impl GenericClient,
    id: &str,
    node: &str,
    now: i64,
    until: i64,
) -> Result<bool> {
    Ok(c.execute(
        "UPDATE webhooks SET lease_node = $2, lease_until = $4
          WHERE id = $1 AND (lease_node IS NULL OR lease_node = $2 OR lease_until < $3)",
        &[&id, &node, &now, &until],
    )? > 0)
}

pub fn skip_to(c: &mut impl GenericClient, id: &str, cursor: i64) -> Result<()> {
    c.execute(
        "UPDATE webhooks SET cursor = $2
          WHERE id = $1 AND pending_id IS NULL AND cursor < $2",
        &[&id, &cursor],
    )?;
    Ok(())
}

pub fn set_pending(
    c: &mut impl GenericClient,
    id: &str,
    delivery_id: &str,
    after: i64,
    to: i64,
) -> Result<bool> {
    Ok(c.execute(
        "UPDATE webhooks SET pending_id = $2, pending_after = $3, pending_to = $4, attempts = 0
          WHERE id = $1 AND pending_id IS NULL AND cursor = $3",
        &[&id, &delivery_id, &after, &to],
    )? > 0)
}

pub fn delivered(c: &mut impl GenericClient, id: &str, delivery_id: &str, now: i64) -> Result<()> {
    c.execute(
        "UPDATE webhooks SET cursor = pending_to, pending_id = NULL, pending_after = NULL,
                pending_to = NULL, attempts = 0, failing_since = NULL, next_attempt_at = NULL,
                delivered_at = $3
          WHERE id = $1 AND pending_id = $2",
        &[&id, &delivery_id, &now],
    )?;
    Ok(())
}

pub fn failed(
    c: &mut impl GenericClient,
    id: &str,
    attempts: i64,
    failing_since: i64,
    next_attempt_at: i64,
) -> Result<()> {
    c.execute(
        "UPDATE webhooks SET attempts = $2, failing_since = $3, next_attempt_at = $4
          WHERE id = $1",
        &[&id, &attempts, &failing_since, &next_attempt_at],
    )?;
    Ok(())
}

pub fn pause(c: &mut impl GenericClient, id: &str, now: i64, reason: &str) -> Result<bool> {
    Ok(c.execute(
        "UPDATE webhooks SET paused_at = $2, paused_reason = $3
          WHERE id = $1 AND paused_at IS NULL",
        &[&id, &now, &reason],
    )? > 0)
}

pub fn resume(c: &mut impl GenericClient, id: &str) -> Result<bool> {
    Ok(c.execute(
        "UPDATE webhooks SET paused_at = NULL, paused_reason = NULL, attempts = 0,
                failing_since = NULL, next_attempt_at = NULL
          WHERE id = $1",
        &[&id],
    )? > 0)
}

pub fn record(c: &mut impl GenericClient, webhook_id: &str, d: &Delivery, keep: i64) -> Result<()> {
    c.execute(
        "INSERT INTO webhook_deliveries (webhook_id, delivery_id, attempt, at, entries, cursor,
                                         outcome, status, error, ms)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        &[
            &webhook_id,
            &d.delivery_id,
            &d.attempt,
            &d.at,
            &d.entries,
            &d.cursor,
            &d.outcome,
            &d.status.map(i64::from),
            &d.error,
            &d.ms,
        ],
    )?;
    c.execute(
        "DELETE FROM webhook_deliveries WHERE webhook_id = $1 AND id <= (
             SELECT id FROM webhook_deliveries WHERE webhook_id = $1
              ORDER BY id DESC LIMIT 1 OFFSET $2)",
        &[&webhook_id, &keep],
    )?;
    Ok(())
}

pub fn deliveries(
    c: &mut impl GenericClient,
    webhook_id: &str,
    limit: i64,
) -> Result<Vec<Delivery>> {
    Ok(c.query(
        "SELECT delivery_id, attempt, at, entries, cursor, outcome, status, error, ms
               FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY id DESC LIMIT $2",
        &[&webhook_id, &limit],
    )?
    .iter()
    .map(|r| Delivery {
        delivery_id: r.get(0),
        attempt: r.get(1),
        at: r.get(2),
        entries: r.get(3),
        cursor: r.get(4),
        outcome: r.get(5),
        status: r.get::<_, Option<i64>>(6).map(|s| s as i32),
        error: r.get(7),
        ms: r.get(8),
    })
    .collect())
}
