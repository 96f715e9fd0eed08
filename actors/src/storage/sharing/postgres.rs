//! Sharing's rows on PostgreSQL (twins of `sqlite.rs`).

use postgres::GenericClient;

use super::types::{Access, Folder, Share, ShareKind, SharedBulletRow};
use crate::storage::error::Result;

fn ids(c: &mut impl GenericClient, sql: &str, arg: &str) -> Result<Vec<String>> {
    Ok(c.query(sql, &[&arg])?.iter().map(|r| r.get(0)).collect())
}

fn shares(
    c: &mut impl GenericClient,
    sql: &str,
    args: &[&(dyn postgres::types::ToSql + Sync)],
) -> Result<Vec<Share>> {
    Ok(c.query(sql, args)?
        .iter()
        .map(|r| Share {
            kind: ShareKind::parse(r.get(0)),
            id: r.get(1),
            access: Access::parse(r.get(2)),
        })
        .collect())
}

pub fn user_exists(c: &mut impl GenericClient, user_id: &str) -> Result<bool> {
    Ok(
        c.query_opt("SELECT 1 FROM users WHERE id = $1", &[&user_id])?
            .is_some(),
    )
}

pub fn team_exists(c: &mut impl GenericClient, team_id: &str) -> Result<bool> {
    Ok(
        c.query_opt("SELECT 1 FROM teams WHERE id = $1", &[&team_id])?
            .is_some(),
    )
}

pub fn user_names(c: &mut impl GenericClient, user_id: &str) -> Result<Option<(String, String)>> {
    Ok(c.query_opt(
        "SELECT name, display_name FROM users WHERE id = $1",
        &[&user_id],
    )?
    .map(|r| (r.get(0), r.get(1))))
}

pub fn team_name(c: &mut impl GenericClient, team_id: &str) -> Result<Option<String>> {
    Ok(
        c.query_opt("SELECT name FROM teams WHERE id = $1", &[&team_id])?
            .map(|r| r.get(0)),
    )
}

pub fn leave_doc_share(c: &mut impl GenericClient, doc_id: &str, user_id: &str) -> Result<bool> {
    Ok(c.execute(
        "DELETE FROM doc_shares WHERE doc_id = $1 AND user_id = $2",
        &[&doc_id, &user_id],
    )? > 0)
}

pub fn leave_folder_share(
    c: &mut impl GenericClient,
    folder_id: &str,
    user_id: &str,
) -> Result<bool> {
    Ok(c.execute(
        "DELETE FROM workspace_folder_shares WHERE folder_id = $1 AND kind = 'user' AND principal_id = $2",
        &[&folder_id, &user_id],
    )? > 0)
}

pub fn leave_team(c: &mut impl GenericClient, team_id: &str, user_id: &str) -> Result<bool> {
    Ok(c.execute(
        "DELETE FROM team_members WHERE team_id = $1 AND user_id = $2
           AND user_id <> (SELECT owner_id FROM teams WHERE id = $1)",
        &[&team_id, &user_id],
    )? > 0)
}

pub fn doc_shares(c: &mut impl GenericClient, doc_id: &str) -> Result<Vec<Share>> {
    let mut out = shares(
        c,
        "SELECT 'user', user_id, access FROM doc_shares WHERE doc_id = $1 ORDER BY user_id",
        &[&doc_id],
    )?;
    out.extend(shares(
        c,
        "SELECT 'team', team_id, access FROM doc_team_shares WHERE doc_id = $1 ORDER BY team_id",
        &[&doc_id],
    )?);
    Ok(out)
}

pub fn clear_doc_shares(c: &mut impl GenericClient, doc_id: &str) -> Result<()> {
    c.execute("DELETE FROM doc_shares WHERE doc_id = $1", &[&doc_id])?;
    c.execute("DELETE FROM doc_team_shares WHERE doc_id = $1", &[&doc_id])?;
    Ok(())
}

pub fn insert_doc_share(c: &mut impl GenericClient, doc_id: &str, share: &Share) -> Result<()> {
    let sql = match share.kind {
        ShareKind::User => "INSERT INTO doc_shares (doc_id, user_id, access) VALUES ($1, $2, $3)",
        ShareKind::Team => {
            "INSERT INTO doc_team_shares (doc_id, team_id, access) VALUES ($1, $2, $3)"
        }
    };
    c.execute(sql, &[&doc_id, &share.id, &share.access.as_str()])?;
    Ok(())
}

pub fn folder_shares(c: &mut impl GenericClient, folder_id: &str) -> Result<Vec<Share>> {
    shares(
        c,
        "SELECT kind, principal_id, access FROM workspace_folder_shares WHERE folder_id = $1
          ORDER BY kind, principal_id",
        &[&folder_id],
    )
}

pub fn clear_folder_shares(c: &mut impl GenericClient, folder_id: &str) -> Result<()> {
    c.execute(
        "DELETE FROM workspace_folder_shares WHERE folder_id = $1",
        &[&folder_id],
    )?;
    Ok(())
}

