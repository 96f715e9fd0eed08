//! The tabs of bullet guests (PROTOCOL §10): people who see only the subtrees of the bullets
//! shared with them. A guest is never sent the document's log — each entry could name a
//! block, a text or an author from elsewhere. Instead each guest tab is sent its *view*:
//! what it was last sent is remembered here, and its next reply carries exactly what changed
//! in it — blocks new to the view or changed since (as they are now) and a purge for every
//! block it had that is no longer in it (moved out, or the share ended) — as one entry at
//! the durable head; a wake-up to a tab that named itself carries the same kind of entry
//! (`push`), from the cursor it was last given. Nothing outside the view is ever looked at
//! to build it.
//!
//! A tab whose cursor is not the one it was last given (a reply lost on the way, a restarted
//! actor that remembers no views) is told to reload (`resync`): its snapshot opens the view
//! again. Owned by the actor; nothing else reaches inside.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::value::to_raw_value;

use crate::collab::block::Block;
use crate::collab::document::DocState;
use crate::collab::lease::OtherLease;
use crate::collab::op::{Effect, LogEntry, Op, OpKind, OpResult, RejectReason};
use crate::collab::rules::{conflict_copy_id, rescue_block_id};
use crate::collab::subtree;
use crate::storage::roles::{BulletRoot, Role};

use super::encoded::SnapshotBlock;
use super::sessions::Person;
use super::subscribers::GuestWake;

/// What one guest tab has been given: by its last reply, and by wake-ups since — which it
/// may or may not have applied (a wake-up can arrive while it pulls): the cursor it sends
/// next says which.
struct View {
    given: Given,
    /// The latest state pushed with a wake-up since `given` (each push continues the last).
    pushed: Option<Given>,
}

/// A state of the view a tab was given.
struct Given {
    /// Every block of the view as given: the state's own `Arc` (a change to a block replaces
    /// its `Arc`, so a different pointer is a change to send).
    sent: HashMap<String, Arc<Block>>,
    /// The top roots then (sent re-parented to the guest's top level).
    tops: HashSet<String>,
    /// The cursor the tab was given with it.
    seq: i64,
}

impl View {
    /// What the tab has if its cursor is `seq`; `None`: a cursor it was never given.
    fn at(&self, seq: i64) -> Option<&Given> {
        match &self.pushed {
            Some(p) if p.seq == seq => Some(p),
            _ => (self.given.seq == seq).then_some(&self.given),
        }
    }

    /// The newest state the tab may have.
    fn latest(&self) -> &Given {
        self.pushed.as_ref().unwrap_or(&self.given)
    }

    fn has(&self, id: &str) -> bool {
        self.given.sent.contains_key(id)
            || self
                .pushed
                .as_ref()
                .is_some_and(|p| p.sent.contains_key(id))
    }
}

/// From `base` to the view of `roots` in `doc` now: the effects that bring a tab there, and
/// the state it then has (at `base.seq`, for the caller to set).
fn since(base: &Given, doc: &DocState, roots: &[BulletRoot]) -> (Vec<Effect>, Given) {
    let (blocks, tops) = view_of(doc, &root_ids(roots));
    let mut effects = Vec::new();
    let mut now: HashMap<String, Arc<Block>> = HashMap::with_capacity(blocks.len());
    for b in blocks {
        let top = tops.contains(&b.id);
        let same = base
            .sent
            .get(&b.id)
            .is_some_and(|s| Arc::ptr_eq(s, &b) && base.tops.contains(&b.id) == top);
        if !same {
            effects.push(Effect::Block {
                block: subtree::as_seen(&b, top),
            });
        }
        now.insert(b.id.clone(), b);
    }
    let mut gone: Vec<String> = base
        .sent
        .keys()
        .filter(|id| !now.contains_key(*id))
        .cloned()
        .collect();
    if !gone.is_empty() {
        gone.sort();
        effects.push(Effect::Purge { block_ids: gone });
    }
    let given = Given {
        sent: now,
        tops,
        seq: base.seq,
    };
    (effects, given)
}

/// The one entry that brings a guest tab's view to `seq` (no author: it is not an op).
fn view_entry(seq: i64, at: i64, effects: Vec<Effect>) -> LogEntry {
    LogEntry {
        seq,
        op_id: format!("view-{seq}"),
        kind: "view".into(),
        client_id: String::new(),
        user_id: String::new(),
        at,
        effects,
    }
}

