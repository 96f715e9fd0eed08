-- Webhooks (PROTOCOL §11), as SQLite's 0014: the change feed pushed to a receiver, in
-- order, at least once.
-- `cursor` is the feed position delivered through. A batch is cut once and kept here
-- (`pending_*`) before it is sent: every retry — after a failure or a restart — sends the
-- same entries under the same delivery ID, so a receiver can drop a repeat.
-- `secret_sealed` is the signing secret encrypted with the server's webhook key (it cannot
-- be hashed: every delivery is signed with it); the key is not in the database.
CREATE TABLE webhooks (
    id              TEXT PRIMARY KEY,
    created_by      TEXT NOT NULL,
    url             TEXT NOT NULL,
    events          TEXT NOT NULL,
    doc_ids         TEXT,
    secret_sealed   TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    cursor          BIGINT NOT NULL,
    paused_at       BIGINT,
    paused_reason   TEXT,
    pending_id      TEXT,
    pending_after   BIGINT,
    pending_to      BIGINT,
    attempts        BIGINT NOT NULL DEFAULT 0,
    failing_since   BIGINT,
    next_attempt_at BIGINT,
    delivered_at    BIGINT,
    lease_node      TEXT,
    lease_until     BIGINT
);

-- The recent attempts of each webhook (trimmed to the newest few hundred per webhook).
CREATE TABLE webhook_deliveries (
    id          BIGSERIAL PRIMARY KEY,
    webhook_id  TEXT NOT NULL,
    delivery_id TEXT NOT NULL,
    attempt     BIGINT NOT NULL,
    at          BIGINT NOT NULL,
    entries     BIGINT NOT NULL,
    cursor      TEXT NOT NULL,
    outcome     TEXT NOT NULL,
    status      BIGINT,
    error       TEXT,
    ms          BIGINT NOT NULL
);
CREATE INDEX webhook_deliveries_hook ON webhook_deliveries (webhook_id, id);
