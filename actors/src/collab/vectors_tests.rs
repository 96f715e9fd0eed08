//! Rule vectors for the browser's mirror of these rules (`static/engine/model.js`): cases of
//! initial state + leases of others + author/client/time + ops, with the result, effects and
//! lease grants `rules::apply_op` gives, and the final document order. Written to
//! `tests/vectors/rules.json` with `UPDATE_VECTORS=1`; otherwise the checked-in file must equal
//! what the rules produce now, so a rule change cannot silently leave the browser behind.

use std::collections::HashSet;

use serde_json::{json, Value};

use super::block::{Author, Block, BlockType};
use super::document::DocState;
use super::lease::{LeaseTable, TITLE_LEASE};
use super::op::{Op, OpKind, Props};
use super::rules::{apply_op, OpContext, DEFAULT_MAX_DEPTH};

const DOC: &str = "doc_vectors";
const NOW: i64 = 2_000_000;
const TTL: i64 = 20_000;
const ME: &str = "cl_me";
const OTHER: &str = "cl_other";

fn me() -> Author {
    Author {
        user_id: "usr_me".into(),
        name: "Me".into(),
    }
}

fn other() -> Author {
    Author {
        user_id: "usr_other".into(),
        name: "Other".into(),
    }
}

fn block(
    id: &str,
    parent: Option<&str>,
    key: &str,
    version: i64,
    deleted_at: Option<i64>,
) -> Block {
    // Content = the ID without its prefix, so effects are easy to read.
    let text = id.trim_start_matches("blk_").to_uppercase();
    let mut b = Block::new(
        id.into(),
        parent.map(Into::into),
        key.into(),
        text,
        100,
        "usr_seed",
    );
    b.version = version;
    b.deleted = deleted_at.is_some();
    b.deleted_at = deleted_at;
    b
}

/// The shared fixture `tree`:
/// ```text
/// a (a0)                 a1 v3 (a0) → a1x (a0);  a2 (a1);  †t v2 (a2) deleted at 300
/// b (a1)
/// †d (a2) deleted 500    †dc v5 (a0) → †dcc (a0), both deleted 500;  †dold (a1) deleted 400
/// c (a3)                 code block, language "rust"
/// e (a3) — same key as c, ordered after it by ID
/// purged: blk_p; foreign (another document): blk_f; title "Plan" v4
/// ```
#[rustfmt::skip]
fn tree() -> (DocState, Vec<String>) {
    let mut meta = DocState::new(DOC, "Plan");
    meta.title_version = 4;
    let mut c = block("blk_c", None, "a3", 1, None);
    c.block_type = BlockType::Code;
    c.language = Some("rust".into());
    let blocks = vec![
        block("blk_a",    None,            "a0", 1, None),
        block("blk_a1",   Some("blk_a"),   "a0", 3, None),
        block("blk_a1x",  Some("blk_a1"),  "a0", 1, None),
        block("blk_a2",   Some("blk_a"),   "a1", 1, None),
        block("blk_t",    Some("blk_a"),   "a2", 2, Some(300)),
        block("blk_b",    None,            "a1", 1, None),
        block("blk_d",    None,            "a2", 1, Some(500)),
        block("blk_dc",   Some("blk_d"),   "a0", 5, Some(500)),
        block("blk_dcc",  Some("blk_dc"),  "a0", 1, Some(500)),
        block("blk_dold", Some("blk_d"),   "a1", 1, Some(400)),
        c,
        block("blk_e",    None,            "a3", 1, None),
    ];
    let doc = DocState::from_parts(meta, blocks, vec!["blk_p".to_string()]);
    (doc, vec!["blk_p".to_string()])
}

fn empty() -> (DocState, Vec<String>) {
    (DocState::new(DOC, ""), Vec::new())
}

fn fixture(name: &str) -> (DocState, Vec<String>) {
    match name {
        "tree" => tree(),
        "empty" => empty(),
        other => panic!("unknown fixture {other}"),
    }
}

fn fixture_json(name: &str) -> Value {
    let (doc, purged) = fixture(name);
    let blocks: Vec<Value> = doc
        .ordered()
        .into_iter()
        .map(|(_, b)| serde_json::to_value(&*b).unwrap())
        .collect();
    json!({
        "docId": doc.doc_id, "title": doc.title, "titleVersion": doc.title_version,
        "blocks": blocks, "purged": purged,
    })
}

