-- Which log entries changed which bullet: a bullet's own history (PROTOCOL §8) is a range
-- of this index joined to the log, newest first, however long the document's log. Written
-- with the log entry in the same transaction; removed with it by compaction.
CREATE TABLE block_changes (
    doc_id   TEXT NOT NULL,
    block_id TEXT NOT NULL,
    seq      INTEGER NOT NULL,
    PRIMARY KEY (doc_id, block_id, seq)
) WITHOUT ROWID;
INSERT OR IGNORE INTO block_changes (doc_id, block_id, seq)
    SELECT o.doc_id, json_extract(e.value, '$.block.id'), o.seq
    FROM doc_ops o, json_each(o.entry, '$.effects') e
    WHERE json_extract(e.value, '$.e') = 'block';
INSERT OR IGNORE INTO block_changes (doc_id, block_id, seq)
    SELECT o.doc_id, b.value, o.seq
    FROM doc_ops o, json_each(o.entry, '$.effects') e, json_each(e.value, '$.blockIds') b
    WHERE json_extract(e.value, '$.e') = 'purge';
