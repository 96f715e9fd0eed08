//! Passwords are stored as argon2id PHC strings (salted, memory-hard); never in clear.

use argon2::password_hash::{
    rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString,
};
use argon2::Argon2;
use std::sync::atomic::{AtomicU64, Ordering};

/// argon2 evaluations since start (hashing and checking). Exported as a metric, so the
/// "every login costs exactly one argon2 run" rule is checked by counting, not by timing.
static ARGON2_RUNS: AtomicU64 = AtomicU64::new(0);

pub fn argon2_runs() -> u64 {
    ARGON2_RUNS.load(Ordering::Relaxed)
}

pub fn hash(password: &str) -> anyhow::Result<String> {
    ARGON2_RUNS.fetch_add(1, Ordering::Relaxed);
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| anyhow::anyhow!("hashing password: {e}"))
}

pub fn verify(password: &str, phc: &str) -> bool {
    PasswordHash::new(phc)
        .map(|h| {
            ARGON2_RUNS.fetch_add(1, Ordering::Relaxed);
            Argon2::default()
                .verify_password(password.as_bytes(), &h)
                .is_ok()
        })
        .unwrap_or(false)
}

/// The stand-in hash an unknown user name is checked against: made with the same
/// parameters as real ones, once, at start (`warm_up`), so the first unknown name does not
/// pay for two runs.
static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();

fn dummy() -> &'static str {
    DUMMY.get_or_init(|| hash("not a real password").unwrap_or_default())
}

/// Makes the stand-in hash before the first login (call at server start).
pub fn warm_up() {
    let _ = dummy();
}

/// Spends the same time as a real check (one argon2 run with the same parameters), so an
/// unknown user name is not revealed by timing.
pub fn verify_dummy(password: &str) {
    let _ = verify(password, dummy());
}

pub fn check_strength(password: &str) -> Result<(), &'static str> {
    if password.chars().count() < 8 {
        return Err("password: at least 8 characters");
    }
    if password.len() > 1024 {
        return Err("password: at most 1024 bytes");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn hash_and_verify() {
        let h = super::hash("correct horse").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(super::verify("correct horse", &h));
        assert!(!super::verify("wrong horse", &h));
    }
}
