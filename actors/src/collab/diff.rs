//! What changed between two states of a document (PROTOCOL §8 diff): bullets added,
//! removed, moved (another parent or place) and changed (text word by word, type, check
//! box). Pure: two lists of live bullets in, the differences out, in the order of the newer
//! state (removed ones in the order of the older).

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use super::block::{Block, BlockType};

/// A piece of a word diff: text both have, text only the newer has, text only the older has.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase", tag = "op", content = "text")]
pub enum Piece {
    Same(String),
    Add(String),
    Del(String),
}

/// A bullet as the diff names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiffBlock {
    pub block_id: String,
    pub parent_id: Option<String>,
    pub content: String,
    #[serde(rename = "type")]
    pub block_type: BlockType,
    pub checked: bool,
    /// Depth in its state (0: top level), for showing it indented.
    pub depth: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Changed {
    pub block_id: String,
    pub before: String,
    pub after: String,
    /// The text change word by word (empty when only properties changed).
    pub words: Vec<Piece>,
    #[serde(rename = "typeBefore")]
    pub type_before: BlockType,
    #[serde(rename = "typeAfter")]
    pub type_after: BlockType,
    pub checked_before: bool,
    pub checked_after: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Moved {
    pub block_id: String,
    pub content: String,
    pub parent_before: Option<String>,
    pub parent_after: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Diff {
    pub added: Vec<DiffBlock>,
    pub removed: Vec<DiffBlock>,
    pub moved: Vec<Moved>,
    pub changed: Vec<Changed>,
    /// `[before, after]` when the title changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<[String; 2]>,
}

/// Live bullets in document order with their depth (parents first, siblings by order key).
fn in_order(blocks: &[Arc<Block>]) -> Vec<(u32, &Arc<Block>)> {
    let ids: std::collections::HashSet<&str> = blocks.iter().map(|b| b.id.as_str()).collect();
    let mut kids: HashMap<Option<&str>, Vec<&Arc<Block>>> = HashMap::new();
    for b in blocks {
        let p = b.parent_id.as_deref().filter(|p| ids.contains(p));
        kids.entry(p).or_default().push(b);
    }
    for list in kids.values_mut() {
        list.sort_by(|a, b| a.order_key.cmp(&b.order_key).then(a.id.cmp(&b.id)));
    }
    let mut out = Vec::with_capacity(blocks.len());
    let mut stack: Vec<(u32, &Arc<Block>)> = kids
        .get(&None)
        .map(|l| l.iter().rev().map(|b| (0, *b)).collect())
        .unwrap_or_default();
    while let Some((d, b)) = stack.pop() {
        out.push((d, b));
        if out.len() > blocks.len() {
            break;
        }
        if let Some(l) = kids.get(&Some(b.id.as_str())) {
            stack.extend(l.iter().rev().map(|k| (d + 1, *k)));
        }
    }
    out
}

fn diff_block(depth: u32, b: &Block) -> DiffBlock {
    DiffBlock {
        block_id: b.id.clone(),
        parent_id: b.parent_id.clone(),
        content: b.content.clone(),
        block_type: b.block_type,
        checked: b.checked,
        depth,
    }
}

/// The differences from `before` (an older state) to `after`.
pub fn diff(
    title_before: &str,
    before: &[Arc<Block>],
    title_after: &str,
    after: &[Arc<Block>],
) -> Diff {
    let old: HashMap<&str, &Arc<Block>> = before.iter().map(|b| (b.id.as_str(), b)).collect();
    let new: HashMap<&str, &Arc<Block>> = after.iter().map(|b| (b.id.as_str(), b)).collect();
    let mut d = Diff::default();
    for (depth, b) in in_order(after) {
        let Some(o) = old.get(b.id.as_str()) else {
            d.added.push(diff_block(depth, b));
            continue;
        };
        if o.parent_id != b.parent_id || o.order_key != b.order_key {
            d.moved.push(Moved {
                block_id: b.id.clone(),
                content: b.content.clone(),
                parent_before: o.parent_id.clone(),
                parent_after: b.parent_id.clone(),
            });
        }
        if o.content != b.content || o.block_type != b.block_type || o.checked != b.checked {
            d.changed.push(Changed {
                block_id: b.id.clone(),
                before: o.content.clone(),
                after: b.content.clone(),
                words: if o.content == b.content {
                    Vec::new()
                } else {
                    words(&o.content, &b.content)
                },
                type_before: o.block_type,
                type_after: b.block_type,
                checked_before: o.checked,
                checked_after: b.checked,
            });
        }
    }
    for (depth, b) in in_order(before) {
        if !new.contains_key(b.id.as_str()) {
            d.removed.push(diff_block(depth, b));
        }
    }
    if title_before != title_after {
        d.title = Some([title_before.to_string(), title_after.to_string()]);
    }
    d
}

/// Most token pairs compared word by word; longer texts are shown as one replacement
/// between their common beginning and end (quadratic work stays bounded).
const MAX_WORD_CELLS: usize = 250_000;

/// What kind of token a character belongs to: a word (letters, digits, `_`), a run of
/// spaces, or a character standing alone (punctuation, symbols), so "nights," and "nights"
/// share their word.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Word,
    Space,
    Alone,
}

fn class(c: char) -> Class {
    if c.is_whitespace() {
        Class::Space
    } else if c.is_alphanumeric() || c == '_' || is_mark(c) {
        Class::Word
    } else {
        Class::Alone
    }
}

/// Combining marks (accents written as their own code point) belong to their word.
fn is_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

/// Words, runs of spaces and single other characters, each its own token (the browser's
/// `word-diff.js` splits the same way).
fn tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut prev: Option<Class> = None;
    for (i, c) in s.char_indices() {
        let k = class(c);
        if let Some(p) = prev {
            if p != k || k == Class::Alone {
                out.push(&s[start..i]);
                start = i;
            }
        }
        prev = Some(k);
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

fn push(out: &mut Vec<Piece>, p: Piece) {
    match (out.last_mut(), p) {
        (Some(Piece::Same(a)), Piece::Same(b)) => a.push_str(&b),
        (Some(Piece::Add(a)), Piece::Add(b)) => a.push_str(&b),
        (Some(Piece::Del(a)), Piece::Del(b)) => a.push_str(&b),
        (_, p) => out.push(p),
    }
}

/// A word diff of `before` → `after` (longest common subsequence of tokens).
pub fn words(before: &str, after: &str) -> Vec<Piece> {
    let a = tokens(before);
    let b = tokens(after);
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    let mut out = Vec::new();
    if head > 0 {
        push(&mut out, Piece::Same(a[..head].concat()));
    }
    if am.len() * bm.len() > MAX_WORD_CELLS {
        if !am.is_empty() {
            push(&mut out, Piece::Del(am.concat()));
        }
        if !bm.is_empty() {
            push(&mut out, Piece::Add(bm.concat()));
        }
    } else {
        // lcs[i][j]: longest common subsequence of am[i..] and bm[j..].
        let (n, m) = (am.len(), bm.len());
        let mut lcs = vec![0u32; (n + 1) * (m + 1)];
        let at = |i: usize, j: usize| i * (m + 1) + j;
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[at(i, j)] = if am[i] == bm[j] {
                    lcs[at(i + 1, j + 1)] + 1
                } else {
                    lcs[at(i + 1, j)].max(lcs[at(i, j + 1)])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && am[i] == bm[j] {
                push(&mut out, Piece::Same(am[i].to_string()));
                i += 1;
                j += 1;
            } else if i < n && (j == m || lcs[at(i + 1, j)] >= lcs[at(i, j + 1)]) {
                // Removals before additions: "old new" reads as a replacement.
                push(&mut out, Piece::Del(am[i].to_string()));
                i += 1;
            } else {
                push(&mut out, Piece::Add(bm[j].to_string()));
                j += 1;
            }
        }
    }
    if tail > 0 {
        push(&mut out, Piece::Same(a[a.len() - tail..].concat()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(id: &str, parent: Option<&str>, key: &str, text: &str) -> Arc<Block> {
        Arc::new(Block::new(
            id.into(),
            parent.map(Into::into),
            key.into(),
            text.into(),
            0,
            "u",
        ))
    }

    #[test]
    fn words_show_what_was_replaced_and_keep_the_rest() {
        let w = words("buy milk and bread", "buy oat milk and butter");
        assert_eq!(
            w,
            vec![
                Piece::Same("buy ".into()),
                Piece::Add("oat ".into()),
                Piece::Same("milk and ".into()),
                Piece::Del("bread".into()),
                Piece::Add("butter".into()),
            ]
        );
        let joined =
            |keep: fn(&Piece) -> Option<&str>| w.iter().filter_map(keep).collect::<String>();
        assert_eq!(
            joined(|p| match p {
                Piece::Same(s) | Piece::Del(s) => Some(s),
                Piece::Add(_) => None,
            }),
            "buy milk and bread"
        );
        // Punctuation is a token of its own: only the addition is marked.
        assert_eq!(
            words("three nights", "three nights, 2 rooms"),
            vec![
                Piece::Same("three nights".into()),
                Piece::Add(", 2 rooms".into())
            ]
        );
        assert_eq!(words("", "new"), vec![Piece::Add("new".into())]);
        assert_eq!(words("same", "same"), vec![Piece::Same("same".into())]);
    }

    #[test]
    fn long_texts_fall_back_to_one_replacement() {
        let a = "a ".repeat(600);
        let b2 = "b ".repeat(600);
        let w = words(&a, &b2);
        // One removal, one addition, the common trailing space.
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(
            matches!((&w[0], &w[1], &w[2]), (Piece::Del(_), Piece::Add(_), Piece::Same(s)) if s == " ")
        );
    }

    #[test]
    fn diff_names_added_removed_moved_and_changed() {
        let before = vec![
            b("blk_1", None, "a0", "one"),
            b("blk_2", None, "a1", "two"),
            b("blk_3", Some("blk_1"), "a0", "three"),
        ];
        let after = vec![
            b("blk_1", None, "a0", "one!"),
            b("blk_3", None, "a2", "three"),
            b("blk_4", Some("blk_1"), "a0", "four"),
        ];
        let d = diff("T", &before, "T2", &after);
        assert_eq!(
            d.added
                .iter()
                .map(|x| x.block_id.as_str())
                .collect::<Vec<_>>(),
            ["blk_4"]
        );
        assert_eq!(d.added[0].depth, 1);
        assert_eq!(
            d.removed
                .iter()
                .map(|x| x.block_id.as_str())
                .collect::<Vec<_>>(),
            ["blk_2"]
        );
        assert_eq!(d.moved.len(), 1);
        assert_eq!(d.moved[0].parent_before.as_deref(), Some("blk_1"));
        assert_eq!(d.changed.len(), 1);
        assert_eq!(d.changed[0].before, "one");
        assert_eq!(d.title, Some(["T".to_string(), "T2".to_string()]));
        assert_eq!(diff("T", &before, "T", &before), Diff::default());
    }
}
