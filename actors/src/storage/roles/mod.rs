//! The one role function: what may this user do with this document or folder? Every
//! endpoint and every open stream asks it; the server may remember an answer only until the
//! access epoch moves (`access_epoch.rs`), so a revoked right is gone on the very next
//! request. The effective role is the highest of: ownership, a direct share, a share to one
//! of the user's teams, a share of the document's folder or of any ancestor folder
//! (PROTOCOL §3). Owning a folder on the chain counts as a write share of that folder. A
//! document in the trash has no readers at all until its owner restores it.
//!
//! Someone with no role on the document may still have bullets of it shared with them
//! (PROTOCOL §10): `doc_view` answers that too, as a `Reach::Bullets`. Only `doc_view`
//! ever grants a bullet guest anything; `doc_grant` and `doc_role` answer for the whole
//! document only, so every path that does not filter by subtree refuses guests by
//! construction.
//!
//! The decisions are written here once; `rows.rs` asks each backend (`sqlite.rs`,
//! `postgres.rs`) only for rows.

mod access_list;
pub(crate) mod postgres;
mod rows;
pub(crate) mod sqlite;
mod types;

pub use access_list::{
    who_has_access, who_has_access_to_bullet, AccessList, Member, PersonAccess, TeamAccess,
};
pub use rows::{readable_doc_ids, user_active};
pub use types::{BulletAccess, BulletRoot, DocSummary, FolderSummary, Grant, Reach, Role, View};

use super::db::Db;
use super::error::Result;
use types::ChainAccess;

/// The best of what is offered; the first offer wins among equals, so `via` names the
/// first path found at the highest role (owner, direct, teams, then the folder chain,
/// owned folders before shares, nearest first).
#[derive(Default)]
struct Best(Option<Grant>);

impl Best {
    fn offer(&mut self, role: Role, via: impl FnOnce() -> String) {
        if self.0.as_ref().is_none_or(|b| role > b.role) {
            self.0 = Some(Grant { role, via: via() });
        }
    }
}

/// The effective role of `user_id` on `doc_id` and how it was obtained, or None (no access,
/// no such document, or in the trash — callers answer all with 404 so existence is not
/// revealed). A deactivated user has no role anywhere (their open streams and leases end
/// when the actor asks again).
pub fn doc_grant(db: &mut Db, user_id: &str, doc_id: &str) -> Result<Option<Grant>> {
    if !rows::user_active(db, user_id)? {
        return Ok(None);
    }
    let Some(place) = rows::live_doc_place(db, doc_id)? else {
        return Ok(None);
    };
    if place.owner_id == user_id {
        return Ok(Some(Grant {
            role: Role::Owner,
            via: "owner".into(),
        }));
    }
    let mut best = Best::default();
    if let Some(access) = rows::direct_access(db, doc_id, user_id)? {
        best.offer(Role::from_access(&access), || "direct".into());
    }
    for (access, team) in rows::team_accesses(db, doc_id, user_id)? {
        best.offer(Role::from_access(&access), || format!("team:{team}"));
    }
    if let Some(folder) = place.folder_id {
        for ChainAccess {
            access,
            folder_name,
            ..
        } in rows::chain_accesses(db, &folder, user_id)?
        {
            best.offer(Role::from_access(&access), || {
                format!("folder:{folder_name}")
            });
        }
    }
    Ok(best.0)
}

/// What `user_id` may see and do of `doc_id`: the whole document (`doc_grant`), or, with
/// no role on it, the subtrees of the bullets shared with them or a team of theirs — each
/// root once, with the best role its shares give (a direct share named before a team's).
pub fn doc_view(db: &mut Db, user_id: &str, doc_id: &str) -> Result<Option<View>> {
    if let Some(grant) = doc_grant(db, user_id, doc_id)? {
        return Ok(Some(View {
            grant,
            reach: Reach::Document,
        }));
    }
    // `doc_grant` answered None for a deactivated user or a trashed document too: check
    // both before any bullet counts.
    if !rows::user_active(db, user_id)? || rows::live_doc_place(db, doc_id)?.is_none() {
        return Ok(None);
    }
    let mut roots: Vec<BulletRoot> = Vec::new();
    let mut best = Best::default();
    for a in rows::bullet_accesses(db, doc_id, user_id)? {
        let role = Role::from_access(&a.access);
        best.offer(role, || match &a.team {
            Some(team) => format!("bullet:team:{team}"),
            None => "bullet".into(),
        });
        match roots.iter_mut().find(|r| r.block_id == a.block_id) {
            Some(r) => r.role = r.role.max(role),
            None => roots.push(BulletRoot {
                block_id: a.block_id,
                role,
            }),
        }
    }
    Ok(best.0.map(|grant| View {
        grant,
        reach: Reach::Bullets(roots.into()),
    }))
}

