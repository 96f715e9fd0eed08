//! Sharing's rows on SQLite (twins of `postgres.rs`).

use rusqlite::{params, Connection, OptionalExtension};

use super::types::{Access, Folder, Share, ShareKind, SharedBulletRow};
use crate::storage::error::Result;

fn exists(conn: &Connection, sql: &str, id: &str) -> Result<bool> {
    Ok(conn.prepare_cached(sql)?.exists([id])?)
}

fn ids(conn: &Connection, sql: &str, arg: &str) -> Result<Vec<String>> {
    let ids = conn
        .prepare_cached(sql)?
        .query_map([arg], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(ids)
}

fn shares(conn: &Connection, sql: &str, args: impl rusqlite::Params) -> Result<Vec<Share>> {
    let rows = conn
        .prepare_cached(sql)?
        .query_map(args, |r| {
            Ok(Share {
                kind: ShareKind::parse(&r.get::<_, String>(0)?),
                id: r.get(1)?,
                access: Access::parse(&r.get::<_, String>(2)?),
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

pub fn user_exists(conn: &Connection, user_id: &str) -> Result<bool> {
    exists(conn, "SELECT 1 FROM users WHERE id = ?1", user_id)
}

pub fn team_exists(conn: &Connection, team_id: &str) -> Result<bool> {
    exists(conn, "SELECT 1 FROM teams WHERE id = ?1", team_id)
}

pub fn user_names(conn: &Connection, user_id: &str) -> Result<Option<(String, String)>> {
    Ok(conn
        .prepare_cached("SELECT name, display_name FROM users WHERE id = ?1")?
        .query_row([user_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?)
}

pub fn team_name(conn: &Connection, team_id: &str) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT name FROM teams WHERE id = ?1")?
        .query_row([team_id], |r| r.get(0))
        .optional()?)
}

pub fn leave_doc_share(conn: &Connection, doc_id: &str, user_id: &str) -> Result<bool> {
    Ok(conn.execute(
        "DELETE FROM doc_shares WHERE doc_id = ?1 AND user_id = ?2",
        params![doc_id, user_id],
    )? > 0)
}

pub fn leave_folder_share(conn: &Connection, folder_id: &str, user_id: &str) -> Result<bool> {
    Ok(conn.execute(
        "DELETE FROM workspace_folder_shares
          WHERE folder_id = ?1 AND kind = 'user' AND principal_id = ?2",
        params![folder_id, user_id],
    )? > 0)
}

pub fn leave_team(conn: &Connection, team_id: &str, user_id: &str) -> Result<bool> {
    Ok(conn.execute(
        "DELETE FROM team_members WHERE team_id = ?1 AND user_id = ?2
           AND user_id <> (SELECT owner_id FROM teams WHERE id = ?1)",
        params![team_id, user_id],
    )? > 0)
}

pub fn doc_shares(conn: &Connection, doc_id: &str) -> Result<Vec<Share>> {
    let mut out = shares(
        conn,
        "SELECT 'user', user_id, access FROM doc_shares WHERE doc_id = ?1 ORDER BY user_id",
        [doc_id],
    )?;
    out.extend(shares(
        conn,
        "SELECT 'team', team_id, access FROM doc_team_shares WHERE doc_id = ?1 ORDER BY team_id",
        [doc_id],
    )?);
    Ok(out)
}

pub fn clear_doc_shares(conn: &Connection, doc_id: &str) -> Result<()> {
    conn.execute("DELETE FROM doc_shares WHERE doc_id = ?1", [doc_id])?;
    conn.execute("DELETE FROM doc_team_shares WHERE doc_id = ?1", [doc_id])?;
    Ok(())
}

pub fn insert_doc_share(conn: &Connection, doc_id: &str, share: &Share) -> Result<()> {
    let sql = match share.kind {
        ShareKind::User => "INSERT INTO doc_shares (doc_id, user_id, access) VALUES (?1, ?2, ?3)",
        ShareKind::Team => {
            "INSERT INTO doc_team_shares (doc_id, team_id, access) VALUES (?1, ?2, ?3)"
        }
    };
    conn.execute(sql, params![doc_id, share.id, share.access.as_str()])?;
    Ok(())
}

pub fn folder_shares(conn: &Connection, folder_id: &str) -> Result<Vec<Share>> {
    shares(
        conn,
        "SELECT kind, principal_id, access FROM workspace_folder_shares WHERE folder_id = ?1 ORDER BY kind, principal_id",
        [folder_id],
    )
}

pub fn clear_folder_shares(conn: &Connection, folder_id: &str) -> Result<()> {
    conn.execute(
        "DELETE FROM workspace_folder_shares WHERE folder_id = ?1",
        [folder_id],
    )?;
    Ok(())
}

pub fn insert_folder_share(conn: &Connection, folder_id: &str, share: &Share) -> Result<()> {
    conn.execute(
        "INSERT INTO workspace_folder_shares (folder_id, kind, principal_id, access) VALUES (?1, ?2, ?3, ?4)",
        params![folder_id, share.kind.as_str(), share.id, share.access.as_str()],
    )?;
    Ok(())
}

pub fn insert_team(
    conn: &Connection,
    team_id: &str,
    name: &str,
    owner_id: &str,
    now: i64,
) -> Result<()> {
    conn.execute(
        "INSERT INTO teams (id, name, owner_id, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![team_id, name, owner_id, now],
    )?;
    Ok(())
}

pub fn team_row(conn: &Connection, team_id: &str) -> Result<Option<(String, String)>> {
    Ok(conn
        .query_row(
            "SELECT name, owner_id FROM teams WHERE id = ?1",
            [team_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?)
}

pub fn team_members(conn: &Connection, team_id: &str) -> Result<Vec<String>> {
    ids(
        conn,
        "SELECT user_id FROM team_members WHERE team_id = ?1 ORDER BY user_id",
        team_id,
    )
}

pub fn team_id_by_name(conn: &Connection, name: &str) -> Result<Option<String>> {
    Ok(conn
        .query_row(
            "SELECT id FROM teams WHERE name = ?1 ORDER BY created_at LIMIT 1",
            [name],
            |r| r.get(0),
        )
        .optional()?)
}

pub fn team_ids_of(conn: &Connection, user_id: &str) -> Result<Vec<String>> {
    ids(
        conn,
        "SELECT id FROM teams WHERE owner_id = ?1 UNION SELECT team_id FROM team_members WHERE user_id = ?1",
        user_id,
    )
}

pub fn all_team_ids(conn: &Connection) -> Result<Vec<String>> {
    let ids = conn
        .prepare_cached("SELECT id FROM teams ORDER BY name")?
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(ids)
}

pub fn clear_members(conn: &Connection, team_id: &str) -> Result<()> {
    conn.execute("DELETE FROM team_members WHERE team_id = ?1", [team_id])?;
    Ok(())
}

pub fn add_member(conn: &Connection, team_id: &str, user_id: &str) -> Result<()> {
    conn.prepare_cached("INSERT OR IGNORE INTO team_members (team_id, user_id) VALUES (?1, ?2)")?
        .execute(params![team_id, user_id])?;
    Ok(())
}

pub fn insert_folder(conn: &Connection, folder: &Folder, now: i64) -> Result<()> {
    conn.execute(
        "INSERT INTO folders (id, owner_id, parent_id, name, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![folder.folder_id, folder.owner_id, folder.parent_id, folder.name, now],
    )?;
    Ok(())
}

pub fn rename_folder(conn: &Connection, folder_id: &str, name: &str) -> Result<()> {
    conn.execute(
        "UPDATE folders SET name = ?2 WHERE id = ?1",
        params![folder_id, name],
    )?;
    Ok(())
}

pub fn folder(conn: &Connection, folder_id: &str) -> Result<Option<Folder>> {
    Ok(conn
        .query_row(
            "SELECT id, name, owner_id, parent_id FROM folders WHERE id = ?1",
            [folder_id],
            |r| {
                Ok(Folder {
                    folder_id: r.get(0)?,
                    name: r.get(1)?,
                    owner_id: r.get(2)?,
                    parent_id: r.get(3)?,
                })
            },
        )
        .optional()?)
}

/// The folder and every folder below it (`sub`), for the statements below.
const BELOW: &str = "WITH RECURSIVE sub(id, depth) AS (
     SELECT ?1, 0 UNION SELECT f.id, s.depth + 1 FROM folders f JOIN sub s ON f.parent_id = s.id WHERE s.depth < 64)";

pub fn folder_and_below(conn: &Connection, folder_id: &str) -> Result<Vec<String>> {
    ids(conn, &format!("{BELOW} SELECT id FROM sub"), folder_id)
}

pub fn set_folder_parent(conn: &Connection, folder_id: &str, parent: Option<&str>) -> Result<()> {
    conn.execute(
        "UPDATE folders SET parent_id = ?2 WHERE id = ?1",
        params![folder_id, parent],
    )?;
    Ok(())
}

pub fn move_contents(
    conn: &Connection,
    folder_id: &str,
    parent: Option<&str>,
    now: i64,
) -> Result<()> {
    conn.execute(
        "UPDATE documents SET folder_id = ?2, updated_at = ?3 WHERE folder_id = ?1",
        params![folder_id, parent, now],
    )?;
    conn.execute(
        "UPDATE folders SET parent_id = ?2 WHERE parent_id = ?1",
        params![folder_id, parent],
    )?;
    Ok(())
}

pub fn delete_folder_row(conn: &Connection, folder_id: &str) -> Result<()> {
    clear_folder_shares(conn, folder_id)?;
    conn.execute("DELETE FROM folders WHERE id = ?1", [folder_id])?;
    Ok(())
}

pub fn set_doc_folder(
    conn: &Connection,
    doc_id: &str,
    folder: Option<&str>,
    now: i64,
) -> Result<()> {
    conn.execute(
        "UPDATE documents SET folder_id = ?2, updated_at = ?3 WHERE id = ?1",
        params![doc_id, folder, now],
    )?;
    Ok(())
}

pub fn doc_owner(conn: &Connection, doc_id: &str) -> Result<Option<String>> {
    Ok(conn
        .query_row(
            "SELECT owner_id FROM documents WHERE id = ?1",
            [doc_id],
            |r| r.get(0),
        )
        .optional()?)
}

pub fn docs_under_folder(conn: &Connection, folder_id: &str) -> Result<Vec<String>> {
    ids(
        conn,
        &format!("{BELOW} SELECT id FROM documents WHERE folder_id IN (SELECT id FROM sub)"),
        folder_id,
    )
}

pub fn docs_shared_with_team(conn: &Connection, team_id: &str) -> Result<Vec<String>> {
    ids(
        conn,
        "SELECT doc_id FROM doc_team_shares WHERE team_id = ?1",
        team_id,
    )
}

pub fn folders_shared_with_team(conn: &Connection, team_id: &str) -> Result<Vec<String>> {
    ids(
        conn,
        "SELECT folder_id FROM workspace_folder_shares WHERE kind = 'team' AND principal_id = ?1",
        team_id,
    )
}

pub fn block_shares(conn: &Connection, doc_id: &str, block_id: &str) -> Result<Vec<Share>> {
    shares(
        conn,
        "SELECT kind, principal_id, access FROM block_shares
          WHERE doc_id = ?1 AND block_id = ?2 ORDER BY kind DESC, principal_id",
        params![doc_id, block_id],
    )
}

pub fn clear_block_shares(conn: &Connection, doc_id: &str, block_id: &str) -> Result<()> {
    conn.execute(
        "DELETE FROM block_shares WHERE doc_id = ?1 AND block_id = ?2",
        params![doc_id, block_id],
    )?;
    Ok(())
}

pub fn insert_block_share(
    conn: &Connection,
    doc_id: &str,
    block_id: &str,
    share: &Share,
) -> Result<()> {
    conn.execute(
        "INSERT INTO block_shares (doc_id, block_id, kind, principal_id, access)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            doc_id,
            block_id,
            share.kind.as_str(),
            share.id,
            share.access.as_str()
        ],
    )?;
    Ok(())
}

pub fn shared_bullets(conn: &Connection, user_id: &str) -> Result<Vec<SharedBulletRow>> {
    let rows = conn
        .prepare_cached(
            "SELECT s.doc_id, s.block_id, b.content, b.deleted FROM block_shares s
               JOIN documents d ON d.id = s.doc_id AND d.trashed_at IS NULL
               LEFT JOIN blocks b ON b.id = s.block_id AND b.doc_id = s.doc_id
              WHERE (s.kind = 'user' AND s.principal_id = ?1)
                 OR (s.kind = 'team' AND s.principal_id IN
                        (SELECT team_id FROM team_members WHERE user_id = ?1))
              GROUP BY s.doc_id, s.block_id ORDER BY s.doc_id, s.block_id",
        )?
        .query_map([user_id], |r| {
            Ok(SharedBulletRow {
                doc_id: r.get(0)?,
                block_id: r.get(1)?,
                content: r.get(2)?,
                deleted: r.get::<_, Option<bool>>(3)?.unwrap_or(true),
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

pub fn block_in_doc(conn: &Connection, doc_id: &str, block_id: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM blocks WHERE id = ?1 AND doc_id = ?2")?
        .exists(params![block_id, doc_id])?)
}

pub fn block_parent(
    conn: &Connection,
    doc_id: &str,
    block_id: &str,
) -> Result<Option<(Option<String>, String)>> {
    Ok(conn
        .prepare_cached("SELECT parent_id, content FROM blocks WHERE id = ?1 AND doc_id = ?2")?
        .query_row(params![block_id, doc_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?)
}