pub fn insert_folder_share(
    c: &mut impl GenericClient,
    folder_id: &str,
    share: &Share,
) -> Result<()> {
    c.execute(
        "INSERT INTO workspace_folder_shares (folder_id, kind, principal_id, access) VALUES ($1, $2, $3, $4)",
        &[&folder_id, &share.kind.as_str(), &share.id, &share.access.as_str()],
    )?;
    Ok(())
}

pub fn insert_team(
    c: &mut impl GenericClient,
    team_id: &str,
    name: &str,
    owner_id: &str,
    now: i64,
) -> Result<()> {
    c.execute(
        "INSERT INTO teams (id, name, owner_id, created_at) VALUES ($1, $2, $3, $4)",
        &[&team_id, &name, &owner_id, &now],
    )?;
    Ok(())
}

pub fn team_row(c: &mut impl GenericClient, team_id: &str) -> Result<Option<(String, String)>> {
    Ok(c.query_opt(
        "SELECT name, owner_id FROM teams WHERE id = $1",
        &[&team_id],
    )?
    .map(|r| (r.get(0), r.get(1))))
}

pub fn team_members(c: &mut impl GenericClient, team_id: &str) -> Result<Vec<String>> {
    ids(
        c,
        "SELECT user_id FROM team_members WHERE team_id = $1 ORDER BY user_id",
        team_id,
    )
}

pub fn team_id_by_name(c: &mut impl GenericClient, name: &str) -> Result<Option<String>> {
    Ok(c.query_opt(
        "SELECT id FROM teams WHERE name = $1 ORDER BY created_at LIMIT 1",
        &[&name],
    )?
    .map(|r| r.get(0)))
}

pub fn team_ids_of(c: &mut impl GenericClient, user_id: &str) -> Result<Vec<String>> {
    ids(
        c,
        "SELECT id FROM teams WHERE owner_id = $1 UNION SELECT team_id FROM team_members WHERE user_id = $1",
        user_id,
    )
}

