//! The one role function: what may this user do with this document? Every endpoint asks
//! it, on every request (no cache, so a revoked right is gone on the very next request).
//! For now a document belongs to its owner alone; shares extend this function, not callers.

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

use super::documents::DocSummary;
use super::error::Result;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
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
}

/// The effective role of `user_id` on `doc_id`, or None (no access, or no such document —
/// callers answer both with 404 so existence is not revealed).
pub fn doc_role(conn: &Connection, user_id: &str, doc_id: &str) -> Result<Option<Role>> {
    let owner: Option<String> = conn
        .prepare_cached("SELECT owner_id FROM documents WHERE id = ?1")?
        .query_row([doc_id], |r| r.get(0))
        .optional()?;
    Ok(match owner {
        Some(o) if o == user_id => Some(Role::Owner),
        _ => None,
    })
}

/// Whether anyone besides the owner can open the document (PROTOCOL §5 `shared`).
pub fn is_shared(_conn: &Connection, _doc_id: &str) -> Result<bool> {
    Ok(false)
}

pub fn readable_documents(conn: &Connection, user_id: &str) -> Result<Vec<DocSummary>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, title, icon, owner_id, folder_id, head_seq, updated_at FROM documents
         WHERE owner_id = ?1 ORDER BY updated_at DESC, id",
    )?;
    let rows = stmt.query_map(params![user_id], |r| {
        Ok(DocSummary {
            doc_id: r.get(0)?,
            title: r.get(1)?,
            icon: r.get(2)?,
            owner_id: r.get(3)?,
            folder_id: r.get(4)?,
            head_seq: r.get(5)?,
            updated_at: r.get(6)?,
            role: Role::Owner.as_str().to_string(),
            via: "owner".to_string(),
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// IDs of every document the user can read (for search and tags).
pub fn readable_doc_ids(conn: &Connection, user_id: &str) -> Result<Vec<String>> {
    Ok(readable_documents(conn, user_id)?
        .into_iter()
        .map(|d| d.doc_id)
        .collect())
}