/// Who sends a step, and when.
#[derive(Clone)]
struct Who {
    client: &'static str,
    author: Author,
    now: i64,
    leases_enabled: bool,
    max_depth: usize,
}

struct Case {
    name: String,
    fixture: &'static str,
    foreign: Vec<String>,
    /// (blockId, clientId, holder, expiresAt)
    leases: Vec<(String, &'static str, Author, i64)>,
    steps: Vec<(Who, Op)>,
    who: Who,
    next_op: usize,
}

impl Case {
    fn new(name: impl Into<String>, fixture: &'static str) -> Case {
        Case {
            name: name.into(),
            fixture,
            foreign: vec!["blk_f".into()],
            leases: Vec::new(),
            steps: Vec::new(),
            who: Who {
                client: ME,
                author: me(),
                now: NOW,
                leases_enabled: true,
                max_depth: DEFAULT_MAX_DEPTH,
            },
            next_op: 1,
        }
    }

    /// Another client holds a live lease on `id` (10 s left).
    fn held(mut self, id: &str) -> Case {
        self.leases.push((id.into(), OTHER, other(), NOW + 10_000));
        self
    }

    /// Another client's lease on `id` expired exactly now.
    fn expired(mut self, id: &str) -> Case {
        self.leases.push((id.into(), OTHER, other(), NOW));
        self
    }

    /// The sending client's own lease on `id`.
    fn mine(mut self, id: &str) -> Case {
        self.leases.push((id.into(), ME, me(), NOW + 10_000));
        self
    }

    fn private(mut self) -> Case {
        self.who.leases_enabled = false;
        self
    }

    /// Following steps come from the other client (whose leases are then "own").
    fn by_other(mut self) -> Case {
        self.who.client = OTHER;
        self.who.author = other();
        self
    }

    fn by_me(mut self) -> Case {
        self.who.client = ME;
        self.who.author = me();
        self
    }

    /// Following steps run with `limits.max_depth` = `levels`.
    fn max_depth(mut self, levels: usize) -> Case {
        self.who.max_depth = levels;
        self
    }

    fn later(mut self, ms: i64) -> Case {
        self.who.now += ms;
        self
    }

    fn op(mut self, kind: OpKind) -> Case {
        let op_id = format!("op_{}", self.next_op);
        self.next_op += 1;
        self.steps.push((self.who.clone(), Op { op_id, kind }));
        self
    }

    /// The previous op again (a retry after a lost response reaches the rules only when
    /// the idempotency table is gone; the rules themselves must still not duplicate).
    fn again(mut self) -> Case {
        let (_, op) = self.steps.last().expect("a previous op").clone();
        self.steps.push((self.who.clone(), op));
        self
    }

