//! Who has access to a document and through what — the share dialog's "Who has access". Each
//! person's role and path are the role function's own answer (`doc_grant`), so the list can
//! never say more or less than what is enforced; the candidates are everyone a share, a team
//! or a folder on the document's chain names. Teams are listed with their members. For one
//! bullet (`who_has_access_to_bullet`), also everyone a share of it or of a bullet above it
//! reaches (`bullet:TEXT`), each with the role `doc_view` gives them there.

use std::collections::BTreeSet;

use serde::Serialize;

use super::types::{Reach, Role};
use super::{doc_grant, doc_view, rows};
use crate::storage::accounts;
use crate::storage::db::Db;
use crate::storage::error::Result;
use crate::storage::sharing::{self, Access, Share, ShareKind};

/// A person who can open the document.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PersonAccess {
    pub user_id: String,
    pub name: String,
    pub display_name: String,
    pub role: Role,
    /// How: `owner`, `direct`, `team:NAME` or `folder:NAME` (the best path, as enforced).
    pub via: String,
}

/// A team a share names, with its members.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TeamAccess {
    pub team_id: String,
    pub name: String,
    pub access: Access,
    /// `direct` (a share of the document) or `folder:NAME`.
    pub via: String,
    pub members: Vec<Member>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Member {
    pub user_id: String,
    pub name: String,
    pub display_name: String,
}

#[derive(Debug, Clone, Default, Serialize, utoipa::ToSchema)]
pub struct AccessList {
    /// The owner first, then by role (highest first) and name.
    pub people: Vec<PersonAccess>,
    pub teams: Vec<TeamAccess>,
}

/// Everyone who can open the document (None: no such live document).
pub fn who_has_access(db: &mut Db, doc_id: &str) -> Result<Option<AccessList>> {
    let Some(place) = rows::live_doc_place(db, doc_id)? else {
        return Ok(None);
    };
    let mut candidates = BTreeSet::from([place.owner_id.clone()]);
    let mut list = AccessList::default();
    let shares = sharing::doc_shares(db, doc_id)?;
    add_shares(db, shares, "direct", &mut candidates, &mut list)?;
    // The folder chain, nearest first: its owners and its shares.
    let mut folder = place.folder_id.clone();
    let mut seen = BTreeSet::new();
    while let Some(id) = folder {
        if !seen.insert(id.clone()) {
            break;
        }
        let Some(f) = sharing::folder(db, &id)? else {
            break;
        };
        candidates.insert(f.owner_id.clone());
        let shares = sharing::folder_shares(db, &id)?;
        add_shares(
            db,
            shares,
            &format!("folder:{}", f.name),
            &mut candidates,
            &mut list,
        )?;
        folder = f.parent_id;
    }
    for user_id in candidates {
        let Some(grant) = doc_grant(db, &user_id, doc_id)? else {
            continue;
        };
        let Some(u) = accounts::user_by_id(db, &user_id)? else {
            continue;
        };
        list.people.push(PersonAccess {
            user_id: u.id,
            name: u.name,
            display_name: u.display_name,
            role: grant.role,
            via: grant.via,
        });
    }
    sort_people(&mut list.people);
    Ok(Some(list))
}

/// Everyone who can see the bullet `block_id` of the document (None: no such live document or
/// bullet): the document's readers, then those a share of this bullet or of one above it
/// reaches — the nearest shared bullet first — with their role there, `via: bullet:TEXT`.
pub fn who_has_access_to_bullet(
    db: &mut Db,
    doc_id: &str,
    block_id: &str,
) -> Result<Option<AccessList>> {
    let Some(mut list) = who_has_access(db, doc_id)? else {
        return Ok(None);
    };
    if sharing::block_parent(db, doc_id, block_id)?.is_none() {
        return Ok(None);
    }
    let mut candidates = BTreeSet::new();
    let mut via_of: Vec<(String, String)> = Vec::new();
    // The bullet and those above it, nearest first.
    let mut chain: Vec<String> = Vec::new();
    let mut cur = Some(block_id.to_string());
    while let Some(id) = cur {
        if chain.contains(&id) {
            break; // defensive: a corrupt cycle must not spin
        }
        chain.push(id.clone());
        let Some((parent, text)) = sharing::block_parent(db, doc_id, &id)? else {
            break;
        };
        let via = format!("bullet:{}", text.chars().take(80).collect::<String>());
        let shares = sharing::block_shares(db, doc_id, &id)?;
        let before: BTreeSet<String> = candidates.clone();
        add_shares(db, shares, &via, &mut candidates, &mut list)?;
        via_of.extend(
            candidates
                .difference(&before)
                .map(|u| (u.clone(), via.clone())),
        );
        cur = parent;
    }
    for user_id in candidates {
        if list.people.iter().any(|p| p.user_id == user_id) {
            continue; // reads the whole document: listed with that role
        }
        let Some(view) = doc_view(db, &user_id, doc_id)? else {
            continue;
        };
        let Reach::Bullets(roots) = &view.reach else {
            continue;
        };
        // Their role here: the best of their shared bullets on this bullet's ancestry.
        let Some(role) = roots
            .iter()
            .filter(|r| chain.contains(&r.block_id))
            .map(|r| r.role)
            .max()
        else {
            continue;
        };
        let Some(u) = accounts::user_by_id(db, &user_id)? else {
            continue;
        };
        let via = via_of
            .iter()
            .find(|(id, _)| *id == user_id)
            .map_or_else(|| "bullet".to_string(), |(_, v)| v.clone());
        list.people.push(PersonAccess {
            user_id: u.id,
            name: u.name,
            display_name: u.display_name,
            role,
            via,
        });
    }
    sort_people(&mut list.people);
    Ok(Some(list))
}

/// Highest role first, then by display name (any case).
fn sort_people(people: &mut [PersonAccess]) {
    people.sort_by(|a, b| {
        b.role.cmp(&a.role).then_with(|| {
            a.display_name
                .to_lowercase()
                .cmp(&b.display_name.to_lowercase())
        })
    });
}

/// The principals of a share list: users become candidates; teams are listed (the first
/// path to a team wins: the document's own shares, then the nearest folder) with their
/// members as candidates.
fn add_shares(
    db: &mut Db,
    shares: Vec<Share>,
    via: &str,
    candidates: &mut BTreeSet<String>,
    list: &mut AccessList,
) -> Result<()> {
    for s in shares {
        match s.kind {
            ShareKind::User => {
                candidates.insert(s.id);
            }
            ShareKind::Team => {
                if list.teams.iter().any(|t| t.team_id == s.id) {
                    continue; // the nearer share (listed first) says how
                }
                let Some(team) = sharing::team(db, &s.id)? else {
                    continue;
                };
                let mut members = Vec::new();
                for m in &team.members {
                    candidates.insert(m.clone());
                    if let Some(u) = accounts::user_by_id(db, m)? {
                        members.push(Member {
                            user_id: u.id,
                            name: u.name,
                            display_name: u.display_name,
                        });
                    }
                }
                members.sort_by(|a, b| {
                    a.display_name
                        .to_lowercase()
                        .cmp(&b.display_name.to_lowercase())
                });
                list.teams.push(TeamAccess {
                    team_id: team.team_id,
                    name: team.name,
                    access: s.access,
                    via: via.to_string(),
                    members,
                });
            }
        }
    }
    Ok(())
}
