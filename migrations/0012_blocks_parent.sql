-- A bullet guest's search, tags and backlinks walk down from their shared bullets
-- (PROTOCOL §10): children by parent, one index probe per bullet instead of a scan of the
-- whole table per level.
CREATE INDEX blocks_parent ON blocks(parent_id);
