//! Bullet guests (PROTOCOL §10) against the real actor on a real database, at random:
//! random trees, shares that come and go, moves in and out, deletes and restores, writes and
//! leases by the owner and by the guest, and the guest's wake-up stream. After every step
//! the guest's copy (built only from what it was sent) equals the owner's subtree exactly,
//! nothing it was ever sent names a block outside its view at that moment (a purge names
//! only blocks it had), and its stream and its long-poll heard of the step exactly when the
//! step touched its view.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use super::messages::Events;
use actix::prelude::*;
use serde_json::{json, Value};

use crate::collab::block::Author;
use crate::collab::op::{Op, OpStatus, RejectReason};
use crate::storage::roles::{BulletRoot, Reach, Role};

use super::sync_reply::{Entries, LogPage};
use super::tests::{caller, client, confirmed_now, fixture, start, sync, Fixture};
use super::*;

/// A small deterministic generator (xorshift), so a failing seed can be run again.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> Option<&'a T> {
        (!v.is_empty()).then(|| &v[self.below(v.len())])
    }
}

const GUEST: &str = "usr_guest";
const SECRET_TITLE: &str = "Secret plans of the owner";

fn guest_caller(roots: &[BulletRoot]) -> Caller {
    Caller {
        client: Some(client("cl_guest")),
        author: Author {
            user_id: GUEST.into(),
            name: "Gus".into(),
        },
        role: roots.iter().map(|r| r.role).max().unwrap_or(Role::Viewer),
        shared: true,
        reach: Reach::Bullets(roots.to_vec().into()),
    }
}

fn op(v: Value) -> Op {
    serde_json::from_value(v).expect("op")
}

/// The owner's whole document: block ID → block (as JSON), from a snapshot.
async fn owner_blocks(addr: &Addr<DocumentActor>, f: &Fixture) -> BTreeMap<String, Value> {
    let snap = addr
        .send(Snapshot {
            caller: Caller {
                client: None,
                ..caller(f, "cl_owner")
            },
        })
        .await
        .unwrap()
        .expect("snapshot");
    snap.blocks
        .iter()
        .map(|b| (b.block.id.clone(), serde_json::to_value(&*b.block).unwrap()))
        .collect()
}

fn parent_of(doc: &BTreeMap<String, Value>, id: &str) -> Option<String> {
    doc.get(id)?["parentId"].as_str().map(str::to_string)
}

/// What the guest should see, computed here from the owner's blocks: the subtrees of the
/// roots no other root contains, top roots at the top level.
fn expected_view(doc: &BTreeMap<String, Value>, roots: &[BulletRoot]) -> BTreeMap<String, Value> {
    let is_root = |id: &str| roots.iter().any(|r| r.block_id == id);
    let mut out = BTreeMap::new();
    for (id, b) in doc {
        // Walk up: the outermost root on the chain, if any.
        let (mut cur, mut top, mut steps): (Option<String>, Option<String>, usize) =
            (Some(id.clone()), None, 0);
        while let Some(c) = cur {
            if is_root(&c) {
                top = Some(c.clone());
            }
            steps += 1;
            assert!(steps < 10_000, "a cycle in the owner's tree");
            cur = parent_of(doc, &c);
        }
        let Some(top) = top else { continue };
        let mut b = b.clone();
        if top == *id {
            b["parentId"] = Value::Null;
        }
        out.insert(id.clone(), b);
    }
    out
}

/// Whether the guest has a top root it may write under that is not deleted.
fn has_home(doc: &BTreeMap<String, Value>, roots: &[BulletRoot]) -> bool {
    let view = expected_view(doc, roots);
    roots.iter().any(|r| {
        view.get(&r.block_id).is_some_and(|b| {
            b["parentId"].is_null() && b["deleted"] == false && r.role == Role::Editor
        })
    })
}

/// Everything the guest has, built only from what it was sent.
#[derive(Default)]
struct GuestCopy {
    blocks: BTreeMap<String, Value>,
    seq: i64,
}

