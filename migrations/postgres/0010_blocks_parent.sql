-- Children by parent, for a bullet guest's search, tags and backlinks (as SQLite's 0012).
CREATE INDEX blocks_parent ON blocks (parent_id);
