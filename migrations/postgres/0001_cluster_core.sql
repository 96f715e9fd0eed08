-- docsync in cluster mode (PostgreSQL >= 15): membership, document ownership with a fencing
-- epoch, and the document core (blocks, the op log, idempotency results, which entries
-- changed which bullet). The rest of the schema (accounts, sharing, derived data, history)
-- follows the SQLite migrations in later files.

-- One row per incarnation of a node: `inc` is random per start, so a node that fenced
-- itself and came back is a new member. Liveness is `expires_at` on the database's clock.
CREATE TABLE nodes (
    inc           TEXT PRIMARY KEY,
    node_id       TEXT NOT NULL,
    internal_addr TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('live', 'left', 'fenced')),
    started_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX nodes_live ON nodes (expires_at) WHERE status = 'live';

-- `owner_epoch` moves on every claim and release: every head-moving write carries
-- `AND owner_epoch = $epoch`, so an owner that lost the document can never append.
CREATE TABLE documents (
    id            TEXT PRIMARY KEY,
    owner_id      TEXT NOT NULL,
    folder_id     TEXT,
    title         TEXT NOT NULL DEFAULT '',
    title_version BIGINT NOT NULL DEFAULT 1,
    icon          TEXT,
    head_seq      BIGINT NOT NULL DEFAULT 0,
    log_floor     BIGINT NOT NULL DEFAULT 0,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    trashed_at    BIGINT,
    trashed_by    TEXT,
    owner_node    TEXT,
    owner_inc     TEXT,
    owner_epoch   BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE blocks (
    rid               BIGSERIAL PRIMARY KEY,
    id                TEXT NOT NULL UNIQUE,
    doc_id            TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    parent_id         TEXT,
    order_key         TEXT NOT NULL,
    content           TEXT NOT NULL,
    type              TEXT NOT NULL DEFAULT 'bullet',
    checked           BOOLEAN NOT NULL DEFAULT false,
    collapsed         BOOLEAN NOT NULL DEFAULT false,
    language          TEXT,
    conflict_of       TEXT,
    conflict_author   TEXT,
    conflict_resolved BOOLEAN NOT NULL DEFAULT false,
    version           BIGINT NOT NULL,
    deleted           BOOLEAN NOT NULL DEFAULT false,
    deleted_at        BIGINT,
    deleted_by        TEXT,
    updated_at        BIGINT NOT NULL,
    updated_by        TEXT NOT NULL
);
CREATE INDEX blocks_doc ON blocks (doc_id);

-- Each entry stores the epoch of the owner that wrote it: epochs never decrease along seq.
CREATE TABLE doc_ops (
    doc_id    TEXT NOT NULL,
    seq       BIGINT NOT NULL,
    op_id     TEXT NOT NULL,
    kind      TEXT NOT NULL,
    client_id TEXT NOT NULL,
    user_id   TEXT NOT NULL,
    at        BIGINT NOT NULL,
    epoch     BIGINT NOT NULL,
    entry     TEXT NOT NULL,
    PRIMARY KEY (doc_id, seq)
);

CREATE TABLE doc_op_results (
    doc_id TEXT NOT NULL,
    op_id  TEXT NOT NULL,
    result TEXT NOT NULL,
    at     BIGINT NOT NULL,
    PRIMARY KEY (doc_id, op_id)
);

CREATE TABLE block_changes (
    doc_id   TEXT NOT NULL,
    block_id TEXT NOT NULL,
    seq      BIGINT NOT NULL,
    PRIMARY KEY (doc_id, block_id, seq)
);

CREATE TABLE purged_blocks (
    id        TEXT PRIMARY KEY,
    doc_id    TEXT NOT NULL,
    purged_at BIGINT NOT NULL
);
