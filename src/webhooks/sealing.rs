//! The webhook secrets at rest. A secret signs every delivery, so it must be readable by the
//! server again: it cannot be hashed like passwords and tokens. It is sealed instead
//! (ChaCha20-Poly1305) with a key that is not in the database — `webhooks.key`, or a key
//! file beside the SQLite database made on first start — so a copy of the database (a
//! backup, a dump) does not give the secrets away. The webhook's ID is the sealed value's
//! associated data: a sealed secret copied onto another webhook does not open.

use std::io::Write;
use std::path::{Path, PathBuf};

use rand::RngCore;
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, CHACHA20_POLY1305, NONCE_LEN};

#[derive(Debug, thiserror::Error)]
pub enum SealingError {
    #[error("webhooks.key must be 64 hex digits (a 256-bit key)")]
    BadKey,
    #[error("the webhook key file {0}: {1}")]
    KeyFile(PathBuf, std::io::Error),
    #[error("a webhook secret does not open with this server's key (was webhooks.key changed?)")]
    WrongKey,
}

pub struct Sealer {
    key: LessSafeKey,
}

impl Sealer {
    /// From `webhooks.key` (64 hex digits).
    pub fn from_hex(hex_key: &str) -> Result<Sealer, SealingError> {
        let bytes = hex::decode(hex_key.trim()).map_err(|_| SealingError::BadKey)?;
        Sealer::from_bytes(&bytes)
    }

    /// The key in `path`, made (readable by this user only) when there is none yet.
    pub fn from_file(path: &Path) -> Result<Sealer, SealingError> {
        let err = |e| SealingError::KeyFile(path.to_path_buf(), e);
        match std::fs::read_to_string(path) {
            Ok(text) => Sealer::from_hex(&text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut key = [0u8; 32];
                rand::rng().fill_bytes(&mut key);
                let mut f = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode_owner_only()
                    .open(path)
                    .map_err(err)?;
                f.write_all(hex::encode(key).as_bytes()).map_err(err)?;
                f.sync_all().map_err(err)?;
                Sealer::from_bytes(&key)
            }
            Err(e) => Err(err(e)),
        }
    }

    fn from_bytes(bytes: &[u8]) -> Result<Sealer, SealingError> {
        let key = UnboundKey::new(&CHACHA20_POLY1305, bytes).map_err(|_| SealingError::BadKey)?;
        Ok(Sealer {
            key: LessSafeKey::new(key),
        })
    }

    /// `secret` sealed for the webhook `id`: hex of a random nonce, the ciphertext and its tag.
    pub fn seal(&self, id: &str, secret: &str) -> String {
        let mut nonce = [0u8; NONCE_LEN];
        rand::rng().fill_bytes(&mut nonce);
        let mut data = secret.as_bytes().to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(id.as_bytes()),
                &mut data,
            )
            .expect("sealing a short secret cannot fail");
        let mut out = nonce.to_vec();
        out.extend(data);
        hex::encode(out)
    }

    pub fn open(&self, id: &str, sealed: &str) -> Result<String, SealingError> {
        let bytes = hex::decode(sealed).map_err(|_| SealingError::WrongKey)?;
        if bytes.len() < NONCE_LEN {
            return Err(SealingError::WrongKey);
        }
        let (nonce, data) = bytes.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| SealingError::WrongKey)?;
        let mut data = data.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(id.as_bytes()), &mut data)
            .map_err(|_| SealingError::WrongKey)?;
        String::from_utf8(plain.to_vec()).map_err(|_| SealingError::WrongKey)
    }
}

/// Files only their owner may read (the key file).
trait OwnerOnly {
    fn mode_owner_only(&mut self) -> &mut Self;
}

impl OwnerOnly for std::fs::OpenOptions {
    fn mode_owner_only(&mut self) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.mode(0o600)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_secret_opens_only_with_its_key_and_webhook() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key");
        let a = Sealer::from_file(&path).unwrap();
        let sealed = a.seal("wh_1", "s3cret-s3cret-s3cret");
        assert!(!sealed.contains("s3cret"));
        // The same file gives the same key after a restart.
        let again = Sealer::from_file(&path).unwrap();
        assert_eq!(again.open("wh_1", &sealed).unwrap(), "s3cret-s3cret-s3cret");
        assert!(again.open("wh_2", &sealed).is_err(), "bound to its webhook");
        let other = Sealer::from_hex(&"ab".repeat(32)).unwrap();
        assert!(other.open("wh_1", &sealed).is_err(), "another key");
        assert!(Sealer::from_hex("abc").is_err());
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "the key file is its owner's only");
    }
}
