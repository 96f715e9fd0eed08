-- Accounts, teams, folders and shares (as SQLite's 0001, 0002, 0005), and the access epoch
-- (as SQLite's 0004): a counter every change of anything a role or a credential depends on
-- moves in the same transaction — and announces with NOTIFY, which every node LISTENs to
-- (and polls each second besides, as NOTIFY is not delivered to a node that was away).

CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    display_name  TEXT NOT NULL,
    password_hash TEXT,
    is_admin      BOOLEAN NOT NULL DEFAULT false,
    created_at    BIGINT NOT NULL
);
-- SQLite's `COLLATE NOCASE`: one account per name whatever its case.
CREATE UNIQUE INDEX users_name ON users (lower(name));

CREATE TABLE api_tokens (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    token_hash   TEXT NOT NULL UNIQUE,
    label        TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL,
    last_used_at BIGINT
);
CREATE INDEX api_tokens_user ON api_tokens (user_id);

CREATE TABLE login_sessions (
    token_hash   TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL
);
CREATE INDEX login_sessions_user ON login_sessions (user_id);

CREATE TABLE client_owners (
    client_id  TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    first_seen BIGINT NOT NULL
);

CREATE TABLE teams (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    owner_id   TEXT NOT NULL REFERENCES users(id),
    created_at BIGINT NOT NULL
);

CREATE TABLE team_members (
    team_id TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    PRIMARY KEY (team_id, user_id)
);
CREATE INDEX team_members_user ON team_members (user_id);

CREATE TABLE folders (
    id         TEXT PRIMARY KEY,
    owner_id   TEXT NOT NULL REFERENCES users(id),
    parent_id  TEXT REFERENCES folders(id),
    name       TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX folders_parent ON folders (parent_id);
CREATE INDEX folders_owner ON folders (owner_id);

CREATE TABLE doc_shares (
    doc_id  TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    access  TEXT NOT NULL CHECK (access IN ('read', 'write')),
    PRIMARY KEY (doc_id, user_id)
);
CREATE INDEX doc_shares_user ON doc_shares (user_id);

CREATE TABLE doc_team_shares (
    doc_id  TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    team_id TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    access  TEXT NOT NULL CHECK (access IN ('read', 'write')),
    PRIMARY KEY (doc_id, team_id)
);
CREATE INDEX doc_team_shares_team ON doc_team_shares (team_id);

CREATE TABLE workspace_folder_shares (
    folder_id    TEXT NOT NULL REFERENCES folders(id) ON DELETE CASCADE,
    kind         TEXT NOT NULL CHECK (kind IN ('user', 'team')),
    principal_id TEXT NOT NULL,
    access       TEXT NOT NULL CHECK (access IN ('read', 'write')),
    PRIMARY KEY (folder_id, kind, principal_id)
);
CREATE INDEX workspace_folder_shares_principal ON workspace_folder_shares (kind, principal_id);

CREATE INDEX documents_owner ON documents (owner_id);
CREATE INDEX documents_folder ON documents (folder_id);
CREATE INDEX documents_trashed ON documents (trashed_at) WHERE trashed_at IS NOT NULL;

CREATE TABLE access_epoch (
    id INT PRIMARY KEY CHECK (id = 1),
    n  BIGINT NOT NULL
);
INSERT INTO access_epoch (id, n) VALUES (1, 0);

CREATE FUNCTION docsync_access_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE access_epoch SET n = n + 1;
    PERFORM pg_notify('docsync_access', '');
    RETURN NULL;
END $$;

CREATE TRIGGER access_users AFTER INSERT OR UPDATE OR DELETE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION docsync_access_changed();
CREATE TRIGGER access_tokens AFTER INSERT OR UPDATE OR DELETE ON api_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION docsync_access_changed();
CREATE TRIGGER access_sessions AFTER INSERT OR UPDATE OR DELETE ON login_sessions
    FOR EACH STATEMENT EXECUTE FUNCTION docsync_access_changed();
CREATE TRIGGER access_teams AFTER INSERT OR UPDATE OR DELETE ON teams
    FOR EACH STATEMENT EXECUTE FUNCTION docsync_access_changed();
CREATE TRIGGER access_members AFTER INSERT OR UPDATE OR DELETE ON team_members
    FOR EACH STATEMENT EXECUTE FUNCTION docsync_access_changed();
CREATE TRIGGER access_folders AFTER INSERT OR UPDATE OR DELETE ON folders
    FOR EACH STATEMENT EXECUTE FUNCTION docsync_access_changed();
CREATE TRIGGER access_doc_shares AFTER INSERT OR UPDATE OR DELETE ON doc_shares
    FOR EACH STATEMENT EXECUTE FUNCTION docsync_access_changed();
CREATE TRIGGER access_team_shares AFTER INSERT OR UPDATE OR DELETE ON doc_team_shares
    FOR EACH STATEMENT EXECUTE FUNCTION docsync_access_changed();
CREATE TRIGGER access_folder_shares AFTER INSERT OR UPDATE OR DELETE ON workspace_folder_shares
    FOR EACH STATEMENT EXECUTE FUNCTION docsync_access_changed();
-- Documents: only what rights depend on (not the head, title or icon every edit touches,
-- nor the owner node and epoch every claim moves).
CREATE TRIGGER access_docs_ins_del AFTER INSERT OR DELETE ON documents
    FOR EACH STATEMENT EXECUTE FUNCTION docsync_access_changed();
CREATE TRIGGER access_docs_upd AFTER UPDATE OF owner_id, folder_id, trashed_at ON documents
    FOR EACH STATEMENT EXECUTE FUNCTION docsync_access_changed();
