//! The in-memory state of one document: title, counters, the block tree with tombstones and
//! the IDs purged by compaction. Only the rules (and loading) change it; the children index
//! is kept sorted by (orderKey, id), the sibling order of PROTOCOL §1.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::block::Block;

#[derive(Debug, Clone, Default)]
pub struct DocState {
    pub doc_id: String,
    pub title: String,
    pub title_version: i64,
    pub icon: Option<String>,
    pub head_seq: i64,
    pub log_floor: i64,
    blocks: HashMap<String, Arc<Block>>,
    /// Parent ID (None = top level) → child IDs sorted by (orderKey, id); tombstones included.
    children: HashMap<Option<String>, Vec<String>>,
    purged: HashSet<String>,
    /// Bytes of text of the live blocks, kept as blocks come and go, for the per-document
    /// size budget (deleting makes room; tombstones go with compaction).
    content_bytes: usize,
}

fn live_bytes(b: &Block) -> usize {
    if b.deleted {
        0
    } else {
        b.content.len()
    }
}

/// A block and its depth, in document order.
pub type OrderedBlock = (u32, Arc<Block>);

impl DocState {
    pub fn new(doc_id: &str, title: &str) -> DocState {
        DocState {
            doc_id: doc_id.to_string(),
            title: title.to_string(),
            title_version: 1,
            ..DocState::default()
        }
    }

    pub fn from_parts(
        mut meta: DocState,
        blocks: impl IntoIterator<Item = Block>,
        purged: impl IntoIterator<Item = String>,
    ) -> DocState {
        for b in blocks {
            meta.put(Arc::new(b));
        }
        meta.purged.extend(purged);
        meta
    }

    pub fn get(&self, id: &str) -> Option<&Arc<Block>> {
        self.blocks.get(id)
    }

    pub fn is_purged(&self, id: &str) -> bool {
        self.purged.contains(id)
    }

    pub fn block_count(&self) -> usize {
        self.blocks.len()
    }

    /// Bytes of text in the document's live blocks.
    pub fn content_bytes(&self) -> usize {
        self.content_bytes
    }

    pub fn purged_ids(&self) -> impl Iterator<Item = &String> {
        self.purged.iter()
    }

    pub fn blocks(&self) -> impl Iterator<Item = &Arc<Block>> {
        self.blocks.values()
    }

    fn sort_key(b: &Block) -> (&str, &str) {
        (b.order_key.as_str(), b.id.as_str())
    }

    /// Inserts or replaces a block, keeping the children index sorted.
    pub fn put(&mut self, block: Arc<Block>) -> Arc<Block> {
        self.content_bytes += live_bytes(&block);
        if let Some(old) = self.blocks.get(&block.id) {
            self.content_bytes -= live_bytes(old);
        }
        if let Some(old) = self.blocks.get(&block.id).cloned() {
            if old.parent_id == block.parent_id && old.order_key == block.order_key {
                self.blocks.insert(block.id.clone(), block.clone());
                return block;
            }
            self.unlink(&old);
        }
        self.blocks.insert(block.id.clone(), block.clone());
        let siblings = self.children.entry(block.parent_id.clone()).or_default();
        let blocks = &self.blocks;
        let pos = siblings
            .binary_search_by(|id| {
                let s = &blocks[id];
                Self::sort_key(s).cmp(&Self::sort_key(&block))
            })
            .unwrap_or_else(|p| p);
        siblings.insert(pos, block.id.clone());
        block
    }

    fn unlink(&mut self, old: &Block) {
        if let Some(sibs) = self.children.get_mut(&old.parent_id) {
            sibs.retain(|id| id != &old.id);
            if sibs.is_empty() {
                self.children.remove(&old.parent_id);
            }
        }
    }

    /// Removes blocks for good (compaction's purge) and remembers their IDs.
    pub fn purge(&mut self, ids: &[String]) {
        for id in ids {
            if let Some(old) = self.blocks.remove(id) {
                self.content_bytes -= live_bytes(&old);
                self.unlink(&old);
            }
            self.purged.insert(id.clone());
        }
    }

