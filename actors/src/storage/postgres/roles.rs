//! The role function on PostgreSQL: the same decisions as SQLite's `storage::roles` (owner;
//! the best of direct shares, team shares and folder shares up the folder chain; none for a
//! trashed document), the same typed answers. `backend_tests.rs` checks both on random share
//! graphs.

use postgres::GenericClient;

use crate::storage::roles::{Grant, Role};

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
