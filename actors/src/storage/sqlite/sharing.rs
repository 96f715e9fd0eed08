//! Teams, folders and shares: the rows the role function reads. Who may change them is
//! decided by the callers through `roles`; this module only checks that what a share
//! names exists.

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

use super::accounts::new_id;
use crate::storage::error::{Result, StorageError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ShareKind {
    User,
    Team,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    Read,
    Write,
}

impl Access {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
        }
    }

    pub(crate) fn parse(s: &str) -> Access {
        if s == "write" {
            Access::Write
        } else {
            Access::Read
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Share {
    pub kind: ShareKind,
    pub id: String,
    pub access: Access,
}

/// A share as the owner sees it: who (with a name a person can read) and what access.
/// Only in answers; `PUT` takes plain `Share`s.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NamedShare {
    // Spelled out rather than a flattened `Share`: `Share` refuses unknown fields (it is a
    // request body), which a schema cannot combine with more fields.
    pub kind: ShareKind,
    pub id: String,
    pub access: Access,
    /// The user's login name or the team's name.
    pub name: String,
    /// The user's display name (users only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
}

/// Adds names to shares (a principal deleted meanwhile keeps its ID as its name).
pub fn with_names(conn: &Connection, shares: Vec<Share>) -> Result<Vec<NamedShare>> {
    let mut user = conn.prepare_cached("SELECT name, display_name FROM users WHERE id = ?1")?;
    let mut team = conn.prepare_cached("SELECT name FROM teams WHERE id = ?1")?;
    shares
        .into_iter()
        .map(|share| {
            let (name, display_name) = match share.kind {
                ShareKind::User => user
                    .query_row([&share.id], |r| {
                        Ok((r.get::<_, String>(0)?, Some(r.get::<_, String>(1)?)))
                    })
                    .optional()?
                    .unwrap_or_else(|| (share.id.clone(), None)),
                ShareKind::Team => team
                    .query_row([&share.id], |r| r.get::<_, String>(0))
                    .optional()?
                    .map_or_else(|| (share.id.clone(), None), |n| (n, None)),
            };
            Ok(NamedShare {
                kind: share.kind,
                id: share.id,
                access: share.access,
                name,
                display_name,
            })
        })
        .collect()
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Team {
    pub team_id: String,
    pub name: String,
    pub owner_id: String,
    pub members: Vec<String>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Folder {
    pub folder_id: String,
    pub name: String,
    pub owner_id: String,
    pub parent_id: Option<String>,
}

fn exists(conn: &Connection, sql: &str, id: &str) -> Result<bool> {
    Ok(conn.prepare_cached(sql)?.exists([id])?)
}

fn check_principals(conn: &Connection, shares: &[Share]) -> Result<()> {
    for s in shares {
        let ok = match s.kind {
            ShareKind::User => exists(conn, "SELECT 1 FROM users WHERE id = ?1", &s.id)?,
            ShareKind::Team => exists(conn, "SELECT 1 FROM teams WHERE id = ?1", &s.id)?,
        };
        if !ok {
            return Err(StorageError::Invalid(
                format!("no such {:?}: {}", s.kind, s.id).to_lowercase(),
            ));
        }
    }
    let mut seen = std::collections::HashSet::new();
    for s in shares {
        if !seen.insert((s.kind, s.id.as_str())) {
            return Err(StorageError::Invalid(format!("{} is listed twice", s.id)));
        }
    }
    Ok(())
}

/// A share list may name a team only if the one setting it belongs to that team (or is an
/// admin), so nobody can push a document into the lists of strangers; team shares already
/// in place (`current`) may stay even if the sharer left the team since.
pub fn check_team_shares(
    conn: &Connection,
    sharer_id: &str,
    sharer_is_admin: bool,
    current: &[Share],
    shares: &[Share],
) -> Result<()> {
    if sharer_is_admin {
        return Ok(());
    }
    let mine: std::collections::HashSet<String> = my_teams(conn, sharer_id)?
        .into_iter()
        .map(|t| t.team_id)
        .collect();
    for s in shares.iter().filter(|s| s.kind == ShareKind::Team) {
        let kept = current
            .iter()
            .any(|c| c.kind == ShareKind::Team && c.id == s.id);
        if !kept && !mine.contains(&s.id) {
            return Err(StorageError::Forbidden(format!(
                "team {}: you can share only with teams you belong to",
                s.id
            )));
        }
    }
    Ok(())
}

/// The user declines a share of the document made to them directly; true if there was one.
pub fn leave_doc_share(conn: &Connection, doc_id: &str, user_id: &str) -> Result<bool> {
    let n = conn.execute(
        "DELETE FROM doc_shares WHERE doc_id = ?1 AND user_id = ?2",
        params![doc_id, user_id],
    )?;
    Ok(n > 0)
}

/// The user declines a share of the folder made to them directly; true if there was one.
pub fn leave_folder_share(conn: &Connection, folder_id: &str, user_id: &str) -> Result<bool> {
    let n = conn.execute(
        "DELETE FROM workspace_folder_shares
          WHERE folder_id = ?1 AND kind = 'user' AND principal_id = ?2",
        params![folder_id, user_id],
    )?;
    Ok(n > 0)
}

/// The user leaves a team they are a member of (not its owner); true if they were in it.
pub fn leave_team(conn: &Connection, team_id: &str, user_id: &str) -> Result<bool> {
    let n = conn.execute(
        "DELETE FROM team_members WHERE team_id = ?1 AND user_id = ?2
           AND user_id <> (SELECT owner_id FROM teams WHERE id = ?1)",
        params![team_id, user_id],
    )?;
    Ok(n > 0)
}

pub fn doc_shares(conn: &Connection, doc_id: &str) -> Result<Vec<Share>> {
    let mut out = Vec::new();
    let mut stmt = conn.prepare_cached(
        "SELECT user_id, access FROM doc_shares WHERE doc_id = ?1 ORDER BY user_id",
    )?;
    for r in stmt.query_map([doc_id], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
    })? {
        let (id, a) = r?;
        out.push(Share {
            kind: ShareKind::User,
            id,
            access: Access::parse(&a),
        });
    }
    let mut stmt = conn.prepare_cached(
        "SELECT team_id, access FROM doc_team_shares WHERE doc_id = ?1 ORDER BY team_id",
    )?;
    for r in stmt.query_map([doc_id], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
    })? {
        let (id, a) = r?;
        out.push(Share {
            kind: ShareKind::Team,
            id,
            access: Access::parse(&a),
        });
    }
    Ok(out)
}

/// Replaces the document's whole share list.
pub fn set_doc_shares(
    conn: &Connection,
    doc_id: &str,
    owner_id: &str,
    shares: &[Share],
) -> Result<()> {
    check_principals(conn, shares)?;
    conn.execute("DELETE FROM doc_shares WHERE doc_id = ?1", [doc_id])?;
    conn.execute("DELETE FROM doc_team_shares WHERE doc_id = ?1", [doc_id])?;
    for s in shares {
        match s.kind {
            ShareKind::User if s.id == owner_id => {}
            ShareKind::User => {
                conn.execute(
                    "INSERT INTO doc_shares (doc_id, user_id, access) VALUES (?1, ?2, ?3)",
                    params![doc_id, s.id, s.access.as_str()],
                )?;
            }
            ShareKind::Team => {
                conn.execute(
                    "INSERT INTO doc_team_shares (doc_id, team_id, access) VALUES (?1, ?2, ?3)",
                    params![doc_id, s.id, s.access.as_str()],
                )?;
            }
        }
    }
    Ok(())
}

pub fn folder_shares(conn: &Connection, folder_id: &str) -> Result<Vec<Share>> {
    let mut stmt = conn.prepare_cached(
        "SELECT kind, principal_id, access FROM workspace_folder_shares WHERE folder_id = ?1 ORDER BY kind, principal_id",
    )?;
    let rows = stmt.query_map([folder_id], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
        ))
    })?;
    let mut out = Vec::new();
    for r in rows {
        let (kind, id, a) = r?;
        out.push(Share {
            kind: if kind == "team" {
                ShareKind::Team
            } else {
                ShareKind::User
            },
            id,
            access: Access::parse(&a),
        });
    }
    Ok(out)
}

