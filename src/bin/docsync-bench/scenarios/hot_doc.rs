//! `hot_doc`: one document, 10 clients; each inserts its own block, then loops `set_content`
//! on it (holding its lease), one request in flight per client.

use std::time::Duration;

use anyhow::Result;

use crate::client::Api;
use crate::editor::{editors_line, run_editors};
use crate::stats::Line;

use super::Scenario;

const HOT_CLIENTS: usize = 10;

pub async fn run(api: &Api, duration: Duration, pid: Option<u32>) -> Result<Line> {
    let doc = api.create_doc("bench hot_doc").await?;
    let run = run_editors(api, vec![doc; HOT_CLIENTS], duration, pid).await?;
    Ok(editors_line(Scenario::HotDoc.line(), HOT_CLIENTS, run, pid))
}