impl GuestCopy {
    /// Checks a snapshot against the view and takes it.
    fn take_snapshot(&mut self, snap: &SnapshotReply, inside: &HashSet<String>) {
        let text = serde_json::to_string(snap).unwrap();
        assert!(
            !text.contains(SECRET_TITLE),
            "the document's title reached a guest"
        );
        assert!(snap.icon.is_none());
        self.blocks.clear();
        for b in snap.blocks.iter() {
            assert!(
                inside.contains(&b.block.id),
                "snapshot leaked {}",
                b.block.id
            );
            self.blocks
                .insert(b.block.id.clone(), serde_json::to_value(&*b.block).unwrap());
        }
        for l in &snap.leases.others {
            assert!(inside.contains(&l.block_id), "a lease outside leaked");
        }
        self.seq = snap.head_seq;
    }

    /// Checks one entry (blocks inside now, purges of blocks it had) and applies it.
    fn take_entry(&mut self, entry: &Value, inside: &HashSet<String>) {
        assert_eq!(entry["userId"], "", "no author of anything outside");
        assert_eq!(entry["kind"], "view", "a guest is sent its view, not ops");
        for e in entry["effects"].as_array().unwrap() {
            match e["e"].as_str().unwrap() {
                "block" => {
                    let id = e["block"]["id"].as_str().unwrap().to_string();
                    assert!(inside.contains(&id), "entry leaked {id}");
                    self.blocks.insert(id, e["block"].clone());
                }
                "purge" => {
                    for id in e["blockIds"].as_array().unwrap() {
                        let id = id.as_str().unwrap();
                        assert!(
                            self.blocks.remove(id).is_some(),
                            "a purge named {id}, which the guest never had"
                        );
                    }
                }
                other => panic!("a guest got a {other} effect"),
            }
        }
    }

    /// Applies a wake-up's view entry, as a tab at cursor `since` does: it must continue
    /// exactly this copy's cursor (the stream is this tab's, and nothing was lost).
    fn take_wake(&mut self, w: &Wake, inside: &HashSet<String>) {
        let Some(entries) = w.entries_json() else {
            assert!(w.since.is_none(), "a cursor without an entry: {w:?}");
            return;
        };
        assert!(!entries.contains(SECRET_TITLE));
        assert_eq!(
            w.since,
            Some(self.seq),
            "a guest's entry must continue its cursor"
        );
        let list: Vec<Value> = serde_json::from_str(entries).unwrap();
        assert_eq!(list.len(), 1, "one view entry per wake-up");
        self.take_entry(&list[0], inside);
        self.seq = list[0]["seq"].as_i64().unwrap();
    }

    /// Checks a sync reply's entries (blocks inside now, purges of blocks it had) and
    /// applies them.
    fn take_entries(&mut self, reply: &SyncReply, inside: &HashSet<String>) {
        let LogPage::Ready(Entries::Records(records)) = &reply.page else {
            panic!("a guest is never sent the log: {:?}", reply.page);
        };
        for r in records {
            let text = r.json.get();
            assert!(!text.contains(SECRET_TITLE));
            self.take_entry(&serde_json::from_str(text).unwrap(), inside);
        }
        for l in &reply.fields.leases.others {
            assert!(inside.contains(&l.block_id), "a lease outside leaked");
        }
        for p in &reply.fields.people {
            let holds_inside = reply
                .fields
                .leases
                .others
                .iter()
                .any(|l| l.user_id == p.user_id);
            assert!(
                p.user_id == GUEST || holds_inside,
                "presence of {p:?} leaked"
            );
        }
        assert!(reply.fields.icon.is_none());
        self.seq = reply.fields.head_seq;
    }
}

struct Run {
    f: Fixture,
    addr: Addr<DocumentActor>,
    rng: Rng,
    roots: Vec<BulletRoot>,
    copy: GuestCopy,
    owner_seq: i64,
    next: usize,
    stream: Option<(Subscription, Events)>,
    /// Snapshots the guest was told to reload.
    resyncs: usize,
    /// The guest's view has ended (its last sync was answered as for a deleted document).
    ended: bool,
    /// Syncs answered so.
    ends: usize,
}

