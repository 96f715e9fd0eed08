-- A counter that moves whenever anything a role or a credential depends on changes: users,
-- tokens, login sessions, teams and their members, folders, every kind of share, and a
-- document's existence, owner or folder. The server caches "who is this secret, what may
-- they do with this document" and drops the cache as soon as it sees the counter move —
-- also when the change came from another process (the CLI), which is why it is a row the
-- triggers keep and not a number in the server's memory.
CREATE TABLE access_epoch (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n  INTEGER NOT NULL
);
INSERT INTO access_epoch (id, n) VALUES (1, 0);

CREATE TRIGGER access_epoch_users_i AFTER INSERT ON users BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_users_u AFTER UPDATE ON users BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_users_d AFTER DELETE ON users BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_tokens_i AFTER INSERT ON api_tokens BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_tokens_u AFTER UPDATE ON api_tokens BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_tokens_d AFTER DELETE ON api_tokens BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_sessions_i AFTER INSERT ON login_sessions BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_sessions_u AFTER UPDATE ON login_sessions BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_sessions_d AFTER DELETE ON login_sessions BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_teams_i AFTER INSERT ON teams BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_teams_u AFTER UPDATE ON teams BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_teams_d AFTER DELETE ON teams BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_members_i AFTER INSERT ON team_members BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_members_u AFTER UPDATE ON team_members BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_members_d AFTER DELETE ON team_members BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_folders_i AFTER INSERT ON folders BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_folders_u AFTER UPDATE ON folders BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_folders_d AFTER DELETE ON folders BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_doc_shares_i AFTER INSERT ON doc_shares BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_doc_shares_u AFTER UPDATE ON doc_shares BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_doc_shares_d AFTER DELETE ON doc_shares BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_team_shares_i AFTER INSERT ON doc_team_shares BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_team_shares_u AFTER UPDATE ON doc_team_shares BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_team_shares_d AFTER DELETE ON doc_team_shares BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_folder_shares_i AFTER INSERT ON workspace_folder_shares BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_folder_shares_u AFTER UPDATE ON workspace_folder_shares BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_folder_shares_d AFTER DELETE ON workspace_folder_shares BEGIN UPDATE access_epoch SET n = n + 1; END;
-- Documents: only what rights depend on (not the head, title or icon every edit touches).
CREATE TRIGGER access_epoch_docs_i AFTER INSERT ON documents BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_docs_u AFTER UPDATE OF owner_id, folder_id ON documents BEGIN UPDATE access_epoch SET n = n + 1; END;
CREATE TRIGGER access_epoch_docs_d AFTER DELETE ON documents BEGIN UPDATE access_epoch SET n = n + 1; END;
