-- A bullet shared with everything below it (PROTOCOL §10): its guests see that subtree and
-- nothing else of the document. `block_id` is not a foreign key: a block's rows come and
-- go with compaction, and a share outlives a delete (restoring the bullet brings the view
-- back); the share goes with the document.
CREATE TABLE block_shares (
    doc_id       TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    block_id     TEXT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('user', 'team')),
    principal_id TEXT NOT NULL,
    access       TEXT NOT NULL CHECK (access IN ('read', 'write')),
    PRIMARY KEY (doc_id, block_id, kind, principal_id)
) WITHOUT ROWID;
CREATE INDEX block_shares_principal ON block_shares(kind, principal_id);

-- Rights depend on it: the access epoch moves with every change (see 0004).
CREATE TRIGGER access_epoch_block_shares_i AFTER INSERT ON block_shares BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_block_shares_u AFTER UPDATE ON block_shares BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_block_shares_d AFTER DELETE ON block_shares BEGIN UPDATE access_epoch SET n = n + 1; END;
