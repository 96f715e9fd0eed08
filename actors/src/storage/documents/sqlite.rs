//! Documents and their blocks on SQLite (twins of `postgres.rs`): creating, loading an
//! actor's state, applying one sync's effects as rows, deleting. Every write checks the head
//! it expects, so a write computed on a state that never reached the disk can never land.

use rusqlite::{params, Connection, OptionalExtension, Row};

use crate::collab::block::{Author, Block, BlockType};
use crate::collab::document::DocState;

use super::types::DocWrite;
use crate::storage::derived::sqlite as derived;
use crate::storage::error::{Result, StorageError};

pub fn create(
    conn: &Connection,
    id: &str,
    owner: &str,
    title: &str,
    folder: Option<&str>,
    now: i64,
) -> Result<()> {
    conn.execute(
        "INSERT INTO documents (id, owner_id, folder_id, title, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
        params![id, owner, folder, title, now],
    )?;
    Ok(())
}

fn block_from_row(r: &Row) -> rusqlite::Result<Block> {
    let author: Option<String> = r.get("conflict_author")?;
    let t: String = r.get("type")?;
    Ok(Block {
        id: r.get("id")?,
        parent_id: r.get("parent_id")?,
        order_key: r.get("order_key")?,
        content: r.get("content")?,
        block_type: BlockType::parse(&t).unwrap_or_default(),
        checked: r.get("checked")?,
        collapsed: r.get("collapsed")?,
        language: r.get("language")?,
        conflict_of: r.get("conflict_of")?,
        conflict_author: author.and_then(|a| serde_json::from_str::<Author>(&a).ok()),
        conflict_resolved: r.get("conflict_resolved")?,
        version: r.get("version")?,
        deleted: r.get("deleted")?,
        deleted_at: r.get("deleted_at")?,
        deleted_by: r.get("deleted_by")?,
        updated_at: r.get("updated_at")?,
        updated_by: r.get("updated_by")?,
    })
}

/// Reads a document's whole state (meta, blocks with tombstones, purged IDs).
pub fn load(conn: &Connection, doc_id: &str) -> Result<DocState> {
    let meta = conn
        .query_row(
            "SELECT title, title_version, icon, head_seq, log_floor FROM documents WHERE id = ?1",
            [doc_id],
            |r| {
                let mut d = DocState::new(doc_id, &r.get::<_, String>(0)?);
                d.title_version = r.get(1)?;
                d.icon = r.get(2)?;
                d.head_seq = r.get(3)?;
                d.log_floor = r.get(4)?;
                Ok(d)
            },
        )
        .optional()?
        .ok_or_else(|| StorageError::DocNotFound(doc_id.to_string()))?;
    let mut stmt = conn.prepare_cached("SELECT * FROM blocks WHERE doc_id = ?1")?;
    let blocks = stmt
        .query_map([doc_id], block_from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut stmt = conn.prepare_cached("SELECT id FROM purged_blocks WHERE doc_id = ?1")?;
    let purged = stmt
        .query_map([doc_id], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(DocState::from_parts(meta, blocks, purged))
}

fn upsert_block(conn: &Connection, doc_id: &str, b: &Block) -> Result<i64> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO blocks (id, doc_id, parent_id, order_key, content, type, checked, collapsed, language,
                             conflict_of, conflict_author, conflict_resolved, version, deleted, deleted_at,
                             updated_at, updated_by, deleted_by)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)
         ON CONFLICT(id) DO UPDATE SET parent_id = excluded.parent_id, order_key = excluded.order_key,
             content = excluded.content, type = excluded.type, checked = excluded.checked,
             collapsed = excluded.collapsed, language = excluded.language, conflict_of = excluded.conflict_of,
             conflict_author = excluded.conflict_author, conflict_resolved = excluded.conflict_resolved,
             version = excluded.version, deleted = excluded.deleted, deleted_at = excluded.deleted_at,
             updated_at = excluded.updated_at, updated_by = excluded.updated_by,
             deleted_by = excluded.deleted_by
           WHERE blocks.doc_id = excluded.doc_id
         RETURNING rid",
    )?;
    let author = b
        .conflict_author
        .as_ref()
        .map(|a| serde_json::to_string(a).expect("author serialises"));
    let rid: Option<i64> = stmt
        .query_row(
            params![
                b.id,
                doc_id,
                b.parent_id,
                b.order_key,
                b.content,
                b.block_type.as_str(),
                b.checked,
                b.collapsed,
                b.language,
                b.conflict_of,
                author,
                b.conflict_resolved,
                b.version,
                b.deleted,
                b.deleted_at,
                b.updated_at,
                b.updated_by,
                b.deleted_by
            ],
            |r| r.get(0),
        )
        .optional()?;
    rid.ok_or_else(|| StorageError::ForeignBlock(b.id.clone()))
}

