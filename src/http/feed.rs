//! `GET /feed?since=CURSOR&limit=N&wait=S` — the change feed (PROTOCOL §11): every log entry
//! of every document the caller may read whole, in commit order across documents, for
//! integrators who follow changes instead of polling snapshots. Any credentials (a login
//! session or an API token). The rights are asked for every page at the moment it is read,
//! through the one role function, inside the same read as the entries — an entry of a
//! document the caller lost is never sent, and a deactivated caller gets 401. Documents a
//! caller sees only bullets of (PROTOCOL §10) are not in their feed.
//!
//! With `wait`, a page that would be empty waits (like a long-poll, holding a stream slot)
//! until the feed's head moves (`FeedHead`: after the commit on SQLite; on PostgreSQL, where
//! every node writes, also every `PG_LOOK_AGAIN`), at the latest `wait` seconds.

use std::time::Duration;

use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;

use docsync_actors::collab::validate::fixed::{
    DEFAULT_FEED_PAGE, FEED_SCAN, MAX_FEED_PAGE, MAX_LONG_POLL_WAIT_SECS,
};
use docsync_actors::storage::feed::{self, FeedPage};

use super::access::{caller, reads_whole};
use super::auth::Credentials;
use super::error::ApiError;
use super::state::AppState;

/// How often a waiting reader on PostgreSQL looks again (entries written by other nodes do
/// not move this node's head).
const PG_LOOK_AGAIN: Duration = Duration::from_millis(200);

#[derive(Deserialize)]
pub struct FeedQuery {
    since: Option<String>,
    limit: Option<usize>,
    wait: Option<u64>,
}

/// A cursor as the feed gives them: decimal digits (opaque to callers); none is the start.
fn parse_cursor(since: Option<&str>) -> Result<i64, ApiError> {
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
        let look_again = tokio::time::sleep(match state.storage.is_postgres() {
            true => PG_LOOK_AGAIN,
            false => Duration::from_secs(wait),
        });
        tokio::select! {
            r = moved.changed() => {
                if r.is_err() {
                    return Ok(HttpResponse::Ok().json(page));
                }
            }
            () = look_again => {}
            () = tokio::time::sleep_until(deadline) => {}
            () = shutdown.wait() => return Ok(HttpResponse::Ok().json(page)),
        }
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
