-- docsync core schema: accounts, documents, the block tree, the op log, idempotency
-- results, purged IDs and derived data. Teams, folders and shares arrive in 0002.

CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE COLLATE NOCASE,
    display_name  TEXT NOT NULL,
    password_hash TEXT,
    is_admin      INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL
);

CREATE TABLE api_tokens (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    token_hash   TEXT NOT NULL UNIQUE,
    label        TEXT NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER
);
CREATE INDEX api_tokens_user ON api_tokens(user_id);

CREATE TABLE documents (
    id            TEXT PRIMARY KEY,
    owner_id      TEXT NOT NULL REFERENCES users(id),
    folder_id     TEXT,
    title         TEXT NOT NULL DEFAULT '',
    title_version INTEGER NOT NULL DEFAULT 1,
    icon          TEXT,
    head_seq      INTEGER NOT NULL DEFAULT 0,
    log_floor     INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);
CREATE INDEX documents_owner ON documents(owner_id);
CREATE INDEX documents_folder ON documents(folder_id);

-- `rid` gives derived tables (FTS5, markdown cache) a cheap integer key.
CREATE TABLE blocks (
    rid               INTEGER PRIMARY KEY,
    id                TEXT NOT NULL UNIQUE,
    doc_id            TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    parent_id         TEXT,
    order_key         TEXT NOT NULL,
    content           TEXT NOT NULL,
    type              TEXT NOT NULL DEFAULT 'bullet',
    checked           INTEGER NOT NULL DEFAULT 0,
    collapsed         INTEGER NOT NULL DEFAULT 0,
    language          TEXT,
    conflict_of       TEXT,
    conflict_author   TEXT,
    conflict_resolved INTEGER NOT NULL DEFAULT 0,
    version           INTEGER NOT NULL,
    deleted           INTEGER NOT NULL DEFAULT 0,
    deleted_at        INTEGER,
    updated_at        INTEGER NOT NULL,
    updated_by        TEXT NOT NULL
);
CREATE INDEX blocks_doc ON blocks(doc_id);
CREATE INDEX blocks_tombstones ON blocks(deleted_at) WHERE deleted = 1;

-- The op log: one row per seq (PROTOCOL §2.2). `entry` is the whole log entry as sent to
-- clients (its effects hold resulting state); the other columns serve queries.
CREATE TABLE doc_ops (
    doc_id    TEXT NOT NULL,
    seq       INTEGER NOT NULL,
    op_id     TEXT NOT NULL,
    kind      TEXT NOT NULL,
    client_id TEXT NOT NULL,
    user_id   TEXT NOT NULL,
    at        INTEGER NOT NULL,
    entry     TEXT NOT NULL,
    PRIMARY KEY (doc_id, seq)
) WITHOUT ROWID;

-- Idempotency: the answer given to every op ID, so a retry gets the same answer.
CREATE TABLE doc_op_results (
    doc_id TEXT NOT NULL,
    op_id  TEXT NOT NULL,
    result TEXT NOT NULL,
    at     INTEGER NOT NULL,
    PRIMARY KEY (doc_id, op_id)
) WITHOUT ROWID;
CREATE INDEX doc_op_results_at ON doc_op_results(at);

-- Blocks removed for good by compaction; remembered so late edits are recognised.
CREATE TABLE purged_blocks (
    id        TEXT PRIMARY KEY,
    doc_id    TEXT NOT NULL,
    purged_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX purged_blocks_doc ON purged_blocks(doc_id);

-- Derived data, written in the same transaction as the change (rule 11).
-- Markdown is cached per live block (its line without indentation); the document's
-- markdown is these lines in document order, indented by depth.
CREATE TABLE markdown_cache (
    block_rid INTEGER PRIMARY KEY,
    doc_id    TEXT NOT NULL,
    line      TEXT NOT NULL
);
CREATE INDEX markdown_cache_doc ON markdown_cache(doc_id);

CREATE VIRTUAL TABLE block_search USING fts5(content, tokenize = 'unicode61 remove_diacritics 2');

CREATE TABLE tags (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);

CREATE TABLE block_tags (
    block_id TEXT NOT NULL,
    tag_id   INTEGER NOT NULL REFERENCES tags(id),
    doc_id   TEXT NOT NULL,
    PRIMARY KEY (block_id, tag_id)
) WITHOUT ROWID;
CREATE INDEX block_tags_tag ON block_tags(tag_id, doc_id);
CREATE INDEX block_tags_doc ON block_tags(doc_id);
