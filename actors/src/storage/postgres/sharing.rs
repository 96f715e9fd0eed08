//! Teams, folders and shares on PostgreSQL: the same typed functions as SQLite's
//! `storage::sharing` — the rows the role function reads — with the same checks (principals
//! exist, none listed twice, a team share only by a member, no folder into itself).

use std::collections::HashSet;

use postgres::GenericClient;

use crate::storage::sqlite::accounts::new_id;
use crate::storage::sqlite::sharing::{Access, Folder, NamedShare, Share, ShareKind, Team};

use super::super::error::{Result, StorageError};

fn exists(c: &mut impl GenericClient, sql: &str, id: &str) -> Result<bool> {
    Ok(c.query_opt(sql, &[&id])?.is_some())
}

fn check_principals(c: &mut impl GenericClient, shares: &[Share]) -> Result<()> {
    for s in shares {
        let ok = match s.kind {
            ShareKind::User => exists(c, "SELECT 1 FROM users WHERE id = $1", &s.id)?,
            ShareKind::Team => exists(c, "SELECT 1 FROM teams WHERE id = $1", &s.id)?,
        };
        if !ok {
            return Err(StorageError::Invalid(
                format!("no such {:?}: {}", s.kind, s.id).to_lowercase(),
            ));
        }
    }
    let mut seen = HashSet::new();
    for s in shares {
        if !seen.insert((s.kind, s.id.as_str())) {
            return Err(StorageError::Invalid(format!("{} is listed twice", s.id)));
        }
    }
    Ok(())
}

/// Adds names to shares (a principal deleted meanwhile keeps its ID as its name).
pub fn with_names(c: &mut impl GenericClient, shares: Vec<Share>) -> Result<Vec<NamedShare>> {
    let mut out = Vec::with_capacity(shares.len());
    for share in shares {
        let (name, display_name) = match share.kind {
            ShareKind::User => c
                .query_opt(
                    "SELECT name, display_name FROM users WHERE id = $1",
                    &[&share.id],
                )?
                .map(|r| (r.get::<_, String>(0), Some(r.get::<_, String>(1))))
                .unwrap_or_else(|| (share.id.clone(), None)),
            ShareKind::Team => c
                .query_opt("SELECT name FROM teams WHERE id = $1", &[&share.id])?
                .map_or_else(|| (share.id.clone(), None), |r| (r.get(0), None)),
        };
        out.push(NamedShare {
            kind: share.kind,
            id: share.id,
            access: share.access,
            name,
            display_name,
        });
    }
    Ok(out)
}

pub fn check_team_shares(
    c: &mut impl GenericClient,
    sharer_id: &str,
    sharer_is_admin: bool,
    current: &[Share],
    shares: &[Share],
) -> Result<()> {
    if sharer_is_admin {
        return Ok(());
    }
    let mine: HashSet<String> = my_teams(c, sharer_id)?
        .into_iter()
        .map(|t| t.team_id)
        .collect();
    for s in shares.iter().filter(|s| s.kind == ShareKind::Team) {
        let kept = current
            .iter()
            .any(|x| x.kind == ShareKind::Team && x.id == s.id);
        if !kept && !mine.contains(&s.id) {
            return Err(StorageError::Forbidden(format!(
                "team {}: you can share only with teams you belong to",
                s.id
            )));
        }
    }
    Ok(())
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
    let mut out = Vec::new();
    for r in c.query(
        "SELECT user_id, access FROM doc_shares WHERE doc_id = $1 ORDER BY user_id",
        &[&doc_id],
    )? {
        out.push(Share {
            kind: ShareKind::User,
            id: r.get(0),
            access: Access::parse(r.get(1)),
        });
    }
    for r in c.query(
        "SELECT team_id, access FROM doc_team_shares WHERE doc_id = $1 ORDER BY team_id",
        &[&doc_id],
    )? {
        out.push(Share {
            kind: ShareKind::Team,
            id: r.get(0),
            access: Access::parse(r.get(1)),
        });
    }
    Ok(out)
}