pub fn set_folder_shares(conn: &Connection, folder_id: &str, shares: &[Share]) -> Result<()> {
    check_principals(conn, shares)?;
    conn.execute(
        "DELETE FROM workspace_folder_shares WHERE folder_id = ?1",
        [folder_id],
    )?;
    for s in shares {
        let kind = match s.kind {
            ShareKind::User => "user",
            ShareKind::Team => "team",
        };
        conn.execute(
            "INSERT INTO workspace_folder_shares (folder_id, kind, principal_id, access) VALUES (?1, ?2, ?3, ?4)",
            params![folder_id, kind, s.id, s.access.as_str()],
        )?;
    }
    Ok(())
}

pub fn create_team(conn: &Connection, name: &str, owner_id: &str, now: i64) -> Result<Team> {
    let id = new_id("team_");
    conn.execute(
        "INSERT INTO teams (id, name, owner_id, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![id, name, owner_id, now],
    )?;
    conn.execute(
        "INSERT INTO team_members (team_id, user_id) VALUES (?1, ?2)",
        params![id, owner_id],
    )?;
    team(conn, &id)?.ok_or_else(|| StorageError::NotFound(id))
}

pub fn team(conn: &Connection, team_id: &str) -> Result<Option<Team>> {
    let row: Option<(String, String)> = conn
        .query_row(
            "SELECT name, owner_id FROM teams WHERE id = ?1",
            [team_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let Some((name, owner_id)) = row else {
        return Ok(None);
    };
    let mut stmt = conn
        .prepare_cached("SELECT user_id FROM team_members WHERE team_id = ?1 ORDER BY user_id")?;
    let members = stmt
        .query_map([team_id], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(Some(Team {
        team_id: team_id.to_string(),
        name,
        owner_id,
        members,
    }))
}

pub fn team_by_name(conn: &Connection, name: &str) -> Result<Option<Team>> {
    let id: Option<String> = conn
        .query_row(
            "SELECT id FROM teams WHERE name = ?1 ORDER BY created_at LIMIT 1",
            [name],
            |r| r.get(0),
        )
        .optional()?;
    match id {
        Some(id) => team(conn, &id),
        None => Ok(None),
    }
}

/// Teams the user owns or belongs to.
pub fn my_teams(conn: &Connection, user_id: &str) -> Result<Vec<Team>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id FROM teams WHERE owner_id = ?1 UNION SELECT team_id FROM team_members WHERE user_id = ?1",
    )?;
    let ids = stmt
        .query_map([user_id], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut out = Vec::new();
    for id in ids {
        out.extend(team(conn, &id)?);
    }
    Ok(out)
}

/// Replaces the member list (the owner always stays a member).
pub fn set_members(
    conn: &Connection,
    team_id: &str,
    owner_id: &str,
    members: &[String],
) -> Result<()> {
    for m in members {
        if !exists(conn, "SELECT 1 FROM users WHERE id = ?1", m)? {
            return Err(StorageError::Invalid(format!("no such user: {m}")));
        }
    }
    conn.execute("DELETE FROM team_members WHERE team_id = ?1", [team_id])?;
    let mut add = conn
        .prepare_cached("INSERT OR IGNORE INTO team_members (team_id, user_id) VALUES (?1, ?2)")?;
    add.execute(params![team_id, owner_id])?;
    for m in members {
        add.execute(params![team_id, m])?;
    }
    Ok(())
}

pub fn create_folder(
    conn: &Connection,
    name: &str,
    owner_id: &str,
    parent: Option<&str>,
    now: i64,
) -> Result<Folder> {
    let id = new_id("fld_");
    conn.execute(
        "INSERT INTO folders (id, owner_id, parent_id, name, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![id, owner_id, parent, name, now],
    )?;
    Ok(Folder {
        folder_id: id,
        name: name.to_string(),
        owner_id: owner_id.to_string(),
        parent_id: parent.map(str::to_string),
    })
}

/// Renames a folder (the caller checked ownership).
pub fn rename_folder(conn: &Connection, folder_id: &str, name: &str) -> Result<()> {
    conn.execute(
        "UPDATE folders SET name = ?2 WHERE id = ?1",
        params![folder_id, name],
    )?;
    Ok(())
}

/// The folder and every folder below it.
fn folder_and_below(conn: &Connection, folder_id: &str) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(
        "WITH RECURSIVE sub(id, depth) AS (
             SELECT ?1, 0 UNION SELECT f.id, s.depth + 1 FROM folders f JOIN sub s ON f.parent_id = s.id WHERE s.depth < 64)
         SELECT id FROM sub",
    )?;
    let ids = stmt
        .query_map([folder_id], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(ids)
}

/// Moves a folder under another (None: to the top level). Refused (`Invalid`) into itself
/// or a folder below it. Returns the documents whose access may have changed (folder shares
/// are inherited).
pub fn move_folder(
    conn: &Connection,
    folder_id: &str,
    parent: Option<&str>,
) -> Result<Vec<String>> {
    if let Some(p) = parent {
        if folder_and_below(conn, folder_id)?.iter().any(|f| f == p) {
            return Err(StorageError::Invalid(
                "parentId: a folder cannot go into itself or a folder inside it".into(),
            ));
        }
    }
    conn.execute(
        "UPDATE folders SET parent_id = ?2 WHERE id = ?1",
        params![folder_id, parent],
    )?;
    docs_under_folder(conn, folder_id)
}

/// Deletes a folder, never its contents: its documents and subfolders move to its parent
/// (the top level when it had none) and its shares end. Returns the documents whose access
/// may have changed.
pub fn delete_folder(conn: &Connection, folder_id: &str, now: i64) -> Result<Vec<String>> {
    let affected = docs_under_folder(conn, folder_id)?;
    let parent: Option<String> = conn
        .query_row(
            "SELECT parent_id FROM folders WHERE id = ?1",
            [folder_id],
            |r| r.get(0),
        )
        .optional()?
        .flatten();
    conn.execute(
        "UPDATE documents SET folder_id = ?2, updated_at = ?3 WHERE folder_id = ?1",
        params![folder_id, parent, now],
    )?;
    conn.execute(
        "UPDATE folders SET parent_id = ?2 WHERE parent_id = ?1",
        params![folder_id, parent],
    )?;
    conn.execute(
        "DELETE FROM workspace_folder_shares WHERE folder_id = ?1",
        [folder_id],
    )?;
    conn.execute("DELETE FROM folders WHERE id = ?1", [folder_id])?;
    Ok(affected)
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

/// Every document in a folder and its subfolders (whose access a folder share changes).
pub fn docs_under_folder(conn: &Connection, folder_id: &str) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(
        "WITH RECURSIVE sub(id, depth) AS (
             SELECT ?1, 0 UNION SELECT f.id, s.depth + 1 FROM folders f JOIN sub s ON f.parent_id = s.id WHERE s.depth < 64)
         SELECT id FROM documents WHERE folder_id IN (SELECT id FROM sub)",
    )?;
    let ids = stmt
        .query_map([folder_id], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(ids)
}

/// Every document shared with a team (whose access a membership change changes).
pub fn docs_reached_by_team(conn: &Connection, team_id: &str) -> Result<Vec<String>> {
    let mut out: Vec<String> = conn
        .prepare_cached("SELECT doc_id FROM doc_team_shares WHERE team_id = ?1")?
        .query_map([team_id], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let folders: Vec<String> = conn
        .prepare_cached("SELECT folder_id FROM workspace_folder_shares WHERE kind = 'team' AND principal_id = ?1")?
        .query_map([team_id], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    for f in folders {
        out.extend(docs_under_folder(conn, &f)?);
    }
    Ok(out)
}

/// Every team, by name (the admin CLI's `team list`).
pub fn all_teams(conn: &Connection) -> Result<Vec<Team>> {
    let ids = conn
        .prepare_cached("SELECT id FROM teams ORDER BY name")?
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut out = Vec::new();
    for id in ids {
        out.extend(team(conn, &id)?);
    }
    Ok(out)
}
