//! Replaying log effects onto a document state: what a client does with `/sync` entries
//! and what tests use to prove that snapshot + log = server state.

use super::document::DocState;
use super::op::{Effect, LogEntry};

pub fn apply_effect(doc: &mut DocState, effect: &Effect) {
    match effect {
        Effect::Block { block } => {
            doc.put(block.clone());
        }
        Effect::Title {
            title,
            title_version,
        } => {
            doc.title = title.clone();
            doc.title_version = *title_version;
        }
        Effect::Purge { block_ids } => doc.purge(block_ids),
    }
}

pub fn apply_entry(doc: &mut DocState, entry: &LogEntry) {
    for e in &entry.effects {
        apply_effect(doc, e);
    }
    doc.head_seq = entry.seq;
}
