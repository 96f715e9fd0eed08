//! Moving a single SQLite node to cluster mode: every row of the SQLite database copied into
//! an empty PostgreSQL one, in one transaction (all or nothing), with the types each side
//! uses (SQLite's 0/1 → booleans, blobs → `bytea`), the blocks' row IDs kept (derived rows
//! refer to them) and the sequences moved past them, and the search words computed anew for
//! PostgreSQL's `tsvector`. Documents arrive without an owner node (the first node to open
//! one claims it) and log rows at epoch 0.

use postgres::types::{ToSql, Type};
use postgres::Client;
use rusqlite::types::ValueRef;
use rusqlite::Connection;

use super::super::error::{Result, StorageError};

/// How many rows each table received.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ImportSummary {
    pub tables: Vec<(String, u64)>,
}

/// One table to copy: its name, its columns, and which of them are booleans on PostgreSQL.
struct Table {
    name: &'static str,
    columns: &'static [&'static str],
    booleans: &'static [&'static str],
}

/// Columns only PostgreSQL has, with the value imported rows get (SQL).
fn fixed(table: &str) -> Option<(&'static str, &'static str)> {
    // A single node's log was written without an owner epoch: 0, below any claim.
    (table == "doc_ops").then_some(("epoch", "0"))
}

/// In an order the foreign keys accept (folders' parents are set in a second pass).
const TABLES: &[Table] = &[
    Table {
        name: "users",
        columns: &[
            "id",
            "name",
            "display_name",
            "password_hash",
            "is_admin",
            "created_at",
            "deactivated_at",
            "last_seen_at",
        ],
        booleans: &["is_admin"],
    },
    Table {
        name: "api_tokens",
        columns: &[
            "id",
            "user_id",
            "token_hash",
            "label",
            "created_at",
            "last_used_at",
            "scope",
            "expires_at",
        ],
        booleans: &[],
    },
    Table {
        name: "login_sessions",
        columns: &[
            "token_hash",
            "user_id",
            "created_at",
            "expires_at",
            "last_seen_at",
            "user_agent",
        ],
        booleans: &[],
    },
    Table {
        name: "client_owners",
        columns: &["client_id", "user_id", "first_seen"],
        booleans: &[],
    },
    Table {
        name: "teams",
        columns: &["id", "name", "owner_id", "created_at"],
        booleans: &[],
    },
    Table {
        name: "team_members",
        columns: &["team_id", "user_id"],
        booleans: &[],
    },
    Table {
        name: "folders",
        columns: &["id", "owner_id", "name", "created_at"],
        booleans: &[],
    },
    Table {
        name: "documents",
        columns: &[
            "id",
            "owner_id",
            "folder_id",
            "title",
            "title_version",
            "icon",
            "head_seq",
            "log_floor",
            "created_at",
            "updated_at",
            "trashed_at",
            "trashed_by",
        ],
        booleans: &[],
    },
    Table {
        name: "doc_shares",
        columns: &["doc_id", "user_id", "access"],
        booleans: &[],
    },
    Table {
        name: "doc_team_shares",
        columns: &["doc_id", "team_id", "access"],
        booleans: &[],
    },
    Table {
        name: "workspace_folder_shares",
        columns: &["folder_id", "kind", "principal_id", "access"],
        booleans: &[],
    },
    Table {
        name: "block_shares",
        columns: &["doc_id", "block_id", "kind", "principal_id", "access"],
        booleans: &[],
    },
    Table {
        name: "blocks",
        columns: &[
            "rid",
            "id",
            "doc_id",
            "parent_id",
            "order_key",
            "content",
            "type",
            "checked",
            "collapsed",
            "language",
            "conflict_of",
            "conflict_author",
            "conflict_resolved",
            "version",
            "deleted",
            "deleted_at",
            "deleted_by",
            "updated_at",
            "updated_by",
        ],
        booleans: &["checked", "collapsed", "conflict_resolved", "deleted"],
    },
    Table {
        name: "doc_ops",
        columns: &[
            "doc_id",
            "seq",
            "op_id",
            "kind",
            "client_id",
            "user_id",
            "at",
            "entry",
        ],
        booleans: &[],
    },
    Table {
        name: "doc_op_results",
        columns: &["doc_id", "op_id", "result", "at"],
        booleans: &[],
    },
    // The feed's numbers kept: a consumer's cursor carries on across the move.
    Table {
        name: "feed",
        columns: &["pos", "doc_id", "seq"],
        booleans: &[],
    },
    Table {
        name: "block_changes",
        columns: &["doc_id", "block_id", "seq"],
        booleans: &[],
    },
    Table {
        name: "purged_blocks",
        columns: &["id", "doc_id", "purged_at"],
        booleans: &[],
    },
    Table {
        name: "doc_versions",
        columns: &[
            "id",
            "doc_id",
            "seq",
            "at",
            "kind",
            "name",
            "created_by",
            "blocks",
            "raw_bytes",
            "body",
        ],
        booleans: &[],
    },
    Table {
        name: "markdown_cache",
        columns: &["block_rid", "doc_id", "line"],
        booleans: &[],
    },
    Table {
        name: "tags",
        columns: &["id", "name"],
        booleans: &[],
    },
    Table {
        name: "block_tags",
        columns: &["block_id", "tag_id", "doc_id"],
        booleans: &[],
    },
    Table {
        name: "block_links",
        columns: &["block_id", "doc_id", "target_doc_id"],
        booleans: &[],
    },
    Table {
        name: "invites",
        columns: &[
            "id",
            "token_hash",
            "kind",
            "role",
            "user_id",
            "created_by",
            "created_at",
            "expires_at",
            "max_uses",
            "uses",
            "revoked_at",
        ],
        booleans: &[],
    },
    Table {
        name: "invite_uses",
        columns: &["invite_id", "user_id", "user_name", "at"],
        booleans: &[],
    },
    Table {
        name: "user_identities",
        columns: &["issuer", "subject", "user_id", "email", "created_at"],
        booleans: &[],
    },
    // Webhooks go on where they were: their cursor in the feed, a pending batch with its
    // delivery ID. Their secrets are sealed with the node's key: cluster mode needs the same
    // key as `webhooks.key` (the key file's contents).
    Table {
        name: "webhooks",
        columns: &[
            "id",
            "created_by",
            "url",
            "events",
            "doc_ids",
            "secret_sealed",
            "created_at",
            "cursor",
            "paused_at",
            "paused_reason",
            "pending_id",
            "pending_after",
            "pending_to",
            "attempts",
            "failing_since",
            "next_attempt_at",
            "delivered_at",
        ],
        booleans: &[],
    },
    Table {
        name: "webhook_deliveries",
        columns: &[
            "id",
            "webhook_id",
            "delivery_id",
            "attempt",
            "at",
            "entries",
            "cursor",
            "outcome",
            "status",
            "error",
            "ms",
        ],
        booleans: &[],
    },
    Table {
        name: "audit_log",
        columns: &[
            "id",
            "at",
            "actor_id",
            "actor_name",
            "action",
            "target",
            "ip",
            "detail",
        ],
        booleans: &[],
    },
];