pub fn set_doc_shares(
    c: &mut impl GenericClient,
    doc_id: &str,
    owner_id: &str,
    shares: &[Share],
) -> Result<()> {
    check_principals(c, shares)?;
    c.execute("DELETE FROM doc_shares WHERE doc_id = $1", &[&doc_id])?;
    c.execute("DELETE FROM doc_team_shares WHERE doc_id = $1", &[&doc_id])?;
    for s in shares {
        match s.kind {
            ShareKind::User if s.id == owner_id => {}
            ShareKind::User => {
                c.execute(
                    "INSERT INTO doc_shares (doc_id, user_id, access) VALUES ($1, $2, $3)",
                    &[&doc_id, &s.id, &s.access.as_str()],
                )?;
            }
            ShareKind::Team => {
                c.execute(
                    "INSERT INTO doc_team_shares (doc_id, team_id, access) VALUES ($1, $2, $3)",
                    &[&doc_id, &s.id, &s.access.as_str()],
                )?;
            }
        }
    }
    Ok(())
}

pub fn folder_shares(c: &mut impl GenericClient, folder_id: &str) -> Result<Vec<Share>> {
    Ok(c.query(
        "SELECT kind, principal_id, access FROM workspace_folder_shares WHERE folder_id = $1
              ORDER BY kind, principal_id",
        &[&folder_id],
    )?
    .iter()
    .map(|r| Share {
        kind: if r.get::<_, &str>(0) == "team" {
            ShareKind::Team
        } else {
            ShareKind::User
        },
        id: r.get(1),
        access: Access::parse(r.get(2)),
    })
    .collect())
}

pub fn set_folder_shares(
    c: &mut impl GenericClient,
    folder_id: &str,
    shares: &[Share],
) -> Result<()> {
    check_principals(c, shares)?;
    c.execute(
        "DELETE FROM workspace_folder_shares WHERE folder_id = $1",
        &[&folder_id],
    )?;
    for s in shares {
        let kind = match s.kind {
            ShareKind::User => "user",
            ShareKind::Team => "team",
        };
        c.execute(
            "INSERT INTO workspace_folder_shares (folder_id, kind, principal_id, access) VALUES ($1, $2, $3, $4)",
            &[&folder_id, &kind, &s.id, &s.access.as_str()],
        )?;
    }
    Ok(())
}

pub fn create_team(
    c: &mut impl GenericClient,
    name: &str,
    owner_id: &str,
    now: i64,
) -> Result<Team> {
    let id = new_id("team_");
    c.execute(
        "INSERT INTO teams (id, name, owner_id, created_at) VALUES ($1, $2, $3, $4)",
        &[&id, &name, &owner_id, &now],
    )?;
    c.execute(
        "INSERT INTO team_members (team_id, user_id) VALUES ($1, $2)",
        &[&id, &owner_id],
    )?;
    team(c, &id)?.ok_or(StorageError::NotFound(id))
}

pub fn team(c: &mut impl GenericClient, team_id: &str) -> Result<Option<Team>> {
    let Some(r) = c.query_opt(
        "SELECT name, owner_id FROM teams WHERE id = $1",
        &[&team_id],
    )?
    else {
        return Ok(None);
    };
    let members = c
        .query(
            "SELECT user_id FROM team_members WHERE team_id = $1 ORDER BY user_id",
            &[&team_id],
        )?
        .iter()
        .map(|m| m.get(0))
        .collect();
    Ok(Some(Team {
        team_id: team_id.to_string(),
        name: r.get(0),
        owner_id: r.get(1),
        members,
    }))
}

pub fn team_by_name(c: &mut impl GenericClient, name: &str) -> Result<Option<Team>> {
    let id: Option<String> = c
        .query_opt(
            "SELECT id FROM teams WHERE name = $1 ORDER BY created_at LIMIT 1",
            &[&name],
        )?
        .map(|r| r.get(0));
    match id {
        Some(id) => team(c, &id),
        None => Ok(None),
    }
}

