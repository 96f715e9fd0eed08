//! Passwords are stored as argon2id PHC strings (salted, memory-hard); never in clear.

use argon2::password_hash::{rand_core::OsRng, Output, PasswordHash, PasswordHasher, SaltString};
use argon2::{Algorithm, Argon2, Block, Params, Version};
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

/// Checks `password` against a PHC string. The argon2 working memory (~19 MiB) is one buffer
/// per thread, kept and reused: allocating it per check left the allocator holding up to
/// ~400 MB after a burst of logins, while a kept buffer makes the memory for password checks
/// exactly `auth.password_threads` buffers.
pub fn verify(password: &str, phc: &str) -> bool {
    let Ok(hash) = PasswordHash::new(phc) else {
        return false;
    };
    let (Some(salt), Some(expected)) = (hash.salt, hash.hash) else {
        return false;
    };
    let (Ok(algorithm), Ok(params)) =
        (Algorithm::try_from(hash.algorithm), Params::try_from(&hash))
    else {
        return false;
    };
    let version = match hash.version.map(Version::try_from).transpose() {
        Ok(v) => v.unwrap_or_default(),
        Err(_) => return false,
    };
    let mut salt_buf = [0u8; 64];
    let Ok(salt) = salt.decode_b64(&mut salt_buf) else {
        return false;
    };
    ARGON2_RUNS.fetch_add(1, Ordering::Relaxed);
    let blocks = params.block_count();
    let argon = Argon2::new(algorithm, version, params);
    let mut out = vec![0u8; expected.len()];
    let computed = WORK_MEMORY.with(|mem| {
        let mut mem = mem.borrow_mut();
        if mem.len() != blocks {
            *mem = vec![Block::default(); blocks];
        }
        argon.hash_password_into_with_memory(password.as_bytes(), salt, &mut out, &mut mem[..])
    });
    computed.is_ok() && Output::new(&out).is_ok_and(|o| o == expected)
}

thread_local! {
    /// This thread's argon2 working memory, reused by every check it runs.
    static WORK_MEMORY: std::cell::RefCell<Vec<Block>> = const { std::cell::RefCell::new(Vec::new()) };
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
    let first = password.chars().next();
    if password.chars().all(|c| Some(c) == first) {
        return Err("password: not one character repeated");
    }
    let lower = password.to_lowercase();
    if COMMON.contains(&lower.as_str()) {
        return Err("password: one of the most common passwords; choose another");
    }
    Ok(())
}

/// A new password for the person named `user_name`: strong enough, and not their name.
pub fn check_new(password: &str, user_name: &str) -> Result<(), &'static str> {
    check_strength(password)?;
    if password.to_lowercase().contains(&user_name.to_lowercase()) && user_name.len() >= 3 {
        return Err("password: must not contain the user name");
    }
    Ok(())
}

/// The passwords guessed first (of eight characters or more).
const COMMON: &[&str] = &[
    "password",
    "password1",
    "password123",
    "12345678",
    "123456789",
    "1234567890",
    "qwertyuiop",
    "qwerty123",
    "iloveyou",
    "11111111",
    "abc12345",
    "abcd1234",
    "sunshine",
    "princess",
    "football",
    "baseball",
    "welcome1",
    "trustno1",
    "passw0rd",
    "letmein1",
    "superman",
    "starwars",
    "87654321",
    "q1w2e3r4",
    "zaq12wsx",
    "1q2w3e4r",
    "changeme",
    "docsync1",
];

#[cfg(test)]
mod tests {
    #[test]
    fn weak_passwords_are_refused() {
        assert!(super::check_strength("short").is_err());
        assert!(super::check_strength("aaaaaaaaaa").is_err());
        assert!(super::check_strength("Password123").is_err());
        assert!(super::check_strength("correct horse").is_ok());
        assert!(super::check_new("ann-secret-1", "ann").is_err());
        assert!(super::check_new("correct horse", "ann").is_ok());
    }

    #[test]
    fn hash_and_verify() {
        let h = super::hash("correct horse").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(super::verify("correct horse", &h));
        assert!(!super::verify("wrong horse", &h));
        // The kept working memory gives the same answers run after run.
        assert!(super::verify("correct horse", &h));
        assert!(!super::verify(
            "correct horse",
            "$argon2id$v=19$m=8,t=1,p=1$bm90IGEgc2FsdA$"
        ));
    }
}
