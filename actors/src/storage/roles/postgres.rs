//! The role function's rows on PostgreSQL (twins of `sqlite.rs`).

use postgres::GenericClient;

use super::types::{BulletAccess, ChainAccess, DocPlace, DocRow, FolderRow};
use crate::storage::error::Result;

/// Every folder from `$1` up to the root, nearest first (cycle-safe).
const ANCESTORS: &str = "WITH RECURSIVE chain(id, parent_id, owner_id, name, depth) AS (
        SELECT id, parent_id, owner_id, name, 0 FROM folders WHERE id = $1
        UNION ALL
        SELECT f.id, f.parent_id, f.owner_id, f.name, c.depth + 1 FROM folders f
        JOIN chain c ON f.id = c.parent_id WHERE c.depth < 64)";

/// The readable documents of `$1` as a subquery (owned, shared, in a reached folder; not
/// trashed) — to use as a subquery, so a search
/// or a list is one statement.
pub const READABLE_DOC_IDS: &str = "SELECT id FROM documents WHERE trashed_at IS NULL AND (
        owner_id = $1
     OR id IN (SELECT doc_id FROM doc_shares WHERE user_id = $1)
     OR id IN (SELECT doc_id FROM doc_team_shares WHERE team_id IN (SELECT team_id FROM team_members WHERE user_id = $1))
     OR folder_id IN (
        WITH RECURSIVE
            roots(id) AS (
                SELECT id FROM folders WHERE owner_id = $1
                UNION SELECT folder_id FROM workspace_folder_shares WHERE kind = 'user' AND principal_id = $1
                UNION SELECT folder_id FROM workspace_folder_shares WHERE kind = 'team'
                       AND principal_id IN (SELECT team_id FROM team_members WHERE user_id = $1)),
            reach(id, depth) AS (
                SELECT id, 0 FROM roots
                UNION SELECT f.id, r.depth + 1 FROM folders f JOIN reach r ON f.parent_id = r.id WHERE r.depth < 64)
        SELECT id FROM reach))";

/// The `WITH` clause naming `guest_blocks(id, root)`: the bullets user `$1` sees only as a
/// bullet guest (PROTOCOL §10; as SQLite's `guest_blocks_with`).
pub fn guest_blocks_with() -> String {
    format!(
        "WITH RECURSIVE
    guest_roots(id) AS (
        SELECT s.block_id FROM block_shares s JOIN documents d ON d.id = s.doc_id
         WHERE d.trashed_at IS NULL
           AND ((s.kind = 'user' AND s.principal_id = $1)
             OR (s.kind = 'team' AND s.principal_id IN (SELECT team_id FROM team_members WHERE user_id = $1)))
           AND s.doc_id NOT IN ({READABLE_DOC_IDS})),
    below(id, root, depth) AS (
        SELECT b.id, b.id, 0 FROM blocks b JOIN guest_roots r ON r.id = b.id WHERE NOT b.deleted
        UNION ALL
        SELECT b.id, w.root, w.depth + 1 FROM below w JOIN blocks b ON b.parent_id = w.id
         WHERE NOT b.deleted AND w.depth < 100000),
    guest_blocks(id, root) AS (SELECT id, min(root) FROM below GROUP BY id)
"
    )
}

fn place(c: &mut impl GenericClient, sql: &str, doc_id: &str) -> Result<Option<DocPlace>> {
    Ok(c.query_opt(sql, &[&doc_id])?.map(|r| DocPlace {
        owner_id: r.get(0),
        folder_id: r.get(1),
    }))
}

pub fn user_active(c: &mut impl GenericClient, user_id: &str) -> Result<bool> {
    Ok(c.query_opt(
        "SELECT 1 FROM users WHERE id = $1 AND deactivated_at IS NULL",
        &[&user_id],
    )?
    .is_some())
}

pub fn live_doc_place(c: &mut impl GenericClient, doc_id: &str) -> Result<Option<DocPlace>> {
    place(
        c,
        "SELECT owner_id, folder_id FROM documents WHERE id = $1 AND trashed_at IS NULL",
        doc_id,
    )
}

pub fn doc_place(c: &mut impl GenericClient, doc_id: &str) -> Result<Option<DocPlace>> {
    place(
        c,
        "SELECT owner_id, folder_id FROM documents WHERE id = $1",
        doc_id,
    )
}

pub fn direct_access(
    c: &mut impl GenericClient,
    doc_id: &str,
    user_id: &str,
) -> Result<Option<String>> {
    Ok(c.query_opt(
        "SELECT access FROM doc_shares WHERE doc_id = $1 AND user_id = $2",
        &[&doc_id, &user_id],
    )?
    .map(|r| r.get(0)))
}

pub fn team_accesses(
    c: &mut impl GenericClient,
    doc_id: &str,
    user_id: &str,
) -> Result<Vec<(String, String)>> {
    Ok(c.query(
        "SELECT s.access, t.name FROM doc_team_shares s JOIN team_members m ON m.team_id = s.team_id
           JOIN teams t ON t.id = s.team_id WHERE s.doc_id = $1 AND m.user_id = $2",
        &[&doc_id, &user_id],
    )?
    .iter()
    .map(|r| (r.get(0), r.get(1)))
    .collect())
}

