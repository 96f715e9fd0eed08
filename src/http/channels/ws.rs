//! `GET /api/v1/ws` — one `WsSession` actor per connection. Clients `JOIN`/`LEAVE` rooms
//! `doc:<id>` (read access checked through the role function), send `PING` every 15 s and
//! hear `DOC_SEQ` from the documents they joined. A connection silent for 35 s is closed;
//! a closed socket unsubscribes itself; server shutdown closes with 1001 (going away).
//! Rights are re-checked by each joined document whenever they may have changed: a room
//! whose user lost access gets `ERROR forbidden` and is left; when the credential that
//! opened the socket ends (token deleted, logout, password change, session expiry) the
//! socket gets `ERROR unauthorized` and is closed (1008), freeing its stream slot. A socket
//! in no room checks its credential itself when the access epoch moves.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use actix::prelude::*;
use actix_web::{web, HttpRequest, HttpResponse};
use actix_web_actors::ws;
use futures::channel::mpsc;

use docsync_actors::collab::validate::{ClientId, DocId};
use docsync_actors::document::{
    event_channel, Channel, DocEvent, EventSink, Events, Revoked, Wake,
};

use super::super::access::{caller, stream_access};
use super::super::auth::{Credentials, SESSION_COOKIE};
use super::super::error::ApiError;
use super::super::state::AppState;
use super::slots::StreamSlot;
use super::wire::DocSeq;
use super::ws_protocol::{room_doc, ClientMessage, ErrorCode, ServerMessage};
use super::{subscribe, Subscription};
use crate::cluster::guest_relay::{self, Relayed};
use crate::cluster::listen::{self, Listen};

/// A joined room: subscribed to this node's document, or (cluster mode) to this node's
/// relay of a document another node owns (`cluster/listen.rs`); a bullet guest's room of such a
/// document is relayed on its own (`guest_relay.rs`).
enum Room {
    Listening {
        /// Held for its `Drop`: leaving the room unsubscribes.
        _sub: Subscription,
        /// The tab's, to join again when the room's document moves.
        client_id: Option<String>,
    },
    GuestRelay {
        relay: SpawnHandle,
        client_id: Option<String>,
    },
}

/// How a JOIN ended up being served.
enum Joining {
    Listening {
        doc: DocId,
        sub: Subscription,
        head: i64,
        lease: u64,
    },
    GuestRelay {
        doc: DocId,
        addr: String,
        client_id: Option<ClientId>,
    },
}

const SILENCE_LIMIT: Duration = Duration::from_secs(35);
const CHECK_EVERY: Duration = Duration::from_secs(5);

pub struct WsSession {
    state: web::Data<AppState>,
    /// What opened the socket: every room is joined, and re-checked, with it.
    creds: Credentials,
    /// Where the socket comes from (a relayed room is counted there on the owner).
    client_addr: String,
    rooms: HashMap<DocId, Room>,
    last_heard: Instant,
    events: Option<Events>,
    sink: EventSink,
    /// What this session's bullet-guest relays hear (cluster mode), made with the first such
    /// room: most sockets never have one.
    relay_sink: Option<mpsc::UnboundedSender<(DocId, Relayed)>>,
    /// The connection's one stream slot (however many rooms it joins); freed with the session.
    _slot: StreamSlot,
}