    fn run(&self) -> Value {
        let (mut doc, _) = fixture(self.fixture);
        let mut leases = LeaseTable::new(TTL);
        for (id, client, holder, expires) in &self.leases {
            leases.grant(id, client, holder, expires - TTL);
        }
        let foreign: HashSet<String> = self.foreign.iter().cloned().collect();
        let mut steps = Vec::new();
        for (who, op) in &self.steps {
            let ctx = OpContext {
                client_id: who.client,
                author: &who.author,
                now: who.now,
                foreign: &foreign,
                leases_enabled: who.leases_enabled,
                max_depth: who.max_depth,
            };
            let applied = apply_op(&mut doc, &leases, &ctx, op);
            // As the document actor does: new blocks and copies belong to their author's client.
            for id in &applied.lease_grants {
                leases.grant(id, who.client, &who.author, who.now);
            }
            steps.push(json!({
                "ctx": {"clientId": who.client, "userId": who.author.user_id,
                        "name": who.author.name, "now": who.now,
                        "leasesEnabled": who.leases_enabled, "maxDepth": who.max_depth},
                "op": op,
                "result": applied.result,
                "effects": applied.effects,
                "leaseGrants": applied.lease_grants,
            }));
        }
        let order: Vec<Value> = doc
            .ordered()
            .into_iter()
            .map(|(depth, b)| json!([depth, b.id, b.parent_id, b.order_key, b.deleted]))
            .collect();
        let leases_json: Vec<Value> = self
            .leases
            .iter()
            .map(|(id, client, holder, expires)| {
                json!({"blockId": id, "clientId": client, "userId": holder.user_id,
                       "name": holder.name, "expiresAt": expires})
            })
            .collect();
        json!({
            "name": self.name,
            "fixture": self.fixture,
            "foreign": self.foreign,
            "leases": leases_json,
            "steps": steps,
            "final": {"title": doc.title, "titleVersion": doc.title_version, "order": order},
        })
    }
}

fn insert(id: &str, parent: Option<&str>, key: &str, text: &str) -> OpKind {
    OpKind::Insert {
        block_id: id.into(),
        parent_id: parent.map(Into::into),
        order_key: key.into(),
        content: text.into(),
        block_type: None,
        checked: None,
        language: None,
    }
}

fn set_content(id: &str, text: &str, base: i64) -> OpKind {
    OpKind::SetContent {
        block_id: id.into(),
        content: text.into(),
        base_version: base,
    }
}

fn set_props(id: &str, props: Props) -> OpKind {
    OpKind::SetProps {
        block_id: id.into(),
        props,
    }
}

fn mv(id: &str, parent: Option<&str>, key: &str) -> OpKind {
    OpKind::Move {
        block_id: id.into(),
        parent_id: parent.map(Into::into),
        order_key: key.into(),
    }
}

fn delete(id: &str) -> OpKind {
    OpKind::Delete {
        block_id: id.into(),
    }
}

fn restore(id: &str) -> OpKind {
    OpKind::Restore {
        block_id: id.into(),
    }
}

fn set_title(title: &str, base: i64) -> OpKind {
    OpKind::SetTitle {
        title: title.into(),
        base_version: base,
    }
}

fn collapsed() -> Props {
    Props {
        collapsed: Some(true),
        ..Props::default()
    }
}

/// Hand-written scenarios: every rule and reject reason of rules.rs, in sequences too.
#[rustfmt::skip]
fn scenarios() -> Vec<Case> {
    let t = "tree";
    vec![
        // Rule 7: insert.
        Case::new("insert at top level", t).op(insert("blk_n", None, "a4", "new")),
        Case::new("insert under a live parent with type, checked", t).op(OpKind::Insert {
            block_id: "blk_n".into(), parent_id: Some("blk_a".into()), order_key: "a0V".into(),
            content: "todo".into(), block_type: Some(BlockType::Todo), checked: Some(true), language: None }),
        Case::new("insert a code block with a language", t).op(OpKind::Insert {
            block_id: "blk_n".into(), parent_id: None, order_key: "Zz".into(),
            content: "fn main() {}".into(), block_type: Some(BlockType::Code), checked: None,
            language: Some("rust".into()) }),
        Case::new("insert under a tombstone whose parent lives", t).op(insert("blk_n", Some("blk_t"), "a0", "x")),
        Case::new("insert under a tombstone of a deleted top-level branch", t).op(insert("blk_n", Some("blk_dcc"), "a0", "x")),
        Case::new("insert under a purged parent", t).op(insert("blk_n", Some("blk_p"), "a0", "x")),
        Case::new("insert under an unknown parent", t).op(insert("blk_n", Some("blk_zz"), "a0", "x")),
        Case::new("insert under a foreign parent", t).op(insert("blk_n", Some("blk_f"), "a0", "x")),
        Case::new("insert a foreign block id", t).op(insert("blk_f", None, "a4", "x")),
        Case::new("insert an existing id", t).op(insert("blk_b", None, "a4", "x")),
        Case::new("insert an existing tombstone id", t).op(insert("blk_t", None, "a4", "x")),
        Case::new("insert a purged id", t).op(insert("blk_p", None, "a4", "x")),
        Case::new("insert with a key equal to a sibling's", t).op(insert("blk_b0", None, "a1", "x")).op(insert("blk_bz", None, "a1", "y")),
        Case::new("insert in private mode grants no lease", t).private().op(insert("blk_n", None, "a4", "x")),
        Case::new("insert into an empty document", "empty").op(insert("blk_1", None, "a0", "first")).op(insert("blk_2", Some("blk_1"), "a0", "child")),
        // Rule 3: set_content.
        Case::new("set_content applied", t).op(set_content("blk_a1", "A1 edited", 3)),
        Case::new("set_content same text", t).op(set_content("blk_a1", "A1", 1)),
        Case::new("set_content stale base makes a conflict copy", t).op(set_content("blk_a1", "mine", 2)),
        Case::new("set_content base ahead makes a conflict copy", t).op(set_content("blk_a1", "mine", 9)),
        Case::new("set_content on a block another client holds", t).held("blk_a1").op(set_content("blk_a1", "mine", 3)),
        Case::new("set_content on a block I hold", t).mine("blk_a1").op(set_content("blk_a1", "mine", 3)),
        Case::new("set_content after the other lease expired", t).expired("blk_a1").op(set_content("blk_a1", "mine", 3)),
        Case::new("set_content conflict on the last sibling", t).op(set_content("blk_e", "mine", 7)),
        Case::new("set_content conflict between equal keys", t).op(set_content("blk_c", "mine", 7)),
        Case::new("set_content conflicts repeated land right after the original", t)
            .op(set_content("blk_b", "one", 0)).op(set_content("blk_b", "two", 0)).op(set_content("blk_b", "three", 0)),
        Case::new("set_content conflict retried", t).op(set_content("blk_a2", "mine", 0)).again(),
        Case::new("set_content conflict in private mode", t).private().op(set_content("blk_a2", "mine", 0)),
        Case::new("set_content on a tombstone revives it", t).op(set_content("blk_t", "back", 2)),
        Case::new("set_content on a tombstone with the same text", t).op(set_content("blk_t", "T", 2)),
        Case::new("set_content on a tombstone with a stale base", t).op(set_content("blk_t", "back", 1)),
        Case::new("set_content on a held tombstone", t).held("blk_t").op(set_content("blk_t", "back", 2)),
        Case::new("set_content on a tombstone under a deleted parent", t).op(set_content("blk_dc", "back", 5)),
        Case::new("set_content on a tombstone two deleted levels down", t).op(set_content("blk_dcc", "back", 1)),
        Case::new("set_content on an earlier-deleted child of a deleted parent", t).op(set_content("blk_dold", "back", 1)),
        Case::new("set_content on a purged block rescues the text", t).op(set_content("blk_p", "rescued", 1)),
        Case::new("set_content on an unknown block rescues the text", t).op(set_content("blk_zz", "rescued", 1)),
        Case::new("set_content rescue retried", t).op(set_content("blk_p", "rescued", 1)).again(),
        Case::new("set_content rescue in private mode", t).private().op(set_content("blk_p", "rescued", 1)),
        Case::new("set_content on a foreign block", t).op(set_content("blk_f", "x", 1)),
        Case::new("set_content twice in a row", t).op(set_content("blk_b", "b1", 1)).op(set_content("blk_b", "b2", 2)),
        // Rule 8: set_props.
        Case::new("set_props type and checked", t).op(set_props("blk_a2", Props { block_type: Some(BlockType::Todo), checked: Some(true), ..Props::default() })),
        Case::new("set_props collapsed", t).op(set_props("blk_a", collapsed())),
        Case::new("set_props clears the language", t).op(set_props("blk_c", Props { language: Some(None), ..Props::default() })),
        Case::new("set_props sets a language", t).op(set_props("blk_c", Props { language: Some(Some("js".into())), ..Props::default() })),
        Case::new("set_props without change", t).op(set_props("blk_c", Props { block_type: Some(BlockType::Code), collapsed: Some(false), ..Props::default() })),
        Case::new("set_props empty", t).op(set_props("blk_b", Props::default())),
        Case::new("set_props on a tombstone", t).op(set_props("blk_t", collapsed())),
        Case::new("set_props on a held block", t).held("blk_a2").op(set_props("blk_a2", collapsed())),
        Case::new("set_props on a block held by an expired lease", t).expired("blk_a2").op(set_props("blk_a2", collapsed())),
        Case::new("set_props on a purged block", t).op(set_props("blk_p", collapsed())),
        Case::new("set_props on an unknown block", t).op(set_props("blk_zz", collapsed())),
        Case::new("set_props on a foreign block", t).op(set_props("blk_f", collapsed())),
        Case::new("conflict copy resolved", t).op(set_content("blk_b", "mine", 0))
            .op(set_props(&super::rules::conflict_copy_id(DOC, "op_1"), Props { conflict_resolved: Some(true), ..Props::default() })),
        // Rule 5: move.
        Case::new("move under another parent", t).op(mv("blk_a1", Some("blk_b"), "a0")),
        Case::new("move to top level", t).op(mv("blk_a1", None, "a0V")),
        Case::new("move to the same place", t).op(mv("blk_a1", Some("blk_a"), "a0")),
        Case::new("move within siblings", t).op(mv("blk_a1", Some("blk_a"), "a2")),
        Case::new("move under itself", t).op(mv("blk_a1", Some("blk_a1"), "a0")),
        Case::new("move under its own descendant", t).op(mv("blk_a", Some("blk_a1x"), "a0")),
        Case::new("move under a tombstone", t).op(mv("blk_b", Some("blk_t"), "a0")),
        Case::new("move under an unknown parent", t).op(mv("blk_b", Some("blk_zz"), "a0")),
        Case::new("move under a purged parent", t).op(mv("blk_b", Some("blk_p"), "a0")),
        Case::new("move under a foreign parent", t).op(mv("blk_b", Some("blk_f"), "a0")),
        Case::new("move a held block", t).held("blk_a1").op(mv("blk_a1", Some("blk_b"), "a0")),
        Case::new("move a block whose child is held", t).held("blk_a1x").op(mv("blk_a1", Some("blk_b"), "a0")),
        Case::new("move into a held parent", t).held("blk_b").op(mv("blk_a1", Some("blk_b"), "a0")),
        Case::new("move a tombstone", t).op(mv("blk_t", None, "a5")),
        Case::new("move a purged block", t).op(mv("blk_p", None, "a5")),
        Case::new("move an unknown block", t).op(mv("blk_zz", None, "a5")),
        Case::new("move a foreign block", t).op(mv("blk_f", None, "a5")),
        Case::new("someone types in a subtree that moves", t).by_other().op(set_content("blk_a1x", "typing", 1))
            .by_me().op(mv("blk_a", Some("blk_b"), "a0")).by_other().op(set_content("blk_a1x", "typing on", 2)),
        // Rule 6: delete.
        Case::new("delete a subtree", t).op(delete("blk_a")),
        Case::new("delete a leaf", t).op(delete("blk_b")),
        Case::new("delete a tombstone", t).op(delete("blk_t")),
        Case::new("delete a purged block", t).op(delete("blk_p")),
        Case::new("delete an unknown block", t).op(delete("blk_zz")),
        Case::new("delete a foreign block", t).op(delete("blk_f")),
        Case::new("delete with a held descendant", t).held("blk_a1x").op(delete("blk_a")),
        Case::new("delete with an expired lease in the subtree", t).expired("blk_a1x").op(delete("blk_a")),
        Case::new("delete with my own lease in the subtree", t).mine("blk_a1x").op(delete("blk_a")),
        // Rule 9: restore.
        Case::new("restore a tombstone under a live parent", t).op(restore("blk_t")),
        Case::new("restore brings back what the same delete removed", t).op(restore("blk_d")),
        Case::new("restore a child whose parent is still deleted", t).op(restore("blk_dc")),
        Case::new("restore an earlier-deleted child of a deleted parent", t).op(restore("blk_dold")),
        Case::new("restore a grandchild of a deleted branch", t).op(restore("blk_dcc")),
        Case::new("restore a live block", t).op(restore("blk_b")),
        Case::new("restore a purged block", t).op(restore("blk_p")),
        Case::new("restore an unknown block", t).op(restore("blk_zz")),
        Case::new("restore a foreign block", t).op(restore("blk_f")),
        Case::new("restore is allowed on a held tombstone", t).held("blk_t").op(restore("blk_t")),
        Case::new("delete then restore a subtree", t).op(delete("blk_a")).later(5).op(restore("blk_a")),
        Case::new("nested deletes: the child deleted first stays deleted", t)
            .op(delete("blk_a1")).later(10).op(delete("blk_a")).later(10).op(restore("blk_a")),
        Case::new("nested deletes: restore the child first, then the parent", t)
            .op(delete("blk_a1")).later(10).op(delete("blk_a")).later(10).op(restore("blk_a1")).op(restore("blk_a")),
        Case::new("insert under a block deleted meanwhile, then restore it", t)
            .by_other().op(delete("blk_a2")).by_me().later(1).op(insert("blk_n", Some("blk_a2"), "a0", "late child"))
            .later(1).op(restore("blk_a2")),
        // Rule 9 with two deletes in one request (one millisecond): deletedBy tells them apart.
        Case::new("same millisecond: delete child then parent, restore the parent", t)
            .op(delete("blk_a1")).op(delete("blk_a")).op(restore("blk_a")),
        Case::new("same millisecond: restore the inner delete after the outer", t)
            .op(delete("blk_a1")).op(delete("blk_a")).op(restore("blk_a")).op(restore("blk_a1")),
        Case::new("same millisecond: restore the inner delete first, then the outer", t)
            .op(delete("blk_a1")).op(delete("blk_a")).op(restore("blk_a1")).op(restore("blk_a")),
        Case::new("same millisecond: delete parent then its sibling, restore each", t)
            .op(delete("blk_a")).op(delete("blk_b")).op(restore("blk_b")).op(restore("blk_a")),
        Case::new("restore of a restored child's parent after a re-delete", t)
            .op(delete("blk_a1")).op(delete("blk_a")).op(restore("blk_a1")).op(delete("blk_a1")).op(restore("blk_a")),
        // limits.max_depth: inserts land at the deepest level allowed, deeper moves are refused.
        Case::new("max depth: insert too deep lands last at the deepest level allowed", t)
            .max_depth(3).op(insert("blk_n", Some("blk_a1x"), "a0", "deep")),
        Case::new("max depth: two inserts at the limit keep their order", t)
            .max_depth(3).op(insert("blk_n", Some("blk_a1x"), "a0", "deep"))
            .op(insert("blk_n2", Some("blk_a1x"), "a0", "deeper")),
        Case::new("max depth: insert that fits exactly", t)
            .max_depth(4).op(insert("blk_n", Some("blk_a1x"), "a0", "fits")),
        Case::new("max depth 1: insert under a child lands at top level", t)
            .max_depth(1).op(insert("blk_n", Some("blk_a1"), "a0", "flat")),
        Case::new("max depth 1: insert under a tombstone lands at top level", t)
            .max_depth(1).op(insert("blk_n", Some("blk_t"), "a0", "flat")),
        Case::new("max depth: insert under a deleted deep parent", t)
            .op(delete("blk_a1x")).max_depth(2).op(insert("blk_n", Some("blk_a1x"), "a0", "x")),
        Case::new("max depth: move under a block at the limit", t)
            .max_depth(3).op(mv("blk_b", Some("blk_a1x"), "a0")),
        Case::new("max depth: move of a subtree that would be too deep", t)
            .max_depth(3).op(mv("blk_a", Some("blk_b"), "a0")),
        Case::new("max depth: move that fits exactly", t)
            .max_depth(3).op(mv("blk_a1", Some("blk_b"), "a0")),
        Case::new("max depth: a move counts deleted descendants", t)
            .op(delete("blk_a1x")).max_depth(3).op(mv("blk_a", Some("blk_b"), "a0")),
        Case::new("max depth lowered: reorder and outdent stay possible, indent does not", t)
            .max_depth(2).op(mv("blk_a1x", Some("blk_a1"), "a1")).op(mv("blk_a1x", Some("blk_a"), "a5"))
            .op(mv("blk_a1x", Some("blk_a"), "a6"))
            .op(mv("blk_a1x", Some("blk_a2"), "a0")),
        Case::new("max depth: typing in a deleted deep block revives it under its live ancestor", t)
            .op(delete("blk_a1")).max_depth(2).op(set_content("blk_a1x", "typed", 1)),
        Case::new("delete a conflict copy and its original", t).op(set_content("blk_b", "mine", 0)).op(delete("blk_b")),
        // Rule 4 for the title.
        Case::new("set_title applied", t).op(set_title("Plan v2", 4)),
        Case::new("set_title same", t).op(set_title("Plan", 1)),
        Case::new("set_title stale", t).op(set_title("Mine", 3)),
        Case::new("set_title on a held title", t).held(TITLE_LEASE).op(set_title("Mine", 4)),
        Case::new("set_title after the title lease expired", t).expired(TITLE_LEASE).op(set_title("Mine", 4)),
        Case::new("set_title conflict retried", t).op(set_title("Mine", 1)).again(),
        Case::new("set_title conflict in private mode", t).private().op(set_title("Mine", 1)),
        Case::new("set_title conflicts land first at top level", t).op(set_title("One", 1)).op(set_title("Two", 1)),
        Case::new("set_title on an empty document with a conflict", "empty").op(set_title("T", 1)).op(set_title("U", 1)),
        // Mixed sequences from two clients.
        Case::new("two clients edit the same bullet", t)
            .op(set_content("blk_b", "mine", 1)).by_other().op(set_content("blk_b", "theirs", 1))
            .by_me().op(set_content("blk_b", "mine again", 2)),
        Case::new("edit of a bullet another client deleted", t)
            .by_other().op(delete("blk_a")).by_me().later(1).op(set_content("blk_a1x", "still typing", 1)),
        Case::new("edit of a bullet whose parent another client deleted, then purge-like", t)
            .by_other().op(delete("blk_a1")).by_me().later(1).op(set_content("blk_a1", "mine", 3))
            .op(insert("blk_n", Some("blk_a1x"), "a0", "under a dead child")),
    ]
}

/// Puts a lease situation on a case's target.
type LeaseSetup = fn(Case, &str) -> Case;

/// The matrix's interesting rows as a sweep: every op kind against every target state
/// (live, tombstone with a live parent, tombstone under a deleted parent, purged, unknown,
/// foreign), crossed with the lease situations; content/title ops also with stale bases.
fn sweep() -> Vec<Case> {
    let targets = [
        ("live", "blk_a1", 3),
        ("tombstone", "blk_t", 2),
        ("tombstone under deleted parent", "blk_dc", 5),
        ("purged", "blk_p", 1),
        ("unknown", "blk_zz", 1),
        ("foreign", "blk_f", 1),
    ];
    let leases: [(&str, LeaseSetup); 4] = [
        ("free", |c, _| c),
        ("mine", |c, id| c.mine(id)),
        ("held", |c, id| c.held(id)),
        ("expired", |c, id| c.expired(id)),
    ];
    let mut out = Vec::new();
    for (tname, id, version) in targets {
        for (lname, lease) in leases {
            let ops: Vec<(String, OpKind)> = vec![
                (
                    "set_content".into(),
                    set_content(id, "typed offline", version),
                ),
                (
                    "set_content stale".into(),
                    set_content(id, "typed offline", version - 1),
                ),
                ("set_props".into(), set_props(id, collapsed())),
                ("move".into(), mv(id, Some("blk_b"), "a0")),
                ("move to top".into(), mv(id, None, "a9")),
                ("delete".into(), delete(id)),
                ("restore".into(), restore(id)),
                (
                    "insert child".into(),
                    insert("blk_n", Some(id), "a0", "child"),
                ),
            ];
            for (oname, op) in ops {
                let name = format!("sweep: {oname} on {tname}, lease {lname}");
                out.push(lease(Case::new(name, "tree"), id).op(op));
            }
        }
    }
    for (lname, lease) in leases {
        for (bname, base) in [("equal", 4), ("stale", 3), ("ahead", 5)] {
            let name = format!("sweep: set_title base {bname}, lease {lname}");
            out.push(lease(Case::new(name, "tree"), TITLE_LEASE).op(set_title("Plan 2", base)));
        }
    }
    out
}

/// xorshift64*: a few lines, stable forever, so the random cases never change by themselves.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a>(&mut self, xs: &'a [String]) -> &'a str {
        &xs[self.below(xs.len())]
    }
}

