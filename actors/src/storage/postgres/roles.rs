//! The role function on PostgreSQL: the same decisions as SQLite's `storage::roles` (owner;
//! the best of direct shares, team shares and folder shares up the folder chain; none for a
//! trashed document), the same typed answers. `backend_tests.rs` checks both on random share
//! graphs.

use postgres::GenericClient;

use crate::storage::sqlite::roles::{DocSummary, FolderSummary, Grant, Role};

use super::super::error::Result;

/// Every folder from `$1` up to the root, nearest first (cycle-safe).
const ANCESTORS: &str = "WITH RECURSIVE chain(id, parent_id, owner_id, name, depth) AS (
        SELECT id, parent_id, owner_id, name, 0 FROM folders WHERE id = $1
        UNION ALL
        SELECT f.id, f.parent_id, f.owner_id, f.name, c.depth + 1 FROM folders f
        JOIN chain c ON f.id = c.parent_id WHERE c.depth < 64)";

/// The effective role of `user_id` on `doc_id` and how it was obtained, or None (no access,
/// no such document, or in the trash).
pub fn doc_grant(c: &mut impl GenericClient, user_id: &str, doc_id: &str) -> Result<Option<Grant>> {
    let doc = c.query_opt(
        "SELECT owner_id, folder_id FROM documents WHERE id = $1 AND trashed_at IS NULL",
        &[&doc_id],
    )?;
    let Some(doc) = doc else {
        return Ok(None);
    };
    let (owner, folder): (String, Option<String>) = (doc.get(0), doc.get(1));
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
    if let Some(r) = c.query_opt(
        "SELECT access FROM doc_shares WHERE doc_id = $1 AND user_id = $2",
        &[&doc_id, &user_id],
    )? {
        offer(Role::from_access(r.get(0)), "direct".into());
    }
    for r in c.query(
        "SELECT s.access, t.name FROM doc_team_shares s JOIN team_members m ON m.team_id = s.team_id
           JOIN teams t ON t.id = s.team_id WHERE s.doc_id = $1 AND m.user_id = $2",
        &[&doc_id, &user_id],
    )? {
        offer(Role::from_access(r.get(0)), format!("team:{}", r.get::<_, &str>(1)));
    }
    if let Some(folder) = folder {
        let sql = format!(
            "{ANCESTORS}
             SELECT 'write', c.name, c.depth, 0 FROM chain c WHERE c.owner_id = $2
             UNION ALL
             SELECT s.access, c.name, c.depth, 1 FROM chain c JOIN workspace_folder_shares s ON s.folder_id = c.id
              WHERE (s.kind = 'user' AND s.principal_id = $2)
                 OR (s.kind = 'team' AND s.principal_id IN (SELECT team_id FROM team_members WHERE user_id = $2))
             ORDER BY 4, 3"
        );
        for r in c.query(&sql, &[&folder, &user_id])? {
            offer(
                Role::from_access(r.get(0)),
                format!("folder:{}", r.get::<_, &str>(1)),
            );
        }
    }
    Ok(best)
}

pub fn doc_role(c: &mut impl GenericClient, user_id: &str, doc_id: &str) -> Result<Option<Role>> {
    Ok(doc_grant(c, user_id, doc_id)?.map(|g| g.role))
}

