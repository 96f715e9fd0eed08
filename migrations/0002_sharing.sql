-- Accounts with passwords and login sessions; teams; nested folders; shares by user, by
-- team and by folder (PROTOCOL §3 "Roles").

-- Login sessions: only the SHA-256 of the cookie value is stored.
CREATE TABLE login_sessions (
    token_hash   TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX login_sessions_user ON login_sessions(user_id);

CREATE TABLE teams (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    owner_id   TEXT NOT NULL REFERENCES users(id),
    created_at INTEGER NOT NULL
);

CREATE TABLE team_members (
    team_id TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    PRIMARY KEY (team_id, user_id)
) WITHOUT ROWID;
CREATE INDEX team_members_user ON team_members(user_id);

CREATE TABLE folders (
    id         TEXT PRIMARY KEY,
    owner_id   TEXT NOT NULL REFERENCES users(id),
    parent_id  TEXT REFERENCES folders(id),
    name       TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX folders_parent ON folders(parent_id);
CREATE INDEX folders_owner ON folders(owner_id);

CREATE TABLE doc_shares (
    doc_id  TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    access  TEXT NOT NULL CHECK (access IN ('read', 'write')),
    PRIMARY KEY (doc_id, user_id)
) WITHOUT ROWID;
CREATE INDEX doc_shares_user ON doc_shares(user_id);

CREATE TABLE doc_team_shares (
    doc_id  TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    team_id TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    access  TEXT NOT NULL CHECK (access IN ('read', 'write')),
    PRIMARY KEY (doc_id, team_id)
) WITHOUT ROWID;
CREATE INDEX doc_team_shares_team ON doc_team_shares(team_id);

-- A folder share reaches every document in the folder and in its subfolders.
CREATE TABLE workspace_folder_shares (
    folder_id    TEXT NOT NULL REFERENCES folders(id) ON DELETE CASCADE,
    kind         TEXT NOT NULL CHECK (kind IN ('user', 'team')),
    principal_id TEXT NOT NULL,
    access       TEXT NOT NULL CHECK (access IN ('read', 'write')),
    PRIMARY KEY (folder_id, kind, principal_id)
) WITHOUT ROWID;
CREATE INDEX workspace_folder_shares_principal ON workspace_folder_shares(kind, principal_id);