#[utoipa::path(
    get,
    path = "/api/v1/ws",
    tag = "wake-ups",
    summary = "WebSocket: JOIN rooms `doc:{id}`, hear DOC_SEQ (PROTOCOL §4)",
    params(
        ("doc" = Option<String>, Query, description = "The document the browser opens this socket for (informational: rooms are joined by message). A proxy in front of several nodes may hash it so a document's channels reach one node"),
    ),
    responses(
        (status = 101, description = "switching protocols"),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "the caller's role does not allow this", body = crate::http::error::ErrorBody),
        (status = 429, description = "a budget or rate is spent; see Retry-After", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn connect(
    state: web::Data<AppState>,
    creds: Credentials,
    req: HttpRequest,
    stream: web::Payload,
) -> Result<HttpResponse, actix_web::Error> {
    // A page on another site may open a WebSocket with our cookie: refuse that.
    if creds.is_session()
        && req.cookie(SESSION_COOKIE).is_some()
        && !super::super::origin::same_origin(&req)
    {
        return Err(ApiError::Forbidden("cross-origin WebSocket refused".into()).into());
    }
    let user = caller(&state, &creds).await?;
    let slot = state.take_stream_slot(&req, &user.id)?;
    let (sink, events) = event_channel();
    let client_addr = state.client_address(&req);
    let session = WsSession {
        state,
        creds,
        client_addr,
        rooms: HashMap::new(),
        last_heard: Instant::now(),
        events: Some(events),
        sink,
        relay_sink: None,
        _slot: slot,
    };
    // Not a WebSocket handshake (a plain GET, a wrong version): a JSON 400 like any other
    // bad request, not actix's empty one.
    ws::start(session, &req, stream)
        .map_err(|e| ApiError::BadRequest(format!("not a WebSocket upgrade: {e}")).into())
}

impl WsSession {
    fn send(ctx: &mut ws::WebsocketContext<Self>, m: ServerMessage) {
        ctx.text(m.to_json());
    }

    fn error(ctx: &mut ws::WebsocketContext<Self>, room: Option<&str>, code: ErrorCode) {
        Self::send(ctx, ServerMessage::Error { room, code });
    }

    /// JOIN `room`: served by the document here, or relayed from its owner. `rehome`: the
    /// room was relayed and its document came here; the client hears one `DOC_SEQ` (it may
    /// have missed news in between) instead of `JOINED`.
    fn join(
        &mut self,
        room: String,
        client_id: Option<String>,
        rehome: bool,
        ctx: &mut ws::WebsocketContext<Self>,
    ) {
        let Some(doc_id) = room_doc(&room).map(str::to_string) else {
            Self::error(ctx, Some(&room), ErrorCode::BadRoom);
            return;
        };
        if self.rooms.contains_key(doc_id.as_str()) {
            Self::send(ctx, ServerMessage::Joined { room: &room });
            return;
        }
        if self.rooms.len() >= docsync_actors::collab::validate::fixed::MAX_ROOMS_PER_SOCKET {
            Self::error(ctx, Some(&room), ErrorCode::TooManyRooms);
            return;
        }
        let raw_client_id = client_id.clone();
        let Ok(client_id) = ClientId::parse_optional(client_id, &self.state.limits) else {
            Self::error(ctx, Some(&room), ErrorCode::BadRequest);
            return;
        };
        let state = self.state.clone();
        let creds = self.creds.clone();
        let sink = self.sink.clone();
        let fut = async move {
            // The same decision as any request on the document (a name that is not a
            // document ID is answered as one that is not there).
            let granted = match stream_access(&state, &creds, &doc_id).await {
                Ok(g) => g,
                Err(ApiError::NotFound) => return Err(ErrorCode::NotFound),
                Err(ApiError::Unauthorized) => return Err(ErrorCode::Unauthorized),
                Err(_) => return Err(ErrorCode::Unavailable),
            };
            match state
                .client_owners
                .claim_optional(&granted.user.id, client_id.as_ref())
                .await
            {
                Ok(()) => {}
                Err(ApiError::Forbidden(_)) => return Err(ErrorCode::Forbidden),
                Err(_) => return Err(ErrorCode::Unavailable),
            }
            let owner = match listen::listen_where(&state, &granted.doc, &granted.reach).await {
                Listen::Here => None,
                Listen::Relay { owner } => Some(owner),
                Listen::OnOwner { owner } => {
                    return Ok(Joining::GuestRelay {
                        doc: granted.doc,
                        addr: owner,
                        client_id,
                    })
                }
            };
            if let Some(owner) = owner {
                let channel = Channel::WebSocket;
                let relayed =
                    listen::subscribe(&state, &granted, channel, client_id, sink, owner).await;
                return match relayed {
                    Ok(s) => Ok(Joining::Listening {
                        doc: granted.doc,
                        sub: s.subscription,
                        head: s.head_seq,
                        lease: s.lease_seq,
                    }),
                    Err(_) => Err(ErrorCode::Unavailable),
                };
            }
            match subscribe(&state, &granted, Channel::WebSocket, client_id, sink).await {
                Ok((sub, head, lease)) => Ok(Joining::Listening {
                    doc: granted.doc,
                    sub,
                    head,
                    lease,
                }),
                Err(_) => Err(ErrorCode::Unavailable),
            }
        };
        ctx.spawn(fut.into_actor(self).map(move |res, act, ctx| match res {
            Ok(Joining::Listening {
                doc,
                sub,
                head,
                lease,
            }) => {
                if rehome {
                    let seq = DocSeq::new(doc.as_str(), head, lease);
                    Self::send(ctx, ServerMessage::DocSeq(seq));
                } else {
                    Self::send(ctx, ServerMessage::Joined { room: &room });
                }
                let room = Room::Listening {
                    _sub: sub,
                    client_id: raw_client_id,
                };
                act.rooms.insert(doc, room);
            }
            Ok(Joining::GuestRelay {
                doc,
                addr,
                client_id,
            }) => {
                let relayed = guest_relay::RelayedRoom {
                    creds: act.creds.clone(),
                    client_addr: act.client_addr.clone(),
                    doc: doc.clone(),
                    client_id,
                    addr,
                };
                let run = guest_relay::run(act.state.clone(), relayed, act.relay_sink(ctx));
                let relay = ctx.spawn(run.into_actor(act));
                act.rooms.insert(
                    doc,
                    Room::GuestRelay {
                        relay,
                        client_id: raw_client_id,
                    },
                );
                if !rehome {
                    Self::send(ctx, ServerMessage::Joined { room: &room });
                }
            }
            Err(code) => Self::error(ctx, Some(&room), code),
        }));
    }

    /// The sender this socket's bullet-guest relays report to (the channel is made, and
    /// heard, on first use).
    fn relay_sink(
        &mut self,
        ctx: &mut ws::WebsocketContext<Self>,
    ) -> mpsc::UnboundedSender<(DocId, Relayed)> {
        if let Some(sink) = &self.relay_sink {
            return sink.clone();
        }
        let (sink, relayed) = mpsc::unbounded();
        ctx.add_stream(relayed);
        self.relay_sink = Some(sink.clone());
        sink
    }

    /// Leaves a room, stopping its relay if it has one.
    fn leave(&mut self, doc: &str, ctx: &mut ws::WebsocketContext<Self>) -> Option<Room> {
        let room = self.rooms.remove(doc);
        if let Some(Room::GuestRelay { relay, .. }) = &room {
            ctx.cancel_future(*relay);
        }
        room
    }

    fn handle_text(&mut self, text: &str, ctx: &mut ws::WebsocketContext<Self>) {
        let Ok(msg) = serde_json::from_str::<ClientMessage>(text) else {
            Self::error(ctx, None, ErrorCode::BadRequest);
            return;
        };
        match msg {
            ClientMessage::Ping => Self::send(ctx, ServerMessage::Pong),
            ClientMessage::Join { room, client_id } => self.join(room, client_id, false, ctx),
            ClientMessage::Leave { room } => {
                if let Some(doc) = room_doc(&room) {
                    self.leave(doc, ctx);
                }
                Self::send(ctx, ServerMessage::Left { room: &room });
            }
        }
    }

    /// The document ended this room: the user lost read access (leave the room), or the
    /// socket's credential ended (close the socket).
    fn revoked(&mut self, doc_id: DocId, why: Revoked, ctx: &mut ws::WebsocketContext<Self>) {
        let room = format!("doc:{doc_id}");
        self.leave(doc_id.as_str(), ctx);
        match why {
            Revoked::NoAccess => Self::error(ctx, Some(&room), ErrorCode::Forbidden),
            Revoked::CredentialEnded => Self::credential_ended(ctx),
        }
    }

    fn credential_ended(ctx: &mut ws::WebsocketContext<Self>) {
        Self::error(ctx, None, ErrorCode::Unauthorized);
        ctx.close(Some(ws::CloseReason {
            code: ws::CloseCode::Policy,
            description: Some("credentials ended".into()),
        }));
        ctx.stop();
    }

    /// The access epoch moved. Rooms are re-checked by their documents; a socket in no room
    /// checks its own credential, so a socket opened with a deleted token does not keep
    /// its stream slot.
    fn epoch_moved(&mut self, ctx: &mut ws::WebsocketContext<Self>) {
        if !self.rooms.is_empty() {
            return;
        }
        let (state, creds) = (self.state.clone(), self.creds.clone());
        let fut = async move { caller(&state, &creds).await };
        ctx.spawn(fut.into_actor(self).map(|res, act, ctx| {
            if matches!(res, Err(ApiError::Unauthorized)) && act.rooms.is_empty() {
                Self::credential_ended(ctx);
            }
        }));
    }
}

impl Actor for WsSession {
    type Context = ws::WebsocketContext<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.run_interval(CHECK_EVERY, |act, ctx| {
            if act.last_heard.elapsed() > SILENCE_LIMIT {
                ctx.close(Some(ws::CloseReason {
                    code: ws::CloseCode::Policy,
                    description: Some("no PING for 35 s".into()),
                }));
                ctx.stop();
            }
        });
        let moves = futures::stream::unfold(
            self.state.storage.access_epoch().changes(),
            |mut rx| async move { rx.changed().await.ok().map(|()| (EpochMoved, rx)) },
        );
        ctx.add_stream(moves);
        if let Some(events) = self.events.take() {
            ctx.add_stream(events);
        }
        // Server shutdown closes with 1001. The wait is the session's own future (dropped when
        // the session stops), not a free-standing task: a task holding the session's address
        // kept its mailbox, and through the mailbox's waker the whole finished connection
        // (~3.9 KB), alive until shutdown — memory grew with every closed socket.
        let mut shutdown = self.state.shutdown.clone();
        ctx.spawn(
            async move {
                shutdown.wait().await;
            }
            .into_actor(self)
            .map(|(), _act, ctx| {
                ctx.close(Some(ws::CloseReason {
                    code: ws::CloseCode::Away,
                    description: Some("server shutting down".into()),
                }));
                ctx.stop();
            }),
        );
    }
}

