//! Derived data kept in step with blocks inside the same transaction (rule 11): the
//! per-block markdown line, the full-text index, `#tags` and links to other documents
//! (`[[doc_…]]`). Only live blocks have any.

use std::collections::BTreeSet;

use rusqlite::{params, Connection};

use crate::collab::block::{Block, BlockType};

use crate::storage::error::Result;

/// The block's markdown line without indentation (indentation comes from depth when the
/// document is assembled).
pub fn markdown_line(b: &Block) -> String {
    let text = b.content.as_str();
    match b.block_type {
        BlockType::Bullet => format!("- {text}"),
        BlockType::Todo => format!("- [{}] {text}", if b.checked { "x" } else { " " }),
        BlockType::H1 => format!("# {text}"),
        BlockType::H2 => format!("## {text}"),
        BlockType::H3 => format!("### {text}"),
        BlockType::Quote => format!("> {text}"),
        BlockType::Code => format!("```{}\n{text}\n```", b.language.as_deref().unwrap_or("")),
    }
}

/// Most `#tags` indexed per block (`limits.max_tags_per_block`): beyond it the text is kept
/// whole, only the first N distinct tags (in reading order) are indexed. Unbounded, one
/// bullet with 12,500 tags took the single writer ~0.5 s per edit and held up every other
/// document's writes behind it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TagBound(pub usize);

pub const DEFAULT_MAX_TAGS_PER_BLOCK: usize = 100;

impl Default for TagBound {
    fn default() -> Self {
        TagBound(DEFAULT_MAX_TAGS_PER_BLOCK)
    }
}

/// The first `bound` distinct tags of `text`, in reading order.
pub fn first_tags(text: &str, bound: TagBound) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for tag in tags_in_order(text) {
        if out.len() >= bound.0 {
            break;
        }
        if seen.insert(tag.clone()) {
            out.push(tag);
        }
    }
    out
}

/// `#tags` in a text: `#` at the start or after whitespace/punctuation, then letters,
/// digits, `_`, `-` or `/`; lower-cased so `#Work` and `#work` are one tag.
pub fn parse_tags(text: &str) -> BTreeSet<String> {
    tags_in_order(text).into_iter().collect()
}

fn tags_in_order(text: &str) -> Vec<String> {
    let mut tags = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let starts =
            chars[i] == '#' && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '#'));
        if starts {
            let mut j = i + 1;
            while j < chars.len()
                && (chars[j].is_alphanumeric() || matches!(chars[j], '_' | '-' | '/'))
            {
                j += 1;
            }
            let tag: String = chars[i + 1..j].iter().collect::<String>();
            let tag = tag.trim_end_matches(['-', '/']).to_lowercase();
            if !tag.is_empty() && tag.chars().any(|c| c.is_alphabetic()) && tag.len() <= 100 {
                tags.push(tag);
            }
            i = j;
        } else {
            i += 1;
        }
    }
    tags
}

/// Most links to other documents indexed per block (the text is always kept whole).
pub const MAX_LINKS_PER_BLOCK: usize = 50;

/// The documents a text links to: `[[doc_…]]` (an ID of letters, digits, `_` or `-`, at most
/// 64), distinct, in reading order, at most `MAX_LINKS_PER_BLOCK`.
pub fn doc_links(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("[[doc_") {
        let after = &rest[at + 2..];
        let end = after
            .char_indices()
            .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
            .map(|(i, _)| i)
            .unwrap_or(after.len());
        let id = &after[..end];
        if after[end..].starts_with("]]")
            && id.len() > 4
            && id.len() <= 64
            && !out.iter().any(|x| x == id)
        {
            out.push(id.to_string());
            if out.len() >= MAX_LINKS_PER_BLOCK {
                break;
            }
        }
        rest = &after[end..];
    }
    out
}

