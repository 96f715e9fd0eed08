//! The one role function: what may this user do with this document? Every endpoint asks
//! it; the server may remember its answer only until the access epoch moves
//! (`access_epoch.rs`), so a revoked right is gone on the very next request.
//! The effective role is the highest of: ownership, a direct share, a share to one of the
//! user's teams, a share of the document's folder or of any ancestor folder (PROTOCOL §3).
//! Owning the folder a document sits in counts as a write share of that folder.

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

use crate::storage::error::Result;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Viewer,
    Editor,
    Owner,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Editor => "editor",
            Role::Owner => "owner",
        }
    }

    pub fn can_write(self) -> bool {
        self >= Role::Editor
    }

    /// Deleting a document for everyone: the owner only.
    pub fn can_delete(self) -> bool {
        self == Role::Owner
    }

    /// Seeing and changing whom a document or folder is shared with: the owner only (a
    /// share can never hand out more than its giver holds, and only the owner holds all).
    pub fn can_manage_shares(self) -> bool {
        self == Role::Owner
    }

    /// Moving a document to another folder (which changes who inherits access through
    /// folder shares): the owner only.
    pub fn can_move_to_folder(self) -> bool {
        self == Role::Owner
    }

    pub(crate) fn from_access(access: &str) -> Role {
        if access == "write" {
            Role::Editor
        } else {
            Role::Viewer
        }
    }
}

/// A role and the path it came by (`owner`, `direct`, `team:<name>`, `folder:<name>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Grant {
    pub role: Role,
    pub via: String,
}

/// Every folder from `folder` up to the root, nearest first (cycle-safe).
const ANCESTORS: &str = "WITH RECURSIVE chain(id, parent_id, owner_id, name, depth) AS (
        SELECT id, parent_id, owner_id, name, 0 FROM folders WHERE id = ?1
        UNION ALL
        SELECT f.id, f.parent_id, f.owner_id, f.name, c.depth + 1 FROM folders f
        JOIN chain c ON f.id = c.parent_id WHERE c.depth < 64)";

