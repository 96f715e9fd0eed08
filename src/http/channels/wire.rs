//! The wake-up on the wire, one type both ways: "document `docId` is at `headSeq` /
//! `leaseSeq`", with the new log entries when they are few (PROTOCOL §4). It is the data of
//! an SSE `ready` / `doc_seq` event, the fields of a WebSocket `DOC_SEQ`, and what the
//! cluster relay reads back from an owner's SSE stream to send on as `DOC_SEQ`. The entries
//! are a JSON array the document encoded once per change: copied in as they are, never
//! encoded again per subscriber.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// The data of each SSE event (`ready` first, then `doc_seq`), and the fields of a WebSocket
/// `DOC_SEQ`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DocSeq<'a> {
    #[serde(borrow)]
    #[schema(value_type = String)]
    pub doc_id: Cow<'a, str>,
    pub head_seq: i64,
    pub lease_seq: u64,
    /// The new log entries when they are few (PROTOCOL §4); absent: pull with `/sync`.
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<docsync_actors::collab::op::LogEntry>>)]
    pub entries: Option<&'a RawValue>,
    /// For a bullet guest's tab (PROTOCOL §10): `entries` is its view's one entry from this
    /// cursor (apply only at exactly this `lastSeq`, else pull); absent: they continue the log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<i64>,
}

impl<'a> DocSeq<'a> {
    pub fn new(doc_id: &'a str, head_seq: i64, lease_seq: u64) -> DocSeq<'a> {
        DocSeq {
            doc_id: Cow::Borrowed(doc_id),
            head_seq,
            lease_seq,
            entries: None,
            since: None,
        }
    }

    pub fn with_entries(self, entries: Option<&'a RawValue>) -> DocSeq<'a> {
        DocSeq { entries, ..self }
    }

    pub fn with_since(self, since: Option<i64>) -> DocSeq<'a> {
        DocSeq { since, ..self }
    }

    /// One line of JSON (serde never writes raw newlines), as SSE data must be.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a wake-up always encodes")
    }

    /// An SSE frame's `data:` line read back (the cluster relay); None for anything else.
    pub fn parse(data: &'a str) -> Option<DocSeq<'a>> {
        serde_json::from_str(data).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wake_up_goes_out_and_comes_back_with_its_entries_untouched() {
        let entries = RawValue::from_string(r#"[{"seq":5,"opId":"op_1"}]"#.into()).unwrap();
        let out = DocSeq::new("doc_1", 5, 2)
            .with_entries(Some(&entries))
            .to_json();
        assert_eq!(
            out,
            r#"{"docId":"doc_1","headSeq":5,"leaseSeq":2,"entries":[{"seq":5,"opId":"op_1"}]}"#
        );
        let back = DocSeq::parse(&out).unwrap();
        assert_eq!(
            (back.doc_id.as_ref(), back.head_seq, back.lease_seq),
            ("doc_1", 5, 2)
        );
        assert_eq!(back.entries.unwrap().get(), entries.get());
        assert_eq!(
            DocSeq::new("d", 1, 0).to_json(),
            r#"{"docId":"d","headSeq":1,"leaseSeq":0}"#
        );
        assert!(DocSeq::parse("keep-alive").is_none());
    }
}
