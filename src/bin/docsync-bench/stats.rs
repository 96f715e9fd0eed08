//! Statistics and the output line: nearest-rank percentiles, the JSON line per scenario.

use std::time::Duration;

use serde_json::{json, Value};

/// `(after - before)` KiB spread over `n`, in bytes; null without both figures.
pub fn bytes_per(before: Option<u64>, after: Option<u64>, n: usize) -> Value {
    match (before, after) {
        (Some(b), Some(a)) => json!((a as i64 - b as i64) * 1024 / n as i64),
        _ => Value::Null,
    }
}

/// What a group of editors saw: sync latencies and counts of replies and op results.
#[derive(Default)]
pub struct Stats {
    pub latencies_us: Vec<u64>,
    pub acked_syncs: u64,
    pub ops: u64,
    pub conflicts: u64,
    pub errors: u64,
}

impl Stats {
    pub fn merge(&mut self, other: Stats) {
        self.latencies_us.extend(other.latencies_us);
        self.acked_syncs += other.acked_syncs;
        self.ops += other.ops;
        self.conflicts += other.conflicts;
        self.errors += other.errors;
    }
}

/// One output line: a JSON object whose fields keep the order they were added in.
pub struct Line(Vec<(&'static str, Value)>);

impl Line {
    /// A line that starts with `"scenario": name`.
    pub fn named(name: &str) -> Line {
        Line(vec![("scenario", json!(name))])
    }

    /// A line without a scenario name (a group of fields to `append`).
    pub fn fields(fields: Vec<(&'static str, Value)>) -> Line {
        Line(fields)
    }

    /// The value of the first field called `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    pub fn with(mut self, key: &'static str, value: impl Into<Value>) -> Line {
        self.0.push((key, value.into()));
        self
    }

    pub fn append(mut self, other: Line) -> Line {
        self.0.extend(other.0);
        self
    }
}

impl std::fmt::Display for Line {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("{")?;
        for (i, (key, value)) in self.0.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            write!(f, "{sep}{}:{value}", Value::from(*key))?;
        }
        f.write_str("}")
    }
}

/// p50 / p99 / max in milliseconds (nearest rank); nulls when there are no samples.
pub fn percentiles(latencies_us: &mut [u64]) -> Line {
    percentiles_named(latencies_us, ["p50_ms", "p99_ms", "max_ms"])
}

/// `percentiles` under other keys (p50, p99, max in this order).
pub fn percentiles_named(latencies_us: &mut [u64], keys: [&'static str; 3]) -> Line {
    nearest_ranks(latencies_us, keys, |us| us as f64)
}

/// `percentiles_named` for signed microseconds (e.g. events that came before a reply).
pub fn signed_percentiles(values_us: &mut [i64], keys: [&'static str; 3]) -> Line {
    nearest_ranks(values_us, keys, |us| us as f64)
}

/// Nearest-rank percentiles of microsecond samples in milliseconds, one field per
/// `(key, percentile)`; nulls when there are no samples.
pub fn ranks_ms(values_us: &mut [u64], keys: &[(&'static str, f64)]) -> Line {
    values_us.sort_unstable();
    let fields = keys
        .iter()
        .map(|&(key, p)| {
            let value = match values_us.len() {
                0 => Value::Null,
                n => {
                    let idx = ((p / 100.0 * n as f64).ceil() as usize).clamp(1, n) - 1;
                    json!(round3(values_us[idx] as f64 / 1000.0))
                }
            };
            (key, value)
        })
        .collect();
    Line(fields)
}

fn nearest_ranks<T: Ord + Copy>(
    values: &mut [T],
    keys: [&'static str; 3],
    as_f64: impl Fn(T) -> f64,
) -> Line {
    values.sort_unstable();
    let rank = |p: f64| -> Value {
        if values.is_empty() {
            return Value::Null;
        }
        let idx = ((p / 100.0 * values.len() as f64).ceil() as usize).max(1) - 1;
        json!(round3(as_f64(values[idx]) / 1000.0))
    };
    Line(vec![
        (keys[0], rank(50.0)),
        (keys[1], rank(99.0)),
        (keys[2], rank(100.0)),
    ])
}

pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

pub fn micros(d: Duration) -> u64 {
    d.as_micros().min(u64::MAX as u128) as u64
}
