//! The role function's rows on SQLite (twins of `postgres.rs`).

use rusqlite::{params, Connection, OptionalExtension};

use super::types::{BulletAccess, ChainAccess, DocPlace, DocRow, FolderRow};
use crate::storage::error::Result;

/// Every folder from `folder` up to the root, nearest first (cycle-safe).
const ANCESTORS: &str = "WITH RECURSIVE chain(id, parent_id, owner_id, name, depth) AS (
        SELECT id, parent_id, owner_id, name, 0 FROM folders WHERE id = ?1
        UNION ALL
        SELECT f.id, f.parent_id, f.owner_id, f.name, c.depth + 1 FROM folders f
        JOIN chain c ON f.id = c.parent_id WHERE c.depth < 64)";

fn place(conn: &Connection, sql: &str, doc_id: &str) -> Result<Option<DocPlace>> {
    Ok(conn
        .prepare_cached(sql)?
        .query_row([doc_id], |r| {
            Ok(DocPlace {
                owner_id: r.get(0)?,
                folder_id: r.get(1)?,
            })
        })
        .optional()?)
}

pub fn user_active(conn: &Connection, user_id: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM users WHERE id = ?1 AND deactivated_at IS NULL")?
        .exists([user_id])?)
}

pub fn live_doc_place(conn: &Connection, doc_id: &str) -> Result<Option<DocPlace>> {
    place(
        conn,
        "SELECT owner_id, folder_id FROM documents WHERE id = ?1 AND trashed_at IS NULL",
        doc_id,
    )
}

pub fn doc_place(conn: &Connection, doc_id: &str) -> Result<Option<DocPlace>> {
    place(
        conn,
        "SELECT owner_id, folder_id FROM documents WHERE id = ?1",
        doc_id,
    )
}

pub fn direct_access(conn: &Connection, doc_id: &str, user_id: &str) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT access FROM doc_shares WHERE doc_id = ?1 AND user_id = ?2")?
        .query_row(params![doc_id, user_id], |r| r.get(0))
        .optional()?)
}