/// Writes one sync's effects. Runs inside the writer's transaction (its own savepoint).
/// SQLite has one node: the owner's epoch is not stored there.
pub fn apply_write(conn: &Connection, w: &DocWrite, _epoch: i64) -> Result<()> {
    let changed = match &w.title {
        Some((title, version)) => conn
            .prepare_cached(
                "UPDATE documents SET head_seq = ?2, title = ?3, title_version = ?4, updated_at = ?5
                 WHERE id = ?1 AND head_seq = ?6",
            )?
            .execute(params![w.doc_id, w.head_after, title, version, w.now, w.expect_head])?,
        None if w.head_after != w.expect_head => conn
            .prepare_cached(
                "UPDATE documents SET head_seq = ?2, updated_at = ?3 WHERE id = ?1 AND head_seq = ?4",
            )?
            .execute(params![w.doc_id, w.head_after, w.now, w.expect_head])?,
        None => conn
            .prepare_cached("SELECT 1 FROM documents WHERE id = ?1 AND head_seq = ?2")?
            .query_row(params![w.doc_id, w.expect_head], |_| Ok(()))
            .optional()?
            .map_or(0, |_| 1),
    };
    if changed != 1 {
        return Err(StorageError::HeadMismatch {
            doc: w.doc_id.clone(),
            expected: w.expect_head,
        });
    }
    for b in &w.blocks {
        let rid = upsert_block(conn, &w.doc_id, b)?;
        derived::refresh_block(conn, &w.doc_id, rid, b, w.tags)?;
    }
    if !w.purged.is_empty() {
        let mut find =
            conn.prepare_cached("SELECT rid FROM blocks WHERE id = ?1 AND doc_id = ?2")?;
        let mut del = conn.prepare_cached("DELETE FROM blocks WHERE rid = ?1")?;
        let mut remember = conn.prepare_cached(
            "INSERT OR IGNORE INTO purged_blocks (id, doc_id, purged_at) VALUES (?1, ?2, ?3)",
        )?;
        for id in &w.purged {
            if let Some(rid) = find
                .query_row(params![id, w.doc_id], |r| r.get::<_, i64>(0))
                .optional()?
            {
                derived::forget_block(conn, rid, id)?;
                del.execute([rid])?;
            }
            remember.execute(params![id, w.doc_id, w.now])?;
        }
    }
    crate::storage::log::sqlite::insert(conn, &w.doc_id, &w.log)?;
    let mut res = conn.prepare_cached(
        "INSERT INTO doc_op_results (doc_id, op_id, result, at) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for (op_id, json) in &w.results {
        res.execute(params![w.doc_id, op_id, json, w.now])?;
    }
    Ok(())
}

pub fn set_icon(conn: &Connection, doc_id: &str, icon: Option<&str>, now: i64) -> Result<()> {
    conn.execute(
        "UPDATE documents SET icon = ?2, updated_at = ?3 WHERE id = ?1",
        params![doc_id, icon, now],
    )?;
    Ok(())
}

/// Removes a document and everything hanging off it, versions included, for good (the trash
/// after its period, or its owner emptying it).
pub fn delete(conn: &Connection, doc_id: &str) -> Result<bool> {
    derived::forget_document(conn, doc_id)?;
    for sql in [
        "DELETE FROM feed WHERE doc_id = ?1",
        "DELETE FROM doc_ops WHERE doc_id = ?1",
        "DELETE FROM doc_op_results WHERE doc_id = ?1",
        "DELETE FROM purged_blocks WHERE doc_id = ?1",
        "DELETE FROM doc_versions WHERE doc_id = ?1",
        "DELETE FROM blocks WHERE doc_id = ?1",
    ] {
        conn.execute(sql, [doc_id])?;
    }
    Ok(conn.execute("DELETE FROM documents WHERE id = ?1", [doc_id])? == 1)
}

/// The document's log floor: the log holds every entry above it.
pub fn load_floor(conn: &Connection, doc_id: &str) -> Result<i64> {
    conn.query_row(
        "SELECT log_floor FROM documents WHERE id = ?1",
        [doc_id],
        |r| r.get(0),
    )
    .optional()?
    .ok_or_else(|| StorageError::DocNotFound(doc_id.to_string()))
}

pub fn meta_title(conn: &Connection, doc_id: &str) -> Result<Option<String>> {
    Ok(conn
        .query_row("SELECT title FROM documents WHERE id = ?1", [doc_id], |r| {
            r.get(0)
        })
        .optional()?)
}
