-- Versions (PROTOCOL §8): a document's whole live state at one `seq`, deflate-compressed
-- JSON that stands on its own — log compaction never touches it; only the versions'
-- own retention (or the document's purge) removes a row. `kind`: 'auto' (hourly when
-- changed, thinned to daily), 'named' (kept until an editor deletes it), 'restore' (kept
-- right before a restore, retained like an automatic one). A row is reserved in the
-- document's op order with `body` NULL and filled once compressed (off the writer); rows
-- never filled (a crash in between) are not versions and are cleared.
CREATE TABLE doc_versions (
    id          TEXT PRIMARY KEY,
    doc_id      TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    at          INTEGER NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('auto', 'named', 'restore')),
    name        TEXT,
    created_by  TEXT,
    blocks      INTEGER NOT NULL,
    raw_bytes   INTEGER NOT NULL,
    body        BLOB
);
CREATE INDEX doc_versions_doc ON doc_versions(doc_id, seq);

-- The trash: a deleted document keeps every row (blocks, log, shares, versions) and is
-- invisible to the role function until its owner restores it or the period ends.
ALTER TABLE documents ADD COLUMN trashed_at INTEGER;
ALTER TABLE documents ADD COLUMN trashed_by TEXT;
CREATE INDEX documents_trashed ON documents(trashed_at) WHERE trashed_at IS NOT NULL;
-- Trashing or restoring a document changes who may read it: the access epoch moves, so open
-- streams are re-checked and cached decisions dropped.
CREATE TRIGGER access_epoch_docs_trash AFTER UPDATE OF trashed_at ON documents BEGIN UPDATE access_epoch SET n = n + 1; END;

-- Open conflict copies per document, for the conflict review (`GET /conflicts`).
CREATE INDEX blocks_open_conflicts ON blocks(doc_id, updated_at)
    WHERE conflict_of IS NOT NULL AND conflict_resolved = 0 AND deleted = 0;
