-- History (as SQLite's 0008): versions, each the whole live state at one seq, compressed;
-- reserved in the document's op order with `body` NULL and filled once compressed. The
-- trash's columns are in 0001 (documents.trashed_at, trashed_by).
CREATE TABLE doc_versions (
    id          TEXT PRIMARY KEY,
    doc_id      TEXT NOT NULL,
    seq         BIGINT NOT NULL,
    at          BIGINT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('auto', 'named', 'restore')),
    name        TEXT,
    created_by  TEXT,
    blocks      BIGINT NOT NULL,
    raw_bytes   BIGINT NOT NULL,
    body        BYTEA
);
CREATE INDEX doc_versions_doc ON doc_versions (doc_id, seq);

CREATE INDEX blocks_open_conflicts ON blocks (doc_id, updated_at)
    WHERE conflict_of IS NOT NULL AND conflict_resolved = false AND deleted = false;
