-- Which delete made a tombstone: the opId of the `delete` op (PROTOCOL §2.1 rule 9 restores
-- "the descendants that the same delete removed"). Two deletes in one millisecond share a
-- deleted_at, so deleted_at alone cannot tell them apart. NULL on live blocks and on
-- tombstones written before this column (restore then falls back to deleted_at alone).
ALTER TABLE blocks ADD COLUMN deleted_by TEXT;