pub fn chain_accesses(
    c: &mut impl GenericClient,
    folder_id: &str,
    user_id: &str,
) -> Result<Vec<ChainAccess>> {
    let sql = format!(
        "{ANCESTORS}
         SELECT true, 'write', c.name, c.depth FROM chain c WHERE c.owner_id = $2
         UNION ALL
         SELECT false, s.access, c.name, c.depth FROM chain c JOIN workspace_folder_shares s ON s.folder_id = c.id
          WHERE (s.kind = 'user' AND s.principal_id = $2)
             OR (s.kind = 'team' AND s.principal_id IN (SELECT team_id FROM team_members WHERE user_id = $2))
         ORDER BY 1 DESC, 4"
    );
    Ok(c.query(&sql, &[&folder_id, &user_id])?
        .iter()
        .map(|r| ChainAccess {
            owns: r.get(0),
            access: r.get(1),
            folder_name: r.get(2),
            depth: i64::from(r.get::<_, i32>(3)),
        })
        .collect())
}

pub fn bullet_accesses(
    c: &mut impl GenericClient,
    doc_id: &str,
    user_id: &str,
) -> Result<Vec<BulletAccess>> {
    Ok(c.query(
        "SELECT block_id, access, NULL::text FROM block_shares
          WHERE doc_id = $1 AND kind = 'user' AND principal_id = $2
         UNION ALL
         SELECT s.block_id, s.access, t.name FROM block_shares s
           JOIN team_members m ON m.team_id = s.principal_id JOIN teams t ON t.id = s.principal_id
          WHERE s.doc_id = $1 AND s.kind = 'team' AND m.user_id = $2
         ORDER BY 1, 3",
        &[&doc_id, &user_id],
    )?
    .iter()
    .map(|r| BulletAccess {
        block_id: r.get(0),
        access: r.get(1),
        team: r.get(2),
    })
    .collect())
}

pub fn has_doc_shares(c: &mut impl GenericClient, doc_id: &str) -> Result<bool> {
    Ok(c.query_one(
        "SELECT EXISTS(SELECT 1 FROM doc_shares WHERE doc_id = $1)
             OR EXISTS(SELECT 1 FROM doc_team_shares WHERE doc_id = $1)
             OR EXISTS(SELECT 1 FROM block_shares WHERE doc_id = $1)",
        &[&doc_id],
    )?
    .get(0))
}

pub fn chain_reaches_others(
    c: &mut impl GenericClient,
    folder_id: &str,
    owner_id: &str,
) -> Result<bool> {
    let sql = format!(
        "{ANCESTORS}
         SELECT EXISTS(SELECT 1 FROM chain c JOIN workspace_folder_shares s ON s.folder_id = c.id)
             OR EXISTS(SELECT 1 FROM chain c WHERE c.owner_id <> $2)"
    );
    Ok(c.query_one(&sql, &[&folder_id, &owner_id])?.get(0))
}

/// Folders a user reaches (their own, shared with them or a team of theirs, and every
/// subfolder), for the folder-reach queries below.
const REACH: &str = "WITH RECURSIVE
        my_teams(id) AS (SELECT team_id FROM team_members WHERE user_id = $1),
        roots(id) AS (
            SELECT id FROM folders WHERE owner_id = $1
            UNION SELECT folder_id FROM workspace_folder_shares WHERE kind = 'user' AND principal_id = $1
            UNION SELECT folder_id FROM workspace_folder_shares WHERE kind = 'team' AND principal_id IN (SELECT id FROM my_teams)),
        reach(id, depth) AS (
            SELECT id, 0 FROM roots
            UNION SELECT f.id, r.depth + 1 FROM folders f JOIN reach r ON f.parent_id = r.id WHERE r.depth < 64)";

pub fn reachable_folders(c: &mut impl GenericClient, user_id: &str) -> Result<Vec<FolderRow>> {
    let sql = format!(
        "{REACH}
         SELECT f.id, f.name, f.owner_id, f.parent_id FROM folders f
          WHERE f.id IN (SELECT id FROM reach) ORDER BY lower(f.name), f.id"
    );
    Ok(c.query(&sql, &[&user_id])?
        .iter()
        .map(|r| FolderRow {
            folder_id: r.get(0),
            name: r.get(1),
            owner_id: r.get(2),
            parent_id: r.get(3),
        })
        .collect())
}

pub fn readable_doc_ids(c: &mut impl GenericClient, user_id: &str) -> Result<Vec<String>> {
    Ok(c.query(READABLE_DOC_IDS, &[&user_id])?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

pub fn doc_row(c: &mut impl GenericClient, doc_id: &str) -> Result<Option<DocRow>> {
    Ok(c.query_opt(
        "SELECT id, title, icon, owner_id, folder_id, head_seq, updated_at FROM documents WHERE id = $1",
        &[&doc_id],
    )?
    .map(|r| DocRow {
        doc_id: r.get(0),
        title: r.get(1),
        icon: r.get(2),
        owner_id: r.get(3),
        folder_id: r.get(4),
        head_seq: r.get(5),
        updated_at: r.get(6),
    }))
}
