//! One attempt of a webhook's pending batch: read it again (rights asked now), sign it, POST
//! it, and write down what came of it — on the webhook's row (the cursor moves only on a
//! 2xx) and in its delivery log.
//!
//! Retried (with backoff, for `retry_hours` from the first failure): no answer within
//! `timeout_secs`, no connection, 5xx, 408 and 429 (a `Retry-After` is honoured up to
//! `retry_max_secs`). Any other answer — a 4xx, a redirect — will not change by itself:
//! the webhook pauses at once with the answer as the reason, and its owner resumes it
//! after fixing the receiver.

use std::time::{Duration, Instant};

use rand::Rng;
use serde::Serialize;

use docsync_actors::storage::feed::{self, FeedItem};
use docsync_actors::storage::webhooks::{self, Delivery, Pending, Webhook};
use docsync_actors::storage::{accounts, roles};

use super::context::Context;
use super::signature;

/// Why a webhook whose creator can no longer sign in is paused.
pub(crate) const CREATOR_GONE: &str = "its creator's account is deactivated";

/// Attempts kept in each webhook's delivery log.
const LOG_KEEP: i64 = 200;

pub(crate) enum Outcome {
    Delivered,
    Retry(Duration),
    Paused,
}

/// A delivery's body: the batch (each entry already serialized) and where it ends:
/// `{"webhookId", "deliveryId", "cursor", "entries": [...]}`.
fn body(hook: &Webhook, pending: &Pending, entries: &[String]) -> anyhow::Result<Vec<u8>> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Head<'a> {
        webhook_id: &'a str,
        delivery_id: &'a str,
        /// The feed position after the last entry: what `GET /feed?since=` would go on from.
        cursor: String,
    }
    let head = serde_json::to_vec(&Head {
        webhook_id: &hook.id,
        delivery_id: &pending.id,
        cursor: pending.to.to_string(),
    })?;
    let size = head.len() + entries.iter().map(|e| e.len() + 1).sum::<usize>() + 16;
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(&head[..head.len() - 1]);
    out.extend_from_slice(b",\"entries\":[");
    for (i, e) in entries.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(e.as_bytes());
    }
    out.extend_from_slice(b"]}");
    Ok(out)
}

/// Each item as its JSON text.
pub(crate) fn serialized(items: &[FeedItem]) -> anyhow::Result<Vec<String>> {
    Ok(items
        .iter()
        .map(serde_json::to_string)
        .collect::<Result<_, _>>()?)
}

/// What the receiver did with an attempt.
enum Answer {
    Ok(u16),
    /// Worth trying again later (`Retry-After` when it said one).
    Again {
        status: Option<u16>,
        error: String,
        retry_after: Option<Duration>,
    },
    /// Will not change by itself.
    Refused {
        status: u16,
        error: String,
    },
}

/// Attempts the pending batch; `cut` holds its entries when it was cut just now (rights
/// asked in that read), else they are read again, rights asked now.
pub(crate) async fn run(
    ctx: &Context,
    hook: &Webhook,
    pending: &Pending,
    cut: Option<Vec<String>>,
) -> anyhow::Result<Outcome> {
    let h = hook.clone();
    let (after, to) = (pending.after, pending.to);
    let fresh = cut.is_some();
    let (active, admin, read, sealed) = ctx
        .storage
        .read_short(move |db| {
            let active = roles::user_active(db, &h.created_by)?;
            // asked at every attempt, like the rights: a creator no longer an admin reaches
            // public addresses only from now on
            let admin = accounts::user_by_id(db, &h.created_by)?.is_some_and(|u| u.is_admin);
            let items = match active && !fresh {
                true => feed::range(db, after, to, |db, doc| webhooks::covers(db, &h, doc))?,
                false => Vec::new(),
            };
            Ok((active, admin, items, webhooks::secret_sealed(db, &h.id)?))
        })
        .await?;
    let items = match cut {
        Some(items) => items,
        None => serialized(&read)?,
    };
    let Some(sealed) = sealed else {
        return Ok(Outcome::Paused); // deleted meanwhile
    };
    let attempt = hook.attempts + 1;
    let mut log = Delivery {
        delivery_id: pending.id.clone(),
        attempt,
        at: ctx.clock.now_ms(),
        entries: items.len() as i64,
        cursor: to.to_string(),
        outcome: String::new(),
        status: None,
        error: None,
        ms: 0,
    };
    if !active {
        pause(ctx, hook, Some(log), CREATOR_GONE).await?;
        return Ok(Outcome::Paused);
    }
    if items.is_empty() {
        // Every entry of the batch left the webhook's reach since it was cut (its creator
        // lost the documents, or they were deleted): nothing is left to send.
        log.outcome = "dropped".into();
        log.error = Some("nothing left to send: the entries are no longer covered".into());
        finish(ctx, hook, pending, log).await?;
        return Ok(Outcome::Delivered);
    }
    let secret = match ctx.sealer.as_ref().map(|s| s.open(&hook.id, &sealed)) {
        Some(Ok(secret)) => secret,
        Some(Err(e)) => {
            pause(ctx, hook, Some(log), &e.to_string()).await?;
            return Ok(Outcome::Paused);
        }
        None => {
            let why = "this server has no webhooks.key to open the secret with";
            pause(ctx, hook, Some(log), why).await?;
            return Ok(Outcome::Paused);
        }
    };
    let body = body(hook, pending, &items)?;
    let started = Instant::now();
    let client = if admin || ctx.settings.allow_private_targets {
        &ctx.client
    } else {
        &ctx.public_client
    };
    let answer = send(ctx, client, hook, pending, attempt, &secret, body).await;
    log.ms = started.elapsed().as_millis() as i64;
    match answer {
        Answer::Ok(status) => {
            log.outcome = "delivered".into();
            log.status = Some(status.into());
            finish(ctx, hook, pending, log).await?;
            Ok(Outcome::Delivered)
        }
        Answer::Refused { status, error } => {
            log.status = Some(status.into());
            pause(ctx, hook, Some(log), &error).await?;
            Ok(Outcome::Paused)
        }
        Answer::Again {
            status,
            error,
            retry_after,
        } => {
            log.status = status.map(i32::from);
            let now = ctx.clock.now_ms();
            let since = hook.failing_since.unwrap_or(now);
            let window_ms = (ctx.settings.retry_hours * 3_600_000.0) as i64;
            if now - since >= window_ms {
                let hours = ctx.settings.retry_hours;
                let why = format!("the receiver failed for {hours} h (last: {error})");
                log.error = Some(error);
                pause(ctx, hook, Some(log), &why).await?;
                return Ok(Outcome::Paused);
            }
            let delay = backoff(ctx, attempt, retry_after);
            log.outcome = "failed".into();
            log.error = Some(error);
            let (id, next) = (hook.id.clone(), now + delay.as_millis() as i64);
            let log_id = hook.id.clone();
            ctx.storage
                .write(move |db| {
                    webhooks::failed(db, &id, attempt, since, next)?;
                    webhooks::record(db, &log_id, &log, LOG_KEEP)
                })
                .await?;
            Ok(Outcome::Retry(delay))
        }
    }
}

