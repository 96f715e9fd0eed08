-- A client ID (one browser tab's queue, one script) belongs to the user who first used it.
-- Sessions and leases are keyed by client ID, so another user naming it is refused: an ID
-- a client chose is never a credential. Deleting the user frees their IDs.
CREATE TABLE client_owners (
    client_id  TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    first_seen INTEGER NOT NULL
) WITHOUT ROWID;
