-- Derived data (as SQLite's 0001 and 0006), written in the same transaction as the change:
-- each live block's markdown line, its words for full-text search (a `tsvector` of the
-- unaccented text: SQLite's unicode61 tokenizer with remove_diacritics), its #tags and its
-- links to other documents.
CREATE EXTENSION IF NOT EXISTS unaccent;

CREATE TABLE markdown_cache (
    block_rid BIGINT PRIMARY KEY,
    doc_id    TEXT NOT NULL,
    line      TEXT NOT NULL
);
CREATE INDEX markdown_cache_doc ON markdown_cache (doc_id);

CREATE TABLE block_search (
    block_rid BIGINT PRIMARY KEY,
    doc_id    TEXT NOT NULL,
    words     tsvector NOT NULL
);
CREATE INDEX block_search_words ON block_search USING gin (words);

CREATE TABLE tags (
    id   BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);

CREATE TABLE block_tags (
    block_id TEXT NOT NULL,
    tag_id   BIGINT NOT NULL REFERENCES tags(id),
    doc_id   TEXT NOT NULL,
    PRIMARY KEY (block_id, tag_id)
);
CREATE INDEX block_tags_tag ON block_tags (tag_id, doc_id);
CREATE INDEX block_tags_doc ON block_tags (doc_id);

CREATE TABLE block_links (
    block_id      TEXT NOT NULL,
    doc_id        TEXT NOT NULL,
    target_doc_id TEXT NOT NULL,
    PRIMARY KEY (block_id, target_doc_id)
);
CREATE INDEX block_links_target ON block_links (target_doc_id);
CREATE INDEX block_links_doc ON block_links (doc_id);
