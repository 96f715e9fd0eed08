//! The web app's files (`static/`): which URL paths may name one, where the bytes come from
//! (compiled into the binary, or a folder on disk while developing), and each file's content
//! type and ETag. HTTP concerns (conditional requests, routes) live in `static_files.rs`.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use actix_web::web::{self, Bytes};
use rust_embed::RustEmbed;
use sha2::{Digest, Sha256};

/// Everything under `static/`, compiled in (release and debug builds alike, so tests serve
/// what production serves). Dotfiles and test files are left out of the binary; `build.rs`
/// makes Cargo rebuild when a file is added. `AssetPath` applies the same rule to requests.
#[derive(RustEmbed)]
#[folder = "static/"]
#[exclude = ".*"]
#[exclude = "*/.*"]
#[exclude = "*.test.*"]
#[exclude = "*.spec.*"]
#[exclude = "*__tests__*"]
// Type declarations are for tsc only, not served; the engine's package manifest is for npm.
#[exclude = "*.d.ts"]
#[exclude = "*package.json"]
struct Embedded;

/// A relative path inside the static folder that is safe to serve: no `.`/`..` or empty
/// segments (so it cannot leave the folder), no dotfiles, no test files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetPath(String);

impl AssetPath {
    /// From a request's raw (percent-encoded) URL path, e.g. `/app/main.js`. `None` for
    /// anything that is not a plain file path: those requests get the JSON 404.
    pub fn from_url(raw: &str) -> Option<AssetPath> {
        let decoded = percent_encoding::percent_decode_str(raw.strip_prefix('/')?)
            .decode_utf8()
            .ok()?;
        AssetPath::new(&decoded)
    }

