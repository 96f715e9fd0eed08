//! What a receiver checks: `X-Docsync-Signature: sha256=<hex of HMAC-SHA256(secret, body)>`
//! over the exact bytes of the body.

use ring::hmac;

pub const HEADER: &str = "X-Docsync-Signature";

pub fn sign(secret: &str, body: &[u8]) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
    format!("sha256={}", hex::encode(hmac::sign(&key, body).as_ref()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn matches_a_known_hmac() {
        // RFC 4231 test case 2.
        assert_eq!(
            super::sign("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