/// Random op sequences from two clients on the tree fixture: the interactions hand-written
/// cases miss (copies of copies, equal keys, restores after moves, edits of revived blocks).
/// Ops are chosen against the state the earlier ops produced, so most of them do something.
fn random_case(seed: u64) -> Case {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut case = Case::new(format!("random sequence {seed}"), "tree");
    for id in ["blk_a1", "blk_b", "blk_c", TITLE_LEASE] {
        if rng.chance(25) {
            case = case.held(id);
        }
    }
    let (mut doc, _) = fixture("tree");
    let mut leases = LeaseTable::new(TTL);
    for (id, client, holder, expires) in &case.leases {
        leases.grant(id, client, holder, expires - TTL);
    }
    let foreign: HashSet<String> = case.foreign.iter().cloned().collect();
    let words = ["plan", "ship it", "#todo later", "über", "", "x"];
    for step in 0..16 {
        if rng.chance(30) {
            case = if case.who.client == ME {
                case.by_other()
            } else {
                case.by_me()
            };
        }
        case = case.later(1 + rng.below(3) as i64);
        let mut ids: Vec<String> = doc
            .ordered()
            .into_iter()
            .map(|(_, b)| b.id.clone())
            .collect();
        ids.extend(["blk_p", "blk_zz", "blk_f"].map(String::from));
        let id = rng.pick(&ids).to_string();
        let text = format!("{} {seed}.{step}", words[rng.below(words.len())]);
        let parent = if rng.chance(30) {
            None
        } else {
            Some(rng.pick(&ids).to_string())
        };
        let key = {
            let p = parent.as_deref();
            let sibs = doc.children_of(p);
            match rng.below(3) {
                0 => doc.key_at_end(p),
                1 => doc.key_at_start(p),
                _ if !sibs.is_empty() => doc
                    .get(&sibs[rng.below(sibs.len())])
                    .unwrap()
                    .order_key
                    .clone(),
                _ => "a0".to_string(),
            }
        };
        let version = doc.get(&id).map_or(1, |b| b.version);
        let base = if rng.chance(70) { version } else { version - 1 };
        let kind = match rng.below(9) {
            0 | 1 => insert(
                &format!("blk_r{seed}x{step}"),
                parent.as_deref(),
                &key,
                &text,
            ),
            2 | 3 => set_content(&id, &text, base),
            4 => set_props(
                &id,
                Props {
                    block_type: rng.chance(50).then_some(BlockType::Todo),
                    checked: Some(rng.chance(50)),
                    ..Props::default()
                },
            ),
            5 => mv(&id, parent.as_deref(), &key),
            6 => delete(&id),
            7 => restore(&id),
            _ => {
                let tv = if rng.chance(70) {
                    doc.title_version
                } else {
                    doc.title_version - 1
                };
                set_title(&text, tv)
            }
        };
        case = case.op(kind);
        let (who, op) = case.steps.last().unwrap().clone();
        let ctx = OpContext {
            client_id: who.client,
            author: &who.author,
            now: who.now,
            foreign: &foreign,
            leases_enabled: who.leases_enabled,
            max_depth: who.max_depth,
        };
        let applied = apply_op(&mut doc, &leases, &ctx, &op);
        for g in &applied.lease_grants {
            leases.grant(g, who.client, &who.author, who.now);
        }
    }
    case
}

