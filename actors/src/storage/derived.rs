//! Derived data kept in step with blocks inside the same transaction (rule 11): the
//! per-block markdown line, the full-text index and `#tags`. Only live blocks have any.

use std::collections::BTreeSet;

use rusqlite::{params, Connection};

use crate::collab::block::{Block, BlockType};

use super::error::Result;

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

/// `#tags` in a text: `#` at the start or after whitespace/punctuation, then letters,
/// digits, `_`, `-` or `/`; lower-cased so `#Work` and `#work` are one tag.
pub fn parse_tags(text: &str) -> BTreeSet<String> {
    let mut tags = BTreeSet::new();
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
                tags.insert(tag);
            }
            i = j;
        } else {
            i += 1;
        }
    }
    tags
}

pub fn refresh_block(conn: &Connection, doc_id: &str, rid: i64, b: &Block) -> Result<()> {
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
    for tag in parse_tags(&b.content) {
        conn.prepare_cached("INSERT INTO tags (name) VALUES (?1) ON CONFLICT(name) DO NOTHING")?
            .execute([&tag])?;
        conn.prepare_cached(
            "INSERT OR IGNORE INTO block_tags (block_id, tag_id, doc_id)
             SELECT ?1, id, ?2 FROM tags WHERE name = ?3",
        )?
        .execute(params![b.id, doc_id, tag])?;
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
    Ok(())
}

pub fn forget_document(conn: &Connection, doc_id: &str) -> Result<()> {
    conn.execute(
        "DELETE FROM block_search WHERE rowid IN (SELECT rid FROM blocks WHERE doc_id = ?1)",
        [doc_id],
    )?;
    conn.execute("DELETE FROM markdown_cache WHERE doc_id = ?1", [doc_id])?;
    conn.execute("DELETE FROM block_tags WHERE doc_id = ?1", [doc_id])?;
    Ok(())
}

/// The document as markdown: `# title`, then live blocks in document order, indented by
/// two spaces per level (code blocks indent every line).
pub fn document_markdown(conn: &Connection, doc_id: &str, title: &str) -> Result<String> {
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
    let mut children: std::collections::HashMap<Option<String>, Vec<(String, String, String)>> =
        std::collections::HashMap::new();
    for (id, parent, key, line) in rows {
        children.entry(parent).or_default().push((key, id, line));
    }
    for v in children.values_mut() {
        v.sort();
    }
    let mut out = String::new();
    if !title.is_empty() {
        out.push_str(&format!("# {title}\n\n"));
    }
    let mut stack: Vec<(usize, &(String, String, String))> = children
        .get(&None)
        .map(|v| v.iter().rev().map(|c| (0, c)).collect())
        .unwrap_or_default();
    while let Some((depth, (_, id, line))) = stack.pop() {
        let indent = "  ".repeat(depth);
        for l in line.split('\n') {
            out.push_str(&indent);
            out.push_str(l);
            out.push('\n');
        }
        if let Some(kids) = children.get(&Some(id.clone())) {
            for k in kids.iter().rev() {
                stack.push((depth + 1, k));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::parse_tags;

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
