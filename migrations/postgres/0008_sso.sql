-- Single sign-on with OpenID Connect (PROTOCOL §9; as SQLite's 0010): who a provider's account is here, and
-- the sign-ins under way.

-- A provider's account (its issuer and `sub`, never a changeable email) is one person here.
CREATE TABLE user_identities (
    issuer     TEXT NOT NULL,
    subject    TEXT NOT NULL,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    email      TEXT,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (issuer, subject)
);
CREATE INDEX user_identities_user ON user_identities(user_id);

-- A sign-in sent to the provider and not back yet: found by the SHA-256 of its `state`,
-- used once, gone after ten minutes. Kept in the database so any node of a cluster can
-- finish what another began.
CREATE TABLE sso_flows (
    state_hash    TEXT PRIMARY KEY,
    nonce         TEXT NOT NULL,
    pkce_verifier TEXT NOT NULL,
    next          TEXT NOT NULL,
    invite        TEXT,
    expires_at    BIGINT NOT NULL
);
