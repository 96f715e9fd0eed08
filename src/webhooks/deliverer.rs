//! One task per active webhook, under one supervisor. A deliverer's round:
//!
//! 1. read its webhook (gone or paused: the task ends — the supervisor starts a new one
//!    when it is resumed);
//! 2. in cluster mode, take or keep its lease (another node has it: look again later);
//! 3. with no batch pending, cut one from the feed after the cursor — what the webhook
//!    covers (`webhooks::covers`, rights asked now), at most `batch_entries` and
//!    `batch_bytes` — and keep it on the row before anything is sent; nothing to send moves
//!    the cursor past what was looked at and waits for the feed's head;
//! 4. attempt the pending batch (`attempt.rs`); after a failure, wait the backoff.
//!
//! Waits end early when the webhook is made, resumed or deleted (`Webhooks::poke`) and at
//! shutdown. Everything durable is on the webhook's row, so a restart (or another node
//! taking the lease) goes on with the same pending batch and delivery ID.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use docsync_actors::collab::validate::fixed::FEED_SCAN;
use docsync_actors::storage::feed;
use docsync_actors::storage::roles;
use docsync_actors::storage::webhooks::{self, Pending, Webhook};

use super::attempt::{self, Outcome};
use super::context::Context;

/// How often the supervisor looks for webhooks without being woken (another node made one).
const RESCAN: Duration = Duration::from_secs(5);
/// A lease on a webhook lasts this long and is renewed every round (cluster mode).
const LEASE_MS: i64 = 30_000;
/// How long a deliverer with nothing to send waits for the feed before looking again (the
/// feed's head moves with every commit on this node; on PostgreSQL also by notification).
const IDLE_LOOK_AGAIN: Duration = Duration::from_secs(2);
/// After a read of the database failed, try again this much later.
const AFTER_ERROR: Duration = Duration::from_secs(1);

pub(crate) async fn supervise(ctx: Arc<Context>) {
    let mut running: HashMap<String, tokio::task::JoinHandle<()>> = HashMap::new();
    let mut wake = ctx.wake.clone();
    let mut shutdown = ctx.shutdown.clone();
    loop {
        match ctx.storage.read(webhooks::list).await {
            Ok(hooks) => {
                running.retain(|_, task| !task.is_finished());
                for hook in hooks.into_iter().filter(|h| !h.is_paused()) {
                    running
                        .entry(hook.id.clone())
                        .or_insert_with(|| actix_web::rt::spawn(deliver(ctx.clone(), hook.id)));
                }
            }
            Err(e) => tracing::warn!(error = %e, "webhooks: reading the list"),
        }
        tokio::select! {
            _ = wake.changed() => {}
            _ = tokio::time::sleep(RESCAN) => {}
            _ = shutdown.wait() => return,
        }
    }
}

/// What a round ends with, before the next.
enum Next {
    /// Go on at once.
    Now,
    /// Nothing to send: wait for the feed (or a poke).
    Idle,
    /// Wait this long (a backoff, a lease held elsewhere, an error).
    After(Duration),
    /// The webhook is gone or paused: the task ends.
    Stop,
}

async fn deliver(ctx: Arc<Context>, id: String) {
    let mut head = ctx.storage.feed_head().changes();
    let mut wake = ctx.wake.clone();
    let mut shutdown = ctx.shutdown.clone();
    loop {
        if shutdown.is_fired() {
            return;
        }
        head.borrow_and_update();
        let next = match round(&ctx, &id).await {
            Ok(next) => next,
            Err(e) => {
                tracing::warn!(webhook = %id, error = %e, "webhooks: a delivery round failed");
                Next::After(AFTER_ERROR)
            }
        };
        let wait = match next {
            Next::Now => continue,
            Next::Stop => return,
            Next::Idle => IDLE_LOOK_AGAIN,
            Next::After(d) => d,
        };
        tokio::select! {
            _ = head.changed(), if matches!(next, Next::Idle) => {}
            _ = wake.changed() => {}
            _ = tokio::time::sleep(wait) => {}
            _ = shutdown.wait() => return,
        }
    }
}

