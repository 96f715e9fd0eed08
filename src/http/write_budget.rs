//! Write budgets: how many bytes of `/sync` bodies with ops a user, and a document, may send
//! per minute (`limits.user_write_bytes_per_minute`, `limits.doc_write_bytes_per_minute`;
//! 0 turns one off). Without them one editor repeating maximal syncs grew the database by
//! 80 MB/s. Each budget is a bucket that fills at its rate up to one minute's worth; a
//! write that does not fit in both buckets is refused whole (429 `write_budget` with
//! `Retry-After`) and nothing of it is charged. Time is the server's clock (movable in
//! tests). In memory: a restart forgives. The total size of a document is the document
//! actor's business (`limits.max_document_bytes`, 413 `document_full`).

use std::collections::HashMap;
use std::sync::Mutex;

use serde::Serialize;

/// Buckets kept at most per kind before full ones are forgotten (a full bucket is the same
/// as none).
const PRUNE_ABOVE: usize = 10_000;

#[derive(Clone, Copy)]
struct Bucket {
    /// Bytes that may be written now.
    level: f64,
    at_ms: i64,
}

impl Bucket {
    fn refilled(self, per_minute: u64, now_ms: i64) -> Bucket {
        let cap = per_minute as f64;
        let gained = (now_ms - self.at_ms).max(0) as f64 * cap / 60_000.0;
        Bucket {
            level: (self.level + gained).min(cap),
            at_ms: now_ms.max(self.at_ms),
        }
    }
}

/// Which budget refused a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    User,
    Document,
}

impl Budget {
    pub fn label(self) -> &'static str {
        match self {
            Budget::User => "user_rate",
            Budget::Document => "document_rate",
        }
    }
}

/// What a user or a document has left (for the owner's and the operator's view).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Allowance {
    /// 0: no budget.
    pub bytes_per_minute: u64,
    pub available_bytes: u64,
}

#[derive(Default)]
struct Buckets {
    users: HashMap<String, Bucket>,
    docs: HashMap<String, Bucket>,
}

pub struct WriteBudgets {
    user_rate: u64,
    doc_rate: u64,
    buckets: Mutex<Buckets>,
}

impl WriteBudgets {
    pub fn new(user_rate: u64, doc_rate: u64) -> WriteBudgets {
        WriteBudgets {
            user_rate,
            doc_rate,
            buckets: Mutex::new(Buckets::default()),
        }
    }

    /// Takes `bytes` from the user's and the document's budgets, or neither: then the budget
    /// that refused and the seconds until the write would fit. Without a document (an import
    /// makes new ones) only the user's budget is asked.
    pub fn charge(
        &self,
        user: &str,
        doc: Option<&str>,
        bytes: u64,
        now_ms: i64,
    ) -> Result<(), (Budget, u64)> {
        let mut b = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        let b = &mut *b;
        let doc_rate = if doc.is_some() { self.doc_rate } else { 0 };
        let doc = doc.unwrap_or("");
        let checks = [
            (Budget::User, self.user_rate, b.users.get(user).copied()),
            (Budget::Document, doc_rate, b.docs.get(doc).copied()),
        ];
        let mut after = [None, None];
        for (i, (budget, rate, bucket)) in checks.into_iter().enumerate() {
            if rate == 0 {
                continue;
            }
            let full = Bucket {
                level: rate as f64,
                at_ms: now_ms,
            };
            let now = bucket.unwrap_or(full).refilled(rate, now_ms);
            if now.level < bytes as f64 {
                let missing = bytes as f64 - now.level;
                let wait_ms = missing * 60_000.0 / rate as f64;
                return Err((budget, (wait_ms / 1000.0).ceil().max(1.0) as u64));
            }
            after[i] = Some(Bucket {
                level: now.level - bytes as f64,
                at_ms: now.at_ms,
            });
        }
        for (map, bucket, key) in [(&mut b.users, after[0], user), (&mut b.docs, after[1], doc)] {
            if let Some(bucket) = bucket {
                if map.len() > PRUNE_ABOVE {
                    map.retain(|_, _| false);
                }
                map.insert(key.to_string(), bucket);
            }
        }
        Ok(())
    }

    /// The most one user may write in a minute (0: no budget).
    pub fn user_rate(&self) -> u64 {
        self.user_rate
    }

    pub fn user(&self, user: &str, now_ms: i64) -> Allowance {
        let b = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        allowance(self.user_rate, b.users.get(user).copied(), now_ms)
    }

    pub fn document(&self, doc: &str, now_ms: i64) -> Allowance {
        let b = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        allowance(self.doc_rate, b.docs.get(doc).copied(), now_ms)
    }
}

fn allowance(rate: u64, bucket: Option<Bucket>, now_ms: i64) -> Allowance {
    let level = match bucket {
        Some(b) => b.refilled(rate, now_ms).level,
        None => rate as f64,
    };
    Allowance {
        bytes_per_minute: rate,
        available_bytes: level as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_refills_at_its_rate_and_refuses_whole_writes() {
        let b = WriteBudgets::new(60_000, 120_000);
        assert!(b.charge("u", Some("d"), 50_000, 0).is_ok());
        // 10,000 left for the user: 20,000 more must wait 10 s for the missing 10,000.
        assert_eq!(b.charge("u", Some("d"), 20_000, 0), Err((Budget::User, 10)));
        // Nothing was charged by the refusal: the document still has 70,000.
        assert_eq!(b.document("d", 0).available_bytes, 70_000);
        assert!(b.charge("u", Some("d"), 20_000, 10_000).is_ok());
        // Another user on the same document meets the document's budget.
        // (the document refilled 20,000 in those 10 s: 90,000 - 20,000 = 70,000 left).
        assert!(b.charge("v", Some("d"), 60_000, 10_000).is_ok());
        assert_eq!(
            b.charge("w", Some("d"), 20_000, 10_000).map_err(|e| e.0),
            Err(Budget::Document)
        );
        // Off when 0.
        let off = WriteBudgets::new(0, 0);
        assert!(off.charge("u", Some("d"), u64::MAX / 2, 0).is_ok());
    }
}