pub fn refresh_block(
    conn: &Connection,
    doc_id: &str,
    rid: i64,
    b: &Block,
    tags: TagBound,
) -> Result<()> {
    forget_block(conn, rid, &b.id)?;
    if b.deleted {
        return Ok(());
    }
    conn.prepare_cached(
        "INSERT INTO markdown_cache (block_rid, doc_id, line) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![rid, doc_id, markdown_line(b)])?;
    if !b.content.is_empty() {
        conn.prepare_cached("INSERT INTO block_search (rowid, content) VALUES (?1, ?2)")?
            .execute(params![rid, b.content])?;
    }
    for tag in first_tags(&b.content, tags) {
        conn.prepare_cached("INSERT INTO tags (name) VALUES (?1) ON CONFLICT(name) DO NOTHING")?
            .execute([&tag])?;
        conn.prepare_cached(
            "INSERT OR IGNORE INTO block_tags (block_id, tag_id, doc_id)
             SELECT ?1, id, ?2 FROM tags WHERE name = ?3",
        )?
        .execute(params![b.id, doc_id, tag])?;
    }
    if b.content.contains("[[doc_") {
        for target in doc_links(&b.content) {
            conn.prepare_cached(
                "INSERT OR IGNORE INTO block_links (block_id, doc_id, target_doc_id) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![b.id, doc_id, target])?;
        }
    }
    Ok(())
}

pub fn forget_block(conn: &Connection, rid: i64, block_id: &str) -> Result<()> {
    conn.prepare_cached("DELETE FROM markdown_cache WHERE block_rid = ?1")?
        .execute([rid])?;
    conn.prepare_cached("DELETE FROM block_search WHERE rowid = ?1")?
        .execute([rid])?;
    conn.prepare_cached("DELETE FROM block_tags WHERE block_id = ?1")?
        .execute([block_id])?;
    conn.prepare_cached("DELETE FROM block_links WHERE block_id = ?1")?
        .execute([block_id])?;
    Ok(())
}

pub fn forget_document(conn: &Connection, doc_id: &str) -> Result<()> {
    conn.execute(
        "DELETE FROM block_search WHERE rowid IN (SELECT rid FROM blocks WHERE doc_id = ?1)",
        [doc_id],
    )?;
    conn.execute("DELETE FROM markdown_cache WHERE doc_id = ?1", [doc_id])?;
    conn.execute("DELETE FROM block_tags WHERE doc_id = ?1", [doc_id])?;
    conn.execute("DELETE FROM block_links WHERE doc_id = ?1", [doc_id])?;
    conn.execute("DELETE FROM block_changes WHERE doc_id = ?1", [doc_id])?;
    Ok(())
}

/// Markdown export indents at most this many levels; deeper lines are indented as this
/// level, so the export is linear in the document's size however deep its tree is.
pub const MAX_EXPORT_INDENT: usize = 64;

/// Bytes the export hands out per chunk (a chunk is larger only to hold one long block).
const EXPORT_CHUNK: usize = 64 * 1024;

/// The document as markdown, produced chunk by chunk (an iterator of strings) so the whole
/// text never has to be in memory: `# title`, then live blocks in document order, indented
/// by two spaces per level up to `MAX_EXPORT_INDENT` levels (code blocks indent every line).
/// Holds the document's lines (as the actor holds its blocks), never the indented output.
pub struct MarkdownExport {
    title: Option<String>,
    /// (depth, line) in document order.
    lines: std::vec::IntoIter<(usize, String)>,
}

impl Iterator for MarkdownExport {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        let mut out = self.title.take().unwrap_or_default();
        while out.len() < EXPORT_CHUNK {
            let Some((depth, line)) = self.lines.next() else {
                break;
            };
            let indent = depth.min(MAX_EXPORT_INDENT);
            for l in line.split('\n') {
                for _ in 0..indent {
                    out.push_str("  ");
                }
                out.push_str(l);
                out.push('\n');
            }
        }
        (!out.is_empty()).then_some(out)
    }
}

/// Reads what the markdown export needs (one query) and orders it with an explicit stack.
pub fn markdown_export(conn: &Connection, doc_id: &str, title: &str) -> Result<MarkdownExport> {
    let mut stmt = conn.prepare_cached(
        "SELECT b.id, b.parent_id, b.order_key, m.line FROM blocks b
         JOIN markdown_cache m ON m.block_rid = b.rid WHERE b.doc_id = ?1",
    )?;
    let rows = stmt
        .query_map([doc_id], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(MarkdownExport::from_rows(rows, title))
}

impl MarkdownExport {
    /// Orders `(id, parent, order key, line)` rows with an explicit stack (any backend's).
    pub fn from_rows(
        rows: Vec<(String, Option<String>, String, String)>,
        title: &str,
    ) -> MarkdownExport {
        let mut children: std::collections::HashMap<Option<String>, Vec<(String, String, String)>> =
            std::collections::HashMap::new();
        for (id, parent, key, line) in rows {
            children.entry(parent).or_default().push((key, id, line));
        }
        for v in children.values_mut() {
            v.sort();
        }
        let mut ordered = Vec::new();
        let mut stack: Vec<(usize, (String, String, String))> = children
            .remove(&None)
            .map(|v| v.into_iter().rev().map(|c| (0, c)).collect())
            .unwrap_or_default();
        while let Some((depth, (_, id, line))) = stack.pop() {
            if let Some(kids) = children.remove(&Some(id)) {
                stack.extend(kids.into_iter().rev().map(|k| (depth + 1, k)));
            }
            ordered.push((depth, line));
        }
        MarkdownExport {
            title: (!title.is_empty()).then(|| format!("# {title}\n\n")),
            lines: ordered.into_iter(),
        }
    }
}

/// The whole export as one string (for tests and small documents).
pub fn document_markdown(conn: &Connection, doc_id: &str, title: &str) -> Result<String> {
    Ok(markdown_export(conn, doc_id, title)?.collect())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{doc_links, markdown_export, parse_tags, MAX_EXPORT_INDENT, MAX_LINKS_PER_BLOCK};
    use crate::collab::block::Block;
    use crate::storage::sqlite::documents::{self, DocWrite};

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
        crate::storage::migrate::apply(&mut conn).unwrap();
        conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
        documents::create(&conn, "doc_deep", "usr_x", "Deep", None, 1).unwrap();
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
        documents::apply_write(&conn, &w).unwrap();
        let chunks: Vec<String> = markdown_export(&conn, "doc_deep", "Deep")
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
