-- A bullet shared with everything below it (PROTOCOL §10; as SQLite's 0011).
CREATE TABLE block_shares (
    doc_id       TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    block_id     TEXT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('user', 'team')),
    principal_id TEXT NOT NULL,
    access       TEXT NOT NULL CHECK (access IN ('read', 'write')),
    PRIMARY KEY (doc_id, block_id, kind, principal_id)
);
CREATE INDEX block_shares_principal ON block_shares (kind, principal_id);
CREATE TRIGGER access_block_shares AFTER INSERT OR UPDATE OR DELETE ON block_shares
    FOR EACH STATEMENT EXECUTE FUNCTION docsync_access_changed();