/// Who else is here as a bullet guest with `roots` sees it: the leases of others inside
/// their view, and of the people only those holding them and the guest themselves (`mine`:
/// their own tabs) — nobody working elsewhere in the document. Also the count of tabs.
pub(super) fn presence(
    doc: &DocState,
    roots: &[BulletRoot],
    others: Vec<OtherLease>,
    mine: impl Iterator<Item = Person>,
) -> (Vec<OtherLease>, Vec<Person>, usize) {
    let ids = root_ids(roots);
    let others: Vec<OtherLease> = others
        .into_iter()
        .filter(|l| subtree::inside(doc, &ids, &l.block_id))
        .collect();
    let mut people: Vec<Person> = Vec::new();
    for l in &others {
        match people.iter_mut().find(|p| p.user_id == l.user_id) {
            Some(p) => p.sessions += 1,
            None => people.push(Person {
                user_id: l.user_id.clone(),
                name: l.name.clone(),
                sessions: 1,
            }),
        }
    }
    for p in mine {
        if !people.iter().any(|q| q.user_id == p.user_id) {
            people.push(p);
        }
    }
    people.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.user_id.cmp(&b.user_id)));
    let tabs = people.iter().map(|p| p.sessions).sum();
    (others, people, tabs)
}

/// What a guest tab's reply carries.
#[derive(Debug)]
pub(super) enum Catch {
    /// The tab must reload its snapshot.
    Resync,
    /// Its new cursor and, if anything in its view changed, the one entry that brings it
    /// there.
    Caught { seq: i64, entry: Option<LogEntry> },
}

#[derive(Default)]
pub(super) struct GuestViews {
    by_client: HashMap<String, View>,
}

/// The share roots' block IDs.
pub(super) fn root_ids(roots: &[BulletRoot]) -> Vec<String> {
    roots.iter().map(|r| r.block_id.clone()).collect()
}

/// Whether any of the guest's shared bullets is in the document and not deleted.
pub(super) fn any_live_root(doc: &DocState, roots: &[BulletRoot]) -> bool {
    roots
        .iter()
        .any(|r| doc.get(&r.block_id).is_some_and(|b| !b.deleted))
}

/// The view of `roots` in `doc`: the blocks as stored, and the top roots.
fn view_of(doc: &DocState, roots: &[String]) -> (Vec<Arc<Block>>, HashSet<String>) {
    let tops = subtree::top_roots(doc, roots)
        .into_iter()
        .map(str::to_string)
        .collect();
    (subtree::blocks(doc, roots), tops)
}

/// A guest's role at block `id`: the best of the shared bullets on its ancestry.
fn role_at(doc: &DocState, roots: &[BulletRoot], id: &str) -> Option<Role> {
    let ids = root_ids(roots);
    subtree::covering(doc, &ids, id)
        .into_iter()
        .filter_map(|r| roots.iter().find(|b| b.block_id == r).map(|b| b.role))
        .max()
}

fn writable_at(doc: &DocState, roots: &[BulletRoot], id: &str) -> bool {
    role_at(doc, roots, id).is_some_and(Role::can_write)
}

/// The blocks of `list` inside the guest's view that they may write (a lease wish for
/// anything else is dropped unanswered, as for a block that does not exist).
pub(super) fn writable_only(doc: &DocState, roots: &[BulletRoot], list: &[String]) -> Vec<String> {
    list.iter()
        .filter(|id| writable_at(doc, roots, id))
        .cloned()
        .collect()
}

/// Where a guest's text goes that has no place of its own inside their view (an insert at
/// their top level, text for a block that left it): the first top root they may write
/// under that is not deleted.
pub(super) fn home(doc: &DocState, roots: &[BulletRoot]) -> Option<String> {
    subtree::top_roots(doc, &root_ids(roots))
        .into_iter()
        .find(|r| writable_at(doc, roots, r) && doc.get(r).is_some_and(|b| !b.deleted))
        .map(str::to_string)
}

/// What a guest's op becomes before the rules see it (PROTOCOL §10): ops on blocks inside
/// their view pass as they are; an insert or move to their top level goes under their home
/// root; text for a block outside it — one that left their view, or was never in it — is
/// kept as a new bullet at the end of their home root, as text for an unknown block is kept
/// at the end of a document; anything else naming a block outside is answered exactly as
/// an unknown block. Inside a bullet shared read-only, writes are refused (`invalid`).
pub(super) enum Confined {
    Apply(Op),
    Answer(OpResult),
}