/// `found` in whole documents, then — while there is room below `limit` — what
/// `guest(room)` finds in the bullets shared with the user elsewhere (PROTOCOL §10): the
/// one order of every list that has a guest part (search, tags' bullets, backlinks,
/// conflicts).
pub fn then_guest_part<T>(
    mut found: Vec<T>,
    limit: usize,
    guest: impl FnOnce(usize) -> Result<Vec<T>>,
) -> Result<Vec<T>> {
    if found.len() < limit {
        let room = limit - found.len();
        found.extend(guest(room)?.into_iter().take(room));
    }
    Ok(found)
}

/// Whether a webhook made by `user_id` may deliver the entries of `doc_id` (PROTOCOL §11):
/// an active admin's may deliver every document not in the trash; anyone else's only the
/// documents they own. Asked for every batch, at the moment it is cut and again at every
/// attempt, so a right lost meanwhile holds back what was not yet sent.
pub fn hooks_document(db: &mut Db, user_id: &str, doc_id: &str) -> Result<bool> {
    if !rows::user_active(db, user_id)? {
        return Ok(false);
    }
    let Some(place) = rows::live_doc_place(db, doc_id)? else {
        return Ok(false);
    };
    Ok(place.owner_id == user_id
        || super::accounts::user_by_id(db, user_id)?.is_some_and(|u| u.is_admin))
}

pub fn doc_role(db: &mut Db, user_id: &str, doc_id: &str) -> Result<Option<Role>> {
    Ok(doc_grant(db, user_id, doc_id)?.map(|g| g.role))
}

/// What the user may do with a folder: owner (manage shares, everything) for the folder's
/// own owner; write (create documents and subfolders in it) for an owner of an ancestor;
/// otherwise the highest share on the folder or any ancestor.
pub fn folder_role(db: &mut Db, user_id: &str, folder_id: &str) -> Result<Option<Role>> {
    if !rows::user_active(db, user_id)? {
        return Ok(None);
    }
    Ok(rows::chain_accesses(db, folder_id, user_id)?
        .into_iter()
        .map(|a| match (a.owns, a.depth) {
            (true, 0) => Role::Owner,
            _ => Role::from_access(&a.access),
        })
        .max())
}

/// Whether anyone besides the owner can open the document (PROTOCOL §5 `shared`): a share
/// of it, or a folder on its chain that is shared or owned by someone else.
pub fn is_shared(db: &mut Db, doc_id: &str) -> Result<bool> {
    if rows::has_doc_shares(db, doc_id)? {
        return Ok(true);
    }
    match rows::doc_place(db, doc_id)? {
        Some(types::DocPlace {
            owner_id,
            folder_id: Some(folder),
        }) => rows::chain_reaches_others(db, &folder, &owner_id),
        _ => Ok(false),
    }
}

/// Every folder the user reaches (owned or shared, and their subfolders), by name. A parent
/// the user cannot see is reported as None, so no folder name leaks.
pub fn readable_folders(db: &mut Db, user_id: &str) -> Result<Vec<FolderSummary>> {
    let folders = rows::reachable_folders(db, user_id)?;
    let visible: std::collections::HashSet<&str> =
        folders.iter().map(|f| f.folder_id.as_str()).collect();
    let mut out = Vec::with_capacity(folders.len());
    for f in &folders {
        let Some(role) = folder_role(db, user_id, &f.folder_id)? else {
            continue;
        };
        out.push(FolderSummary {
            folder_id: f.folder_id.clone(),
            name: f.name.clone(),
            owner_id: f.owner_id.clone(),
            parent_id: f.parent_id.clone().filter(|p| visible.contains(p.as_str())),
            role: role.as_str().to_string(),
        });
    }
    Ok(out)
}

/// The user's document list, newest change first, each with their role and how they have it.
pub fn readable_documents(db: &mut Db, user_id: &str) -> Result<Vec<DocSummary>> {
    let ids = readable_doc_ids(db, user_id)?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let Some(grant) = doc_grant(db, user_id, &id)? else {
            continue;
        };
        let Some(d) = rows::doc_row(db, &id)? else {
            continue;
        };
        out.push(DocSummary {
            doc_id: d.doc_id,
            title: d.title,
            icon: d.icon,
            owner_id: d.owner_id,
            folder_id: d.folder_id,
            head_seq: d.head_seq,
            updated_at: d.updated_at,
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