pub fn all_team_ids(c: &mut impl GenericClient) -> Result<Vec<String>> {
    Ok(c.query("SELECT id FROM teams ORDER BY name", &[])?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

pub fn clear_members(c: &mut impl GenericClient, team_id: &str) -> Result<()> {
    c.execute("DELETE FROM team_members WHERE team_id = $1", &[&team_id])?;
    Ok(())
}

pub fn add_member(c: &mut impl GenericClient, team_id: &str, user_id: &str) -> Result<()> {
    c.execute(
        "INSERT INTO team_members (team_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        &[&team_id, &user_id],
    )?;
    Ok(())
}

pub fn insert_folder(c: &mut impl GenericClient, folder: &Folder, now: i64) -> Result<()> {
    c.execute(
        "INSERT INTO folders (id, owner_id, parent_id, name, created_at) VALUES ($1, $2, $3, $4, $5)",
        &[&folder.folder_id, &folder.owner_id, &folder.parent_id, &folder.name, &now],
    )?;
    Ok(())
}

pub fn rename_folder(c: &mut impl GenericClient, folder_id: &str, name: &str) -> Result<()> {
    c.execute(
        "UPDATE folders SET name = $2 WHERE id = $1",
        &[&folder_id, &name],
    )?;
    Ok(())
}

pub fn folder(c: &mut impl GenericClient, folder_id: &str) -> Result<Option<Folder>> {
    Ok(c.query_opt(
        "SELECT id, name, owner_id, parent_id FROM folders WHERE id = $1",
        &[&folder_id],
    )?
    .map(|r| Folder {
        folder_id: r.get(0),
        name: r.get(1),
        owner_id: r.get(2),
        parent_id: r.get(3),
    }))
}

/// The folder and every folder below it (`sub`), for the statements below.
const BELOW: &str = "WITH RECURSIVE sub(id, depth) AS (
        SELECT $1::text, 0 UNION SELECT f.id, s.depth + 1 FROM folders f JOIN sub s ON f.parent_id = s.id WHERE s.depth < 64)";

pub fn folder_and_below(c: &mut impl GenericClient, folder_id: &str) -> Result<Vec<String>> {
    ids(c, &format!("{BELOW} SELECT id FROM sub"), folder_id)
}

pub fn set_folder_parent(
    c: &mut impl GenericClient,
    folder_id: &str,
    parent: Option<&str>,
) -> Result<()> {
    c.execute(
        "UPDATE folders SET parent_id = $2 WHERE id = $1",
        &[&folder_id, &parent],
    )?;
    Ok(())
}

pub fn move_contents(
    c: &mut impl GenericClient,
    folder_id: &str,
    parent: Option<&str>,
    now: i64,
) -> Result<()> {
    c.execute(
        "UPDATE documents SET folder_id = $2, updated_at = $3 WHERE folder_id = $1",
        &[&folder_id, &parent, &now],
    )?;
    c.execute(
        "UPDATE folders SET parent_id = $2 WHERE parent_id = $1",
        &[&folder_id, &parent],
    )?;
    Ok(())
}

pub fn delete_folder_row(c: &mut impl GenericClient, folder_id: &str) -> Result<()> {
    clear_folder_shares(c, folder_id)?;
    c.execute("DELETE FROM folders WHERE id = $1", &[&folder_id])?;
    Ok(())
}

pub fn set_doc_folder(
    c: &mut impl GenericClient,
    doc_id: &str,
    folder: Option<&str>,
    now: i64,
) -> Result<()> {
    c.execute(
        "UPDATE documents SET folder_id = $2, updated_at = $3 WHERE id = $1",
        &[&doc_id, &folder, &now],
    )?;
    Ok(())
}

pub fn doc_owner(c: &mut impl GenericClient, doc_id: &str) -> Result<Option<String>> {
    Ok(
        c.query_opt("SELECT owner_id FROM documents WHERE id = $1", &[&doc_id])?
            .map(|r| r.get(0)),
    )
}

pub fn docs_under_folder(c: &mut impl GenericClient, folder_id: &str) -> Result<Vec<String>> {
    ids(
        c,
        &format!("{BELOW} SELECT id FROM documents WHERE folder_id IN (SELECT id FROM sub)"),
        folder_id,
    )
}

pub fn docs_shared_with_team(c: &mut impl GenericClient, team_id: &str) -> Result<Vec<String>> {
    ids(
        c,
        "SELECT doc_id FROM doc_team_shares WHERE team_id = $1",
        team_id,
    )
}

pub fn folders_shared_with_team(c: &mut impl GenericClient, team_id: &str) -> Result<Vec<String>> {
    ids(
        c,
        "SELECT folder_id FROM workspace_folder_shares WHERE kind = 'team' AND principal_id = $1",
        team_id,
    )
}

pub fn block_shares(
    c: &mut impl GenericClient,
    doc_id: &str,
    block_id: &str,
) -> Result<Vec<Share>> {
    shares(
        c,
        "SELECT kind, principal_id, access FROM block_shares
          WHERE doc_id = $1 AND block_id = $2 ORDER BY kind DESC, principal_id",
        &[&doc_id, &block_id],
    )
}

pub fn clear_block_shares(c: &mut impl GenericClient, doc_id: &str, block_id: &str) -> Result<()> {
    c.execute(
        "DELETE FROM block_shares WHERE doc_id = $1 AND block_id = $2",
        &[&doc_id, &block_id],
    )?;
    Ok(())
}

pub fn insert_block_share(
    c: &mut impl GenericClient,
    doc_id: &str,
    block_id: &str,
    share: &Share,
) -> Result<()> {
    c.execute(
        "INSERT INTO block_shares (doc_id, block_id, kind, principal_id, access)
         VALUES ($1, $2, $3, $4, $5)",
        &[
            &doc_id,
            &block_id,
            &share.kind.as_str(),
            &share.id,
            &share.access.as_str(),
        ],
    )?;
    Ok(())
}

pub fn shared_bullets(c: &mut impl GenericClient, user_id: &str) -> Result<Vec<SharedBulletRow>> {
    Ok(c.query(
        "SELECT s.doc_id, s.block_id, min(b.content), bool_and(b.deleted) FROM block_shares s
           JOIN documents d ON d.id = s.doc_id AND d.trashed_at IS NULL
           LEFT JOIN blocks b ON b.id = s.block_id AND b.doc_id = s.doc_id
          WHERE (s.kind = 'user' AND s.principal_id = $1)
             OR (s.kind = 'team' AND s.principal_id IN
                    (SELECT team_id FROM team_members WHERE user_id = $1))
          GROUP BY s.doc_id, s.block_id ORDER BY s.doc_id, s.block_id",
        &[&user_id],
    )?
    .iter()
    .map(|r| SharedBulletRow {
        doc_id: r.get(0),
        block_id: r.get(1),
        content: r.get(2),
        deleted: r.get::<_, Option<bool>>(3).unwrap_or(true),
    })
    .collect())
}

pub fn block_in_doc(c: &mut impl GenericClient, doc_id: &str, block_id: &str) -> Result<bool> {
    Ok(c.query_opt(
        "SELECT 1 FROM blocks WHERE id = $1 AND doc_id = $2",
        &[&block_id, &doc_id],
    )?
    .is_some())
}

pub fn block_parent(
    c: &mut impl GenericClient,
    doc_id: &str,
    block_id: &str,
) -> Result<Option<(Option<String>, String)>> {
    Ok(c.query_opt(
        "SELECT parent_id, content FROM blocks WHERE id = $1 AND doc_id = $2",
        &[&block_id, &doc_id],
    )?
    .map(|r| (r.get(0), r.get(1))))
}
