-- A node alive for the database may still be unreachable for the other nodes (a network cut
-- between them, not to the database): it renews its membership as ever while every request
-- forwarded to it fails. The nodes that cannot reach an incarnation say so here; once more
-- than half of the other live incarnations have said so within the TTL, its membership is
-- ended ('evicted'): its renewals fail, it fences itself, and its documents can be claimed.
CREATE TABLE node_suspicions (
    suspect_inc TEXT NOT NULL,
    by_inc      TEXT NOT NULL,
    at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (suspect_inc, by_inc)
);

ALTER TABLE nodes DROP CONSTRAINT nodes_status_check;
ALTER TABLE nodes ADD CONSTRAINT nodes_status_check
    CHECK (status IN ('live', 'left', 'fenced', 'evicted'));
