-- The change feed (PROTOCOL §11): every log entry of every document, numbered in commit
-- order across documents. SQLite has one writer at a time, so the number given inside the
-- write's transaction is the commit order. AUTOINCREMENT: a number is never given twice,
-- even after the rows of a deleted document go, so a consumer's cursor only moves forward.
CREATE TABLE feed (
    pos    INTEGER PRIMARY KEY AUTOINCREMENT,
    doc_id TEXT NOT NULL,
    seq    INTEGER NOT NULL
);
CREATE INDEX feed_doc ON feed (doc_id, seq);

-- The entries logged before the feed existed, in the order they were made.
INSERT INTO feed (doc_id, seq) SELECT doc_id, seq FROM doc_ops ORDER BY at, doc_id, seq;
