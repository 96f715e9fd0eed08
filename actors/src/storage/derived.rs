//! Data derived from bullets (search words, tags, links, the markdown export), kept in the
//! same transaction as the bullets they come from.

use super::db::dispatch;
use super::db::Db;
use super::error::Result;
use super::postgres::derived as pg;
use super::sqlite::derived as lite;

pub use lite::{
    doc_links, first_tags, markdown_line, parse_tags, MarkdownExport, TagBound,
    DEFAULT_MAX_TAGS_PER_BLOCK, MAX_EXPORT_INDENT, MAX_LINKS_PER_BLOCK,
};

dispatch! {
    pub fn markdown_export(doc_id: &str, title: &str) -> MarkdownExport
        => lite::markdown_export, pg::markdown_export;
}

pub fn document_markdown(db: &mut Db, doc_id: &str, title: &str) -> Result<String> {
    Ok(markdown_export(db, doc_id, title)?.collect())
}
