//! `bullet_shares`: what sharing single bullets (PROTOCOL §10) costs. A 10,000-bullet
//! document whose owner's snapshot and pull are timed before and after 100 of its bullets
//! are shared with 100 people, and one guest's snapshot of their 500-bullet subtree — on a
//! server of its own, the people made before it starts.

use std::time::Instant;

use anyhow::{anyhow, bail, Result};
use docsync_actors::collab::order_key::n_keys_between;
use docsync_actors::storage::accounts;
use serde_json::{json, Value};

use crate::client::Api;
use crate::setup::{expect_applied, insert_op, new_id};
use crate::stats::{micros, percentiles_named, round3, Line};

use super::snapshot::tree_ops;
use super::{Env, Scenario};

const BULLETS: usize = 10_000;
/// Bullets below the guest's shared bullet (of the 10,000).
const SUBTREE: usize = 500;
const SHARES: usize = 100;
const BATCH: usize = 500;
const ROUNDS: usize = 50;

pub async fn run(env: &Env) -> Result<Line> {
    let launcher = env
        .launcher
        .clone()
        .ok_or_else(|| anyhow!("needs a server of its own; it cannot run with --target"))?;
    let (server, guest, people) = tokio::task::spawn_blocking(move || {
        let dir = launcher.prepare()?;
        let guest = dir.add_user("guest", false)?;
        let people = dir.write_before_serving(|c| {
            (0..SHARES - 1)
                .map(|i| {
                    let db = &mut docsync_actors::storage::Db::Sqlite(c);
                    accounts::create_user(db, &format!("reader{i}"), "Reader", false, 0)
                })
                .map(|u| u.map(|u| u.id))
                .collect::<docsync_actors::storage::Result<Vec<String>>>()
        })?;
        anyhow::Ok((dir.serve()?, guest, people))
    })
    .await??;
    let owner = server.api()?;
    let doc = owner.create_doc("bench bullet_shares").await?;
    let client = new_id("cl_");
    // The guest's bullet with its 500, then the rest of the 10,000.
    let root = new_id("blk_");
    let mut ops = vec![insert_op(
        &root,
        None,
        &n_keys_between(None, None, 1)?[0],
        "shared",
    )];
    let keys = n_keys_between(None, None, SUBTREE)?;
    for (i, k) in keys.iter().enumerate() {
        ops.push(insert_op(
            &new_id("blk_"),
            Some(&root),
            k,
            &format!("inside {i}"),
        ));
    }
    ops.extend(tree_ops(BULLETS - SUBTREE - 1)?);
    let tops: Vec<String> = ops
        .iter()
        .filter(|o| o["parentId"].is_null())
        .filter_map(|o| o["blockId"].as_str().map(str::to_string))
        .collect();
    let mut last_seq = 0;
    while !ops.is_empty() {
        let batch: Vec<Value> = ops.drain(..BATCH.min(ops.len())).collect();
        let n = batch.len();
        let body = json!({"clientId": client, "lastSeq": last_seq, "ops": batch});
        let reply = owner.sync(&doc, &body).await?;
        expect_applied(&reply, n)?;
        last_seq = reply["headSeq"].as_i64().unwrap_or(last_seq);
    }
    let before = owner_costs(&owner, &doc, &client, last_seq).await?;
    // 100 bullets shared: the guest's, and 99 more with a reader each.
    owner
        .put_json(
            &format!("/docs/{doc}/blocks/{root}/shares"),
            &json!([{"kind": "user", "id": guest.id, "access": "write"}]),
        )
        .await?;
    for (reader, bullet) in people.iter().zip(tops.iter().skip(1)) {
        owner
            .put_json(
                &format!("/docs/{doc}/blocks/{bullet}/shares"),
                &json!([{"kind": "user", "id": reader, "access": "read"}]),
            )
            .await?;
    }
    let after = owner_costs(&owner, &doc, &client, last_seq).await?;
    let guest_api = Api::new(&server.base_url, &guest.token, true)?;
    let mut guest_us = Vec::with_capacity(ROUNDS);
    let mut blocks = 0;
    for _ in 0..ROUNDS {
        let snap = guest_api.snapshot(&doc, None).await?;
        blocks = snap.body["blocks"].as_array().map_or(0, Vec::len);
        guest_us.extend(snap.server_ms.map(|ms| (ms * 1000.0).round() as u64));
    }
    if blocks != SUBTREE + 1 {
        bail!(
            "the guest's snapshot has {blocks} blocks, expected {}",
            SUBTREE + 1
        );
    }
    Ok(Scenario::BulletShares
        .line()
        .with("bullets", BULLETS)
        .with("bullet_shares", SHARES)
        .with("guest_blocks", blocks)
        .append(before.named(false))
        .append(after.named(true))
        .append(percentiles_named(
            &mut guest_us,
            [
                "guest_snapshot_server_p50_ms",
                "guest_snapshot_server_p99_ms",
                "guest_snapshot_server_max_ms",
            ],
        )))
}

/// The owner's snapshot (server time, p50) and pull without news (round trip, p50).
struct Costs {
    snapshot_ms: f64,
    pull_ms: f64,
}

impl Costs {
    /// As fields named for before (`false`) or after (`true`) the shares.
    fn named(&self, after: bool) -> Line {
        let (snap, pull) = if after {
            (
                "owner_snapshot_server_p50_ms_after",
                "owner_pull_p50_ms_after",
            )
        } else {
            (
                "owner_snapshot_server_p50_ms_before",
                "owner_pull_p50_ms_before",
            )
        };
        Line::fields(Vec::new())
            .with(snap, round3(self.snapshot_ms))
            .with(pull, round3(self.pull_ms))
    }
}

async fn owner_costs(api: &Api, doc: &str, client: &str, last_seq: i64) -> Result<Costs> {
    let mut snap_us = Vec::with_capacity(ROUNDS);
    let mut pull_us = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let snap = api.snapshot(doc, None).await?;
        snap_us.extend(snap.server_ms.map(|ms| (ms * 1000.0).round() as u64));
        let started = Instant::now();
        api.sync(doc, &json!({"clientId": client, "lastSeq": last_seq}))
            .await?;
        pull_us.push(micros(started.elapsed()));
    }
    Ok(Costs {
        snapshot_ms: median_ms(&mut snap_us),
        pull_ms: median_ms(&mut pull_us),
    })
}

fn median_ms(us: &mut [u64]) -> f64 {
    us.sort_unstable();
    us.get(us.len() / 2).map_or(0.0, |u| *u as f64 / 1000.0)
}
