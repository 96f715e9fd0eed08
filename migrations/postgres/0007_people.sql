-- Teams run docsync themselves (PROTOCOL §9; as SQLite's 0009): people deactivated without losing their work,
-- API tokens with a scope and an expiry, login sessions a person can see and end elsewhere,
-- invitation and password-reset links, and the audit log of every security event.

-- A deactivated user keeps their documents; none of their sessions or tokens resolves.
ALTER TABLE users ADD COLUMN deactivated_at BIGINT;
-- The last sign-in (a session made), for the admins' list of people.
ALTER TABLE users ADD COLUMN last_seen_at BIGINT;

-- 'read' never writes, 'write' does what its user may, 'admin' also the admin endpoints.
-- Tokens made before scopes existed could do everything their user could: 'admin'.
ALTER TABLE api_tokens ADD COLUMN scope TEXT NOT NULL DEFAULT 'admin'
    CHECK (scope IN ('read', 'write', 'admin'));
ALTER TABLE api_tokens ADD COLUMN expires_at BIGINT;

-- What the "signed in on" list shows of a session.
ALTER TABLE login_sessions ADD COLUMN user_agent TEXT NOT NULL DEFAULT '';

-- A link that lets someone in: 'join' makes a new account (as a member or an admin),
-- 'reset' sets the password of `user_id`. Only the SHA-256 of the link's secret is kept.
CREATE TABLE invites (
    id          TEXT PRIMARY KEY,
    token_hash  TEXT NOT NULL UNIQUE,
    kind        TEXT NOT NULL CHECK (kind IN ('join', 'reset')),
    role        TEXT NOT NULL DEFAULT 'member' CHECK (role IN ('member', 'admin')),
    user_id     TEXT REFERENCES users(id) ON DELETE CASCADE,
    created_by  TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    max_uses    BIGINT NOT NULL,
    uses        BIGINT NOT NULL DEFAULT 0,
    revoked_at  BIGINT
);
CREATE INDEX invites_created ON invites(created_at);

-- Who used an invitation, and when.
CREATE TABLE invite_uses (
    invite_id TEXT NOT NULL REFERENCES invites(id) ON DELETE CASCADE,
    user_id   TEXT NOT NULL,
    user_name TEXT NOT NULL,
    at        BIGINT NOT NULL
);
CREATE INDEX invite_uses_invite ON invite_uses(invite_id);

-- One row per security event, written in the transaction of the change it records. The
-- actor's and target's names are copied: the log outlives deleted accounts.
CREATE TABLE audit_log (
    id         BIGSERIAL PRIMARY KEY,
    at         BIGINT NOT NULL,
    actor_id   TEXT,
    actor_name TEXT,
    action     TEXT NOT NULL,
    target     TEXT NOT NULL DEFAULT '',
    ip         TEXT NOT NULL DEFAULT '',
    detail     TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_at ON audit_log(at);
CREATE INDEX audit_log_actor ON audit_log(actor_id, id);
CREATE INDEX audit_log_action ON audit_log(action, id);
