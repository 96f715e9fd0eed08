//! Request-level checks done before anything is applied: a request that fails here is a
//! `400` as a whole and writes nothing (PROTOCOL §3). Rule-level problems (unknown block,
//! cycle, …) are not errors but `rejected` results, decided by `rules`.

use super::op::{Op, OpKind};
use super::order_key::validate_order_key;

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_ops: usize,
    pub max_content_bytes: usize,
    pub max_title_bytes: usize,
    pub max_hold: usize,
    pub max_id_bytes: usize,
    pub max_order_key_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_ops: 500,
            max_content_bytes: 100_000,
            max_title_bytes: 1_000,
            max_hold: 1_000,
            max_id_bytes: 100,
            max_order_key_bytes: 256,
        }
    }
}

/// Limits of request shapes that are not settings, each named once here (the configurable
/// ones are `Limits`, filled from `[limits]`). Their error messages quote these values.
pub mod fixed {
    /// Shares one `PUT …/shares` may set (document or folder).
    pub const MAX_SHARES: usize = 500;
    /// A team's or folder's name, in bytes.
    pub const MAX_NAME_BYTES: usize = 200;
    /// A document's icon (an emoji or a short name), in bytes.
    pub const MAX_ICON_BYTES: usize = 64;
    /// An API token's label, in bytes.
    pub const MAX_TOKEN_LABEL_BYTES: usize = 200;
    /// Members one `PUT /teams/{id}/members` may set.
    pub const MAX_TEAM_MEMBERS: usize = 10_000;
    /// A full-text search query, in bytes.
    pub const MAX_SEARCH_QUERY_BYTES: usize = 500;
    /// A tag in `/tags/{tag}`, in bytes.
    pub const MAX_TAG_BYTES: usize = 100;
    /// Hits one search or tag lookup returns.
    pub const MAX_SEARCH_HITS: usize = 100;
    /// Rooms (documents) one WebSocket may join.
    pub const MAX_ROOMS_PER_SOCKET: usize = 100;
    /// Bodies of small JSON requests (login, tokens, document settings, folders, teams).
    pub const SMALL_BODY_BYTES: usize = 16 * 1024;
    /// Bodies of the test hooks (clock, disk size).
    pub const TINY_BODY_BYTES: usize = 1024;
    /// Longest a long-poll (`GET /docs/{id}/changes?wait=…`) waits, in seconds; also its
    /// wait when the query names none (shorter asks are raised to 1 s).
    pub const MAX_LONG_POLL_WAIT_SECS: u64 = 25;
    /// A document ID, in bytes (the server makes them as `doc_` and 32 hex digits).
    pub const MAX_DOC_ID_BYTES: usize = 64;
    /// Entries one page of the change feed holds at most, and when the query names none.
    pub const MAX_FEED_PAGE: usize = 1_000;
    pub const DEFAULT_FEED_PAGE: usize = 100;
    /// Feed rows one page looks at (entries the caller may not read are passed over): a
    /// caller who may read little of a busy server still gets an answer, and a cursor past
    /// what was looked at, at once.
    pub const FEED_SCAN: usize = 10_000;
}

/// A document as requests name it (`/docs/{id}/…`, a WebSocket room `doc:{id}`): `doc_`
/// followed by letters, digits, `_` or `-`, at most `fixed::MAX_DOC_ID_BYTES` bytes. Parsed
/// once where it enters the server; a name that is not one can never be a document, so the
/// HTTP layer answers it as it answers an unknown document.
#[derive(
    Debug,
    Clone,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    utoipa::ToSchema,
)]
#[serde(try_from = "String", into = "String")]
#[schema(value_type = String, pattern = "^doc_[A-Za-z0-9_-]+$", example = "doc_0190f3a2b7c84d1e9a6b5c4d3e2f1a0b")]
pub struct DocId(String);