impl Run {
    fn fresh_id(&mut self, what: &str) -> String {
        self.next += 1;
        format!("{what}_{}", self.next)
    }

    async fn owner_sync(&mut self, ops: Vec<Op>, hold: Option<Vec<String>>) -> SyncReply {
        let hold = hold.map(|h| h.iter().map(String::as_str).map(str::to_string).collect());
        let msg = Sync::new(
            caller(&self.f, "cl_owner"),
            crate::collab::sync_request::SyncRequest {
                client: client("cl_owner"),
                last_seq: self.owner_seq,
                ops,
                hold,
            },
            Some((
                crate::storage::log::Precheck::default(),
                std::time::Instant::now(),
            )),
        );
        let reply = self.addr.send(msg).await.unwrap().expect("owner synced");
        self.owner_seq = reply.fields.head_seq;
        reply
    }

    /// The blocks the owner's tab holds leases on, as another tab of the owner's sees them.
    async fn owner_held(&self) -> HashSet<String> {
        let look = sync(
            caller(&self.f, "cl_watch"),
            self.owner_seq,
            Vec::new(),
            None,
        );
        let reply = self.addr.send(look).await.unwrap().expect("watched");
        reply
            .fields
            .leases
            .others
            .iter()
            .filter(|l| l.client_id == "cl_owner")
            .map(|l| l.block_id.clone())
            .collect()
    }

    async fn subscribe_guest(&mut self) {
        self.stream = None;
        let (sink, rx) = super::messages::event_channel();
        let msg = Subscribe {
            channel: Channel::WebSocket,
            client: Some(client("cl_guest")),
            user_id: GUEST.into(),
            sink,
            grant: Arc::new(super::grant::UserGrant(GUEST.into())),
            confirmed: confirmed_now(&self.f),
            reach: Reach::Bullets(self.roots.clone().into()),
        };
        let s = self.addr.send(msg).await.unwrap().expect("subscribed");
        self.stream = Some((s.subscription, rx));
    }

    fn wakes(&mut self) -> Vec<Arc<Wake>> {
        let Some((_, rx)) = self.stream.as_mut() else {
            return Vec::new();
        };
        super::tests::drain(rx)
    }

    /// The guest catches up (reloading when told to) and its copy is checked. `None`: its
    /// view has ended (every shared bullet deleted or unshared) — answered as for a deleted
    /// document, nothing applied — exactly when the owner's document says so.
    async fn guest_sync(&mut self, ops: Vec<Op>, hold: Option<Vec<String>>) -> Option<SyncReply> {
        let msg = sync(
            guest_caller(&self.roots),
            self.copy.seq,
            ops,
            hold.as_ref()
                .map(|h| h.iter().map(String::as_str).collect()),
        );
        let answer = self.addr.send(msg).await.unwrap();
        let doc = owner_blocks(&self.addr, &self.f).await;
        let live = self
            .roots
            .iter()
            .any(|r| doc.get(&r.block_id).is_some_and(|b| b["deleted"] == false));
        let reply = match answer {
            Err(DocError::NotFound) => {
                assert!(!live, "a guest with a live shared bullet was refused");
                self.ended = true;
                self.ends += 1;
                return None;
            }
            other => other.expect("guest synced"),
        };
        assert!(
            live,
            "a guest whose shared bullets are all deleted was answered"
        );
        self.ended = false;
        let inside: HashSet<String> = expected_view(&doc, &self.roots).into_keys().collect();
        if reply.fields.resync {
            self.resyncs += 1;
            let snap = self
                .addr
                .send(Snapshot {
                    caller: guest_caller(&self.roots),
                })
                .await
                .unwrap()
                .expect("guest snapshot");
            self.copy.take_snapshot(&snap, &inside);
        } else {
            self.copy.take_entries(&reply, &inside);
        }
        Some(reply)
    }

