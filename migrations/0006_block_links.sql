-- Links between documents: a bullet whose text holds `[[doc_…]]` links to that document.
-- Derived from the text in the same transaction as the change (like #tags, PROTOCOL §2.1
-- rule 11); read for a document's backlinks ("linked from"), filtered by the reader's rights.
CREATE TABLE block_links (
    block_id      TEXT NOT NULL,
    doc_id        TEXT NOT NULL,
    target_doc_id TEXT NOT NULL,
    PRIMARY KEY (block_id, target_doc_id)
);
CREATE INDEX block_links_target ON block_links(target_doc_id);
CREATE INDEX block_links_doc ON block_links(doc_id);