pub fn my_teams(c: &mut impl GenericClient, user_id: &str) -> Result<Vec<Team>> {
    let ids: Vec<String> = c
        .query(
            "SELECT id FROM teams WHERE owner_id = $1 UNION SELECT team_id FROM team_members WHERE user_id = $1",
            &[&user_id],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let mut out = Vec::new();
    for id in ids {
        out.extend(team(c, &id)?);
    }
    Ok(out)
}

pub fn set_members(
    c: &mut impl GenericClient,
    team_id: &str,
    owner_id: &str,
    members: &[String],
) -> Result<()> {
    for m in members {
        if !exists(c, "SELECT 1 FROM users WHERE id = $1", m)? {
            return Err(StorageError::Invalid(format!("no such user: {m}")));
        }
    }
    c.execute("DELETE FROM team_members WHERE team_id = $1", &[&team_id])?;
    for m in std::iter::once(owner_id).chain(members.iter().map(String::as_str)) {
        c.execute(
            "INSERT INTO team_members (team_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            &[&team_id, &m],
        )?;
    }
    Ok(())
}

pub fn create_folder(
    c: &mut impl GenericClient,
    name: &str,
    owner_id: &str,
    parent: Option<&str>,
    now: i64,
) -> Result<Folder> {
    let id = new_id("fld_");
    c.execute(
        "INSERT INTO folders (id, owner_id, parent_id, name, created_at) VALUES ($1, $2, $3, $4, $5)",
        &[&id, &owner_id, &parent, &name, &now],
    )?;
    Ok(Folder {
        folder_id: id,
        name: name.to_string(),
        owner_id: owner_id.to_string(),
        parent_id: parent.map(str::to_string),
    })
}

pub fn rename_folder(c: &mut impl GenericClient, folder_id: &str, name: &str) -> Result<()> {
    c.execute(
        "UPDATE folders SET name = $2 WHERE id = $1",
        &[&folder_id, &name],
    )?;
    Ok(())
}

const BELOW: &str = "WITH RECURSIVE sub(id, depth) AS (
        SELECT $1::text, 0 UNION SELECT f.id, s.depth + 1 FROM folders f JOIN sub s ON f.parent_id = s.id WHERE s.depth < 64)";

fn folder_and_below(c: &mut impl GenericClient, folder_id: &str) -> Result<Vec<String>> {
    let sql = format!("{BELOW} SELECT id FROM sub");
    Ok(c.query(&sql, &[&folder_id])?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

pub fn move_folder(
    c: &mut impl GenericClient,
    folder_id: &str,
    parent: Option<&str>,
) -> Result<Vec<String>> {
    if let Some(p) = parent {
        if folder_and_below(c, folder_id)?.iter().any(|f| f == p) {
            return Err(StorageError::Invalid(
                "parentId: a folder cannot go into itself or a folder inside it".into(),
            ));
        }
    }
    c.execute(
        "UPDATE folders SET parent_id = $2 WHERE id = $1",
        &[&folder_id, &parent],
    )?;
    docs_under_folder(c, folder_id)
}

pub fn delete_folder(c: &mut impl GenericClient, folder_id: &str, now: i64) -> Result<Vec<String>> {
    let affected = docs_under_folder(c, folder_id)?;
    let parent: Option<String> = c
        .query_opt("SELECT parent_id FROM folders WHERE id = $1", &[&folder_id])?
        .and_then(|r| r.get(0));
    c.execute(
        "UPDATE documents SET folder_id = $2, updated_at = $3 WHERE folder_id = $1",
        &[&folder_id, &parent, &now],
    )?;
    c.execute(
        "UPDATE folders SET parent_id = $2 WHERE parent_id = $1",
        &[&folder_id, &parent],
    )?;
    c.execute(
        "DELETE FROM workspace_folder_shares WHERE folder_id = $1",
        &[&folder_id],
    )?;
    c.execute("DELETE FROM folders WHERE id = $1", &[&folder_id])?;
    Ok(affected)
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
    let sql = format!("{BELOW} SELECT id FROM documents WHERE folder_id IN (SELECT id FROM sub)");
    Ok(c.query(&sql, &[&folder_id])?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

pub fn docs_reached_by_team(c: &mut impl GenericClient, team_id: &str) -> Result<Vec<String>> {
    let mut out: Vec<String> = c
        .query(
            "SELECT doc_id FROM doc_team_shares WHERE team_id = $1",
            &[&team_id],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let folders: Vec<String> = c
        .query(
            "SELECT folder_id FROM workspace_folder_shares WHERE kind = 'team' AND principal_id = $1",
            &[&team_id],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect();
    for f in folders {
        out.extend(docs_under_folder(c, &f)?);
    }
    Ok(out)
}

pub fn all_teams(c: &mut impl GenericClient) -> Result<Vec<Team>> {
    let ids: Vec<String> = c
        .query("SELECT id FROM teams ORDER BY name", &[])?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let mut out = Vec::new();
    for id in ids {
        out.extend(team(c, &id)?);
    }
    Ok(out)
}
