//! `GET /feed?since=CURSOR&limit=N&wait=S` — the change feed (PROTOCOL §11): every log entry
//! of every document the caller may read whole, in commit order across documents, for
//! integrators who follow changes instead of polling snapshots. Any credentials (a login
//! session or an API token). The rights are asked for every page at the moment it is read,
//! through the one role function, inside the same read as the entries — an entry of a
//! document the caller lost is never sent, and a deactivated caller gets 401. Documents a
//! caller sees only bullets of (PROTOCOL §10) are not in their feed.
//!
//! With `wait`, a page that would be empty waits (like a long-poll, holding a stream slot)
//! until the feed's head moves (`FeedHead`: after the commit on SQLite; on PostgreSQL by the
//! commit's notification to every node, and every `PG_LOOK_AGAIN`), at the latest `wait`
//! seconds.
//!
//! `GET /feed/events?since=` is the same feed as server-sent events for live consumers: one
//! `event: entry` (or `event: resync`) per item, its cursor as the event's `id` — so a
//! browser's `EventSource` resumes where it was (`Last-Event-ID`) —, keep-alive comments in
//! between. Every page it sends is read like a `GET /feed` page, rights asked anew; the
//! stream ends when the credentials do.

use std::collections::VecDeque;
use std::time::Duration;

use actix_web::web::Bytes;
use actix_web::{web, HttpRequest, HttpResponse};
use futures::stream;
use serde::Deserialize;
use tokio::sync::watch;

use docsync_actors::collab::validate::fixed::{
    DEFAULT_FEED_PAGE, FEED_SCAN, MAX_FEED_PAGE, MAX_LONG_POLL_WAIT_SECS,
};
use docsync_actors::storage::feed::{self, FeedItem, FeedPage};

use super::access::{caller, reads_whole};
use super::auth::Credentials;
use super::channels::slots::StreamSlot;
use super::channels::sse::event_stream;
use super::error::ApiError;
use super::state::AppState;

/// How often a waiting reader on PostgreSQL looks again without a notification (one sent
/// while this node's watcher was reconnecting is never delivered).
const PG_LOOK_AGAIN: Duration = Duration::from_secs(2);

#[derive(Deserialize)]
pub struct FeedQuery {
    since: Option<String>,
    limit: Option<usize>,
    wait: Option<u64>,
}

/// A cursor as the feed gives them: decimal digits (opaque to callers); none is the start.
pub(super) fn parse_cursor(since: Option<&str>) -> Result<i64, ApiError> {
    let Some(s) = since else { return Ok(0) };
    if s.is_empty() || s.len() > 18 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ApiError::BadRequest(
            "since: a cursor this feed gave (from an entry or a page), or none to start at the beginning".into(),
        ));
    }
    s.parse()
        .map_err(|_| ApiError::BadRequest("since: not a cursor of this feed".into()))
}