pub fn team_accesses(
    conn: &Connection,
    doc_id: &str,
    user_id: &str,
) -> Result<Vec<(String, String)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT s.access, t.name FROM doc_team_shares s JOIN team_members m ON m.team_id = s.team_id
         JOIN teams t ON t.id = s.team_id WHERE s.doc_id = ?1 AND m.user_id = ?2",
    )?;
    let rows = stmt
        .query_map(params![doc_id, user_id], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

pub fn chain_accesses(
    conn: &Connection,
    folder_id: &str,
    user_id: &str,
) -> Result<Vec<ChainAccess>> {
    let sql = format!(
        "{ANCESTORS}
         SELECT 1, 'write', c.name, c.depth FROM chain c WHERE c.owner_id = ?2
         UNION ALL
         SELECT 0, s.access, c.name, c.depth FROM chain c JOIN workspace_folder_shares s ON s.folder_id = c.id
          WHERE (s.kind = 'user' AND s.principal_id = ?2)
             OR (s.kind = 'team' AND s.principal_id IN (SELECT team_id FROM team_members WHERE user_id = ?2))
         ORDER BY 1 DESC, 4"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt
        .query_map(params![folder_id, user_id], |r| {
            Ok(ChainAccess {
                owns: r.get::<_, i64>(0)? == 1,
                access: r.get(1)?,
                folder_name: r.get(2)?,
                depth: r.get(3)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

pub fn bullet_accesses(
    conn: &Connection,
    doc_id: &str,
    user_id: &str,
) -> Result<Vec<BulletAccess>> {
    let mut stmt = conn.prepare_cached(
        "SELECT block_id, access, NULL FROM block_shares
          WHERE doc_id = ?1 AND kind = 'user' AND principal_id = ?2
         UNION ALL
         SELECT s.block_id, s.access, t.name FROM block_shares s
           JOIN team_members m ON m.team_id = s.principal_id JOIN teams t ON t.id = s.principal_id
          WHERE s.doc_id = ?1 AND s.kind = 'team' AND m.user_id = ?2
         ORDER BY 1, 3",
    )?;
    let rows = stmt
        .query_map(params![doc_id, user_id], |r| {
            Ok(BulletAccess {
                block_id: r.get(0)?,
                access: r.get(1)?,
                team: r.get(2)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

pub fn has_doc_shares(conn: &Connection, doc_id: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "SELECT EXISTS(SELECT 1 FROM doc_shares WHERE doc_id = ?1)
                 OR EXISTS(SELECT 1 FROM doc_team_shares WHERE doc_id = ?1)
                 OR EXISTS(SELECT 1 FROM block_shares WHERE doc_id = ?1)",
        )?
        .query_row([doc_id], |r| r.get(0))?)
}

pub fn chain_reaches_others(conn: &Connection, folder_id: &str, owner_id: &str) -> Result<bool> {
    let sql = format!(
        "{ANCESTORS}
         SELECT EXISTS(SELECT 1 FROM chain c JOIN workspace_folder_shares s ON s.folder_id = c.id)
             OR EXISTS(SELECT 1 FROM chain c WHERE c.owner_id <> ?2)"
    );
    Ok(conn
        .prepare_cached(&sql)?
        .query_row(params![folder_id, owner_id], |r| r.get(0))?)
}

/// Folders the user reaches (`reach`): owned, or shared with them or a team of theirs, and
/// every subfolder of those. Needs `?1` = the user.
macro_rules! folder_reach {
    () => {
        "WITH RECURSIVE
    my_teams(id) AS (SELECT team_id FROM team_members WHERE user_id = ?1),
    roots(id) AS (
        SELECT id FROM folders WHERE owner_id = ?1
        UNION SELECT folder_id FROM workspace_folder_shares WHERE kind = 'user' AND principal_id = ?1
        UNION SELECT folder_id FROM workspace_folder_shares WHERE kind = 'team' AND principal_id IN (SELECT id FROM my_teams)),
    reach(id, depth) AS (
        SELECT id, 0 FROM roots
        UNION SELECT f.id, r.depth + 1 FROM folders f JOIN reach r ON f.parent_id = r.id WHERE r.depth < 64)"
    };
}

/// Candidate documents: owned, shared directly or by team, or inside a folder the user owns
/// or that is shared with them or a team of theirs (including subfolders) — none in the trash.
const CANDIDATES: &str = concat!(
    folder_reach!(),
    ",
    trashed(id) AS (SELECT id FROM documents WHERE trashed_at IS NOT NULL)
    SELECT id FROM documents WHERE owner_id = ?1 AND trashed_at IS NULL
    UNION SELECT doc_id FROM doc_shares WHERE user_id = ?1 AND doc_id NOT IN trashed
    UNION SELECT doc_id FROM doc_team_shares WHERE team_id IN (SELECT id FROM my_teams) AND doc_id NOT IN trashed
    UNION SELECT id FROM documents WHERE folder_id IN (SELECT id FROM reach) AND trashed_at IS NULL"
);

pub fn reachable_folders(conn: &Connection, user_id: &str) -> Result<Vec<FolderRow>> {
    let sql = concat!(
        folder_reach!(),
        "
    SELECT f.id, f.name, f.owner_id, f.parent_id FROM folders f
     WHERE f.id IN (SELECT id FROM reach) ORDER BY f.name COLLATE NOCASE, f.id"
    );
    let rows = conn
        .prepare_cached(sql)?
        .query_map([user_id], |r| {
            Ok(FolderRow {
                folder_id: r.get(0)?,
                name: r.get(1)?,
                owner_id: r.get(2)?,
                parent_id: r.get(3)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// The query of every document ID user `?1` can read, to use as a subquery
/// (`doc_id IN (…)`): search and tags filter by it inside SQLite instead of binding one
/// variable per readable document (past SQLite's 32,766 variables that was a 500 for
/// anyone who could read that many documents).
pub const READABLE_DOC_IDS: &str = CANDIDATES;

/// The `WITH` clause naming `guest_blocks(id, root)`: the bullets user `?1` sees only as a
/// bullet guest (PROTOCOL §10) — in live documents they cannot read whole, each bullet
/// shared with them or a team of theirs and everything below it, a deleted bullet and what
/// lies below it left out — each with a shared bullet above it (`root`). Search, tags and
/// backlinks put it before a `SELECT` that joins `guest_blocks`; walking down uses
/// `blocks_parent`, one probe per bullet.
pub fn guest_blocks_with() -> String {
    format!(
        "WITH RECURSIVE
    guest_roots(id) AS (
        SELECT s.block_id FROM block_shares s JOIN documents d ON d.id = s.doc_id
         WHERE d.trashed_at IS NULL
           AND ((s.kind = 'user' AND s.principal_id = ?1)
             OR (s.kind = 'team' AND s.principal_id IN (SELECT team_id FROM team_members WHERE user_id = ?1)))
           AND s.doc_id NOT IN ({CANDIDATES})),
    below(id, root, depth) AS (
        SELECT b.id, b.id, 0 FROM blocks b JOIN guest_roots r ON r.id = b.id WHERE b.deleted = 0
        UNION ALL
        SELECT b.id, w.root, w.depth + 1 FROM below w JOIN blocks b ON b.parent_id = w.id
         WHERE b.deleted = 0 AND w.depth < 100000),
    guest_blocks(id, root) AS (SELECT id, min(root) FROM below GROUP BY id)
"
    )
}

pub fn readable_doc_ids(conn: &Connection, user_id: &str) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(CANDIDATES)?;
    let ids = stmt
        .query_map([user_id], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(ids)
}

pub fn doc_row(conn: &Connection, doc_id: &str) -> Result<Option<DocRow>> {
    Ok(conn
        .prepare_cached(
            "SELECT id, title, icon, owner_id, folder_id, head_seq, updated_at FROM documents WHERE id = ?1",
        )?
        .query_row([doc_id], |r| {
            Ok(DocRow {
                doc_id: r.get(0)?,
                title: r.get(1)?,
                icon: r.get(2)?,
                owner_id: r.get(3)?,
                folder_id: r.get(4)?,
                head_seq: r.get(5)?,
                updated_at: r.get(6)?,
            })
        })
        .optional()?)
}