/// `DOC_SEQ` (PROTOCOL §4). The entries are already a JSON array, encoded once per change
/// by the document; they are copied in, never re-encoded per subscriber.
fn doc_seq_message(wake: &Wake) -> String {
    let seq = DocSeq::new(wake.doc_id.as_str(), wake.head_seq, wake.lease_seq)
        .with_entries(wake.entries.as_deref())
        .with_since(wake.since);
    ServerMessage::DocSeq(seq).to_json()
}

impl StreamHandler<DocEvent> for WsSession {
    fn handle(&mut self, ev: DocEvent, ctx: &mut Self::Context) {
        match ev {
            DocEvent::Seq(wake) => {
                if matches!(
                    self.rooms.get(wake.doc_id.as_str()),
                    Some(Room::Listening { .. })
                ) {
                    ctx.text(doc_seq_message(&wake));
                }
            }
            DocEvent::Revoked { doc_id, why } => self.revoked(doc_id, why, ctx),
            // The relay of a document another node owned is over: the document is served
            // here now, or is gone. Joined again: the client hears a `DOC_SEQ`, or the error.
            DocEvent::Moved { doc_id } => {
                if let Some(Room::Listening { client_id, .. }) = self.rooms.remove(&doc_id) {
                    self.join(format!("doc:{doc_id}"), client_id, true, ctx);
                }
            }
        }
    }

