//! Invitations and password-reset links (PROTOCOL §9): one mechanism. A link carries a
//! 256-bit secret shown once (only its SHA-256 is kept); it expires, counts its uses and
//! can be revoked. Taking a use is one conditional update in the transaction that makes the
//! account or sets the password, so two people racing for the last use cannot both win and
//! a refused account (name taken) uses nothing.

mod postgres;
mod rows;
mod sqlite;
mod types;

pub use types::{Invite, InviteKind, InviteUse};

use super::accounts::{self, hash_token, new_id, random_secret, User};
use super::db::Db;
use super::error::{Result, StorageError};

/// Makes a link; its secret is returned this once.
pub fn create(
    db: &mut Db,
    kind: InviteKind,
    created_by: &str,
    expires_at: i64,
    max_uses: i64,
    now: i64,
) -> Result<(Invite, String)> {
    let (kind_name, role, user_id) = match kind {
        InviteKind::Join { admin } => ("join", if admin { "admin" } else { "member" }, None),
        InviteKind::Reset { user_id } => ("reset", "member", Some(user_id)),
    };
    let secret = random_secret("dsi_");
    let invite = Invite {
        invite_id: new_id("inv_"),
        kind: kind_name.into(),
        role: role.into(),
        user_id,
        user_name: None,
        created_by: created_by.into(),
        created_at: now,
        expires_at,
        max_uses,
        uses: 0,
        revoked_at: None,
        status: String::new(),
        used_by: Vec::new(),
    };
    rows::insert_invite(db, &invite, &hash_token(&secret))?;
    let stored = rows::invite_by_id(db, &invite.invite_id)?
        .ok_or_else(|| StorageError::NotFound(invite.invite_id.clone()))?;
    Ok((with_status(stored, now), secret))
}

/// Why a link can no longer be used at `now`, if it cannot.
fn unusable(invite: &Invite, now: i64) -> Option<&'static str> {
    if invite.revoked_at.is_some() {
        Some("revoked")
    } else if invite.expires_at <= now {
        Some("expired")
    } else if invite.uses >= invite.max_uses {
        Some("used up")
    } else {
        None
    }
}

fn with_status(mut invite: Invite, now: i64) -> Invite {
    invite.status = unusable(&invite, now).unwrap_or("open").to_string();
    invite
}

/// Every link, newest first, each with who used it and its status at `now`.
pub fn list(db: &mut Db, now: i64) -> Result<Vec<Invite>> {
    let mut all: Vec<Invite> = rows::list_invites(db)?
        .into_iter()
        .map(|i| with_status(i, now))
        .collect();
    for (invite_id, used) in rows::all_uses(db)? {
        if let Some(i) = all.iter_mut().find(|i| i.invite_id == invite_id) {
            i.used_by.push(used);
        }
    }
    Ok(all)
}

/// The link a secret opens, if it can still be used at `now`: unknown → `NotFound`;
/// revoked, expired or used up → `Conflict` saying which.
pub fn open(db: &mut Db, secret: &str, now: i64) -> Result<Invite> {
    let invite = rows::invite_by_hash(db, &hash_token(secret))?
        .ok_or_else(|| StorageError::NotFound("invitation".into()))?;
    let why = match unusable(&invite, now) {
        Some("revoked") => Some("this link was revoked"),
        Some("expired") => Some("this link has expired"),
        Some(_) => Some("this link has been used up"),
        None => None,
    };
    match why {
        Some(why) => Err(StorageError::Conflict(format!(
            "{why}; ask an admin for a new one"
        ))),
        None => Ok(with_status(invite, now)),
    }
}

fn take(db: &mut Db, invite: &Invite, user: &User, now: i64) -> Result<()> {
    if !rows::take_use(db, &invite.invite_id, now)? {
        return Err(StorageError::Conflict(
            "this link has just been used up; ask an admin for a new one".into(),
        ));
    }
    rows::record_use(
        db,
        &invite.invite_id,
        &InviteUse {
            user_id: user.id.clone(),
            user_name: user.name.clone(),
            at: now,
        },
    )
}

/// A `join` link used: the new account, with the password hash computed by the caller
/// (none: it signs in with single sign-on). A name taken in any case is a `Conflict` and
/// uses nothing (the transaction is undone).
pub fn join(
    db: &mut Db,
    secret: &str,
    name: &str,
    display_name: &str,
    phc: Option<&str>,
    now: i64,
) -> Result<(Invite, User)> {
    let invite = open(db, secret, now)?;
    if invite.kind != "join" {
        return Err(StorageError::Invalid(
            "this is a password-reset link: choose a new password only".into(),
        ));
    }
    let user = accounts::create_user(db, name, display_name, invite.role == "admin", now)?;
    if let Some(phc) = phc {
        accounts::set_password_hash(db, &user.id, phc)?;
    }
    take(db, &invite, &user, now)?;
    Ok((invite, user))
}

/// A `reset` link used: the password is set and every session of the person ends.
pub fn reset(db: &mut Db, secret: &str, phc: &str, now: i64) -> Result<(Invite, User)> {
    let invite = open(db, secret, now)?;
    let Some(user_id) = invite.user_id.clone().filter(|_| invite.kind == "reset") else {
        return Err(StorageError::Invalid(
            "this is an invitation: choose a user name too".into(),
        ));
    };
    let person = super::people::person(db, &user_id)?
        .ok_or_else(|| StorageError::NotFound("invitation".into()))?;
    if !person.active {
        return Err(StorageError::Conflict(
            "this account is deactivated; ask an admin".into(),
        ));
    }
    let user = accounts::user_by_id(db, &user_id)?
        .ok_or_else(|| StorageError::NotFound("invitation".into()))?;
    accounts::set_password_hash(db, &user.id, phc)?;
    take(db, &invite, &user, now)?;
    Ok((invite, user))
}

/// Revokes a link; `NotFound` when there is none by that ID or it was revoked already.
pub fn revoke(db: &mut Db, invite_id: &str, now: i64) -> Result<Invite> {
    if !rows::revoke(db, invite_id, now)? {
        return Err(StorageError::NotFound(format!("invitation {invite_id}")));
    }
    let invite = rows::invite_by_id(db, invite_id)?
        .ok_or_else(|| StorageError::NotFound(invite_id.into()))?;
    Ok(with_status(invite, now))
}
