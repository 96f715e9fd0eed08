//! What a user name and a display name may be — one rule for the CLI, the admin pages and
//! invitations.

use docsync_actors::collab::validate::fixed::MAX_NAME_BYTES;

/// 1–64 characters of ASCII letters, digits, `_`, `-` and `.`: it appears in URLs, the
/// audit log and the CLI, and is matched whatever its case.
pub fn check_user_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if ok {
        Ok(())
    } else {
        Err("name: 1 to 64 letters, digits, '_', '-' or '.'".into())
    }
}

/// Any text of 1 to `MAX_NAME_BYTES` bytes, not only spaces, no control characters.
pub fn check_display_name(name: &str) -> Result<(), String> {
    if name.trim().is_empty() || name.len() > MAX_NAME_BYTES || name.chars().any(char::is_control) {
        return Err(format!(
            "displayName: 1 to {MAX_NAME_BYTES} bytes of text, without control characters"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(check_user_name("ann.b-c_1").is_ok());
        assert!(check_user_name("").is_err());
        assert!(check_user_name("ann b").is_err());
        assert!(check_user_name("änn").is_err());
        assert!(check_user_name(&"a".repeat(65)).is_err());
        assert!(check_display_name("Ann Böhm").is_ok());
        assert!(check_display_name("  ").is_err());
        assert!(check_display_name("a\nb").is_err());
    }
}