    // The event stream ends only when this session drops its own sender: nothing to do.
    fn finished(&mut self, _ctx: &mut Self::Context) {}
}

impl StreamHandler<(DocId, Relayed)> for WsSession {
    fn handle(&mut self, (doc, what): (DocId, Relayed), ctx: &mut Self::Context) {
        let Some(Room::GuestRelay { client_id, .. }) = self.rooms.get(doc.as_str()) else {
            return; // left meanwhile
        };
        match what {
            Relayed::Seq(text) => ctx.text(text),
            Relayed::Gone(code) => {
                self.rooms.remove(doc.as_str());
                Self::error(ctx, Some(&format!("doc:{doc}")), code);
            }
            Relayed::Home => {
                let client_id = client_id.clone();
                self.rooms.remove(doc.as_str());
                self.join(format!("doc:{doc}"), client_id, true, ctx);
            }
        }
    }

    fn finished(&mut self, _ctx: &mut Self::Context) {}
}

/// The access epoch moved (`AccessEpoch::changes`).
struct EpochMoved;

impl StreamHandler<EpochMoved> for WsSession {
    fn handle(&mut self, _: EpochMoved, ctx: &mut Self::Context) {
        self.epoch_moved(ctx);
    }

    fn finished(&mut self, _ctx: &mut Self::Context) {}
}

impl StreamHandler<Result<ws::Message, ws::ProtocolError>> for WsSession {
    fn handle(&mut self, msg: Result<ws::Message, ws::ProtocolError>, ctx: &mut Self::Context) {
        self.last_heard = Instant::now();
        match msg {
            Ok(ws::Message::Text(text)) => self.handle_text(&text, ctx),
            Ok(ws::Message::Ping(p)) => ctx.pong(&p),
            Ok(ws::Message::Close(reason)) => {
                ctx.close(reason);
                ctx.stop();
            }
            Ok(ws::Message::Binary(_)) => Self::error(ctx, None, ErrorCode::BadRequest),
            Ok(_) => {}
            Err(_) => ctx.stop(),
        }
    }
}