    async fn check_copy(&self) {
        if self.ended {
            // Nothing was sent since: the copy is what the guest had when its view ended.
            return;
        }
        let doc = owner_blocks(&self.addr, &self.f).await;
        let want = expected_view(&doc, &self.roots);
        assert_eq!(
            self.copy.blocks, want,
            "the guest's copy is not the owner's subtree"
        );
    }

    /// One random step of the owner's; returns the blocks it touched.
    async fn owner_step(&mut self) -> HashSet<String> {
        let before = owner_blocks(&self.addr, &self.f).await;
        let ids: Vec<String> = before.keys().cloned().collect();
        let parent = if self.rng.below(4) == 0 {
            None
        } else {
            self.rng.pick(&ids).cloned()
        };
        let op_id = self.fresh_id("op_o");
        let target = self.rng.pick(&ids).cloned();
        let ops = match (self.rng.below(7), target) {
            (0..=1, _) | (_, None) => {
                let id = self.fresh_id("blk");
                vec![op(json!({"opId": op_id, "kind": "insert", "blockId": id,
                    "parentId": parent, "orderKey": format!("k{:04}", self.rng.below(9999)),
                    "content": format!("owner text of {id}")}))]
            }
            (2, Some(t)) => vec![op(json!({"opId": op_id, "kind": "move", "blockId": t,
                "parentId": parent, "orderKey": format!("k{:04}", self.rng.below(9999))}))],
            (3, Some(t)) => {
                let v = before[&t]["version"].as_i64().unwrap();
                vec![op(
                    json!({"opId": op_id, "kind": "set_content", "blockId": t,
                    "content": format!("owner edit {op_id}"), "baseVersion": v}),
                )]
            }
            (4, Some(t)) => vec![op(json!({"opId": op_id, "kind": "delete", "blockId": t}))],
            (5, Some(t)) => vec![op(json!({"opId": op_id, "kind": "restore", "blockId": t}))],
            (_, Some(t)) => {
                // Leases only: the owner starts (or stops) typing somewhere.
                let hold: Vec<String> = if self.rng.below(3) == 0 {
                    vec![]
                } else {
                    vec![t]
                };
                let was = self.owner_held().await;
                self.owner_sync(Vec::new(), Some(hold)).await;
                let now = self.owner_held().await;
                // The leases that came or went.
                return was.symmetric_difference(&now).cloned().collect();
            }
        };
        self.owner_sync(ops, None).await;
        let after = owner_blocks(&self.addr, &self.f).await;
        let mut touched: HashSet<String> = HashSet::new();
        for (id, b) in &after {
            if before.get(id) != Some(b) {
                touched.insert(id.clone());
            }
        }
        touched.extend(before.keys().filter(|id| !after.contains_key(*id)).cloned());
        touched
    }