static NULL_INT: Option<i64> = None;
static NULL_BOOL: Option<bool> = None;
static NULL_BYTES: Option<Vec<u8>> = None;
static NULL_TEXT: Option<String> = None;

/// A SQLite value as PostgreSQL takes it for its column.
enum Cell {
    Null,
    Int(i64),
    Bool(bool),
    Text(String),
    Bytes(Vec<u8>),
}

fn cell(v: ValueRef<'_>, boolean: bool) -> Result<Cell> {
    Ok(match v {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(i) if boolean => Cell::Bool(i != 0),
        ValueRef::Integer(i) => Cell::Int(i),
        ValueRef::Real(_) => {
            return Err(StorageError::Corrupt(
                "a real number where docsync keeps none".into(),
            ))
        }
        ValueRef::Text(t) => Cell::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Cell::Bytes(b.to_vec()),
    })
}

/// Copies every row of `sqlite` into the empty database behind `pg`, in one transaction.
pub fn import(sqlite: &Connection, pg: &mut Client) -> Result<ImportSummary> {
    let mut tx = pg.transaction()?;
    let busy: i64 = tx
        .query_one(
            "SELECT (SELECT count(*) FROM users) + (SELECT count(*) FROM documents)",
            &[],
        )?
        .get(0);
    if busy > 0 {
        return Err(StorageError::Conflict(
            "the PostgreSQL database already has users or documents: import only into an empty one"
                .into(),
        ));
    }
    let mut summary = ImportSummary::default();
    for t in TABLES {
        let cols = t.columns.join(", ");
        let params: Vec<String> = (1..=t.columns.len()).map(|i| format!("${i}")).collect();
        let (more_cols, more_vals) = match fixed(t.name) {
            Some((c, v)) => (format!(", {c}"), format!(", {v}")),
            None => (String::new(), String::new()),
        };
        let insert = tx.prepare(&format!(
            "INSERT INTO {} ({cols}{more_cols}) VALUES ({}{more_vals})",
            t.name,
            params.join(", ")
        ))?;
        let mut stmt = sqlite.prepare(&format!("SELECT {cols} FROM {}", t.name))?;
        let mut rows = stmt.query([])?;
        let mut n = 0u64;
        while let Some(row) = rows.next()? {
            let mut cells = Vec::with_capacity(t.columns.len());
            for (i, c) in t.columns.iter().enumerate() {
                cells.push(cell(row.get_ref(i)?, t.booleans.contains(c))?);
            }
            let values: Vec<&(dyn ToSql + Sync)> = cells
                .iter()
                .zip(insert.params())
                .map(|(c, ty)| -> &(dyn ToSql + Sync) {
                    match c {
                        // A NULL of the column's own type.
                        Cell::Null if *ty == Type::INT8 => &NULL_INT,
                        Cell::Null if *ty == Type::BOOL => &NULL_BOOL,
                        Cell::Null if *ty == Type::BYTEA => &NULL_BYTES,
                        Cell::Null => &NULL_TEXT,
                        Cell::Int(i) => i,
                        Cell::Bool(b) => b,
                        Cell::Text(s) => s,
                        Cell::Bytes(b) => b,
                    }
                })
                .collect();
            tx.execute(&insert, &values)?;
            n += 1;
        }
        summary.tables.push((t.name.to_string(), n));
    }
    // Folders' parents, now that every folder exists.
    let mut stmt =
        sqlite.prepare("SELECT id, parent_id FROM folders WHERE parent_id IS NOT NULL")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let (id, parent): (String, String) = (row.get(0)?, row.get(1)?);
        tx.execute(
            "UPDATE folders SET parent_id = $2 WHERE id = $1",
            &[&id, &parent],
        )?;
    }
    // Search words for PostgreSQL, from the live blocks' text; sequences past the kept IDs.
    tx.batch_execute(
        "INSERT INTO block_search (block_rid, doc_id, words)
           SELECT rid, doc_id, to_tsvector('simple', unaccent(content)) FROM blocks
            WHERE NOT deleted AND content <> '';
         SELECT setval('blocks_rid_seq', greatest((SELECT max(rid) FROM blocks), 1));
         SELECT setval('tags_id_seq', greatest((SELECT max(id) FROM tags), 1));
         SELECT setval('audit_log_id_seq', greatest((SELECT max(id) FROM audit_log), 1));
         SELECT setval('webhook_deliveries_id_seq',
                       greatest((SELECT max(id) FROM webhook_deliveries), 1));",
    )?;
    tx.commit()?;
    Ok(summary)
}
