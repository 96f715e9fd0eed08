//! A bullet guest's part of a document (PROTOCOL §10): the subtrees below the bullets
//! shared with them, as they see it — each outermost shared bullet at their top level,
//! everything below it as it is, nothing else. Pure functions over `DocState`; who is a
//! guest and with what role is decided elsewhere.

use std::collections::HashSet;
use std::sync::Arc;

use super::block::Block;
use super::document::DocState;

/// The shared bullets (`roots`) that lie on `id`'s ancestry, `id` itself included: empty
/// when `id` lies outside every shared subtree or is unknown.
pub fn covering<'r>(doc: &DocState, roots: &'r [String], id: &str) -> Vec<&'r str> {
    if roots.is_empty() {
        return Vec::new();
    }
    doc.ancestry(id)
        .iter()
        .filter_map(|b| roots.iter().find(|r| **r == b.id).map(String::as_str))
        .collect()
}

/// Whether `id` lies inside one of the shared subtrees.
pub fn inside(doc: &DocState, roots: &[String], id: &str) -> bool {
    !covering(doc, roots, id).is_empty()
}

/// The shared bullets the document has that no other shared bullet contains: the top
/// level of the guest's view (a bullet inside another shared one is seen in its place).
pub fn top_roots<'r>(doc: &DocState, roots: &'r [String]) -> Vec<&'r str> {
    roots
        .iter()
        .filter(|r| doc.get(r).is_some())
        .filter(|r| {
            doc.ancestry(r)
                .iter()
                .skip(1)
                .all(|a| !roots.iter().any(|o| *o == a.id))
        })
        .map(String::as_str)
        .collect()
}

/// A top-level root as its guests see it: at their top level (its real parent is outside).
pub fn as_seen(block: &Arc<Block>, is_top_root: bool) -> Arc<Block> {
    if is_top_root && block.parent_id.is_some() {
        let mut b = (**block).clone();
        b.parent_id = None;
        Arc::new(b)
    } else {
        block.clone()
    }
}

/// Every block of the guest's view, tombstones included, each subtree in pre-order from its
/// root, as stored (the top roots are not yet re-parented: see `as_seen`).
pub fn blocks(doc: &DocState, roots: &[String]) -> Vec<Arc<Block>> {
    let mut out = Vec::new();
    for root in top_roots(doc, roots) {
        out.extend(doc.subtree(root));
    }
    out
}

/// A guest's part of a document held as a list of blocks (a version's): `blocks` of it in
/// pre-order with each top root as they see it (`as_seen`).
pub fn part_of(list: &[Arc<Block>], roots: &[String]) -> Vec<Arc<Block>> {
    let mut doc = DocState::new("doc_part", "");
    for b in list {
        doc.put(b.clone());
    }
    let tops: HashSet<&str> = top_roots(&doc, roots).into_iter().collect();
    blocks(&doc, roots)
        .iter()
        .map(|b| as_seen(b, tops.contains(b.id.as_str())))
        .collect()
}

/// The IDs of `blocks(doc, roots)`.
pub fn ids(doc: &DocState, roots: &[String]) -> HashSet<String> {
    blocks(doc, roots).iter().map(|b| b.id.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(tree: &[(&str, Option<&str>)]) -> DocState {
        let mut d = DocState::new("doc_t", "T");
        for (i, (id, parent)) in tree.iter().enumerate() {
            d.put(Arc::new(Block::new(
                id.to_string(),
                parent.map(str::to_string),
                format!("a{i:03}"),
                format!("text of {id}"),
                0,
                "usr_o",
            )));
        }
        d
    }

    fn roots(r: &[&str]) -> Vec<String> {
        r.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_guest_sees_the_shared_subtrees_and_nothing_else() {
        // a ─ b ─ c      x ─ y
        //   └ d
        let d = doc(&[
            ("a", None),
            ("b", Some("a")),
            ("c", Some("b")),
            ("d", Some("a")),
            ("x", None),
            ("y", Some("x")),
        ]);
        let r = roots(&["b", "y"]);
        let seen: Vec<String> = blocks(&d, &r).iter().map(|b| b.id.clone()).collect();
        assert_eq!(seen, ["b", "c", "y"]);
        assert!(inside(&d, &r, "c"));
        assert!(!inside(&d, &r, "a"));
        assert!(!inside(&d, &r, "d"));
        assert!(!inside(&d, &r, "nope"));
        assert!(as_seen(d.get("b").unwrap(), true).parent_id.is_none());
    }

    #[test]
    fn a_part_of_a_list_has_the_subtrees_with_their_tops_at_the_top_level() {
        let d = doc(&[("a", None), ("b", Some("a")), ("c", Some("b")), ("x", None)]);
        let list: Vec<Arc<Block>> = ["a", "b", "c", "x"]
            .iter()
            .map(|id| d.get(id).unwrap().clone())
            .collect();
        let part = part_of(&list, &roots(&["b", "c"]));
        let ids: Vec<(&str, Option<&str>)> = part
            .iter()
            .map(|b| (b.id.as_str(), b.parent_id.as_deref()))
            .collect();
        assert_eq!(ids, [("b", None), ("c", Some("b"))]);
        assert!(part_of(&list, &roots(&["gone"])).is_empty());
    }

    #[test]
    fn a_shared_bullet_inside_another_is_seen_in_its_place() {
        let d = doc(&[("a", None), ("b", Some("a")), ("c", Some("b"))]);
        let r = roots(&["b", "a", "gone"]);
        assert_eq!(top_roots(&d, &r), ["a"]);
        assert_eq!(blocks(&d, &r).len(), 3);
        assert_eq!(covering(&d, &r, "c"), ["b", "a"]);
    }
}
