-- The change feed (PROTOCOL §11), as SQLite's 0013 — but several nodes write at once, and a
-- number taken inside a transaction is not its commit order (a later number can commit
-- first, and a reader past it would never see the earlier one). So a write only appends
-- its entries (`id`: insertion order); a feed reader numbers the committed rows (`pos`)
-- afterwards, one numbering at a time across the cluster (an advisory lock), each after
-- every number before it is visible: `pos` is the order entries became visible.
CREATE TABLE feed (
    id     BIGSERIAL PRIMARY KEY,
    pos    BIGINT UNIQUE,
    doc_id TEXT NOT NULL,
    seq    BIGINT NOT NULL
);
CREATE INDEX feed_unnumbered ON feed (id) WHERE pos IS NULL;
CREATE INDEX feed_doc ON feed (doc_id, seq);

INSERT INTO feed (doc_id, seq, pos)
SELECT doc_id, seq, row_number() OVER (ORDER BY at, doc_id, seq) FROM doc_ops;
