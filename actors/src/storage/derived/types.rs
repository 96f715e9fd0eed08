//! What is derived from a bullet's text, decided once for every backend: its markdown line,
//! its `#tags` (bounded per bullet), its links to other documents (`[[doc_…]]`), and the
//! markdown export's ordering.

use std::collections::BTreeSet;

use crate::collab::block::{Block, BlockType};

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

/// (id, parent, order key, markdown line) of a bullet, as the export reads it.
pub type MarkdownRow = (String, Option<String>, String, String);

impl MarkdownExport {
    /// Orders `(id, parent, order key, line)` rows with an explicit stack (any backend's).
    pub fn from_rows(rows: Vec<MarkdownRow>, title: &str) -> MarkdownExport {
        let ordered = outline_order(rows).into_iter().map(|(d, _, l)| (d, l));
        MarkdownExport {
            title: (!title.is_empty()).then(|| format!("# {title}\n\n")),
            lines: ordered.collect::<Vec<_>>().into_iter(),
        }
    }

    /// A bullet guest's export (PROTOCOL §10): only the subtrees below `roots`, each
    /// outermost one at the top level, in outline order, without the document's title.
    pub fn from_rows_under(rows: Vec<MarkdownRow>, roots: &[String]) -> MarkdownExport {
        let mut lines = Vec::new();
        // The depth of the shared bullet being exported, while inside one.
        let mut base: Option<usize> = None;
        for (depth, id, line) in outline_order(rows) {
            if base.is_some_and(|b| depth <= b) {
                base = None;
            }
            if base.is_none() && roots.contains(&id) {
                base = Some(depth);
            }
            if let Some(b) = base {
                lines.push((depth - b, line));
            }
        }
        MarkdownExport {
            title: None,
            lines: lines.into_iter(),
        }
    }
}

/// `(depth, id, line)` of every bullet reachable from the top level, in outline order.
fn outline_order(rows: Vec<MarkdownRow>) -> Vec<(usize, String, String)> {
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
        if let Some(kids) = children.remove(&Some(id.clone())) {
            stack.extend(kids.into_iter().rev().map(|k| (depth + 1, k)));
        }
        ordered.push((depth, id, line));
    }
    ordered
}
