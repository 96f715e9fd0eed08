//! Documents in PostgreSQL: create, load an actor's state, and apply one sync's effects
//! (`DocWrite`, derived data included) — fenced. The write's first statement moves the head only if the head is the
//! one the actor expects **and** the document's `owner_epoch` is the writer's; otherwise
//! nothing is written and the error says which (`NotOwner` is not a head mismatch: the actor
//! stops for good on this node instead of reloading). The row lock it takes also orders the
//! write against a concurrent claim: whichever commits first wins, the other sees its result.

use postgres::{GenericClient, Row, Transaction};

use super::types::DocWrite;
use crate::collab::block::{Author, Block, BlockType};
use crate::collab::document::DocState;
use crate::storage::derived::postgres as derived;
use crate::storage::error::{Result, StorageError};
use crate::storage::postgres::kept::Kept;

pub fn create(
    c: &mut impl GenericClient,
    id: &str,
    owner: &str,
    title: &str,
    folder: Option<&str>,
    now: i64,
) -> Result<()> {
    c.execute(
        "INSERT INTO documents (id, owner_id, folder_id, title, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $5)",
        &[&id, &owner, &folder, &title, &now],
    )?;
    Ok(())
}

fn block_from_row(r: &Row) -> Block {
    let author: Option<String> = r.get("conflict_author");
    let t: String = r.get("type");
    Block {
        id: r.get("id"),
        parent_id: r.get("parent_id"),
        order_key: r.get("order_key"),
        content: r.get("content"),
        block_type: BlockType::parse(&t).unwrap_or_default(),
        checked: r.get("checked"),
        collapsed: r.get("collapsed"),
        language: r.get("language"),
        conflict_of: r.get("conflict_of"),
        conflict_author: author.and_then(|a| serde_json::from_str::<Author>(&a).ok()),
        conflict_resolved: r.get("conflict_resolved"),
        version: r.get("version"),
        deleted: r.get("deleted"),
        deleted_at: r.get("deleted_at"),
        deleted_by: r.get("deleted_by"),
        updated_at: r.get("updated_at"),
        updated_by: r.get("updated_by"),
    }
}

/// A document's whole state (meta, blocks with tombstones, purged IDs).
pub fn load(c: &mut impl GenericClient, doc_id: &str) -> Result<DocState> {
    let meta = c
        .query_opt(
            "SELECT title, title_version, icon, head_seq, log_floor FROM documents WHERE id = $1",
            &[&doc_id],
        )?
        .ok_or_else(|| StorageError::DocNotFound(doc_id.to_string()))?;
    let mut d = DocState::new(doc_id, meta.get::<_, String>(0).as_str());
    d.title_version = meta.get(1);
    d.icon = meta.get(2);
    d.head_seq = meta.get(3);
    d.log_floor = meta.get(4);
    let blocks = c
        .query("SELECT * FROM blocks WHERE doc_id = $1", &[&doc_id])?
        .iter()
        .map(block_from_row)
        .collect::<Vec<_>>();
    let purged = c
        .query("SELECT id FROM purged_blocks WHERE doc_id = $1", &[&doc_id])?
        .iter()
        .map(|r| r.get::<_, String>(0))
        .collect::<Vec<_>>();
    Ok(DocState::from_parts(d, blocks, purged))
}

/// Why a fenced head update matched no row.
fn refusal(tx: &mut Transaction, w: &DocWrite, epoch: i64) -> Result<StorageError> {
    let now = tx.query_opt(
        "SELECT owner_epoch, head_seq FROM documents WHERE id = $1",
        &[&w.doc_id],
    )?;
    Ok(match now {
        None => StorageError::DocNotFound(w.doc_id.clone()),
        Some(r) if r.get::<_, i64>(0) != epoch => StorageError::NotOwner {
            doc: w.doc_id.clone(),
            epoch,
        },
        Some(_) => StorageError::HeadMismatch {
            doc: w.doc_id.clone(),
            expected: w.expect_head,
        },
    })
}

/// A log entry, its bullets' history index (`$10`: their IDs), its place in the feed and the
/// feed's notification (`FEED_CHANNEL`): one statement, one round trip.
const LOG_ENTRY: &str = "WITH entry AS (
      INSERT INTO doc_ops (doc_id, seq, op_id, kind, client_id, user_id, at, epoch, entry)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)),
    changes AS (
      INSERT INTO block_changes (doc_id, block_id, seq)
      SELECT $1, b, $2 FROM unnest($10::text[]) AS b ON CONFLICT DO NOTHING),
    fed AS (INSERT INTO feed (doc_id, seq) VALUES ($1, $2))
  SELECT pg_notify('docsync_feed', '')";