    /// One random step of the guest's: an op on a block inside or outside its view.
    async fn guest_step(&mut self) {
        let doc = owner_blocks(&self.addr, &self.f).await;
        let inside: HashSet<String> = expected_view(&doc, &self.roots).into_keys().collect();
        let ids: Vec<String> = doc.keys().cloned().collect();
        let Some(target) = self.rng.pick(&ids).cloned() else {
            return;
        };
        let op_id = self.fresh_id("op_g");
        let parent = if self.rng.below(3) == 0 {
            None
        } else {
            self.rng.pick(&ids).cloned()
        };
        let o = match self.rng.below(5) {
            0 => {
                let id = self.fresh_id("blk_g");
                op(
                    json!({"opId": op_id, "kind": "insert", "blockId": id, "parentId": parent,
                    "orderKey": "m", "content": format!("guest text of {id}")}),
                )
            }
            1 => {
                let v = doc[&target]["version"].as_i64().unwrap();
                op(
                    json!({"opId": op_id, "kind": "set_content", "blockId": target,
                    "content": format!("guest edit {op_id}"), "baseVersion": v}),
                )
            }
            2 => op(json!({"opId": op_id, "kind": "move", "blockId": target,
                "parentId": parent, "orderKey": "n"})),
            3 => op(json!({"opId": op_id, "kind": "delete", "blockId": target})),
            _ => op(json!({"opId": op_id, "kind": "set_title", "title": "mine", "baseVersion": 1})),
        };
        let kind = o.kind.name();
        let hold = vec![target.clone()];
        let Some(reply) = self.guest_sync(vec![o], Some(hold)).await else {
            // The view has ended: nothing of the guest's applied (its device keeps it).
            return;
        };
        let result = &reply.fields.results[0];
        if !inside.contains(&target) && kind != "insert" && kind != "set_title" {
            if kind == "set_content" && !has_home(&doc, &self.roots) {
                // Nowhere inside the view to keep it (every top root read-only or deleted).
                assert_eq!(result.reason, Some(RejectReason::Invalid), "{result:?}");
            } else if kind == "set_content" {
                // Kept as a new bullet inside the view, as text for an unknown block is.
                assert_eq!(result.status, OpStatus::Applied, "{result:?}");
                let made = result.block_id.clone().expect("the rescue's ID");
                assert_ne!(made, target);
                if result.seq.is_some() {
                    assert!(
                        self.copy.blocks.contains_key(&made),
                        "the guest lost its text"
                    );
                }
            } else {
                assert_eq!(
                    result.reason,
                    Some(RejectReason::UnknownBlock),
                    "{result:?}"
                );
            }
        }
        for g in &reply.fields.leases.granted {
            assert!(inside.contains(g), "a lease outside was granted to a guest");
        }
        for d in &reply.fields.leases.denied {
            assert!(inside.contains(&d.block_id), "a lease outside was answered");
        }
    }

    async fn share_step(&mut self) {
        let doc = owner_blocks(&self.addr, &self.f).await;
        let ids: Vec<String> = doc.keys().cloned().collect();
        if self.rng.below(2) == 0 && self.roots.len() > 1 {
            let i = self.rng.below(self.roots.len());
            self.roots.remove(i);
        } else if let Some(id) = self.rng.pick(&ids).cloned() {
            if !self.roots.iter().any(|r| r.block_id == id) {
                let role = if self.rng.below(5) == 0 {
                    Role::Viewer
                } else {
                    Role::Editor
                };
                self.roots.push(BulletRoot { block_id: id, role });
            }
        }
        self.subscribe_guest().await;
    }
}

