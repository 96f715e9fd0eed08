//! The change feed (PROTOCOL §11): every log entry of every document in commit order across
//! documents, for integrators. The log is written with its feed row (`log::sqlite::insert`,
//! `documents::postgres::apply_write`); on PostgreSQL a reader first numbers what committed
//! (`settle`). A page is cut here, once, for both backends: rows after the cursor, each
//! entry offered to the caller's `readable` (the one role function, asked at the moment the
//! page is read), an entry compaction took answered as a resync of its document.
//!
//! Invariants: a number is given once and never below one already readable, so a cursor
//! only moves forward and never passes an entry it did not see; a page's cursor is past
//! every row looked at, sent or not, so entries the caller may not read cost them nothing
//! the next time.

pub mod head;
mod postgres;
mod rows;
mod sqlite;
#[cfg(test)]
mod tests;
mod types;

use std::collections::HashMap;

use crate::collab::op::{Effect, LogEntry};
use crate::storage::db::Db;
use crate::storage::error::{Result, StorageError};
use crate::storage::Storage;

pub use rows::{forget_before, head};
pub use types::{FeedEntry, FeedItem, FeedPage, FeedResync, FeedRow};

/// Rows numbered per write on PostgreSQL (the rest waits for the next round of the loop).
const NUMBER_AT_ONCE: usize = 10_000;

/// Makes every committed entry readable in the feed: on PostgreSQL, numbers the committed
/// rows that wait for it (a write, only when there are some); on SQLite there is nothing
/// to do (rows are numbered as they are written).
pub async fn settle(storage: &Storage) -> Result<()> {
    if !storage.is_postgres() {
        return Ok(());
    }
    while storage.read_short(rows::unnumbered).await? {
        let n = storage
            .write(|db| rows::number_committed(db, NUMBER_AT_ONCE))
            .await?;
        if n < NUMBER_AT_ONCE {
            break;
        }
    }
    // No wake-up to send: the writes' own notifications woke every node's waiters, and
    // each numbers what it needs before reading.
    Ok(())
}

/// The page after `after`: at most `limit` items the caller may read, looking at no more
/// than `scan` rows. `readable(db, doc_id)` is asked once per document in the page.
pub fn page(
    db: &mut Db,
    after: i64,
    limit: usize,
    scan: usize,
    mut readable: impl FnMut(&mut Db, &str) -> Result<bool>,
) -> Result<FeedPage> {
    let limit = limit.max(1);
    let mut entries = Vec::new();
    let mut cursor = after;
    let mut looked = 0;
    let mut sieve = Sieve::default();
    let mut exhausted = false;
    while entries.len() < limit && looked < scan {
        let want = (scan - looked).min(1_000);
        let rows = rows::rows_after(db, cursor, want)?;
        exhausted = rows.len() < want;
        for row in rows {
            looked += 1;
            cursor = row.pos;
            entries.extend(sieve.pass(db, row, &mut readable)?);
            if entries.len() >= limit {
                break;
            }
        }
        if exhausted {
            break;
        }
    }
    let more = if exhausted && entries.len() < limit {
        false
    } else {
        !rows::rows_after(db, cursor, 1)?.is_empty()
    };
    Ok(FeedPage {
        entries,
        cursor: cursor.to_string(),
        more,
    })
}

/// The items after `after` up to and including `to` that `readable` lets through — a batch
/// cut earlier by `page`, read again (a webhook's retry sends the same batch; an entry
/// whose document the reader lost since is left out, and one compaction took meanwhile
/// becomes a resync).
pub fn range(
    db: &mut Db,
    after: i64,
    to: i64,
    mut readable: impl FnMut(&mut Db, &str) -> Result<bool>,
) -> Result<Vec<FeedItem>> {
    let mut items = Vec::new();
    let mut sieve = Sieve::default();
    let mut cursor = after;
    'rows: while cursor < to {
        let rows = rows::rows_after(db, cursor, 1_000)?;
        if rows.is_empty() {
            break;
        }
        for row in rows {
            if row.pos > to {
                break 'rows;
            }
            cursor = row.pos;
            items.extend(sieve.pass(db, row, &mut readable)?);
        }
    }
    Ok(items)
}

/// What one read lets through: `readable` asked once per document, one resync per
/// document (one word each is enough).
#[derive(Default)]
struct Sieve {
    allowed: HashMap<String, bool>,
    resynced: Vec<String>,
}

impl Sieve {
    fn pass(
        &mut self,
        db: &mut Db,
        row: FeedRow,
        readable: &mut impl FnMut(&mut Db, &str) -> Result<bool>,
    ) -> Result<Option<FeedItem>> {
        let ok = match self.allowed.get(&row.doc_id) {
            Some(ok) => *ok,
            None => {
                let ok = readable(db, &row.doc_id)?;
                self.allowed.insert(row.doc_id.clone(), ok);
                ok
            }
        };
        if !ok {
            return Ok(None);
        }
        item(row, &mut self.resynced)
    }
}

/// A row as the feed sends it; None for a second resync of the same document in a page.
fn item(row: FeedRow, resynced: &mut Vec<String>) -> Result<Option<FeedItem>> {
    let cursor = row.pos.to_string();
    let Some(json) = row.entry else {
        if resynced.contains(&row.doc_id) {
            return Ok(None);
        }
        resynced.push(row.doc_id.clone());
        return Ok(Some(FeedItem::Resync(FeedResync {
            cursor,
            doc_id: row.doc_id,
            resync: true,
        })));
    };
    let e: LogEntry = serde_json::from_str(&json).map_err(|err| {
        StorageError::Corrupt(format!("doc_ops {} {}: {err}", row.doc_id, row.seq))
    })?;
    let block_id = e.effects.iter().find_map(|eff| match eff {
        Effect::Block { block } => Some(block.id.clone()),
        Effect::Purge { block_ids } => block_ids.first().cloned(),
        Effect::Title { .. } => None,
    });
    Ok(Some(FeedItem::Entry(FeedEntry {
        cursor,
        doc_id: row.doc_id,
        seq: e.seq,
        at: e.at,
        user_id: e.user_id,
        kind: e.kind,
        block_id,
        effects: e.effects,
    })))
}