/// IDs of every document the user can read (owned, shared directly or by team, or inside a
/// folder the user reaches), none in the trash.
pub fn readable_doc_ids(c: &mut impl GenericClient, user_id: &str) -> Result<Vec<String>> {
    let rows = c.query(
        "WITH RECURSIVE
            my_teams(id) AS (SELECT team_id FROM team_members WHERE user_id = $1),
            roots(id) AS (
                SELECT id FROM folders WHERE owner_id = $1
                UNION SELECT folder_id FROM workspace_folder_shares WHERE kind = 'user' AND principal_id = $1
                UNION SELECT folder_id FROM workspace_folder_shares WHERE kind = 'team' AND principal_id IN (SELECT id FROM my_teams)),
            reach(id, depth) AS (
                SELECT id, 0 FROM roots
                UNION SELECT f.id, r.depth + 1 FROM folders f JOIN reach r ON f.parent_id = r.id WHERE r.depth < 64)
         SELECT id FROM documents WHERE trashed_at IS NULL AND (
                owner_id = $1
             OR id IN (SELECT doc_id FROM doc_shares WHERE user_id = $1)
             OR id IN (SELECT doc_id FROM doc_team_shares WHERE team_id IN (SELECT id FROM my_teams))
             OR folder_id IN (SELECT id FROM reach))",
        &[&user_id],
    )?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// Whether anyone besides the owner can open the document (PROTOCOL §5 `shared`).
pub fn is_shared(c: &mut impl GenericClient, doc_id: &str) -> Result<bool> {
    let direct: bool = c
        .query_one(
            "SELECT EXISTS(SELECT 1 FROM doc_shares WHERE doc_id = $1)
                 OR EXISTS(SELECT 1 FROM doc_team_shares WHERE doc_id = $1)",
            &[&doc_id],
        )?
        .get(0);
    if direct {
        return Ok(true);
    }
    let Some(doc) = c.query_opt(
        "SELECT owner_id, folder_id FROM documents WHERE id = $1",
        &[&doc_id],
    )?
    else {
        return Ok(false);
    };
    let (owner, folder): (String, Option<String>) = (doc.get(0), doc.get(1));
    let Some(folder) = folder else {
        return Ok(false);
    };
    let sql = format!(
        "{ANCESTORS}
         SELECT EXISTS(SELECT 1 FROM chain c JOIN workspace_folder_shares s ON s.folder_id = c.id)
             OR EXISTS(SELECT 1 FROM chain c WHERE c.owner_id <> $2)"
    );
    Ok(c.query_one(&sql, &[&folder, &owner])?.get(0))
}

/// What the user may do with a folder: the highest of ownership and shares on it or any
/// ancestor (owner only for the folder's own owner).
pub fn folder_role(
    c: &mut impl GenericClient,
    user_id: &str,
    folder_id: &str,
) -> Result<Option<Role>> {
    let sql = format!(
        "{ANCESTORS}
         SELECT CASE WHEN c.owner_id = $2 AND c.depth = 0 THEN 'owner' ELSE 'write' END FROM chain c WHERE c.owner_id = $2
         UNION ALL
         SELECT s.access FROM chain c JOIN workspace_folder_shares s ON s.folder_id = c.id
          WHERE (s.kind = 'user' AND s.principal_id = $2)
             OR (s.kind = 'team' AND s.principal_id IN (SELECT team_id FROM team_members WHERE user_id = $2))"
    );
    let mut best: Option<Role> = None;
    for r in c.query(&sql, &[&folder_id, &user_id])? {
        let role = match r.get::<_, &str>(0) {
            "owner" => Role::Owner,
            a => Role::from_access(a),
        };
        best = best.max(Some(role));
    }
    Ok(best)
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

/// Every folder the user reaches, by name, with their role; a parent the user cannot see is
/// reported as None so no folder name leaks (as SQLite's `readable_folders`).
pub fn readable_folders(c: &mut impl GenericClient, user_id: &str) -> Result<Vec<FolderSummary>> {
    let sql = format!(
        "{REACH}
         SELECT f.id, f.name, f.owner_id, f.parent_id FROM folders f
          WHERE f.id IN (SELECT id FROM reach) ORDER BY lower(f.name), f.id"
    );
    let rows: Vec<(String, String, String, Option<String>)> = c
        .query(&sql, &[&user_id])?
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect();
    let visible: std::collections::HashSet<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    let mut out = Vec::with_capacity(rows.len());
    for (id, name, owner_id, parent) in &rows {
        let Some(role) = folder_role(c, user_id, id)? else {
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

/// The user's document list, newest change first, each with their role and how they have it.
pub fn readable_documents(c: &mut impl GenericClient, user_id: &str) -> Result<Vec<DocSummary>> {
    let ids = readable_doc_ids(c, user_id)?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let Some(grant) = doc_grant(c, user_id, &id)? else {
            continue;
        };
        let Some(r) = c.query_opt(
            "SELECT id, title, icon, owner_id, folder_id, head_seq, updated_at FROM documents WHERE id = $1",
            &[&id],
        )?
        else {
            continue;
        };
        out.push(DocSummary {
            doc_id: r.get(0),
            title: r.get(1),
            icon: r.get(2),
            owner_id: r.get(3),
            folder_id: r.get(4),
            head_seq: r.get(5),
            updated_at: r.get(6),
            role: grant.role.as_str().to_string(),
            via: grant.via,
        });
    }
    out.sort_by(|a, b| {
        b.updated_at
            .cmp(&a.updated_at)
            .then(a.doc_id.cmp(&b.doc_id))
    });
    Ok(out)
}
