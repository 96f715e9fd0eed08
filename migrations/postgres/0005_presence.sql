-- A node's presence: besides its TTL row, a live incarnation holds a session advisory lock
-- (class 1983, key `presence_key`) on the connection it renews with. A crashed node's
-- connections are closed by its kernel and PostgreSQL drops the lock at once, so its
-- documents can be claimed at once instead of after the TTL. A paused node keeps its lock
-- and is dead only when its TTL runs out. Safety still rests on the epoch alone.
ALTER TABLE nodes ADD COLUMN presence_key BIGINT;
CREATE SEQUENCE node_presence_keys MAXVALUE 2147483647 CYCLE;

-- Whether incarnation `n` is alive: its row says so and has not expired, and, when it took a
-- presence lock, the session holding that lock still exists.
CREATE FUNCTION docsync_alive(n_status TEXT, n_expires TIMESTAMPTZ, n_key BIGINT)
RETURNS BOOLEAN LANGUAGE sql STABLE AS $$
    SELECT n_status = 'live' AND n_expires > now()
       AND (n_key IS NULL OR EXISTS (
            SELECT 1 FROM pg_locks l
             WHERE l.locktype = 'advisory' AND l.granted
               AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
               AND l.classid = 1983 AND l.objid = n_key::oid AND l.objsubid = 2))
$$;
