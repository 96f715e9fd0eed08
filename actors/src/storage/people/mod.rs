//! People, managed by admins (PROTOCOL §9): the list, deactivation and reactivation, the
//! admin flag, display names, and removal with everything the person owned handed to
//! someone else. The rules are here once; the backends answer row questions (`rows.rs`).
//!
//! Invariants: there is always at least one active admin (the last one cannot be demoted,
//! deactivated or removed); nobody deactivates or removes themselves; a deactivated person's
//! sessions and tokens are gone in the same transaction (and their rows no longer resolve:
//! `accounts`); a removal hands documents, folders and teams to an active person before the
//! account goes, so nothing is lost.

mod postgres;
mod rows;
mod sqlite;
mod types;

pub use rows::{list_people, person};
pub use types::{Account, Transferred};

use super::accounts;
use super::db::Db;
use super::error::{Result, StorageError};

fn existing(db: &mut Db, user_id: &str) -> Result<Account> {
    rows::person(db, user_id)?.ok_or_else(|| StorageError::NotFound(format!("user {user_id}")))
}

/// Refuses a change that would leave no active admin.
fn keeps_an_admin(db: &mut Db, target: &Account) -> Result<()> {
    if target.is_admin && target.active && rows::other_active_admins(db, &target.id)? == 0 {
        return Err(StorageError::Conflict(format!(
            "{} is the last active admin; make someone else an admin first",
            target.name
        )));
    }
    Ok(())
}

/// Deactivates `target` (not oneself, not the last admin): every session and token of
/// theirs ends now. Their documents stay theirs.
pub fn deactivate(db: &mut Db, actor_id: &str, target_id: &str, now: i64) -> Result<Account> {
    if actor_id == target_id {
        return Err(StorageError::Invalid(
            "you cannot deactivate yourself".into(),
        ));
    }
    let target = existing(db, target_id)?;
    keeps_an_admin(db, &target)?;
    if target.active {
        rows::set_deactivated(db, target_id, Some(now))?;
    }
    accounts::end_every_credential(db, target_id)?;
    existing(db, target_id)
}

pub fn reactivate(db: &mut Db, target_id: &str) -> Result<Account> {
    existing(db, target_id)?;
    rows::set_deactivated(db, target_id, None)?;
    existing(db, target_id)
}

/// Grants or takes the admin flag; the last active admin keeps it.
pub fn set_admin(db: &mut Db, target_id: &str, admin: bool) -> Result<Account> {
    let target = existing(db, target_id)?;
    if !admin {
        keeps_an_admin(db, &target)?;
    }
    rows::set_admin(db, target_id, admin)?;
    existing(db, target_id)
}

pub fn set_display_name(db: &mut Db, target_id: &str, display_name: &str) -> Result<Account> {
    if !rows::set_display_name(db, target_id, display_name)? {
        return Err(StorageError::NotFound(format!("user {target_id}")));
    }
    existing(db, target_id)
}

/// Removes `target`'s account after handing what they owned to `transfer_to` (an active
/// person other than them). Not oneself, not the last admin.
pub fn remove(
    db: &mut Db,
    actor_id: &str,
    target_id: &str,
    transfer_to: &str,
) -> Result<(Account, Transferred)> {
    if actor_id == target_id {
        return Err(StorageError::Invalid("you cannot remove yourself".into()));
    }
    if target_id == transfer_to {
        return Err(StorageError::Invalid(
            "transferTo: must be someone other than the person removed".into(),
        ));
    }
    let target = existing(db, target_id)?;
    let heir = rows::person(db, transfer_to)?
        .ok_or_else(|| StorageError::Invalid(format!("transferTo: no such user {transfer_to}")))?;
    if !heir.active {
        return Err(StorageError::Invalid(format!(
            "transferTo: {} is deactivated",
            heir.name
        )));
    }
    keeps_an_admin(db, &target)?;
    let moved = rows::transfer_owned(db, target_id, transfer_to)?;
    rows::delete_person(db, target_id)?;
    Ok((target, moved))
}