pub(super) fn confine(doc: &DocState, roots: &[BulletRoot], op: &Op) -> Confined {
    let ids = root_ids(roots);
    let inside = |id: &str| subtree::inside(doc, &ids, id);
    let unknown = |id: &str| {
        Confined::Answer(OpResult::rejected(
            &op.op_id,
            Some(id),
            RejectReason::UnknownBlock,
        ))
    };
    let refused = |id: Option<&str>| {
        Confined::Answer(OpResult::rejected(&op.op_id, id, RejectReason::Invalid))
    };
    let with = |kind: OpKind| {
        Confined::Apply(Op {
            op_id: op.op_id.clone(),
            kind,
        })
    };
    // The parent a guest's block may go under: one inside their view they may write under,
    // or for their top level (or a parent they cannot see) their home root.
    let place = |parent: Option<&str>| -> Result<String, Box<Confined>> {
        match parent {
            Some(p) if inside(p) && writable_at(doc, roots, p) => Ok(p.to_string()),
            Some(p) if inside(p) => Err(Box::new(refused(Some(p)))),
            _ => home(doc, roots).ok_or_else(|| Box::new(refused(parent))),
        }
    };
    match &op.kind {
        OpKind::Insert {
            block_id,
            parent_id,
            order_key,
            content,
            block_type,
            checked,
            language,
        } => match place(parent_id.as_deref()) {
            Ok(parent) => {
                let order_key = if parent_id.as_deref() == Some(parent.as_str()) {
                    order_key.clone()
                } else {
                    doc.key_at_end(Some(&parent))
                };
                with(OpKind::Insert {
                    block_id: block_id.clone(),
                    parent_id: Some(parent),
                    order_key,
                    content: content.clone(),
                    block_type: *block_type,
                    checked: *checked,
                    language: language.clone(),
                })
            }
            Err(answer) => *answer,
        },
        OpKind::SetContent {
            block_id, content, ..
        } if !inside(block_id) => match place(None) {
            Ok(parent) => with(OpKind::Insert {
                block_id: rescue_block_id(&doc.doc_id, &op.op_id),
                order_key: doc.key_at_end(Some(&parent)),
                parent_id: Some(parent),
                content: content.clone(),
                block_type: None,
                checked: None,
                language: None,
            }),
            Err(answer) => *answer,
        },
        OpKind::Move {
            block_id,
            parent_id,
            order_key,
        } => {
            if !inside(block_id) {
                return unknown(block_id);
            }
            if !writable_at(doc, roots, block_id) {
                return refused(Some(block_id));
            }
            let top = subtree::top_roots(doc, &ids).contains(&block_id.as_str());
            match parent_id.as_deref() {
                // A shared bullet's place among its real siblings is not the guest's to change.
                None if top => refused(Some(block_id)),
                Some(p) if !inside(p) => unknown(p),
                parent => match place(parent) {
                    Ok(p) => {
                        let order_key = if parent == Some(p.as_str()) {
                            order_key.clone()
                        } else {
                            doc.key_at_end(Some(&p))
                        };
                        with(OpKind::Move {
                            block_id: block_id.clone(),
                            parent_id: Some(p),
                            order_key,
                        })
                    }
                    Err(answer) => *answer,
                },
            }
        }
        OpKind::SetContent { block_id, .. }
        | OpKind::SetProps { block_id, .. }
        | OpKind::Delete { block_id }
        | OpKind::Restore { block_id } => {
            if !inside(block_id) {
                unknown(block_id)
            } else if !writable_at(doc, roots, block_id) {
                refused(Some(block_id))
            } else {
                Confined::Apply(op.clone())
            }
        }
        // The document's title is not theirs (their title is their root's text).
        OpKind::SetTitle { .. } => refused(None),
    }
}

/// After a guest's op: a bullet it made that the rules placed outside the guest's view (a
/// conflict copy beside their shared bullet, an insert under a deleted parent placed at the
/// nearest live ancestor) goes to the end of their home root instead, so they keep seeing
/// their text. Returns the block as it is now, to log in place of the one made.
pub(super) fn keep_inside(
    doc: &mut DocState,
    roots: &[BulletRoot],
    op: &Op,
    made: &Arc<Block>,
) -> Option<Arc<Block>> {
    let new_ids = [
        conflict_copy_id(&doc.doc_id, &op.op_id),
        rescue_block_id(&doc.doc_id, &op.op_id),
    ];
    let inserted = matches!(&op.kind, OpKind::Insert { block_id, .. } if *block_id == made.id);
    if !(inserted || new_ids.contains(&made.id)) {
        return None;
    }
    if subtree::inside(doc, &root_ids(roots), &made.id) {
        return None;
    }
    let home = home(doc, roots)?;
    let mut b = (**made).clone();
    b.order_key = doc.key_at_end(Some(&home));
    b.parent_id = Some(home);
    Some(doc.put(Arc::new(b)))
}