    /// From a path relative to the static folder, `/`-separated.
    pub fn new(relative: &str) -> Option<AssetPath> {
        let segments: Vec<&str> = relative.split('/').collect();
        let file_name = segments.last()?;
        let segment_ok = |s: &&str| {
            !s.is_empty() && !s.starts_with('.') && !s.contains(['\\', '\0']) && *s != "__tests__"
        };
        if !segments.iter().all(segment_ok) || is_test_file(file_name) {
            return None;
        }
        Some(AssetPath(relative.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

fn is_test_file(name: &str) -> bool {
    name.contains(".test.") || name.contains(".spec.")
}

/// One file, ready to send.
#[derive(Debug)]
pub struct Asset {
    pub bytes: Bytes,
    pub content_type: Cow<'static, str>,
    /// Strong validator: quoted hex of the first 128 bits of the content's SHA-256.
    pub etag: String,
    /// Gzip of `bytes`, made once at the first request that accepts it (embedded files
    /// only: they never change while the server runs). `None` inside: not worth it (small,
    /// or not text). Opening a document fetches ~40 files; compressing each on every request
    /// cost 1–7 ms of server CPU per file on the critical path of a first visit.
    gzip: Option<OnceLock<Option<Bytes>>>,
}

impl Asset {
    fn new(path: &AssetPath, bytes: Bytes, sha256: &[u8], cache_gzip: bool) -> Asset {
        Asset {
            content_type: content_type(path.as_str()),
            // Weak: the same file goes out plain, gzip, br or zstd (`compression.rs`), and one
            // validator for every content-coding is honest only as a weak one (RFC 9110
            // §8.8.1). Revalidation (`If-None-Match`) compares weakly anyway.
            etag: format!("W/\"{}\"", hex::encode(&sha256[..16])),
            bytes,
            gzip: cache_gzip.then(OnceLock::new),
        }
    }

    /// The cached gzip form, if this file has one (made on first use).
    pub fn gzipped(&self) -> Option<&Bytes> {
        let cell = self.gzip.as_ref()?;
        cell.get_or_init(|| {
            let text = self.content_type.starts_with("text/")
                || self.content_type.starts_with("application/json")
                || self.content_type.starts_with("application/manifest+json")
                || self.content_type.starts_with("image/svg+xml");
            if !text || (self.bytes.len() as u64) < super::compression::MIN_BYTES {
                return None;
            }
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
            enc.write_all(&self.bytes).ok()?;
            enc.finish().ok().map(Bytes::from)
        })
        .as_ref()
    }
}

/// The content type for a file name. Text types say UTF-8 so no browser guesses.
pub fn content_type(path: &str) -> Cow<'static, str> {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    let known = match ext.as_deref() {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        // JSON is UTF-8 by definition (RFC 8259): no charset parameter.
        Some("json" | "map") => "application/json",
        Some("webmanifest") => "application/manifest+json",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("txt") => "text/plain; charset=utf-8",
        _ => {
            let guess = mime_guess::from_path(path).first_or_octet_stream();
            return if guess.type_() == mime_guess::mime::TEXT {
                Cow::Owned(format!("{guess}; charset=utf-8"))
            } else {
                Cow::Owned(guess.to_string())
            };
        }
    };
    Cow::Borrowed(known)
}

/// Reading a file from `server.static_dir` failed for a reason other than its absence
/// (permissions, I/O): a broken deployment, mapped to a 500 in `error.rs`.
#[derive(Debug, thiserror::Error)]
pub enum AssetError {
    #[error("reading static file {path}: {source}")]
    Read { path: String, source: io::Error },
    #[error("reading static file {path}: the blocking thread pool is gone")]
    NoBlockingPool { path: String },
}

/// Where the files come from (`server.static_dir`).
pub enum AssetSource {
    /// Compiled in. Indexed once at start, so every ETag is computed a single time.
    Embedded(HashMap<String, Arc<Asset>>),
    /// A folder read again on every request, so an edit shows on the next reload.
    Directory(PathBuf),
}

impl AssetSource {
    /// `static_dir` empty: the embedded files; otherwise that folder.
    pub fn new(static_dir: &Path) -> AssetSource {
        if !static_dir.as_os_str().is_empty() {
            return AssetSource::Directory(static_dir.to_path_buf());
        }
        let index = Embedded::iter()
            .filter_map(|name| {
                let path = AssetPath::new(&name)?;
                let file = Embedded::get(&name)?;
                let bytes = match file.data {
                    Cow::Borrowed(b) => Bytes::from_static(b),
                    Cow::Owned(v) => Bytes::from(v),
                };
                let asset = Asset::new(&path, bytes, &file.metadata.sha256_hash(), true);
                Some((name.into_owned(), Arc::new(asset)))
            })
            .collect();
        AssetSource::Embedded(index)
    }

    /// The file at `path`, or `None` if there is none.
    pub async fn load(&self, path: &AssetPath) -> Result<Option<Arc<Asset>>, AssetError> {
        match self {
            AssetSource::Embedded(index) => Ok(index.get(path.as_str()).cloned()),
            AssetSource::Directory(root) => {
                let (root, owned) = (root.clone(), path.clone());
                // Disk reads block; keep them off the HTTP worker threads.
                let found = web::block(move || read_from_dir(&root, &owned))
                    .await
                    .map_err(|_| AssetError::NoBlockingPool {
                        path: path.as_str().to_string(),
                    })?
                    .map_err(|source| AssetError::Read {
                        path: path.as_str().to_string(),
                        source,
                    })?;
                Ok(found.map(Arc::new))
            }
        }
    }
}

fn read_from_dir(root: &Path, path: &AssetPath) -> io::Result<Option<Asset>> {
    let not_there = |e: &io::Error| {
        matches!(
            e.kind(),
            io::ErrorKind::NotFound | io::ErrorKind::NotADirectory | io::ErrorKind::IsADirectory
        )
    };
    // `AssetPath` already rules out `..`; canonicalising also keeps a symlink inside the
    // folder from pointing outside it.
    let root = root.canonicalize()?;
    let full = match root.join(path.as_str()).canonicalize() {
        Ok(p) => p,
        Err(e) if not_there(&e) => return Ok(None),
        Err(e) => return Err(e),
    };
    if !full.starts_with(&root) || !full.is_file() {
        return Ok(None);
    }
    let bytes = match std::fs::read(&full) {
        Ok(b) => b,
        Err(e) if not_there(&e) => return Ok(None),
        Err(e) => return Err(e),
    };
    let hash = Sha256::digest(&bytes);
    // Read again on every request while developing: compressed on the fly like any answer.
    Ok(Some(Asset::new(path, Bytes::from(bytes), &hash, false)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_file_paths_are_servable() {
        for ok in [
            "/index.html",
            "/app/main.js",
            "/engine/model.js",
            "/sw.js",
            "/a%20b.css",
        ] {
            assert!(AssetPath::from_url(ok).is_some(), "{ok}");
        }
        for bad in [
            "/",
            "/app/",
            "/app/../x",
            "/app/%2e%2e/x",
            "/app/%2E%2E/%2E%2E/etc/passwd",
            "/./index.html",
            "//etc/passwd",
            "/.git/config",
            "/app/.env",
            "/engine/model.test.js",
            "/app/__tests__/x.js",
            "/app\\..\\x",
            "/a%00b",
            "/%ff",
            "no-leading-slash",
        ] {
            assert!(AssetPath::from_url(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn content_types() {
        assert_eq!(
            content_type("app/main.js"),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(content_type("x.CSS"), "text/css; charset=utf-8");
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
        assert_eq!(content_type("m.webmanifest"), "application/manifest+json");
        assert_eq!(content_type("i.svg"), "image/svg+xml");
        assert_eq!(content_type("i.png"), "image/png");
        assert_eq!(content_type("d.json"), "application/json");
        assert_eq!(content_type("f.woff2"), "font/woff2");
        assert_eq!(content_type("no-extension"), "application/octet-stream");
    }
}