fn render() -> String {
    let cases: Vec<Case> = scenarios()
        .into_iter()
        .chain(sweep())
        .chain((1..=40).map(random_case))
        .collect();
    let mut names = HashSet::new();
    for c in &cases {
        assert!(
            names.insert(c.name.clone()),
            "duplicate case name {:?}",
            c.name
        );
    }
    let mut s = String::from("{\n");
    s.push_str("  \"about\": \"Generated by actors/src/collab/vectors_tests.rs from rules::apply_op; do not edit. See README.md.\",\n");
    s.push_str(&format!("  \"docId\": {},\n", json!(DOC)));
    s.push_str(&format!("  \"leaseTtlMs\": {TTL},\n"));
    s.push_str("  \"fixtures\": {\n");
    s.push_str(&format!("    \"tree\": {},\n", fixture_json("tree")));
    s.push_str(&format!("    \"empty\": {}\n", fixture_json("empty")));
    s.push_str("  },\n  \"cases\": [\n");
    let lines: Vec<String> = cases.iter().map(|c| format!("    {}", c.run())).collect();
    s.push_str(&lines.join(",\n"));
    s.push_str("\n  ]\n}\n");
    s
}

#[test]
fn rules_vectors_are_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors/rules.json");
    let fresh = render();
    if std::env::var("UPDATE_VECTORS").is_ok_and(|v| v == "1") {
        std::fs::write(path, &fresh).expect("write rules.json");
        return;
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == fresh,
        "tests/vectors/rules.json is not what the rules produce now; regenerate with \
         UPDATE_VECTORS=1 cargo test -p docsync-actors vectors, then run the JS model tests"
    );
}
