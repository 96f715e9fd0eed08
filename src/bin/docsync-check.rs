//! `docsync-check`: runs the history checker (`docsync::history_check`) on a recorded
//! history (JSON lines, Jepsen-shaped) against the final logs of the documents it names —
//! read from a file of log rows (`--log`, JSON lines `{doc, seq, opId, epoch?}`) or from a
//! running server (`--server URL --token TOKEN`, paging `/sync` from the log floor). Prints
//! the verdict as JSON; exits 1 when the history shows a lost, duplicated, forked or
//! reordered op.

use std::collections::BTreeMap;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Parser;
use serde_json::{json, Value};

use docsync::history_check::{check, read_jsonl, FinalLog, LogRow};

#[derive(Parser)]
#[command(about = "Checks a recorded history against the final logs")]
struct Args {
    /// The history, one JSON event per line.
    #[arg(long)]
    history: String,
    /// Final log rows, one JSON object per line (instead of --server).
    #[arg(long)]
    log: Option<String>,
    /// Read the final logs from this server (base URL, e.g. http://127.0.0.1:8080).
    #[arg(long)]
    server: Option<String>,
    /// A token that can read every document of the history.
    #[arg(long)]
    token: Option<String>,
}

async fn read_server_log(base: &str, token: &str, doc: &str) -> Result<FinalLog> {
    let http = reqwest::Client::new();
    let api = format!("{}/api/v1/docs/{doc}", base.trim_end_matches('/'));
    let snap: Value = http
        .get(format!("{api}/snapshot"))
        .bearer_auth(token)
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    let floor = snap["logFloor"].as_i64().unwrap_or(0);
    let client = format!("cl_check_{}", uuid::Uuid::new_v4().simple());
    let mut rows = Vec::new();
    let mut last = floor;
    loop {
        let r: Value = http
            .post(format!("{api}/sync"))
            .bearer_auth(token)
            .json(&json!({"clientId": client, "lastSeq": last}))
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        for e in r["ops"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
            let seq = e["seq"].as_i64().context("an entry without seq")?;
            rows.push(LogRow {
                doc: doc.to_string(),
                seq,
                op_id: e["opId"].as_str().unwrap_or_default().to_string(),
                epoch: e["epoch"].as_i64(),
            });
            last = seq;
        }
        if r["hasMore"] != true {
            break;
        }
    }
    let _ = http
        .post(format!("{api}/leave"))
        .bearer_auth(token)
        .json(&json!({ "clientId": client }))
        .send()
        .await;
    Ok(FinalLog { floor, rows })
}

async fn run(args: Args) -> Result<bool> {
    let history = read_jsonl(&std::fs::read_to_string(&args.history)?)?;
    let mut logs: BTreeMap<String, FinalLog> = BTreeMap::new();
    match (&args.log, &args.server, &args.token) {
        (Some(path), None, _) => {
            for line in std::fs::read_to_string(path)?
                .lines()
                .filter(|l| !l.trim().is_empty())
            {
                let row: LogRow = serde_json::from_str(line)?;
                logs.entry(row.doc.clone()).or_default().rows.push(row);
            }
        }
        (None, Some(server), Some(token)) => {
            let mut docs: Vec<&str> = history.iter().map(|e| e.value.doc.as_str()).collect();
            docs.sort();
            docs.dedup();
            for doc in docs {
                logs.insert(doc.to_string(), read_server_log(server, token, doc).await?);
            }
        }
        _ => bail!("give either --log FILE or --server URL --token TOKEN"),
    }
    let verdict = check(&history, &logs);
    println!("{}", serde_json::to_string_pretty(&verdict)?);
    Ok(verdict.valid)
}

fn main() -> ExitCode {
    let args = Args::parse();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    match rt.block_on(run(args)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("docsync-check: {e:#}");
            ExitCode::from(2)
        }
    }
}
