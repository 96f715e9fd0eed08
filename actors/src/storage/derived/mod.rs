//! Data derived from bullets (search words, tags, links, the markdown export), kept in the
//! same transaction as the bullets they come from. What is derived is decided once
//! (`types.rs`); each backend stores it (`sqlite.rs`, `postgres.rs`).

pub(crate) mod postgres;
mod rows;
pub(crate) mod sqlite;
mod types;

pub use types::{
    doc_links, first_tags, markdown_line, parse_tags, MarkdownExport, TagBound,
    DEFAULT_MAX_TAGS_PER_BLOCK, MAX_EXPORT_INDENT, MAX_LINKS_PER_BLOCK,
};

use super::db::Db;
use super::error::Result;

/// The document as markdown, chunk by chunk, in outline order.
pub fn markdown_export(db: &mut Db, doc_id: &str, title: &str) -> Result<MarkdownExport> {
    Ok(MarkdownExport::from_rows(
        rows::markdown_rows(db, doc_id)?,
        title,
    ))
}

/// A bullet guest's export: the subtrees below `roots` only (PROTOCOL §10).
pub fn markdown_export_under(
    db: &mut Db,
    doc_id: &str,
    roots: &[String],
) -> Result<MarkdownExport> {
    Ok(MarkdownExport::from_rows_under(
        rows::markdown_rows(db, doc_id)?,
        roots,
    ))
}

/// The whole export as one string (for tests and small documents).
pub fn document_markdown(db: &mut Db, doc_id: &str, title: &str) -> Result<String> {
    Ok(markdown_export(db, doc_id, title)?.collect())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{doc_links, markdown_export, parse_tags, MAX_EXPORT_INDENT, MAX_LINKS_PER_BLOCK};
    use crate::collab::block::Block;
    use crate::storage::documents::{self, DocWrite};
    use crate::storage::Db;

    /// A 5,000-level chain: the export is linear (indent capped), ordered, and comes in
    /// chunks of bounded size.
    #[test]
    fn doc_links_are_read_in_order_distinct_and_bounded() {
        assert_eq!(
            doc_links(
                "a [[doc_1a]] b [[doc_2b-x]] [[doc_1a]] [[doc_]] [doc_3] [[doc_4 ]] [[doc_5]"
            ),
            vec!["doc_1a".to_string(), "doc_2b-x".to_string()]
        );
        let many: String = (0..80).map(|i| format!("[[doc_{i:03}]] ")).collect();
        assert_eq!(doc_links(&many).len(), MAX_LINKS_PER_BLOCK);
        assert!(doc_links("[[doc_ünïcode]] [[").is_empty());
    }

    #[test]
    fn deep_chain_exports_in_linear_size_and_bounded_chunks() {
        const N: usize = 5_000;
        let mut conn = rusqlite::Connection::open_in_memory().unwrap();
        crate::storage::sqlite::migrate::apply(&mut conn).unwrap();
        conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
        documents::create(&mut Db::Sqlite(&conn), "doc_deep", "usr_x", "Deep", None, 1).unwrap();
        let blocks = (0..N)
            .map(|i| {
                Arc::new(Block::new(
                    format!("blk_{i:05}"),
                    i.checked_sub(1).map(|p| format!("blk_{p:05}")),
                    "a0".into(),
                    format!("level {i}"),
                    1,
                    "usr_x",
                ))
            })
            .collect();
        let w = DocWrite {
            doc_id: "doc_deep".into(),
            head_after: 1,
            blocks,
            now: 1,
            ..DocWrite::default()
        };
        documents::apply_write(&mut Db::Sqlite(&conn), &w, 0).unwrap();
        let chunks: Vec<String> = markdown_export(&mut Db::Sqlite(&conn), "doc_deep", "Deep")
            .unwrap()
            .collect();
        assert!(chunks.len() > 1, "streamed in several chunks");
        assert!(chunks.iter().all(|c| c.len() <= 64 * 1024 + 200));
        let md = chunks.concat();
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(lines[0], "# Deep");
        assert_eq!(lines.len(), N + 2);
        assert_eq!(lines[2], "- level 0");
        assert_eq!(lines[3], "  - level 1");
        let cap = "  ".repeat(MAX_EXPORT_INDENT);
        assert_eq!(lines[N + 1], format!("{cap}- level {}", N - 1));
        // Linear: at most the capped indent plus the line per block.
        assert!(
            md.len() < N * (2 * MAX_EXPORT_INDENT + 20),
            "{} bytes",
            md.len()
        );
    }

    #[test]
    fn tags_are_found_and_normalised() {
        let t = parse_tags("Plan #Work and #work-items, not a#b nor #123; see #a/b.");
        assert_eq!(
            t.into_iter().collect::<Vec<_>>(),
            vec!["a/b", "work", "work-items"]
        );
        assert!(parse_tags("## heading").is_empty());
    }
}