/// The effective role of `user_id` on `doc_id` and how it was obtained, or None (no access
/// or no such document — callers answer both with 404 so existence is not revealed). A
/// document in the trash has no readers at all until its owner restores it.
pub fn doc_grant(conn: &Connection, user_id: &str, doc_id: &str) -> Result<Option<Grant>> {
    let doc: Option<(String, Option<String>)> = conn
        .prepare_cached(
            "SELECT owner_id, folder_id FROM documents WHERE id = ?1 AND trashed_at IS NULL",
        )?
        .query_row([doc_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let Some((owner, folder)) = doc else {
        return Ok(None);
    };
    if owner == user_id {
        return Ok(Some(Grant {
            role: Role::Owner,
            via: "owner".into(),
        }));
    }
    let mut best: Option<Grant> = None;
    let mut offer = |role: Role, via: String| {
        if best.as_ref().is_none_or(|b| role > b.role) {
            best = Some(Grant { role, via });
        }
    };
    let direct: Option<String> = conn
        .prepare_cached("SELECT access FROM doc_shares WHERE doc_id = ?1 AND user_id = ?2")?
        .query_row(params![doc_id, user_id], |r| r.get(0))
        .optional()?;
    if let Some(a) = direct {
        offer(Role::from_access(&a), "direct".into());
    }
    let mut stmt = conn.prepare_cached(
        "SELECT s.access, t.name FROM doc_team_shares s JOIN team_members m ON m.team_id = s.team_id
         JOIN teams t ON t.id = s.team_id WHERE s.doc_id = ?1 AND m.user_id = ?2",
    )?;
    for row in stmt.query_map(params![doc_id, user_id], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
    })? {
        let (a, team) = row?;
        offer(Role::from_access(&a), format!("team:{team}"));
    }
    if let Some(folder) = folder {
        let sql = format!(
            "{ANCESTORS}
             SELECT 'write', c.name FROM chain c WHERE c.owner_id = ?2
             UNION ALL
             SELECT s.access, c.name FROM chain c JOIN workspace_folder_shares s ON s.folder_id = c.id
              WHERE (s.kind = 'user' AND s.principal_id = ?2)
                 OR (s.kind = 'team' AND s.principal_id IN (SELECT team_id FROM team_members WHERE user_id = ?2))"
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        for row in stmt.query_map(params![folder, user_id], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })? {
            let (a, name) = row?;
            offer(Role::from_access(&a), format!("folder:{name}"));
        }
    }
    Ok(best)
}

pub fn doc_role(conn: &Connection, user_id: &str, doc_id: &str) -> Result<Option<Role>> {
    Ok(doc_grant(conn, user_id, doc_id)?.map(|g| g.role))
}

/// Whether anyone besides the owner can open the document (PROTOCOL §5 `shared`).
pub fn is_shared(conn: &Connection, doc_id: &str) -> Result<bool> {
    let direct: bool = conn
        .prepare_cached(
            "SELECT EXISTS(SELECT 1 FROM doc_shares WHERE doc_id = ?1)
                 OR EXISTS(SELECT 1 FROM doc_team_shares WHERE doc_id = ?1)",
        )?
        .query_row([doc_id], |r| r.get(0))?;
    if direct {
        return Ok(true);
    }
    let doc: Option<(String, Option<String>)> = conn
        .prepare_cached("SELECT owner_id, folder_id FROM documents WHERE id = ?1")?
        .query_row([doc_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let Some((owner, Some(folder))) = doc else {
        return Ok(false);
    };
    let sql = format!(
        "{ANCESTORS}
         SELECT EXISTS(SELECT 1 FROM chain c JOIN workspace_folder_shares s ON s.folder_id = c.id)
             OR EXISTS(SELECT 1 FROM chain c WHERE c.owner_id <> ?2)"
    );
    Ok(conn
        .prepare_cached(&sql)?
        .query_row(params![folder, owner], |r| r.get(0))?)
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

/// One line of a user's document list: the document and the caller's role on it, with how
/// that role was obtained (`direct`, `team:…`, `folder:…`, `owner`).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DocSummary {
    pub doc_id: String,
    pub title: String,
    pub icon: Option<String>,
    pub owner_id: String,
    pub folder_id: Option<String>,
    pub head_seq: i64,
    pub updated_at: i64,
    pub role: String,
    pub via: String,
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

/// A folder the user can see, with their role on it (for the home page's folder tree).
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FolderSummary {
    pub folder_id: String,
    pub name: String,
    pub owner_id: String,
    /// None at the top, or when the parent is not visible to this user.
    pub parent_id: Option<String>,
    pub role: String,
}

/// Every folder the user reaches (owned or shared, and their subfolders), by name. A parent
/// the user cannot see is reported as None, so no folder name leaks.
pub fn readable_folders(conn: &Connection, user_id: &str) -> Result<Vec<FolderSummary>> {
    let sql = concat!(
        folder_reach!(),
        "
    SELECT f.id, f.name, f.owner_id, f.parent_id FROM folders f
     WHERE f.id IN (SELECT id FROM reach) ORDER BY f.name COLLATE NOCASE, f.id"
    );
    let rows: Vec<(String, String, String, Option<String>)> = conn
        .prepare_cached(sql)?
        .query_map([user_id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let visible: std::collections::HashSet<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    let mut out = Vec::with_capacity(rows.len());
    for (id, name, owner_id, parent) in &rows {
        let Some(role) = folder_role(conn, user_id, id)? else {
            continue;
        };
        out.push(FolderSummary {
            folder_id: id.clone(),
            name: name.clone(),
            owner_id: owner_id.clone(),
            parent_id: parent.clone().filter(|p| visible.contains(p.as_str())),
            role: role.as_str().to_string(),
        });
    }
    Ok(out)
}

pub fn readable_documents(conn: &Connection, user_id: &str) -> Result<Vec<DocSummary>> {
    let ids = readable_doc_ids(conn, user_id)?;
    let mut meta = conn.prepare_cached(
        "SELECT id, title, icon, owner_id, folder_id, head_seq, updated_at FROM documents WHERE id = ?1",
    )?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let Some(grant) = doc_grant(conn, user_id, &id)? else {
            continue;
        };
        let d = meta.query_row([&id], |r| {
            Ok(DocSummary {
                doc_id: r.get(0)?,
                title: r.get(1)?,
                icon: r.get(2)?,
                owner_id: r.get(3)?,
                folder_id: r.get(4)?,
                head_seq: r.get(5)?,
                updated_at: r.get(6)?,
                role: grant.role.as_str().to_string(),
                via: grant.via.clone(),
            })
        })?;
        out.push(d);
    }
    out.sort_by(|a, b| {
        b.updated_at
            .cmp(&a.updated_at)
            .then(a.doc_id.cmp(&b.doc_id))
    });
    Ok(out)
}

/// The query of every document ID user `?1` can read, to use as a subquery
/// (`doc_id IN (…)`): search and tags filter by it inside SQLite instead of binding one
/// variable per readable document (past SQLite's 32,766 variables that was a 500 for
/// anyone who could read that many documents).
pub const READABLE_DOC_IDS: &str = CANDIDATES;

/// IDs of every document the user can read.
pub fn readable_doc_ids(conn: &Connection, user_id: &str) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(CANDIDATES)?;
    let ids = stmt
        .query_map([user_id], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(ids)
}

/// What the user may do with a folder: owner (manage shares, everything), write (create
/// documents and subfolders in it), read — the highest of ownership and shares on the folder
/// or any ancestor.
pub fn folder_role(conn: &Connection, user_id: &str, folder_id: &str) -> Result<Option<Role>> {
    let sql = format!(
        "{ANCESTORS}
         SELECT CASE WHEN c.owner_id = ?2 AND c.depth = 0 THEN 'owner' ELSE 'write' END FROM chain c WHERE c.owner_id = ?2
         UNION ALL
         SELECT s.access FROM chain c JOIN workspace_folder_shares s ON s.folder_id = c.id
          WHERE (s.kind = 'user' AND s.principal_id = ?2)
             OR (s.kind = 'team' AND s.principal_id IN (SELECT team_id FROM team_members WHERE user_id = ?2))"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut best: Option<Role> = None;
    for row in stmt.query_map(params![folder_id, user_id], |r| r.get::<_, String>(0))? {
        let role = match row?.as_str() {
            "owner" => Role::Owner,
            a => Role::from_access(a),
        };
        best = best.max(Some(role));
    }
    Ok(best)
}