impl GuestViews {
    /// A guest tab opens its view (a snapshot at `seq`): the blocks it shows, as the guest
    /// sees them (top roots at the top level, depths from there), in view order. `client`
    /// None (a plain read) remembers nothing.
    pub(super) fn open(
        &mut self,
        client: Option<&str>,
        doc: &DocState,
        roots: &[BulletRoot],
        seq: i64,
    ) -> Vec<SnapshotBlock> {
        let (blocks, tops) = view_of(doc, &root_ids(roots));
        let mut depth: HashMap<&str, u32> = HashMap::new();
        let mut out = Vec::with_capacity(blocks.len());
        for b in &blocks {
            let d = match b.parent_id.as_deref() {
                Some(p) if !tops.contains(&b.id) => depth.get(p).map_or(0, |d| d + 1),
                _ => 0,
            };
            depth.insert(&b.id, d);
            out.push(SnapshotBlock {
                block: subtree::as_seen(b, tops.contains(&b.id)),
                depth: d,
            });
        }
        if let Some(client) = client {
            let sent = blocks.iter().map(|b| (b.id.clone(), b.clone())).collect();
            let given = Given { sent, tops, seq };
            self.by_client.insert(
                client.to_string(),
                View {
                    given,
                    pushed: None,
                },
            );
        }
        out
    }

    /// What a guest tab that has seen `last_seq` is sent now, at the durable head `head`
    /// (`at`: the entry's time).
    pub(super) fn catch_up(
        &mut self,
        client: &str,
        doc: &DocState,
        roots: &[BulletRoot],
        last_seq: i64,
        head: i64,
        at: i64,
    ) -> Catch {
        let Some(view) = self.by_client.get_mut(client) else {
            return Catch::Resync;
        };
        let Some(base) = view.at(last_seq) else {
            self.by_client.remove(client);
            return Catch::Resync;
        };
        let (effects, mut now) = since(base, doc, roots);
        if !effects.is_empty() {
            now.seq = head.max(now.seq);
        }
        let seq = now.seq;
        view.given = now;
        view.pushed = None;
        Catch::Caught {
            seq,
            entry: (!effects.is_empty()).then(|| view_entry(seq, at, effects)),
        }
    }

    /// A change touched the guest tab `client`'s view (the durable head is now `head`): the
    /// entry its wake-up carries — from the cursor it was last given (by a reply or the
    /// previous push) to `head` — and that cursor. `None` when nothing it sees changed
    /// (a lease only: it pulls for those) or it has no view here.
    pub(super) fn push(
        &mut self,
        client: &str,
        doc: &DocState,
        roots: &[BulletRoot],
        head: i64,
        at: i64,
    ) -> Option<(i64, LogEntry)> {
        let view = self.by_client.get_mut(client)?;
        let base = view.latest();
        if head <= base.seq {
            return None;
        }
        let (effects, mut now) = since(base, doc, roots);
        if effects.is_empty() {
            return None;
        }
        let from = now.seq;
        now.seq = head;
        view.pushed = Some(now);
        Some((from, view_entry(head, at, effects)))
    }

    /// Whether the guest tab `client`, whose cursor is `since`, has anything to fetch: a
    /// view it was never given or a cursor behind the one it was given (it must reload), or
    /// a block of its view changed, new or gone since it was last sent. A cursor ahead of
    /// its view's (a wake-up's head, its pull under way) has news only if the view changed.
    /// Changes nothing.
    pub(super) fn has_news(
        &self,
        client: Option<&str>,
        doc: &DocState,
        roots: &[BulletRoot],
        since: i64,
    ) -> bool {
        let Some(view) = client.and_then(|c| self.by_client.get(c)) else {
            return true;
        };
        let base = match view.at(since) {
            Some(given) => given,
            // A cursor it was never given, behind what it may have: it must reload.
            None if since < view.latest().seq => return true,
            None => view.latest(),
        };
        let (blocks, tops) = view_of(doc, &root_ids(roots));
        blocks.len() != base.sent.len()
            || tops != base.tops
            || blocks
                .iter()
                .any(|b| !base.sent.get(&b.id).is_some_and(|s| Arc::ptr_eq(s, b)))
    }

