//! The WebSocket's messages (PROTOCOL §4, stage 1) as types: what a client may send and what
//! the server answers, tagged by `type`. Anything that does not parse as a `ClientMessage`
//! (unknown type, missing room, not JSON, binary) is answered `ERROR bad_request`.

use super::wire::DocSeq;
use serde::{Deserialize, Serialize};

/// From the browser.
#[derive(Debug, PartialEq, Eq, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "SCREAMING_SNAKE_CASE",
    rename_all_fields = "camelCase"
)]
pub enum ClientMessage {
    /// Every 15 s; answered `PONG` (a socket silent for 35 s is closed).
    Ping,
    /// Hear the document's `DOC_SEQ`: `room` is `doc:<id>`; `clientId` ties the socket to the
    /// tab (presence, and wake-ups it caused itself are skipped).
    Join {
        room: String,
        #[serde(default)]
        client_id: Option<String>,
    },
    Leave {
        room: String,
    },
}

/// Why a JOIN (or the socket) was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    BadRequest,
    BadRoom,
    TooManyRooms,
    NotFound,
    Unauthorized,
    Forbidden,
    Unavailable,
}

/// To the browser (`DOC_SEQ` carries the document's entries, spliced in as encoded once).
#[derive(Debug, Serialize)]
#[serde(
    tag = "type",
    rename_all = "SCREAMING_SNAKE_CASE",
    rename_all_fields = "camelCase"
)]
pub enum ServerMessage<'a> {
    Pong,
    Joined {
        room: &'a str,
    },
    Left {
        room: &'a str,
    },
    Error {
        #[serde(skip_serializing_if = "Option::is_none")]
        room: Option<&'a str>,
        code: ErrorCode,
    },
    DocSeq(DocSeq<'a>),
}

impl ServerMessage<'_> {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a server message always encodes")
    }
}

/// The document a room names (`doc:<id>`), if it names one.
pub fn room_doc(room: &str) -> Option<&str> {
    room.strip_prefix("doc:")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_messages_parse_by_type_and_refuse_the_rest() {
        let p = |s: &str| serde_json::from_str::<ClientMessage>(s).ok();
        assert_eq!(p(r#"{"type":"PING"}"#), Some(ClientMessage::Ping));
        assert_eq!(
            p(r#"{"type":"JOIN","room":"doc:d1","clientId":"cl_1","extra":1}"#),
            Some(ClientMessage::Join {
                room: "doc:d1".into(),
                client_id: Some("cl_1".into())
            })
        );
        assert_eq!(
            p(r#"{"type":"LEAVE","room":"doc:d1"}"#),
            Some(ClientMessage::Leave {
                room: "doc:d1".into()
            })
        );
        for bad in [
            r#"{"type":"JOIN"}"#,
            r#"{"type":"LEAVE"}"#,
            r#"{"type":"HELLO"}"#,
            r#"{"room":"doc:d1"}"#,
            r#"[]"#,
            "not json",
        ] {
            assert_eq!(p(bad), None, "{bad}");
        }
    }

    #[test]
    fn server_messages_have_the_protocols_shapes() {
        let v = |m: ServerMessage| serde_json::from_str::<serde_json::Value>(&m.to_json()).unwrap();
        assert_eq!(v(ServerMessage::Pong), serde_json::json!({"type": "PONG"}));
        assert_eq!(
            v(ServerMessage::Error {
                room: Some("doc:x"),
                code: ErrorCode::TooManyRooms
            }),
            serde_json::json!({"type": "ERROR", "room": "doc:x", "code": "too_many_rooms"})
        );
        assert_eq!(
            v(ServerMessage::Error {
                room: None,
                code: ErrorCode::BadRequest
            }),
            serde_json::json!({"type": "ERROR", "code": "bad_request"})
        );
        assert_eq!(
            v(ServerMessage::DocSeq(DocSeq::new("d", 4, 2))),
            serde_json::json!({"type": "DOC_SEQ", "docId": "d", "headSeq": 4, "leaseSeq": 2})
        );
    }
}