async fn round(ctx: &Context, id: &str) -> anyhow::Result<Next> {
    let key = id.to_string();
    let Some(hook) = ctx
        .storage
        .read_short(move |db| webhooks::by_id(db, &key))
        .await?
    else {
        return Ok(Next::Stop);
    };
    if hook.is_paused() {
        return Ok(Next::Stop);
    }
    if ctx.clustered && !claim(ctx, id).await? {
        return Ok(Next::After(Duration::from_millis(LEASE_MS as u64 / 3)));
    }
    let (pending, entries) = match hook.pending.clone() {
        Some(p) => (p, None),
        None => match cut(ctx, &hook).await? {
            Cut::Batch(p, entries) => (p, Some(entries)),
            Cut::Moved { more } => return Ok(if more { Next::Now } else { Next::Idle }),
            Cut::Raced => return Ok(Next::Now),
            Cut::CreatorGone => {
                attempt::pause(ctx, &hook, None, attempt::CREATOR_GONE).await?;
                return Ok(Next::Stop);
            }
        },
    };
    let started = Instant::now();
    let n = entries.as_ref().map_or(0, Vec::len);
    Ok(match attempt::run(ctx, &hook, &pending, entries).await? {
        Outcome::Delivered => pace(ctx, n, started.elapsed()),
        Outcome::Retry(after) => Next::After(after),
        Outcome::Paused => Next::Stop,
    })
}

/// After a batch of `n` entries that took `took`: at once, or later so that a backlog drains
/// at `webhooks.max_entries_per_sec` at most (a receiver catching up is not flooded, and the
/// reads and writes of the drain leave room for edits).
fn pace(ctx: &Context, n: usize, took: Duration) -> Next {
    let rate = ctx.settings.max_entries_per_sec.max(1) as f64;
    let due = Duration::from_secs_f64(n as f64 / rate);
    match due.checked_sub(took) {
        Some(wait) if !wait.is_zero() => Next::After(wait),
        _ => Next::Now,
    }
}

async fn claim(ctx: &Context, id: &str) -> anyhow::Result<bool> {
    let now = ctx.clock.now_ms();
    let (id, node) = (id.to_string(), ctx.node.clone());
    Ok(ctx
        .storage
        .write(move |db| webhooks::claim(db, &id, &node, now, now + LEASE_MS))
        .await?)
}

enum Cut {
    /// A batch is kept on the row: attempt it (its entries serialized).
    Batch(Pending, Vec<String>),
    /// Nothing to send up to where the feed was read (the cursor moved past what the
    /// webhook does not cover); `more` when the feed has more already.
    Moved { more: bool },
    /// The row changed under us (another node, a resume): read it again.
    Raced,
    /// Its creator was deactivated: nothing is theirs to send any more.
    CreatorGone,
}

/// The next batch after the cursor, kept on the webhook's row before its first attempt.
async fn cut(ctx: &Context, hook: &Webhook) -> anyhow::Result<Cut> {
    feed::settle(&ctx.storage).await?;
    let (after, limit) = (hook.cursor_pos, ctx.settings.batch_entries);
    let h = hook.clone();
    let page = ctx
        .storage
        .read(move |db| {
            if !roles::user_active(db, &h.created_by)? {
                return Ok(None);
            }
            feed::page(db, after, limit, FEED_SCAN, |db, doc| {
                webhooks::covers(db, &h, doc)
            })
            .map(Some)
        })
        .await?;
    let Some(page) = page else {
        return Ok(Cut::CreatorGone);
    };
    let page_end: i64 = page.cursor.parse().unwrap_or(after);
    let mut entries = attempt::serialized(&page.entries)?;
    let to = match fit(&entries, ctx.settings.batch_bytes) {
        0 => {
            if page_end > after {
                let id = hook.id.clone();
                ctx.storage
                    .write(move |db| webhooks::skip_to(db, &id, page_end))
                    .await?;
            }
            return Ok(Cut::Moved { more: page.more });
        }
        n if n < entries.len() => {
            entries.truncate(n);
            page.entries[n - 1].cursor().parse().unwrap_or(page_end)
        }
        _ => page_end,
    };
    let delivery = format!("dlv_{}", uuid::Uuid::now_v7().simple());
    let (id, d) = (hook.id.clone(), delivery.clone());
    let kept = ctx
        .storage
        .write(move |db| webhooks::set_pending(db, &id, &d, after, to))
        .await?;
    Ok(if kept {
        Cut::Batch(
            Pending {
                id: delivery,
                after,
                to,
            },
            entries,
        )
    } else {
        Cut::Raced
    })
}

/// How many of `items` go in one body of at most `max_bytes` (at least one, if any).
fn fit(items: &[String], max_bytes: usize) -> usize {
    let mut bytes = 0;
    for (i, item) in items.iter().enumerate() {
        bytes += item.len() + 1;
        if bytes > max_bytes && i > 0 {
            return i;
        }
    }
    items.len()
}
