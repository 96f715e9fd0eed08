//! Single sign-on (PROTOCOL §9): which person here a provider's account is (by its issuer
//! and `sub`, never by a changeable email), who may come in the first time (with an
//! invitation link, or with a verified email of an allowed domain), and the sign-ins under
//! way (each `state` used once, within ten minutes). The ID token itself is checked before
//! any of this (`src/auth/oidc.rs`).

mod postgres;
mod rows;
mod sqlite;
mod types;

pub use types::{Flow, Identity};

use super::accounts::{self, hash_token, User};
use super::db::Db;
use super::error::{Result, StorageError};
use super::{invites, people};

/// How long a sign-in may take at the provider.
pub const FLOW_MS: i64 = 10 * 60_000;

/// Remembers a sign-in sent to the provider, under the hash of its `state`.
pub fn begin(db: &mut Db, state: &str, flow: &Flow, now: i64) -> Result<()> {
    rows::forget_flows_before(db, now)?;
    rows::insert_flow(db, &hash_token(state), flow)
}

/// The sign-in a `state` came back with, taken out (used once); None when unknown or
/// expired.
pub fn take(db: &mut Db, state: &str, now: i64) -> Result<Option<Flow>> {
    Ok(rows::take_flow(db, &hash_token(state))?.filter(|f| f.expires_at > now))
}

/// Why someone the provider vouched for is not let in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Their account here is deactivated.
    Deactivated,
    /// Neither an invitation nor an allowed email domain.
    NotInvited,
    /// The invitation cannot be used (the message says why).
    Invite(String),
}

/// Who signed in: an account that existed, or one made now (and how).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignedIn {
    Known(User),
    Created { user: User, via: &'static str },
}

/// The person a verified identity is here: known by issuer and `sub`; else a new account
/// from the invitation the sign-in began with, or from a verified email whose domain is in
/// `domains`. Everything in the caller's transaction.
pub fn sign_in(
    db: &mut Db,
    who: &Identity,
    invite: Option<&str>,
    domains: &[String],
    now: i64,
) -> Result<std::result::Result<SignedIn, Refusal>> {
    if let Some(user_id) = rows::user_of(db, &who.issuer, &who.subject)? {
        let active = people::person(db, &user_id)?.is_some_and(|p| p.active);
        let user = accounts::user_by_id(db, &user_id)?
            .ok_or_else(|| StorageError::NotFound(format!("user {user_id}")))?;
        return Ok(if active {
            Ok(SignedIn::Known(user))
        } else {
            Err(Refusal::Deactivated)
        });
    }
    let display = who
        .name
        .clone()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| user_name_base(who));
    let created = if let Some(secret) = invite {
        match invites::open(db, secret, now) {
            Ok(_) => {}
            Err(StorageError::Conflict(why)) => return Ok(Err(Refusal::Invite(why))),
            Err(StorageError::NotFound(_)) => {
                return Ok(Err(Refusal::Invite(
                    "this invitation link does not exist".into(),
                )))
            }
            Err(e) => return Err(e),
        }
        let name = free_user_name(db, who)?;
        let (_, user) = invites::join(db, secret, &name, display.trim(), None, now)?;
        SignedIn::Created {
            user,
            via: "invitation",
        }
    } else if allowed_domain(who, domains) {
        let name = free_user_name(db, who)?;
        let user = accounts::create_user(db, &name, display.trim(), false, now)?;
        SignedIn::Created {
            user,
            via: "domain",
        }
    } else {
        return Ok(Err(Refusal::NotInvited));
    };
    let (SignedIn::Created { user, .. } | SignedIn::Known(user)) = &created;
    rows::insert_identity(
        db,
        &who.issuer,
        &who.subject,
        &user.id,
        who.email.as_deref(),
        now,
    )?;
    Ok(Ok(created))
}

/// A verified email in one of `domains` (any case).
pub fn allowed_domain(who: &Identity, domains: &[String]) -> bool {
    let Some(domain) = who
        .email
        .as_deref()
        .and_then(|e| e.rsplit_once('@'))
        .map(|(_, d)| d)
    else {
        return false;
    };
    who.email_verified && domains.iter().any(|d| d.eq_ignore_ascii_case(domain))
}

/// The user name a new account would like: the provider's suggestion, else the email's
/// local part, in the characters user names may have.
fn user_name_base(who: &Identity) -> String {
    let wish = who
        .preferred_username
        .clone()
        .or_else(|| {
            who.email
                .as_deref()
                .and_then(|e| e.split('@').next())
                .map(str::to_string)
        })
        .unwrap_or_default();
    let clean: String = wish
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        .take(56)
        .collect();
    if clean.is_empty() {
        "user".into()
    } else {
        clean
    }
}

/// `user_name_base`, or with `-2`, `-3`, … when taken.
fn free_user_name(db: &mut Db, who: &Identity) -> Result<String> {
    let base = user_name_base(who);
    for n in 1..1000 {
        let name = if n == 1 {
            base.clone()
        } else {
            format!("{base}-{n}")
        };
        if accounts::user_by_name(db, &name)?.is_none() {
            return Ok(name);
        }
    }
    Err(StorageError::Conflict(format!(
        "no free user name like {base}"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who(email: &str, verified: bool) -> Identity {
        Identity {
            issuer: "https://id.example".into(),
            subject: "s1".into(),
            email: Some(email.into()),
            email_verified: verified,
            preferred_username: None,
            name: None,
        }
    }

    #[test]
    fn only_a_verified_email_of_an_allowed_domain_signs_up() {
        let domains = vec!["Example.com".to_string()];
        assert!(allowed_domain(&who("ann@example.COM", true), &domains));
        assert!(!allowed_domain(&who("ann@example.com", false), &domains));
        assert!(!allowed_domain(
            &who("ann@evil.example.com", true),
            &domains
        ));
        assert!(!allowed_domain(&who("ann@example.com", true), &[]));
        assert_eq!(user_name_base(&who("ann.b+x@example.com", true)), "ann.bx");
    }
}