    pub fn children_of(&self, parent: Option<&str>) -> &[String] {
        self.children
            .get(&parent.map(str::to_string))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// True when `candidate` is `root` or lies inside its subtree.
    pub fn is_in_subtree(&self, candidate: &str, root: &str) -> bool {
        let mut cur = Some(candidate.to_string());
        let mut steps = 0usize;
        while let Some(id) = cur {
            if id == root {
                return true;
            }
            steps += 1;
            if steps > self.blocks.len() + 1 {
                return false; // defensive: a corrupt cycle must not hang the actor
            }
            cur = self.blocks.get(&id).and_then(|b| b.parent_id.clone());
        }
        false
    }

    /// `id` and its ancestors, nearest first (`[id, parent, …, top-level ancestor]`); stops at
    /// a missing parent. Iterative, and bounded by the block count against a corrupt cycle.
    pub fn ancestry(&self, id: &str) -> Vec<Arc<Block>> {
        let mut out = Vec::new();
        let mut cur = self.blocks.get(id);
        while let Some(b) = cur {
            out.push(b.clone());
            if out.len() > self.blocks.len() {
                break; // defensive: a corrupt cycle must not hang the actor
            }
            cur = b.parent_id.as_deref().and_then(|p| self.blocks.get(p));
        }
        out
    }

    /// The depth of block `id` (0 = top level), counting every ancestor; None if unknown.
    pub fn depth_of(&self, id: &str) -> Option<usize> {
        self.ancestry(id).len().checked_sub(1)
    }

    /// How many levels lie below `id` (0 for a leaf), tombstones included. Iterative.
    pub fn subtree_height(&self, id: &str) -> usize {
        let mut height = 0;
        let mut stack: Vec<(usize, &str)> = vec![(0, id)];
        let mut steps = 0usize;
        while let Some((depth, cur)) = stack.pop() {
            height = height.max(depth);
            steps += 1;
            if steps > self.blocks.len() + 1 {
                break; // defensive: a corrupt cycle must not hang the actor
            }
            for child in self.children_of(Some(cur)) {
                stack.push((depth + 1, child));
            }
        }
        height
    }

    /// The subtree rooted at `id` (pre-order, root first), tombstones included.
    pub fn subtree(&self, id: &str) -> Vec<Arc<Block>> {
        let mut out = Vec::new();
        let mut stack = vec![id.to_string()];
        while let Some(cur) = stack.pop() {
            if let Some(b) = self.blocks.get(&cur) {
                out.push(b.clone());
                for child in self.children_of(Some(&cur)).iter().rev() {
                    stack.push(child.clone());
                }
            }
        }
        out
    }

    /// Where a block whose parent chain is (partly) deleted should live: the nearest live
    /// ancestor (None = top level) and the order key that puts it right after the deleted
    /// branch it came from, so it reappears where the user last saw that branch.
    pub fn live_placement(&self, parent: Option<&str>) -> (Option<String>, Option<String>) {
        let mut branch: Option<Arc<Block>> = None;
        let mut cur = parent.map(str::to_string);
        while let Some(id) = cur {
            match self.blocks.get(&id) {
                Some(b) if !b.deleted => return (Some(id), self.key_after(branch.as_deref())),
                Some(b) => {
                    branch = Some(b.clone());
                    cur = b.parent_id.clone();
                }
                None => break,
            }
        }
        // Unknown or purged ancestor: top level, after the deleted branch if it is known.
        let branch = branch.filter(|b| b.parent_id.is_none());
        match branch {
            Some(b) => (None, self.key_after(Some(&b))),
            None => (None, None),
        }
    }

    /// A key directly after `after` among its siblings (before the next greater key), or
    /// None when `after` is None (caller appends at the end).
    fn key_after(&self, after: Option<&Block>) -> Option<String> {
        let after = after?;
        let next = self
            .children_of(after.parent_id.as_deref())
            .iter()
            .filter_map(|id| self.blocks.get(id))
            .map(|b| b.order_key.as_str())
            .find(|k| *k > after.order_key.as_str());
        super::order_key::key_between(Some(&after.order_key), next).ok()
    }

    /// A key directly after block `id` among its siblings.
    pub fn key_right_after(&self, id: &str) -> Option<String> {
        let b = self.blocks.get(id)?.clone();
        self.key_after(Some(&b))
    }

    /// A key after every child of `parent`. The children index is sorted by (orderKey, id),
    /// so the greatest key is the last child's: O(1), however many siblings there are.
    pub fn key_at_end(&self, parent: Option<&str>) -> String {
        let last = self
            .children_of(parent)
            .last()
            .and_then(|id| self.blocks.get(id))
            .map(|b| b.order_key.as_str());
        super::order_key::key_between(last, None).unwrap_or_else(|_| "a0".into())
    }

    /// A key before every child of `parent` (the first child's key is the smallest).
    pub fn key_at_start(&self, parent: Option<&str>) -> String {
        let first = self
            .children_of(parent)
            .first()
            .and_then(|id| self.blocks.get(id))
            .map(|b| b.order_key.as_str());
        super::order_key::key_between(None, first).unwrap_or_else(|_| "a0".into())
    }

    /// All blocks in document order (depth-first, pre-order) with their depth. Blocks whose
    /// parent is missing (should never happen) are appended at depth 0 so nothing is hidden.
    pub fn ordered(&self) -> Vec<OrderedBlock> {
        let mut out = Vec::with_capacity(self.blocks.len());
        let mut stack: Vec<(u32, &String)> = self
            .children_of(None)
            .iter()
            .rev()
            .map(|id| (0u32, id))
            .collect();
        while let Some((depth, id)) = stack.pop() {
            let Some(b) = self.blocks.get(id) else {
                continue;
            };
            out.push((depth, b.clone()));
            if let Some(kids) = self.children.get(&Some(id.clone())) {
                for k in kids.iter().rev() {
                    stack.push((depth + 1, k));
                }
            }
        }
        if out.len() < self.blocks.len() {
            let seen: HashSet<&str> = out.iter().map(|(_, b)| b.id.as_str()).collect();
            let mut orphans: Vec<Arc<Block>> = self
                .blocks
                .values()
                .filter(|b| !seen.contains(b.id.as_str()))
                .cloned()
                .collect();
            orphans.sort_by(|a, b| a.id.cmp(&b.id));
            out.extend(orphans.into_iter().map(|b| (0, b)));
        }
        out
    }
}