/// Writes one sync's effects as the owner at `epoch`, inside `tx`. Nothing is written unless
/// the document's head is `w.expect_head` and its epoch is `epoch`. Every statement an op
/// runs comes from `kept` (on the writer: prepared once per connection, so each costs one
/// round trip to the database, not two).
pub fn apply_write(tx: &mut Transaction, kept: &mut Kept, w: &DocWrite, epoch: i64) -> Result<()> {
    let moved = match &w.title {
        Some((title, version)) => tx.execute(
            "UPDATE documents SET head_seq = $2, title = $3, title_version = $4, updated_at = $5
              WHERE id = $1 AND head_seq = $6 AND owner_epoch = $7",
            &[
                &w.doc_id,
                &w.head_after,
                title,
                version,
                &w.now,
                &w.expect_head,
                &epoch,
            ],
        )?,
        // Also when the head stays (results only): the fence and the row lock hold for every
        // write of the document.
        None => {
            let head = kept.get(
                tx,
                "UPDATE documents SET head_seq = $2, updated_at = CASE WHEN $2 <> head_seq THEN $3 ELSE updated_at END
                  WHERE id = $1 AND head_seq = $4 AND owner_epoch = $5",
            )?;
            tx.execute(
                &head,
                &[&w.doc_id, &w.head_after, &w.now, &w.expect_head, &epoch],
            )?
        }
    };
    if moved != 1 {
        return Err(refusal(tx, w, epoch)?);
    }
    let upsert = kept.get(
        tx,
        "INSERT INTO blocks (id, doc_id, parent_id, order_key, content, type, checked, collapsed, language,
                             conflict_of, conflict_author, conflict_resolved, version, deleted, deleted_at,
                             updated_at, updated_by, deleted_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
         ON CONFLICT (id) DO UPDATE SET parent_id = excluded.parent_id, order_key = excluded.order_key,
             content = excluded.content, type = excluded.type, checked = excluded.checked,
             collapsed = excluded.collapsed, language = excluded.language, conflict_of = excluded.conflict_of,
             conflict_author = excluded.conflict_author, conflict_resolved = excluded.conflict_resolved,
             version = excluded.version, deleted = excluded.deleted, deleted_at = excluded.deleted_at,
             updated_at = excluded.updated_at, updated_by = excluded.updated_by,
             deleted_by = excluded.deleted_by
           WHERE blocks.doc_id = excluded.doc_id
         RETURNING rid",
    )?;
    for b in &w.blocks {
        let author = b
            .conflict_author
            .as_ref()
            .map(|a| serde_json::to_string(a).expect("author serialises"));
        let rid = tx.query_opt(
            &upsert,
            &[
                &b.id,
                &w.doc_id,
                &b.parent_id,
                &b.order_key,
                &b.content,
                &b.block_type.as_str(),
                &b.checked,
                &b.collapsed,
                &b.language,
                &b.conflict_of,
                &author,
                &b.conflict_resolved,
                &b.version,
                &b.deleted,
                &b.deleted_at,
                &b.updated_at,
                &b.updated_by,
                &b.deleted_by,
            ],
        )?;
        let Some(rid) = rid else {
            return Err(StorageError::ForeignBlock(b.id.clone()));
        };
        derived::refresh_block(tx, kept, &w.doc_id, rid.get(0), b, w.tags)?;
    }
    for id in &w.purged {
        let gone = tx.query_opt(
            "DELETE FROM blocks WHERE id = $1 AND doc_id = $2 RETURNING rid",
            &[id, &w.doc_id],
        )?;
        if let Some(r) = gone {
            derived::forget_block(tx, kept, r.get(0), id)?;
        }
        tx.execute(
            "INSERT INTO purged_blocks (id, doc_id, purged_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
            &[id, &w.doc_id, &w.now],
        )?;
    }
    // One statement per log entry: the entry, its bullets' history index, its place in the
    // feed (numbered by a feed reader once committed, migrations/postgres/0011) and the
    // feed's notification, delivered with the commit to every node's watcher so their feed
    // readers wake (repeats within a transaction are one notification).
    debug_assert!(LOG_ENTRY.contains(crate::storage::feed::head::FEED_CHANNEL));
    let log = kept.get(tx, LOG_ENTRY)?;
    for r in &w.log {
        tx.execute(
            &log,
            &[
                &w.doc_id,
                &r.seq,
                &r.op_id,
                &r.kind,
                &r.client_id,
                &r.user_id,
                &r.at,
                &epoch,
                &r.json.get(),
                &r.blocks,
            ],
        )?;
    }
    let result = kept.get(
        tx,
        "INSERT INTO doc_op_results (doc_id, op_id, result, at) VALUES ($1, $2, $3, $4)",
    )?;
    for (op_id, json) in &w.results {
        tx.execute(&result, &[&w.doc_id, op_id, json, &w.now])?;
    }
    Ok(())
}

pub fn set_icon(
    c: &mut impl GenericClient,
    doc_id: &str,
    icon: Option<&str>,
    now: i64,
) -> Result<()> {
    c.execute(
        "UPDATE documents SET icon = $2, updated_at = $3 WHERE id = $1",
        &[&doc_id, &icon, &now],
    )?;
    Ok(())
}

/// Removes a document and everything hanging off it, versions and derived data included.
pub fn delete(c: &mut impl GenericClient, doc_id: &str) -> Result<bool> {
    for sql in [
        "DELETE FROM block_search WHERE doc_id = $1",
        "DELETE FROM markdown_cache WHERE doc_id = $1",
        "DELETE FROM block_tags WHERE doc_id = $1",
        "DELETE FROM block_links WHERE doc_id = $1",
        "DELETE FROM block_changes WHERE doc_id = $1",
        "DELETE FROM feed WHERE doc_id = $1",
        "DELETE FROM doc_ops WHERE doc_id = $1",
        "DELETE FROM doc_op_results WHERE doc_id = $1",
        "DELETE FROM purged_blocks WHERE doc_id = $1",
        "DELETE FROM doc_versions WHERE doc_id = $1",
        "DELETE FROM blocks WHERE doc_id = $1",
    ] {
        c.execute(sql, &[&doc_id])?;
    }
    Ok(c.execute("DELETE FROM documents WHERE id = $1", &[&doc_id])? == 1)
}

pub fn load_floor(c: &mut impl GenericClient, doc_id: &str) -> Result<i64> {
    c.query_opt("SELECT log_floor FROM documents WHERE id = $1", &[&doc_id])?
        .map(|r| r.get(0))
        .ok_or_else(|| StorageError::DocNotFound(doc_id.to_string()))
}

pub fn meta_title(c: &mut impl GenericClient, doc_id: &str) -> Result<Option<String>> {
    Ok(
        c.query_opt("SELECT title FROM documents WHERE id = $1", &[&doc_id])?
            .map(|r| r.get(0)),
    )
}
