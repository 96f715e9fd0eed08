//! `many_docs`: 200 documents, one `hot_doc`-style client each, all at once.

use std::time::Duration;

use anyhow::Result;

use crate::client::Api;
use crate::editor::{editors_line, run_editors};
use crate::setup::create_docs;
use crate::stats::Line;

use super::Scenario;

const MANY_DOCS: usize = 200;

pub async fn run(api: &Api, duration: Duration, pid: Option<u32>) -> Result<Line> {
    let docs = create_docs(api, MANY_DOCS, "bench many_docs").await?;
    let run = run_editors(api, docs, duration, pid).await?;
    Ok(editors_line(Scenario::ManyDocs.line(), MANY_DOCS, run, pid))
}