/// One seed's run; returns how often the guest's view had ended when it synced.
async fn run(seed: u64, steps: usize) -> usize {
    let f = fixture();
    let addr = start(&f, Duration::from_secs(3600));
    let mut r = Run {
        f,
        addr,
        rng: Rng(seed),
        roots: Vec::new(),
        copy: GuestCopy::default(),
        owner_seq: 0,
        next: 0,
        stream: None,
        resyncs: 0,
        ended: false,
        ends: 0,
    };
    // A title the guest must never see, and a first tree.
    let title = op(
        json!({"opId": "op_title", "kind": "set_title", "title": SECRET_TITLE,
        "baseVersion": 1}),
    );
    r.owner_sync(vec![title], None).await;
    for _ in 0..8 {
        r.owner_step().await;
    }
    r.share_step().await;
    r.guest_sync(Vec::new(), None).await;
    let mut pushed = 0;
    for step in 0..steps {
        r.wakes();
        match r.rng.below(10) {
            0 => r.share_step().await,
            1..=3 => r.guest_step().await,
            _ if r.ended => {
                // An ended view hears changes to its part without entries (it pulls, and is
                // refused until a shared bullet is restored).
                r.owner_step().await;
                let doc = owner_blocks(&r.addr, &r.f).await;
                let live = r
                    .roots
                    .iter()
                    .any(|x| doc.get(&x.block_id).is_some_and(|b| b["deleted"] == false));
                let inside: HashSet<String> = expected_view(&doc, &r.roots).into_keys().collect();
                for w in r.wakes() {
                    assert!(
                        live || w.entries.is_none(),
                        "seed {seed} step {step}: an ended view was pushed entries"
                    );
                    r.copy.take_wake(&w, &inside);
                }
            }
            _ => {
                let held: HashSet<String> = r.copy.blocks.keys().cloned().collect();
                // The guest's long-poll, waiting from its cursor: its copy is up to date.
                let wait = WaitChanges {
                    since: r.copy.seq,
                    lease_seq: 0,
                    client: Some(client("cl_guest")),
                    user_id: GUEST.into(),
                    reach: Reach::Bullets(r.roots.clone().into()),
                };
                let Changes::Later { mut rx, .. } =
                    r.addr.send(wait).await.unwrap().expect("waiting")
                else {
                    panic!(
                        "seed {seed} step {step}: a guest with nothing new was answered at once"
                    );
                };
                let touched = r.owner_step().await;
                let doc = owner_blocks(&r.addr, &r.f).await;
                let inside: HashSet<String> = expected_view(&doc, &r.roots).into_keys().collect();
                let concerns = touched
                    .iter()
                    .any(|id| held.contains(id) || inside.contains(id));
                let wakes = r.wakes();
                assert_eq!(
                    !wakes.is_empty(),
                    concerns,
                    "seed {seed} step {step}: touched {touched:?}, guest had {held:?}, \
                     inside now {inside:?}: heard {wakes:?}"
                );
                assert_eq!(
                    rx.try_recv().is_ok(),
                    concerns,
                    "seed {seed} step {step}: the guest's long-poll (touched {touched:?})"
                );
                // What the wake-ups carried is the view as it is now: the copy built from
                // them alone equals the owner's subtree, before any pull.
                for w in &wakes {
                    r.copy.take_wake(w, &inside);
                }
                if wakes.iter().any(|w| w.entries.is_some()) {
                    pushed += 1;
                    r.check_copy().await;
                }
            }
        }
        r.guest_sync(Vec::new(), None).await;
        r.check_copy().await;
    }
    assert!(
        pushed > 0,
        "seed {seed}: no wake-up carried the guest's view"
    );
    // Only its first sync (no view yet) reloads: a tab that follows its wake-ups' entries
    // is never told to start over.
    assert_eq!(r.resyncs, 1, "seed {seed}: the guest was told to reload");
    r.ends
}

#[actix::test]
async fn a_bullet_guest_sees_its_subtrees_exactly_and_nothing_else_ever() {
    let mut ends = 0;
    for seed in [
        0x9E37_79B9_7F4A_7C15,
        0xD1B5_4A32_D192_ED03,
        42,
        7,
        1_000_003,
    ] {
        ends += run(seed, 200).await;
    }
    // Shared bullets deleted and restored: views ended and came back.
    assert!(ends > 0, "no guest view ever ended");
}

#[actix::test]
async fn a_guests_insert_at_its_top_level_goes_under_its_shared_bullet() {
    let f = fixture();
    let addr = start(&f, Duration::from_secs(3600));
    let mut r = Run {
        f,
        addr,
        rng: Rng(1),
        roots: vec![BulletRoot {
            block_id: "blk_root".into(),
            role: Role::Editor,
        }],
        copy: GuestCopy::default(),
        owner_seq: 0,
        next: 0,
        stream: None,
        resyncs: 0,
        ended: false,
        ends: 0,
    };
    r.owner_sync(
        vec![
            op(
                json!({"opId": "o1", "kind": "insert", "blockId": "blk_top", "parentId": null,
                "orderKey": "a", "content": "the owner's"}),
            ),
            op(
                json!({"opId": "o2", "kind": "insert", "blockId": "blk_root",
                "parentId": "blk_top", "orderKey": "a", "content": "shared"}),
            ),
        ],
        None,
    )
    .await;
    r.guest_sync(Vec::new(), None).await;
    r.guest_sync(
        vec![op(
            json!({"opId": "g1", "kind": "insert", "blockId": "blk_new",
            "parentId": null, "orderKey": "b", "content": "mine"}),
        )],
        None,
    )
    .await;
    let doc = owner_blocks(&r.addr, &r.f).await;
    assert_eq!(parent_of(&doc, "blk_new").as_deref(), Some("blk_root"));
    r.check_copy().await;
}
