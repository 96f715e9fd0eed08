//! Whole workspaces in and out: everything a person reads as files (`export`: Markdown and
//! OPML per document, a manifest of folders and access; `opml` writes the outlines), and
//! many documents made in one operation from what the browser read of another tool's files
//! (`import_plan` decides everything first, `import` carries it out through the documents'
//! actors). Used by `src/http/workspace.rs` and `docsync export`; imports nothing of `http`.

pub mod export;
pub mod import;
pub mod import_plan;
pub mod opml;