async fn send(
    ctx: &Context,
    client: &reqwest::Client,
    hook: &Webhook,
    pending: &Pending,
    attempt: i64,
    secret: &str,
    body: Vec<u8>,
) -> Answer {
    let sent = client
        .post(&hook.url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(signature::HEADER, signature::sign(secret, &body))
        .header("X-Docsync-Delivery", &pending.id)
        .header("X-Docsync-Webhook", &hook.id)
        .header("X-Docsync-Cursor", pending.to.to_string())
        .header("X-Docsync-Attempt", attempt.to_string())
        .body(body)
        .send()
        .await;
    let response = match sent {
        Ok(r) => r,
        Err(e) if e.is_timeout() => {
            return Answer::Again {
                status: None,
                error: format!("no answer within {} s", ctx.settings.timeout_secs),
                retry_after: None,
            }
        }
        Err(e) => {
            return Answer::Again {
                status: None,
                error: format!("could not reach the receiver: {}", root_cause(&e)),
                retry_after: None,
            }
        }
    };
    let status = response.status();
    let code = status.as_u16();
    if status.is_success() {
        return Answer::Ok(code);
    }
    if status.is_server_error() || code == 408 || code == 429 {
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        return Answer::Again {
            status: Some(code),
            error: format!("the receiver answered {status}"),
            retry_after,
        };
    }
    let error = if status.is_redirection() {
        format!(
            "the receiver answered {status}: webhooks do not follow redirects (use the final URL)"
        )
    } else {
        format!("the receiver answered {status}: not retried (fix the receiver, then resume)")
    };
    Answer::Refused {
        status: code,
        error,
    }
}

/// The innermost error, which says what happened (connection refused, no such host).
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut inner = e;
    while let Some(next) = inner.source() {
        inner = next;
    }
    inner.to_string()
}

/// `retry_first_ms` doubled per failed attempt, at most `retry_max_secs`, a fifth of it
/// random (receivers back after an outage are not hit by every webhook at once); at least
/// what the receiver asked for with `Retry-After`, within the same bound.
fn backoff(ctx: &Context, attempt: i64, retry_after: Option<Duration>) -> Duration {
    let max = Duration::from_secs(ctx.settings.retry_max_secs);
    let doubled = ctx
        .settings
        .retry_first_ms
        .saturating_mul(1u64 << (attempt - 1).clamp(0, 30));
    let base = Duration::from_millis(doubled).min(max);
    let jitter = base.mul_f64(rand::rng().random_range(0.0..0.2));
    (base - jitter).max(retry_after.unwrap_or_default().min(max))
}

/// The pending batch is done with: the cursor moves past it.
async fn finish(
    ctx: &Context,
    hook: &Webhook,
    pending: &Pending,
    log: Delivery,
) -> anyhow::Result<()> {
    let (id, delivery, now) = (hook.id.clone(), pending.id.clone(), ctx.clock.now_ms());
    ctx.storage
        .write(move |db| {
            webhooks::delivered(db, &id, &delivery, now)?;
            webhooks::record(db, &id, &log, LOG_KEEP)
        })
        .await?;
    Ok(())
}

/// Stops the webhook with the reason, recording the attempt that ended it (if one did).
pub(crate) async fn pause(
    ctx: &Context,
    hook: &Webhook,
    log: Option<Delivery>,
    why: &str,
) -> anyhow::Result<()> {
    tracing::warn!(webhook = %hook.id, url = %hook.url, reason = why, "webhook paused");
    let (id, now, why) = (hook.id.clone(), ctx.clock.now_ms(), why.to_string());
    ctx.storage
        .write(move |db| {
            webhooks::pause(db, &id, now, &why)?;
            match log {
                Some(mut log) => {
                    log.outcome = "paused".into();
                    log.error.get_or_insert(why);
                    webhooks::record(db, &id, &log, LOG_KEEP)
                }
                None => Ok(()),
            }
        })
        .await?;
    Ok(())
}