impl DocId {
    pub fn parse(value: &str) -> Result<DocId, InvalidRequest> {
        DocId::try_from(value.to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl TryFrom<String> for DocId {
    type Error = InvalidRequest;

    fn try_from(value: String) -> Result<DocId, InvalidRequest> {
        check_id("docId", &value, "doc_", fixed::MAX_DOC_ID_BYTES)?;
        Ok(DocId(value))
    }
}

impl From<DocId> for String {
    fn from(id: DocId) -> String {
        id.0
    }
}

/// Lets maps keyed by `DocId` be looked up with a `&str` (hashes equal: same string).
impl std::borrow::Borrow<str> for DocId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for DocId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for DocId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A client — one browser tab — as requests name it: `cl_` followed by letters, digits, `_`
/// or `-`, at most `Limits::max_id_bytes` bytes. Parsed once where it enters the server, so
/// nothing after that holds an unchecked one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClientId(String);

impl ClientId {
    pub fn parse(value: &str, limits: &Limits) -> Result<ClientId, InvalidRequest> {
        check_id("clientId", value, "cl_", limits.max_id_bytes)?;
        Ok(ClientId(value.to_string()))
    }

    /// For the optional `clientId` of queries (snapshot, channels).
    pub fn parse_optional(
        value: Option<String>,
        limits: &Limits,
    ) -> Result<Option<ClientId>, InvalidRequest> {
        value.map(|v| ClientId::parse(&v, limits)).transpose()
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidRequest {
    #[error("{0}")]
    Field(String),
    #[error("too many ops: {0} (limit {1})")]
    TooManyOps(usize, usize),
    #[error("{field}: {len} bytes is over the limit of {limit}")]
    TooLarge {
        field: String,
        len: usize,
        limit: usize,
    },
}

/// IDs are `prefix` + 1..=max characters of `[A-Za-z0-9_-]`.
pub fn check_id(field: &str, value: &str, prefix: &str, max: usize) -> Result<(), InvalidRequest> {
    let ok = value.len() <= max
        && value.len() > prefix.len()
        && value.starts_with(prefix)
        && value[prefix.len()..]
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-');
    if ok {
        Ok(())
    } else {
        Err(InvalidRequest::Field(format!(
            "{field}: {value:?} is not a valid ID (expected {prefix}… with letters, digits, '_' or '-', at most {max} bytes)"
        )))
    }
}

fn check_len(field: &str, value: &str, limit: usize) -> Result<(), InvalidRequest> {
    if value.len() > limit {
        return Err(InvalidRequest::TooLarge {
            field: field.to_string(),
            len: value.len(),
            limit,
        });
    }
    Ok(())
}

fn check_key(field: &str, key: &str, limits: &Limits) -> Result<(), InvalidRequest> {
    check_len(field, key, limits.max_order_key_bytes)?;
    validate_order_key(key).map_err(|e| InvalidRequest::Field(format!("{field}: {e}")))
}

pub fn check_ops(ops: &[Op], limits: &Limits) -> Result<(), InvalidRequest> {
    if ops.len() > limits.max_ops {
        return Err(InvalidRequest::TooManyOps(ops.len(), limits.max_ops));
    }
    let idmax = limits.max_id_bytes;
    for (i, op) in ops.iter().enumerate() {
        let f = |name: &str| format!("ops[{i}].{name}");
        check_id(&f("opId"), &op.op_id, "op_", idmax)?;
        match &op.kind {
            OpKind::Insert {
                block_id,
                parent_id,
                order_key,
                content,
                language,
                ..
            } => {
                check_id(&f("blockId"), block_id, "blk_", idmax)?;
                if let Some(p) = parent_id {
                    check_id(&f("parentId"), p, "blk_", idmax)?;
                }
                check_key(&f("orderKey"), order_key, limits)?;
                check_len(&f("content"), content, limits.max_content_bytes)?;
                if let Some(l) = language {
                    check_len(&f("language"), l, 64)?;
                }
            }
            OpKind::SetContent {
                block_id, content, ..
            } => {
                check_id(&f("blockId"), block_id, "blk_", idmax)?;
                check_len(&f("content"), content, limits.max_content_bytes)?;
            }
            OpKind::SetProps { block_id, props } => {
                check_id(&f("blockId"), block_id, "blk_", idmax)?;
                if let Some(Some(l)) = &props.language {
                    check_len(&f("props.language"), l, 64)?;
                }
            }
            OpKind::Move {
                block_id,
                parent_id,
                order_key,
            } => {
                check_id(&f("blockId"), block_id, "blk_", idmax)?;
                if let Some(p) = parent_id {
                    check_id(&f("parentId"), p, "blk_", idmax)?;
                }
                check_key(&f("orderKey"), order_key, limits)?;
            }
            OpKind::Delete { block_id } | OpKind::Restore { block_id } => {
                check_id(&f("blockId"), block_id, "blk_", idmax)?;
            }
            OpKind::SetTitle { title, .. } => {
                check_len(&f("title"), title, limits.max_title_bytes)?;
            }
        }
    }
    Ok(())
}

pub fn check_hold(hold: &[String], limits: &Limits) -> Result<(), InvalidRequest> {
    if hold.len() > limits.max_hold {
        return Err(InvalidRequest::Field(format!(
            "leases.hold: {} entries (limit {})",
            hold.len(),
            limits.max_hold
        )));
    }
    for (i, id) in hold.iter().enumerate() {
        if id != super::lease::TITLE_LEASE {
            check_id(
                &format!("leases.hold[{i}]"),
                id,
                "blk_",
                limits.max_id_bytes,
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_id_is_parsed_once_against_the_configured_limit() {
        let limits = Limits {
            max_id_bytes: 10,
            ..Limits::default()
        };
        assert_eq!(
            ClientId::parse("cl_abc-1_", &limits).unwrap().as_str(),
            "cl_abc-1_"
        );
        for bad in ["cl_", "xx_abc", "cl_a b", "cl_abcdefgh"] {
            let err = ClientId::parse(bad, &limits).unwrap_err().to_string();
            assert!(err.starts_with("clientId: "), "{bad}: {err}");
            assert!(err.contains("at most 10 bytes"), "{bad}: {err}");
        }
        assert_eq!(ClientId::parse_optional(None, &limits).unwrap(), None);
        assert!(ClientId::parse_optional(Some("nope".into()), &limits).is_err());
    }

    #[test]
    fn a_doc_id_is_parsed_once_and_deserialised_through_the_parse() {
        let id = DocId::parse("doc_0123456789abcdef0123456789abcdef").unwrap();
        assert_eq!(id.as_str(), "doc_0123456789abcdef0123456789abcdef");
        let long = format!("doc_{}", "a".repeat(fixed::MAX_DOC_ID_BYTES));
        for bad in ["doc_", "cl_abc", "doc_a/b", "../etc", long.as_str()] {
            let err = DocId::parse(bad).unwrap_err().to_string();
            assert!(err.starts_with("docId: "), "{bad}: {err}");
        }
        let json: DocId = serde_json::from_str("\"doc_x\"").unwrap();
        assert_eq!(json, DocId::parse("doc_x").unwrap());
        assert!(serde_json::from_str::<DocId>("\"doc_x y\"").is_err());
        assert_eq!(serde_json::to_string(&json).unwrap(), "\"doc_x\"");
    }
}