#[utoipa::path(
    get,
    path = "/api/v1/feed",
    tag = "integrations",
    summary = "The change feed: every log entry of every readable document, in commit order (PROTOCOL §11)",
    params(
        ("since" = Option<String>, Query, description = "A cursor from an earlier page or entry; none starts at the beginning", pattern = r"^[0-9]{1,18}$"),
        ("limit" = Option<usize>, Query, description = "Entries at most, 1 to 1000 (100 when none)", minimum = 1, maximum = 1000),
        ("wait" = Option<u64>, Query, description = "Seconds to wait for an entry when there is none yet, 0 to 25 (0 when none)", minimum = 0, maximum = 25),
    ),
    responses(
        (status = 200, description = "entries after the cursor and where to go on", body = FeedPage),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 429, description = "a budget or rate is spent; see Retry-After", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn feed(
    state: web::Data<AppState>,
    req: HttpRequest,
    creds: Credentials,
    query: web::Query<FeedQuery>,
) -> Result<HttpResponse, ApiError> {
    let q = query.into_inner();
    let mut since = parse_cursor(q.since.as_deref())?;
    let limit = match q.limit {
        None => DEFAULT_FEED_PAGE,
        Some(n) if (1..=MAX_FEED_PAGE).contains(&n) => n,
        Some(_) => {
            return Err(ApiError::BadRequest(format!(
                "limit: 1 to {MAX_FEED_PAGE} entries"
            )))
        }
    };
    let wait = match q.wait {
        None => 0,
        Some(w) if w <= MAX_LONG_POLL_WAIT_SECS => w,
        Some(_) => {
            return Err(ApiError::BadRequest(format!(
                "wait: 0 to {MAX_LONG_POLL_WAIT_SECS} seconds"
            )))
        }
    };
    let user = caller(&state, &creds).await?;
    let _slot = match wait {
        0 => None,
        _ => Some(state.take_stream_slot(&req, &user.id)?),
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(wait);
    let mut moved = state.storage.feed_head().changes();
    let mut shutdown = state.shutdown.clone();
    let mut first = true;
    loop {
        moved.borrow_and_update();
        feed::settle(&state.storage).await?;
        let page = read_page(&state, &creds, since, limit, first).await?;
        first = false;
        if !page.entries.is_empty() || page.more || tokio::time::Instant::now() >= deadline {
            return Ok(HttpResponse::Ok().json(page));
        }
        since = page.cursor.parse().unwrap_or(since);
        tokio::select! {
            alive = may_be_new(&mut moved, state.storage.is_postgres()) => {
                if !alive {
                    return Ok(HttpResponse::Ok().json(page));
                }
            }
            // The wait is over: what was read is the answer (the consumer asks again).
            () = tokio::time::sleep_until(deadline) => return Ok(HttpResponse::Ok().json(page)),
            () = shutdown.wait() => return Ok(HttpResponse::Ok().json(page)),
        }
    }
}

/// Resolves when entries may have become readable: the feed's head moved, or — on
/// PostgreSQL — `PG_LOOK_AGAIN` passed (a notification lost while the node's watcher
/// reconnected); on SQLite only the head, which this process's writer moves for every entry.
/// False when the head is gone (the server is stopping).
async fn may_be_new(moved: &mut watch::Receiver<u64>, postgres: bool) -> bool {
    if postgres {
        tokio::select! {
            r = moved.changed() => r.is_ok(),
            () = tokio::time::sleep(PG_LOOK_AGAIN) => true,
        }
    } else {
        moved.changed().await.is_ok()
    }
}

/// One page after `since`, for the caller as they are now (401 once they are not). The
/// first read of a request also refuses a cursor ahead of the feed (400): none was given.
async fn read_page(
    state: &AppState,
    creds: &Credentials,
    since: i64,
    limit: usize,
    check_cursor: bool,
) -> Result<FeedPage, ApiError> {
    let creds = creds.clone();
    let now = state.clock.now_ms();
    let read = state
        .storage
        .read(move |db| {
            let Some(user) = creds.user(db, now)? else {
                return Ok(Err(ApiError::Unauthorized));
            };
            if check_cursor && since > feed::head(db)? {
                return Ok(Err(ApiError::BadRequest(
                    "since: this feed has not come that far; use a cursor it gave".into(),
                )));
            }
            let page = feed::page(db, since, limit, FEED_SCAN, |db, doc| {
                reads_whole(db, &user.id, doc)
            })?;
            Ok(Ok(page))
        })
        .await?;
    read
}

/// One server-sent event of `GET /feed/events`, as the stream carries it.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub(crate) struct FeedEvent {
    /// `entry` or `resync`.
    event: String,
    /// The item's cursor (what `Last-Event-ID` sends back on a reconnect).
    id: String,
    /// The item as one JSON line: a `FeedEntry` or a `FeedResync`.
    data: String,
}

#[derive(Deserialize)]
pub struct FeedEventsQuery {
    since: Option<String>,
}

#[utoipa::path(
    get,
    path = "/api/v1/feed/events",
    tag = "integrations",
    summary = "The change feed as server-sent events, for live consumers (PROTOCOL §11)",
    params(
        ("since" = Option<String>, Query, description = "A cursor to go on from (else the Last-Event-ID header; neither: the beginning)", pattern = r"^[0-9]{1,18}$"),
    ),
    responses(
        (status = 200, description = "an event stream (`text/event-stream`): `event: entry` or `event: resync` per item, `id:` its cursor, `data:` the item as one JSON line (a FeedEntry or a FeedResync); `: keep-alive` comments in between", content_type = "text/event-stream", body = FeedEvent),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 429, description = "a budget or rate is spent; see Retry-After", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn events(
    state: web::Data<AppState>,
    req: HttpRequest,
    creds: Credentials,
    query: web::Query<FeedEventsQuery>,
) -> Result<HttpResponse, ApiError> {
    let last_event = req
        .headers()
        .get("Last-Event-ID")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let since = parse_cursor(query.into_inner().since.or(last_event).as_deref())?;
    let user = caller(&state, &creds).await?;
    let slot = state.take_stream_slot(&req, &user.id)?;
    // The first page now: a cursor ahead of the feed is refused before the stream opens.
    feed::settle(&state.storage).await?;
    let first = read_page(&state, &creds, since, MAX_FEED_PAGE, true).await?;
    let every = Duration::from_secs(state.settings.server.sse_keepalive_secs);
    let mut keepalive = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    keepalive.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut moved = state.storage.feed_head().changes();
    moved.borrow_and_update();
    let mut rights = state.storage.access_epoch().changes();
    rights.borrow_and_update();
    let mut s = Live {
        since,
        more: first.more,
        pending: VecDeque::new(),
        moved,
        rights,
        keepalive,
        shutdown: state.shutdown.clone(),
        creds,
        state,
        _slot: slot,
    };
    s.take(first);
    let body = stream::unfold(s, |mut s| async move {
        let frame = s.next().await?;
        Some((Ok::<_, actix_web::Error>(frame), s))
    });
    Ok(event_stream(body))
}

/// One live feed stream: where it stands, the frames read but not sent yet, and what wakes it.
struct Live {
    since: i64,
    /// The last page read was full: read the next at once.
    more: bool,
    pending: VecDeque<Bytes>,
    moved: watch::Receiver<u64>,
    /// The access epoch: a right or credential changed somewhere — read again, which asks
    /// the caller's credentials anew (the stream ends when they are gone).
    rights: watch::Receiver<u64>,
    keepalive: tokio::time::Interval,
    shutdown: crate::shutdown::Shutdown,
    creds: Credentials,
    state: web::Data<AppState>,
    _slot: StreamSlot,
}

impl Live {
    /// Queues a page's items as frames and moves past everything it looked at.
    fn take(&mut self, page: FeedPage) {
        for item in &page.entries {
            let (event, cursor) = match item {
                FeedItem::Entry(e) => ("entry", &e.cursor),
                FeedItem::Resync(r) => ("resync", &r.cursor),
            };
            let data = serde_json::to_string(item).unwrap_or_default();
            self.pending.push_back(Bytes::from(format!(
                "event: {event}\nid: {cursor}\ndata: {data}\n\n"
            )));
        }
        self.since = page.cursor.parse().unwrap_or(self.since);
        self.more = page.more;
    }

    /// The next frame to send; None ends the stream (credentials gone, shutdown, a failed read
    /// — the consumer reconnects with its last event's ID).
    async fn next(&mut self) -> Option<Bytes> {
        loop {
            if let Some(f) = self.pending.pop_front() {
                return Some(f);
            }
            if !self.more {
                let postgres = self.state.storage.is_postgres();
                tokio::select! {
                    alive = may_be_new(&mut self.moved, postgres) => alive.then_some(())?,
                    r = self.rights.changed() => r.ok()?,
                    _ = self.keepalive.tick() => return Some(Bytes::from_static(b": keep-alive\n\n")),
                    () = self.shutdown.wait() => return None,
                }
            }
            self.moved.borrow_and_update();
            self.rights.borrow_and_update();
            feed::settle(&self.state.storage).await.ok()?;
            let page = read_page(&self.state, &self.creds, self.since, MAX_FEED_PAGE, false)
                .await
                .ok()?;
            self.take(page);
        }
    }
}
