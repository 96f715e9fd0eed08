//! The first rows of a document as a new reader sees them: live bullets in document order,
//! nothing below a bullet the document keeps collapsed. A device with no copy of a big
//! document draws these (read-only) while the whole snapshot is on its way; they are never
//! a state to edit from. For a bullet guest, their view: each shared bullet at the top, its
//! subtree below.

use serde::Serialize;

use super::block::{Author, Block, BlockType};
use super::document::DocState;
use super::subtree;

/// One row to draw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FirstRow {
    pub id: String,
    /// 0 at the top level (of the guest's view for a bullet guest).
    pub depth: usize,
    pub content: String,
    #[serde(rename = "type")]
    pub block_type: BlockType,
    pub checked: bool,
    pub collapsed: bool,
    /// Whether it has live children (shown or collapsed away).
    pub has_children: bool,
    pub language: Option<String>,
    pub conflict_of: Option<String>,
    pub conflict_author: Option<Author>,
    pub conflict_resolved: bool,
}

/// At most `count` rows from the top: the whole document's when `roots` is None, else the
/// view of a guest whose shared bullets are `roots`.
pub fn first_rows(doc: &DocState, roots: Option<&[String]>, count: usize) -> Vec<FirstRow> {
    let tops: Vec<&str> = match roots {
        None => doc.children_of(None).iter().map(String::as_str).collect(),
        Some(roots) => subtree::top_roots(doc, roots),
    };
    let mut out = Vec::with_capacity(count.min(doc.block_count()));
    // Pre-order walk; the stack holds what is still to visit, next on top.
    let mut stack: Vec<(usize, &str)> = tops.into_iter().rev().map(|id| (0, id)).collect();
    while let Some((depth, id)) = stack.pop() {
        if out.len() >= count {
            break;
        }
        let Some(b) = doc.get(id).filter(|b| !b.deleted) else {
            continue;
        };
        let kids = doc.children_of(Some(id));
        let has_children = kids.iter().any(|k| doc.get(k).is_some_and(|c| !c.deleted));
        out.push(row(b, depth, has_children));
        if !b.collapsed {
            stack.extend(kids.iter().rev().map(|k| (depth + 1, k.as_str())));
        }
    }
    out
}

fn row(b: &Block, depth: usize, has_children: bool) -> FirstRow {
    FirstRow {
        id: b.id.clone(),
        depth,
        content: b.content.clone(),
        block_type: b.block_type,
        checked: b.checked,
        collapsed: b.collapsed,
        has_children,
        language: b.language.clone(),
        conflict_of: b.conflict_of.clone(),
        conflict_author: b.conflict_author.clone(),
        conflict_resolved: b.conflict_resolved,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::first_rows;
    use crate::collab::block::Block;
    use crate::collab::document::DocState;

    fn block(id: &str, parent: Option<&str>, key: &str) -> Block {
        Block::new(
            id.into(),
            parent.map(str::to_string),
            key.into(),
            format!("text of {id}"),
            0,
            "usr_t",
        )
    }

    /// a, a1 (collapsed, with a1x), a2, b (deleted, with b1), c
    fn doc() -> DocState {
        let mut d = DocState::new("doc_t", "T");
        let mut a1 = block("a1", Some("a"), "a0");
        a1.collapsed = true;
        let mut b = block("b", None, "a1");
        b.deleted = true;
        let mut b1 = block("b1", Some("b"), "a0");
        b1.deleted = true;
        for x in [
            block("c", None, "a2"),
            block("a2", Some("a"), "a1"),
            block("a1x", Some("a1"), "a0"),
            block("a", None, "a0"),
            a1,
            b,
            b1,
        ] {
            d.put(Arc::new(x));
        }
        d
    }

    fn shape(rows: &[super::FirstRow]) -> Vec<(String, usize, bool)> {
        rows.iter()
            .map(|r| (r.id.clone(), r.depth, r.has_children))
            .collect()
    }

    #[test]
    fn document_order_without_deleted_or_collapsed_away_rows() {
        let d = doc();
        let s = |v: &[(&str, usize, bool)]| -> Vec<(String, usize, bool)> {
            v.iter().map(|(a, b, c)| (a.to_string(), *b, *c)).collect()
        };
        assert_eq!(
            shape(&first_rows(&d, None, 10)),
            s(&[
                ("a", 0, true),
                ("a1", 1, true),
                ("a2", 1, false),
                ("c", 0, false)
            ])
        );
        assert_eq!(
            shape(&first_rows(&d, None, 2)),
            s(&[("a", 0, true), ("a1", 1, true)])
        );
        assert_eq!(first_rows(&d, None, 10)[0].content, "text of a");
    }

    #[test]
    fn a_guest_sees_their_shared_bullets_at_the_top() {
        let d = doc();
        let roots = vec!["a2".to_string(), "a1".to_string(), "b".to_string()];
        let rows = first_rows(&d, Some(&roots), 10);
        // a1 is collapsed: its child stays hidden; the deleted shared bullet shows nothing
        assert_eq!(
            shape(&rows),
            vec![("a2".into(), 0, false), ("a1".into(), 0, true)]
        );
    }
}
