//! Teams, folders and shares: the rows the role function reads. Who may change them is
//! decided by the callers through `roles`; the checks here are what a share list, a member
//! list or a folder move must satisfy whoever makes it (everything named exists, nothing
//! twice, team shares by members, no folder into itself) — written once, over the rows each
//! backend answers in `sqlite.rs` and `postgres.rs`.

mod postgres;
mod rows;
mod sqlite;
mod types;

pub use rows::{block_in_doc, block_parent, block_shares};
pub use rows::{
    doc_owner, doc_shares, docs_under_folder, folder, folder_shares, leave_doc_share,
    leave_folder_share, leave_team, rename_folder, set_doc_folder,
};
pub use types::{Access, Folder, NamedShare, Share, ShareKind, SharedBullet, Team};

use std::collections::HashSet;

use super::accounts::new_id;
use super::db::Db;
use super::error::{Result, StorageError};

/// The shared bullet among `roots` that `block_id` lies below (or is), walking up the
/// document as stored; `None` when it lies outside every one of them or the document has
/// no such bullet. A bullet guest's reads of one bullet (its history) ask this.
pub fn covering_root(
    db: &mut Db,
    doc_id: &str,
    block_id: &str,
    roots: &[String],
) -> Result<Option<String>> {
    let mut cur = Some(block_id.to_string());
    // The tree has no cycles (the rules refuse them); the bound only keeps a damaged one
    // from looping.
    for _ in 0..100_000 {
        let Some(id) = cur else { break };
        if roots.contains(&id) {
            return Ok(Some(id));
        }
        cur = match rows::block_parent(db, doc_id, &id)? {
            Some((parent, _)) => parent,
            None => None,
        };
    }
    Ok(None)
}

