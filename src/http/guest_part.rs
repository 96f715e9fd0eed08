//! What a bullet guest (PROTOCOL §10) is shown of a document's history: each version as
//! their part of it, a bullet's changes while it lay in their part. Pure lenses over what
//! the history handlers read; whether the caller is a guest, and of which bullets, comes
//! from `access.rs` (`Decision::reach`).
//!
//! Decided here (the protocol is silent on the details):
//! - A version is listed to a guest with when it was kept and which kind it is — not its
//!   name, who kept it, or the document's sizes (those are the whole document's: `blocks`,
//!   `rawBytes` and `storedBytes` are 0 in the list, and `blocks` counts their part when one
//!   version is opened).
//! - A version opened or compared holds their part as it was in that version (their shared
//!   bullets found there, each at the top level), no title.
//! - A bullet's history shows a change only when that change left the bullet inside their
//!   part as it is now (its parent inside, or the bullet one of their shared bullets), and
//!   names a parent or a conflict's original only when that block is inside now: a bullet
//!   moved in from elsewhere keeps its earlier life there to itself.

use std::collections::HashMap;
use std::sync::Arc;

use docsync_actors::collab::block::Block;
use docsync_actors::collab::subtree;
use docsync_actors::storage::log::BlockChange;
use docsync_actors::storage::roles::{BulletRoot, Reach};
use docsync_actors::storage::sharing;
use docsync_actors::storage::versions::{VersionMeta, VersionState};
use docsync_actors::storage::{Db, StorageError};

/// A guest's shared bullets, or `None` for a caller who reads the whole document.
pub fn guest_roots(reach: &Reach) -> Option<Vec<String>> {
    match reach {
        Reach::Document => None,
        Reach::Bullets(roots) => Some(roots.iter().map(|r| r.block_id.clone()).collect()),
    }
}

/// The shared bullets a guest may write below (restoring is writing).
pub fn writable_roots(roots: &[BulletRoot]) -> Vec<String> {
    roots
        .iter()
        .filter(|r| r.role.can_write())
        .map(|r| r.block_id.clone())
        .collect()
}

/// A version's entry as a guest sees it (see the module's notes); `blocks`: their part's size
/// when known.
pub fn meta(m: VersionMeta, blocks: i64) -> VersionMeta {
    VersionMeta {
        name: None,
        created_by: None,
        created_by_name: None,
        blocks,
        raw_bytes: 0,
        stored_bytes: 0,
        ..m
    }
}

/// A version's state as a guest sees it: their part, no title.
pub fn state(s: &VersionState, roots: &[String]) -> VersionState {
    VersionState {
        title: String::new(),
        blocks: subtree::part_of(&s.blocks, roots),
    }
}

/// The title a guest is shown for their part: their first shared bullet's text (as the
/// snapshot gives it).
pub fn title(part: &[Arc<Block>]) -> String {
    part.first().map(|b| b.content.clone()).unwrap_or_default()
}

/// A bullet's history as a guest sees it (see the module's notes), asking the stored
/// document which blocks lie inside their part now (each block asked once).
pub struct HistoryLens<'a> {
    roots: &'a [String],
    inside: HashMap<String, bool>,
}

impl<'a> HistoryLens<'a> {
    pub fn new(roots: &'a [String]) -> Self {
        HistoryLens {
            roots,
            inside: HashMap::new(),
        }
    }

    /// Whether `id` lies inside the guest's part now.
    pub fn inside(&mut self, db: &mut Db, doc: &str, id: &str) -> Result<bool, StorageError> {
        if let Some(known) = self.inside.get(id) {
            return Ok(*known);
        }
        let found = sharing::covering_root(db, doc, id, self.roots)?.is_some();
        self.inside.insert(id.to_string(), found);
        Ok(found)
    }

    /// The changes of `block` (inside now) a guest is shown, as they are shown.
    pub fn changes(
        &mut self,
        db: &mut Db,
        doc: &str,
        block: &str,
        changes: Vec<BlockChange>,
    ) -> Result<Vec<BlockChange>, StorageError> {
        let is_root = self.roots.iter().any(|r| r == block);
        let mut shown = Vec::with_capacity(changes.len());
        for mut c in changes {
            let parent_inside = match c.parent_id.clone() {
                Some(p) => self.inside(db, doc, &p)?,
                None => false,
            };
            if !(is_root || parent_inside || c.content.is_none()) {
                continue;
            }
            if !parent_inside {
                c.parent_id = None;
            }
            if let Some(of) = c.conflict_of.clone() {
                if !self.inside(db, doc, &of)? {
                    c.conflict_of = None;
                }
            }
            shown.push(c);
        }
        Ok(shown)
    }

    /// The bullet as a version held it, when it lay inside the guest's part there.
    pub fn in_version(&self, s: &VersionState, block: &str) -> Option<Arc<Block>> {
        subtree::part_of(&s.blocks, self.roots)
            .into_iter()
            .find(|b| b.id == block)
    }
}
