//! Setup helpers: IDs, insert ops, checking setup replies, bounded parallelism, creating
//! documents.

use anyhow::{anyhow, bail, Result};
use futures::stream::{self, StreamExt, TryStreamExt};
use serde_json::{json, Value};

use crate::client::Api;

/// Parallel requests during setup phases (creating documents and the like).
const SETUP_PARALLELISM: usize = 16;

pub fn new_id(prefix: &str) -> String {
    format!("{prefix}{}", uuid::Uuid::new_v4())
}

pub fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

pub fn insert_op(block_id: &str, parent_id: Option<&str>, order_key: &str, content: &str) -> Value {
    json!({
        "opId": new_id("op_"),
        "kind": "insert",
        "blockId": block_id,
        "parentId": parent_id,
        "orderKey": order_key,
        "content": content,
    })
}

/// Checks that every op result of a setup sync is `applied`.
pub fn expect_applied(reply: &Value, expected: usize) -> Result<()> {
    let results = reply["results"]
        .as_array()
        .ok_or_else(|| anyhow!("sync reply without results"))?;
    if results.len() != expected {
        bail!("{} results for {expected} ops", results.len());
    }
    match results.iter().find(|r| r["status"] != "applied") {
        Some(bad) => bail!("setup op not applied: {bad}"),
        None => Ok(()),
    }
}

/// Runs `f` over `items` with bounded parallelism, failing on the first error.
pub async fn in_parallel<T, R, F, Fut>(items: Vec<T>, f: F) -> Result<Vec<R>>
where
    F: Fn(T) -> Fut,
    Fut: std::future::Future<Output = Result<R>>,
{
    in_parallel_n(items, SETUP_PARALLELISM, f).await
}

pub async fn in_parallel_n<T, R, F, Fut>(items: Vec<T>, limit: usize, f: F) -> Result<Vec<R>>
where
    F: Fn(T) -> Fut,
    Fut: std::future::Future<Output = Result<R>>,
{
    stream::iter(items.into_iter().map(f))
        .buffer_unordered(limit)
        .try_collect()
        .await
}

/// Creates `n` documents titled `title 0`, `title 1`, …; returns their IDs.
pub async fn create_docs(api: &Api, n: usize, title: &str) -> Result<Vec<String>> {
    in_parallel((0..n).collect(), |i| {
        let title = format!("{title} {i}");
        async move { api.create_doc(&title).await }
    })
    .await
}