/// Adds names to shares (a principal deleted meanwhile keeps its ID as its name).
pub fn with_names(db: &mut Db, shares: Vec<Share>) -> Result<Vec<NamedShare>> {
    shares
        .into_iter()
        .map(|share| {
            let (name, display_name) = match share.kind {
                ShareKind::User => rows::user_names(db, &share.id)?
                    .map_or_else(|| (share.id.clone(), None), |(n, d)| (n, Some(d))),
                ShareKind::Team => rows::team_name(db, &share.id)?
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

/// Every principal a share list names exists, and none is named twice.
fn check_principals(db: &mut Db, shares: &[Share]) -> Result<()> {
    for s in shares {
        let ok = match s.kind {
            ShareKind::User => rows::user_exists(db, &s.id)?,
            ShareKind::Team => rows::team_exists(db, &s.id)?,
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

/// A share list may name a team only if the one setting it belongs to that team (or is an
/// admin), so nobody can push a document into the lists of strangers; team shares already
/// in place (`current`) may stay even if the sharer left the team since.
pub fn check_team_shares(
    db: &mut Db,
    sharer_id: &str,
    sharer_is_admin: bool,
    current: &[Share],
    shares: &[Share],
) -> Result<()> {
    if sharer_is_admin {
        return Ok(());
    }
    let mine: HashSet<String> = rows::team_ids_of(db, sharer_id)?.into_iter().collect();
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

/// Replaces the document's whole share list (a share to its owner is dropped: they own it).
pub fn set_doc_shares(db: &mut Db, doc_id: &str, owner_id: &str, shares: &[Share]) -> Result<()> {
    check_principals(db, shares)?;
    rows::clear_doc_shares(db, doc_id)?;
    for s in shares {
        if !(s.kind == ShareKind::User && s.id == owner_id) {
            rows::insert_doc_share(db, doc_id, s)?;
        }
    }
    Ok(())
}

/// Replaces a bullet's whole share list (PROTOCOL §10; a share to the document's owner is
/// dropped: they see everything).
pub fn set_block_shares(
    db: &mut Db,
    doc_id: &str,
    block_id: &str,
    owner_id: &str,
    shares: &[Share],
) -> Result<()> {
    check_principals(db, shares)?;
    rows::clear_block_shares(db, doc_id, block_id)?;
    for s in shares {
        if !(s.kind == ShareKind::User && s.id == owner_id) {
            rows::insert_block_share(db, doc_id, block_id, s)?;
        }
    }
    Ok(())
}

/// The bullets shared with the user that they do not see anyway (a person with a role on
/// the whole document opens the document itself), each with their role on it.
pub fn shared_bullets(db: &mut Db, user_id: &str) -> Result<Vec<SharedBullet>> {
    let mut out = Vec::new();
    for row in rows::shared_bullets(db, user_id)? {
        let Some(view) = super::roles::doc_view(db, user_id, &row.doc_id)? else {
            continue;
        };
        let super::roles::Reach::Bullets(roots) = &view.reach else {
            continue;
        };
        let Some(root) = roots.iter().find(|r| r.block_id == row.block_id) else {
            continue;
        };
        out.push(SharedBullet {
            doc_id: row.doc_id,
            block_id: row.block_id,
            title: row.content.unwrap_or_default(),
            role: root.role,
            deleted: row.deleted,
        });
    }
    Ok(out)
}

/// Replaces the folder's whole share list.
pub fn set_folder_shares(db: &mut Db, folder_id: &str, shares: &[Share]) -> Result<()> {
    check_principals(db, shares)?;
    rows::clear_folder_shares(db, folder_id)?;
    for s in shares {
        rows::insert_folder_share(db, folder_id, s)?;
    }
    Ok(())
}

/// A new team with its owner as its first member.
pub fn create_team(db: &mut Db, name: &str, owner_id: &str, now: i64) -> Result<Team> {
    let id = new_id("team_");
    rows::insert_team(db, &id, name, owner_id, now)?;
    rows::add_member(db, &id, owner_id)?;
    team(db, &id)?.ok_or(StorageError::NotFound(id))
}

pub fn team(db: &mut Db, team_id: &str) -> Result<Option<Team>> {
    let Some((name, owner_id)) = rows::team_row(db, team_id)? else {
        return Ok(None);
    };
    Ok(Some(Team {
        team_id: team_id.to_string(),
        name,
        owner_id,
        members: rows::team_members(db, team_id)?,
    }))
}

fn teams(db: &mut Db, ids: Vec<String>) -> Result<Vec<Team>> {
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        out.extend(team(db, &id)?);
    }
    Ok(out)
}

pub fn team_by_name(db: &mut Db, name: &str) -> Result<Option<Team>> {
    match rows::team_id_by_name(db, name)? {
        Some(id) => team(db, &id),
        None => Ok(None),
    }
}

/// Teams the user owns or belongs to.
pub fn my_teams(db: &mut Db, user_id: &str) -> Result<Vec<Team>> {
    let ids = rows::team_ids_of(db, user_id)?;
    teams(db, ids)
}

/// Every team, by name (the admin CLI's `team list`).
pub fn all_teams(db: &mut Db) -> Result<Vec<Team>> {
    let ids = rows::all_team_ids(db)?;
    teams(db, ids)
}

/// Replaces the member list (the owner always stays a member); every member must exist.
pub fn set_members(db: &mut Db, team_id: &str, owner_id: &str, members: &[String]) -> Result<()> {
    for m in members {
        if !rows::user_exists(db, m)? {
            return Err(StorageError::Invalid(format!("no such user: {m}")));
        }
    }
    rows::clear_members(db, team_id)?;
    rows::add_member(db, team_id, owner_id)?;
    for m in members {
        rows::add_member(db, team_id, m)?;
    }
    Ok(())
}

pub fn create_folder(
    db: &mut Db,
    name: &str,
    owner_id: &str,
    parent: Option<&str>,
    now: i64,
) -> Result<Folder> {
    let folder = Folder {
        folder_id: new_id("fld_"),
        name: name.to_string(),
        owner_id: owner_id.to_string(),
        parent_id: parent.map(str::to_string),
    };
    rows::insert_folder(db, &folder, now)?;
    Ok(folder)
}

/// Moves a folder under another (None: to the top level). Refused (`Invalid`) into itself
/// or a folder below it. Returns the documents whose access may have changed (folder shares
/// are inherited).
pub fn move_folder(db: &mut Db, folder_id: &str, parent: Option<&str>) -> Result<Vec<String>> {
    if let Some(p) = parent {
        if rows::folder_and_below(db, folder_id)?
            .iter()
            .any(|f| f == p)
        {
            return Err(StorageError::Invalid(
                "parentId: a folder cannot go into itself or a folder inside it".into(),
            ));
        }
    }
    rows::set_folder_parent(db, folder_id, parent)?;
    rows::docs_under_folder(db, folder_id)
}

/// Deletes a folder, never its contents: its documents and subfolders move to its parent
/// (the top level when it had none) and its shares end. Returns the documents whose access
/// may have changed.
pub fn delete_folder(db: &mut Db, folder_id: &str, now: i64) -> Result<Vec<String>> {
    let affected = rows::docs_under_folder(db, folder_id)?;
    let parent = rows::folder(db, folder_id)?.and_then(|f| f.parent_id);
    rows::move_contents(db, folder_id, parent.as_deref(), now)?;
    rows::delete_folder_row(db, folder_id)?;
    Ok(affected)
}

/// Every document shared with a team, directly or through a folder (whose access a
/// membership change changes).
pub fn docs_reached_by_team(db: &mut Db, team_id: &str) -> Result<Vec<String>> {
    let mut out = rows::docs_shared_with_team(db, team_id)?;
    for f in rows::folders_shared_with_team(db, team_id)? {
        out.extend(rows::docs_under_folder(db, &f)?);
    }
    Ok(out)
}