    /// What the guest tab `client` with `roots` hears of a change to `touched` that moved
    /// the durable head to `head`: its own view's entry when the change touched what it
    /// sees (built from its view alone), a plain wake-up for a lease only or an ended view
    /// (every shared bullet deleted: it pulls, to be told so), nothing otherwise.
    pub(super) fn wake(
        &mut self,
        client: Option<&str>,
        doc: &DocState,
        roots: &[BulletRoot],
        touched: &HashSet<String>,
        head: i64,
        at: i64,
    ) -> GuestWake {
        if !self.concerns(client, doc, roots, touched) {
            return GuestWake::Quiet;
        }
        if !any_live_root(doc, roots) {
            return GuestWake::Plain;
        }
        let pushed = client.and_then(|c| self.push(c, doc, roots, head, at));
        match pushed.and_then(|(since, entry)| Some((since, to_raw_value(&[entry]).ok()?))) {
            Some((since, raw)) => GuestWake::View {
                since,
                entries: Arc::from(raw),
            },
            None => GuestWake::Plain,
        }
    }

    /// Whether a change to any of `touched` concerns the guest tab `client` with `roots`:
    /// the block is in its view now, or was in what it was last sent.
    pub(super) fn concerns(
        &self,
        client: Option<&str>,
        doc: &DocState,
        roots: &[BulletRoot],
        touched: &HashSet<String>,
    ) -> bool {
        let ids = root_ids(roots);
        let sent = client.and_then(|c| self.by_client.get(c));
        touched
            .iter()
            .any(|id| sent.is_some_and(|v| v.has(id)) || subtree::inside(doc, &ids, id))
    }

    /// Forgets the views of tabs that are gone.
    pub(super) fn retain(&mut self, present: impl Fn(&str) -> bool) {
        self.by_client.retain(|c, _| present(c));
    }

    pub(super) fn forget(&mut self, client: &str) {
        self.by_client.remove(client);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::roles::Role;

    fn put(d: &mut DocState, id: &str, parent: Option<&str>, key: &str) {
        d.put(Arc::new(Block::new(
            id.into(),
            parent.map(str::to_string),
            key.into(),
            format!("text of {id}"),
            0,
            "usr_o",
        )));
    }

    fn root(id: &str) -> Vec<BulletRoot> {
        vec![BulletRoot {
            block_id: id.into(),
            role: Role::Editor,
        }]
    }

    fn ids_in(entry: &LogEntry) -> (Vec<String>, Vec<String>) {
        let mut blocks = Vec::new();
        let mut purged = Vec::new();
        for e in &entry.effects {
            match e {
                Effect::Block { block } => blocks.push(block.id.clone()),
                Effect::Purge { block_ids } => purged.extend(block_ids.iter().cloned()),
                Effect::Title { .. } => panic!("a guest never gets the title"),
            }
        }
        (blocks, purged)
    }

    #[test]
    fn a_guest_is_sent_what_changed_in_its_view_and_loses_what_left_it() {
        let mut d = DocState::new("doc_g", "Secret title");
        put(&mut d, "r", None, "a");
        put(&mut d, "c", Some("r"), "a");
        put(&mut d, "x", None, "b");
        let mut views = GuestViews::default();
        let snap = views.open(Some("cl_g"), &d, &root("r"), 3);
        assert_eq!(snap.len(), 2);
        assert!(snap[0].block.parent_id.is_none());
        assert_eq!(snap[1].depth, 1);
        // Nothing changed in the view: no entry, same cursor.
        put(&mut d, "x", None, "c");
        match views.catch_up("cl_g", &d, &root("r"), 3, 4, 0) {
            Catch::Caught {
                seq: 3,
                entry: None,
            } => {}
            other => panic!("{other:?}"),
        }
        // `x` moves in, `c` moves out.
        put(&mut d, "x", Some("r"), "b");
        put(&mut d, "c", None, "d");
        let Catch::Caught {
            seq: 6,
            entry: Some(e),
        } = views.catch_up("cl_g", &d, &root("r"), 3, 6, 0)
        else {
            panic!("expected an entry");
        };
        assert_eq!(ids_in(&e), (vec!["x".to_string()], vec!["c".to_string()]));
        // A stale cursor reloads.
        assert!(matches!(
            views.catch_up("cl_g", &d, &root("r"), 3, 6, 0),
            Catch::Resync
        ));
    }
}
