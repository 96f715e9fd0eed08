//! A `/sync` request body (PROTOCOL §3), parsed once where it enters the server: after
//! `SyncRequest::parse` every field is checked (client ID, `lastSeq`, every op, the hold
//! list), so the document actor receives only requests it can apply, and a bad one is a
//! `400` that wrote nothing.

use serde::Deserialize;

use super::op::Op;
use super::validate::{check_hold, check_ops, ClientId, InvalidRequest, Limits};

/// The body as it arrives: shapes only, nothing checked yet.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SyncBody {
    /// The tab's ID: `cl_` and letters, digits, `_` or `-`, at most 100 bytes.
    #[schema(pattern = r"^cl_[A-Za-z0-9_-]+$", max_length = 100)]
    pub client_id: String,
    /// The highest `seq` the tab has (0: none yet).
    #[schema(minimum = 0)]
    pub last_seq: i64,
    #[serde(default)]
    pub ops: Vec<Op>,
    #[serde(default)]
    pub leases: Option<LeasesBody>,
}

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LeasesBody {
    pub hold: Vec<String>,
}

/// A checked sync request: what a document actor applies.
#[derive(Debug, Clone)]
pub struct SyncRequest {
    pub client: ClientId,
    /// The highest `seq` the client has seen (never negative).
    pub last_seq: i64,
    pub ops: Vec<Op>,
    /// The blocks the client wants to hold; `None` keeps whatever it holds.
    pub hold: Option<Vec<String>>,
}

impl SyncRequest {
    /// Checks every field of `body` against `limits`; the first problem is the error.
    pub fn parse(body: SyncBody, limits: &Limits) -> Result<SyncRequest, InvalidRequest> {
        let client = ClientId::parse(&body.client_id, limits)?;
        if body.last_seq < 0 {
            return Err(InvalidRequest::Field(
                "lastSeq: must not be negative".into(),
            ));
        }
        check_ops(&body.ops, limits)?;
        let hold = body.leases.map(|l| l.hold);
        if let Some(h) = &hold {
            check_hold(h, limits)?;
        }
        Ok(SyncRequest {
            client,
            last_seq: body.last_seq,
            ops: body.ops,
            hold,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: serde_json::Value) -> Result<SyncRequest, InvalidRequest> {
        let body: SyncBody = serde_json::from_value(v).expect("shape");
        SyncRequest::parse(body, &Limits::default())
    }

    #[test]
    fn a_well_formed_body_becomes_a_request() {
        let r = parse(json!({"clientId": "cl_1", "lastSeq": 3, "leases": {"hold": ["blk_1"]}}))
            .expect("valid");
        assert_eq!(r.client.as_str(), "cl_1");
        assert_eq!(r.last_seq, 3);
        assert!(r.ops.is_empty());
        assert_eq!(r.hold, Some(vec!["blk_1".to_string()]));
    }

    #[test]
    fn each_bad_field_is_named() {
        let bad = [
            (json!({"clientId": "x", "lastSeq": 0}), "clientId"),
            (json!({"clientId": "cl_1", "lastSeq": -1}), "lastSeq"),
            (
                json!({"clientId": "cl_1", "lastSeq": 0, "leases": {"hold": ["nope"]}}),
                "leases.hold[0]",
            ),
            (
                json!({"clientId": "cl_1", "lastSeq": 0, "ops": [
                    {"opId": "bad", "kind": "delete", "blockId": "blk_1"}]}),
                "ops[0].opId",
            ),
        ];
        for (body, field) in bad {
            let e = parse(body).expect_err(field).to_string();
            assert!(e.contains(field), "{e} should name {field}");
        }
    }
}
