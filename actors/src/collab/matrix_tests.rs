//! Table-driven conflict matrix for the server rules (PROTOCOL §2.1).
//!
//! Every op kind runs against every target state (live, tombstone with a live parent,
//! tombstone under a deleted parent, purged, unknown, foreign), crossed with the lease
//! situations (none, own, another client's live lease, another client's expired lease) and,
//! for `set_content` / `set_title`, with the base version (equal, stale, ahead). One `Row`
//! states the expected outcome of a group of cells; `conflict_matrix` expands the rows and
//! checks every cell, plus the invariants that hold for all of them:
//!
//! - no effects ⇔ nothing changed; effects replayed onto the old state give the new state;
//! - conflict copies: deterministic ID, same parent, directly after the original, author and
//!   `conflictOf` set, leased to the author's client, no second copy on retry;
//! - rescue blocks (text for purged / unknown blocks): deterministic ID, last at top level.
//!
//! A proptest then runs random op sequences, replays their effects onto a second state and
//! checks that both agree and that no text ever disappears.

use std::collections::{BTreeSet, HashMap, HashSet};

use proptest::prelude::*;
use sha2::{Digest, Sha256};

use super::block::{Author, Block, BlockType};
use super::document::DocState;
use super::lease::{LeaseTable, TITLE_LEASE};
use super::op::{Effect, Op, OpKind, OpStatus, Props, RejectReason};
use super::order_key::key_between;
use super::replay::apply_effect;
use super::rules::{
    apply_op, conflict_copy_id, rescue_block_id, Applied, OpContext, DEFAULT_MAX_DEPTH,
};

const DOC: &str = "doc_matrix";
const NOW: i64 = 1_000_000;
const TTL: i64 = 20_000;
const ME: &str = "cl_me";
const OTHER: &str = "cl_other";
const TITLE: &str = "Plan";
const TITLE_VERSION: i64 = 4;
const NEW_TEXT: &str = "typed while offline #tag";
const NEW_TITLE: &str = "Plan v2";

// The fixture document (see `fixture`).
const A: &str = "blk_a";
const LIVE: &str = "blk_a1";
const LIVE_CHILD: &str = "blk_a1x";
const A2: &str = "blk_a2";
const TOMB: &str = "blk_t";
const B: &str = "blk_b";
const D: &str = "blk_d";
const TOMB_DP: &str = "blk_dc";
const DCC: &str = "blk_dcc";
const DOLD: &str = "blk_dold";
const C: &str = "blk_c";
const PURGED: &str = "blk_p";
const UNKNOWN: &str = "blk_u";
const UNKNOWN2: &str = "blk_u2";
const FOREIGN: &str = "blk_f";
/// Target of the `set_title` rows (and the ID the title lease lives under).
const TITLE_T: &str = TITLE_LEASE;

/// The six target states every block op is run against.
const TARGETS: [&str; 6] = [LIVE, TOMB, TOMB_DP, PURGED, UNKNOWN, FOREIGN];

fn block(
    id: &str,
    parent: Option<&str>,
    key: &str,
    text: &str,
    version: i64,
    deleted_at: Option<i64>,
) -> Block {
    let mut b = Block::new(
        id.into(),
        parent.map(Into::into),
        key.into(),
        text.into(),
        100,
        "usr_seed",
    );
    b.version = version;
    b.deleted = deleted_at.is_some();
    b.deleted_at = deleted_at;
    b
}

/// ```text
/// A "A" (a0)
///   A1 "A1" v3 (a0)                      ← LIVE
///     A1x "A1x" (a0)
///   A2 "A2" (a1)
///   †T "T" v2 (a2), deleted at 300       ← TOMB (parent live)
/// B "B" (a1)
/// †D "D" (a2), deleted at 500
///   †DC "DC" v5 (a0), deleted at 500     ← TOMB_DP (parent deleted)
///     †DCC "DCC" (a0), deleted at 500
///   †Dold "Dold" (a1), deleted at 400    (an earlier, separate delete)
/// C "C" (a3)
/// purged: P; foreign (another document): F; title "Plan" v4
/// ```
#[rustfmt::skip]
fn fixture() -> DocState {
    let mut meta = DocState::new(DOC, TITLE);
    meta.title_version = TITLE_VERSION;
    let blocks = vec![
        block(A,          None,          "a0", "A",    1, None),
        block(LIVE,       Some(A),       "a0", "A1",   3, None),
        block(LIVE_CHILD, Some(LIVE),    "a0", "A1x",  1, None),
        block(A2,         Some(A),       "a1", "A2",   1, None),
        block(TOMB,       Some(A),       "a2", "T",    2, Some(300)),
        block(B,          None,          "a1", "B",    1, None),
        block(D,          None,          "a2", "D",    1, Some(500)),
        block(TOMB_DP,    Some(D),       "a0", "DC",   5, Some(500)),
        block(DCC,        Some(TOMB_DP), "a0", "DCC",  1, Some(500)),
        block(DOLD,       Some(D),       "a1", "Dold", 1, Some(400)),
        block(C,          None,          "a3", "C",    1, None),
    ];
    DocState::from_parts(meta, blocks, vec![PURGED.to_string()])
}

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

fn foreign_set() -> HashSet<String> {
    [FOREIGN.to_string()].into()
}

fn ctx<'a>(
    author: &'a Author,
    foreign: &'a HashSet<String>,
    leases_enabled: bool,
) -> OpContext<'a> {
    OpContext {
        client_id: ME,
        author,
        now: NOW,
        foreign,
        leases_enabled,
        max_depth: DEFAULT_MAX_DEPTH,
    }
}

/// The lease situation of a cell, on the row's lease block (the target unless stated).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum L {
    Free,
    Mine,
    Other,
    OtherExpired,
}

const ALL: &[L] = &[L::Free, L::Mine, L::Other, L::OtherExpired];
const NOT_OTHER: &[L] = &[L::Free, L::Mine, L::OtherExpired];
const OTHERS: &[L] = &[L::Other];
const FREE: &[L] = &[L::Free];

fn lease_table(lease: L, on: &str) -> LeaseTable {
    let mut t = LeaseTable::new(TTL);
    match lease {
        L::Free => {}
        L::Mine => {
            t.grant(on, ME, &me(), NOW - 1_000);
        }
        L::Other => {
            t.grant(on, OTHER, &other(), NOW - 1_000);
        }
        L::OtherExpired => {
            // Listed exactly 20 s ago: it expires now.
            t.grant(on, OTHER, &other(), NOW - TTL);
        }
    }
    t
}

/// `baseVersion` relative to the target's current version (block or title).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Base {
    Equal,
    Stale,
    Ahead,
}

const EQ: &[Base] = &[Base::Equal];
const NE: &[Base] = &[Base::Stale, Base::Ahead];
const ANY_BASE: &[Base] = &[Base::Equal, Base::Stale, Base::Ahead];

/// The op a row sends. Block ops name `Row::target`; texts are `NEW_TEXT` / `NEW_TITLE`.
#[derive(Debug, Clone, Copy)]
enum Do {
    /// Insert `target` (type todo, checked) under `parent` with `key`.
    Insert {
        parent: Option<&'static str>,
        key: &'static str,
    },
    SetContent,
    /// `set_content` with the text the block has now.
    SetContentSame,
    /// `collapsed: true` (every fixture block is expanded).
    SetProps,
    /// `collapsed: false`, which changes nothing.
    SetPropsNoop,
    Move {
        parent: Option<&'static str>,
        key: &'static str,
    },
    Delete,
    Restore,
    SetTitle,
    SetTitleSame,
}

impl Do {
    fn kind(self) -> &'static str {
        match self {
            Do::Insert { .. } => "insert",
            Do::SetContent | Do::SetContentSame => "set_content",
            Do::SetProps | Do::SetPropsNoop => "set_props",
            Do::Move { .. } => "move",
            Do::Delete => "delete",
            Do::Restore => "restore",
            Do::SetTitle | Do::SetTitleSame => "set_title",
        }
    }

    fn is_title(self) -> bool {
        matches!(self, Do::SetTitle | Do::SetTitleSame)
    }
}

/// Where the target sits among its siblings afterwards.
#[derive(Debug, Clone, Copy)]
enum At {
    /// Same parent and order key as before.
    Kept,
    /// Directly after this sibling, with a key strictly between it and the next sibling.
    After(&'static str),
    /// This exact order key.
    Key(&'static str),
    /// Last among its siblings, with the greatest key.
    Last,
}

/// The target's state after the op.
#[derive(Debug, Clone, Copy)]
enum After {
    /// Not a block of this document (and purged iff it was before).
    Absent,
    Block {
        content: &'static str,
        version: i64,
        deleted: bool,
        parent: Option<&'static str>,
        at: At,
    },
    Title {
        title: &'static str,
        version: i64,
    },
}

const fn live(content: &'static str, version: i64, parent: Option<&'static str>, at: At) -> After {
    After::Block {
        content,
        version,
        deleted: false,
        parent,
        at,
    }
}

const fn dead(content: &'static str, version: i64, parent: Option<&'static str>, at: At) -> After {
    After::Block {
        content,
        version,
        deleted: true,
        parent,
        at,
    }
}

const DELETED: bool = true;
const NOT_DELETED: bool = false;

const APPLIED: OpStatus = OpStatus::Applied;
const CONFLICT: OpStatus = OpStatus::Conflict;
const REJECTED: OpStatus = OpStatus::Rejected;
/// `limits.max_depth` of the random sequences: small, so deep inserts and moves happen.
const SIM_MAX_DEPTH: usize = 4;

/// One row of the matrix: an op against a target, expanded over `leases` × `bases`.
#[derive(Debug)]
struct Row {
    name: &'static str,
    op: Do,
    target: &'static str,
    /// Block the lease of the cell lies on; `None` = the target.
    lease_on: Option<&'static str>,
    leases: &'static [L],
    bases: &'static [Base],
    status: OpStatus,
    reason: Option<RejectReason>,
    /// Effects non-empty: the op gets a `seq` and a log entry.
    seq: bool,
    /// The text went into a rescue block (`rules::rescue_block_id`).
    rescue: bool,
    after: After,
    /// Other blocks afterwards: (ID, deleted, parent).
    others: &'static [(&'static str, bool, Option<&'static str>)],
}

const R: Row = Row {
    name: "",
    op: Do::Delete,
    target: LIVE,
    lease_on: None,
    leases: ALL,
    bases: EQ,
    status: APPLIED,
    reason: None,
    seq: false,
    rescue: false,
    after: After::Absent,
    others: &[],
};

use RejectReason::{Cycle, Deleted, DuplicateBlock, Locked, ParentDeleted, Purged, UnknownBlock};

#[rustfmt::skip]
fn matrix() -> Vec<Row> {
    use Do::*;
    let to_b = Move { parent: Some(B), key: "a5" };
    let dc_after_d: &[(&str, bool, Option<&str>)] = &[(D, DELETED, None), (DCC, DELETED, Some(TOMB_DP))];
    vec![
        // ── set_content (rule 3, conflicts rule 4) ──────────────────────────────────────────
        Row { name: "set_content live, lease free/own/expired, base = version → applied", op: SetContent, target: LIVE, leases: NOT_OTHER, bases: EQ,
              status: APPLIED, reason: None, seq: true, after: live(NEW_TEXT, 4, Some(A), At::Kept), ..R },
        Row { name: "set_content live, another client's live lease → conflict copy", op: SetContent, target: LIVE, leases: OTHERS, bases: EQ,
              status: CONFLICT, reason: None, seq: true, after: live("A1", 3, Some(A), At::Kept), ..R },
        Row { name: "set_content live, base stale/ahead → conflict copy under any lease", op: SetContent, target: LIVE, leases: ALL, bases: NE,
              status: CONFLICT, reason: None, seq: true, after: live("A1", 3, Some(A), At::Kept), ..R },
        Row { name: "set_content live, same text → applied, nothing logged", op: SetContentSame, target: LIVE, leases: ALL, bases: ANY_BASE,
              status: APPLIED, reason: None, seq: false, after: live("A1", 3, Some(A), At::Kept), ..R },
        Row { name: "set_content tombstone (parent live) → revived in place, applied", op: SetContent, target: TOMB, leases: NOT_OTHER, bases: EQ,
              status: APPLIED, reason: None, seq: true, after: live(NEW_TEXT, 3, Some(A), At::Kept), ..R },
        Row { name: "set_content tombstone (parent live), other's lease → revived, conflict copy", op: SetContent, target: TOMB, leases: OTHERS, bases: EQ,
              status: CONFLICT, reason: None, seq: true, after: live("T", 2, Some(A), At::Kept), ..R },
        Row { name: "set_content tombstone (parent live), base stale/ahead → revived, conflict copy", op: SetContent, target: TOMB, leases: ALL, bases: NE,
              status: CONFLICT, reason: None, seq: true, after: live("T", 2, Some(A), At::Kept), ..R },
        Row { name: "set_content tombstone, same text → revived (logged), no new version", op: SetContentSame, target: TOMB, leases: ALL, bases: ANY_BASE,
              status: APPLIED, reason: None, seq: true, after: live("T", 2, Some(A), At::Kept), ..R },
        Row { name: "set_content tombstone under deleted parent → revived at top after the branch, applied", op: SetContent, target: TOMB_DP, leases: NOT_OTHER, bases: EQ,
              status: APPLIED, reason: None, seq: true, after: live(NEW_TEXT, 6, None, At::After(D)), others: dc_after_d, ..R },
        Row { name: "set_content tombstone under deleted parent, other's lease → revived, conflict copy", op: SetContent, target: TOMB_DP, leases: OTHERS, bases: EQ,
              status: CONFLICT, reason: None, seq: true, after: live("DC", 5, None, At::After(D)), others: dc_after_d, ..R },
        Row { name: "set_content tombstone under deleted parent, base stale/ahead → revived, conflict copy", op: SetContent, target: TOMB_DP, leases: ALL, bases: NE,
              status: CONFLICT, reason: None, seq: true, after: live("DC", 5, None, At::After(D)), others: dc_after_d, ..R },
        Row { name: "set_content purged → rescue block at the end", op: SetContent, target: PURGED, leases: ALL, bases: ANY_BASE,
              status: APPLIED, reason: None, seq: true, rescue: true, after: After::Absent, ..R },
        Row { name: "set_content unknown → rescue block at the end", op: SetContent, target: UNKNOWN, leases: ALL, bases: ANY_BASE,
              status: APPLIED, reason: None, seq: true, rescue: true, after: After::Absent, ..R },
        Row { name: "set_content foreign → as unknown: rescue block at the end", op: SetContent, target: FOREIGN, leases: ALL, bases: ANY_BASE,
              status: APPLIED, reason: None, seq: true, rescue: true, after: After::Absent, ..R },

        // ── set_props (rule 8) ──────────────────────────────────────────────────────────────
        Row { name: "set_props live, lease free/own/expired → applied, no version", op: SetProps, target: LIVE, leases: NOT_OTHER,
              status: APPLIED, reason: None, seq: true, after: live("A1", 3, Some(A), At::Kept), ..R },
        Row { name: "set_props live, other's lease → locked", op: SetProps, target: LIVE, leases: OTHERS,
              status: REJECTED, reason: Some(Locked), seq: false, after: live("A1", 3, Some(A), At::Kept), ..R },
        Row { name: "set_props live, nothing changes → applied, nothing logged", op: SetPropsNoop, target: LIVE, leases: NOT_OTHER,
              status: APPLIED, reason: None, seq: false, after: live("A1", 3, Some(A), At::Kept), ..R },
        Row { name: "set_props tombstone (parent live) → deleted", op: SetProps, target: TOMB, leases: ALL,
              status: REJECTED, reason: Some(Deleted), seq: false, after: dead("T", 2, Some(A), At::Kept), ..R },
        Row { name: "set_props tombstone under deleted parent → deleted", op: SetProps, target: TOMB_DP, leases: ALL,
              status: REJECTED, reason: Some(Deleted), seq: false, after: dead("DC", 5, Some(D), At::Kept), ..R },
        Row { name: "set_props purged → purged", op: SetProps, target: PURGED, leases: ALL,
              status: REJECTED, reason: Some(Purged), seq: false, after: After::Absent, ..R },
        Row { name: "set_props unknown → unknown_block", op: SetProps, target: UNKNOWN, leases: ALL,
              status: REJECTED, reason: Some(UnknownBlock), seq: false, after: After::Absent, ..R },
        Row { name: "set_props foreign → unknown_block (as if unknown)", op: SetProps, target: FOREIGN, leases: ALL,
              status: REJECTED, reason: Some(UnknownBlock), seq: false, after: After::Absent, ..R },

        // ── move (rule 5) ───────────────────────────────────────────────────────────────────
        Row { name: "move live under live block, lease free/own/expired → applied, subtree follows", op: to_b, target: LIVE, leases: NOT_OTHER,
              status: APPLIED, reason: None, seq: true, after: live("A1", 3, Some(B), At::Key("a5")), others: &[(LIVE_CHILD, NOT_DELETED, Some(LIVE))], ..R },
        Row { name: "move live, other's lease on the block → locked", op: to_b, target: LIVE, leases: OTHERS,
              status: REJECTED, reason: Some(Locked), seq: false, after: live("A1", 3, Some(A), At::Kept), ..R },
        Row { name: "move live, any lease on a descendant → applied (typing continues at the new place)", op: to_b, target: LIVE, lease_on: Some(LIVE_CHILD), leases: ALL,
              status: APPLIED, reason: None, seq: true, after: live("A1", 3, Some(B), At::Key("a5")), others: &[(LIVE_CHILD, NOT_DELETED, Some(LIVE))], ..R },
        Row { name: "move live to top level → applied", op: Move { parent: None, key: "a5" }, target: LIVE, leases: NOT_OTHER,
              status: APPLIED, reason: None, seq: true, after: live("A1", 3, None, At::Key("a5")), ..R },
        Row { name: "move live to where it is → applied, nothing logged", op: Move { parent: Some(A), key: "a0" }, target: LIVE, leases: NOT_OTHER,
              status: APPLIED, reason: None, seq: false, after: live("A1", 3, Some(A), At::Kept), ..R },
        Row { name: "move live to where it is, other's lease → locked", op: Move { parent: Some(A), key: "a0" }, target: LIVE, leases: OTHERS,
              status: REJECTED, reason: Some(Locked), seq: false, after: live("A1", 3, Some(A), At::Kept), ..R },
        Row { name: "move under itself → cycle (before the lease check)", op: Move { parent: Some(LIVE), key: "a5" }, target: LIVE, leases: ALL,
              status: REJECTED, reason: Some(Cycle), seq: false, after: live("A1", 3, Some(A), At::Kept), ..R },
        Row { name: "move under its descendant → cycle", op: Move { parent: Some(LIVE_CHILD), key: "a5" }, target: LIVE, leases: ALL,
              status: REJECTED, reason: Some(Cycle), seq: false, after: live("A1", 3, Some(A), At::Kept), ..R },
        Row { name: "move under a tombstone → parent_deleted", op: Move { parent: Some(TOMB), key: "a5" }, target: LIVE, leases: ALL,
              status: REJECTED, reason: Some(ParentDeleted), seq: false, after: live("A1", 3, Some(A), At::Kept), ..R },
        Row { name: "move under a tombstone under a deleted parent → parent_deleted", op: Move { parent: Some(TOMB_DP), key: "a5" }, target: LIVE, leases: ALL,
              status: REJECTED, reason: Some(ParentDeleted), seq: false, after: live("A1", 3, Some(A), At::Kept), ..R },
        Row { name: "move under an unknown block → parent_deleted", op: Move { parent: Some(UNKNOWN), key: "a5" }, target: LIVE, leases: ALL,
              status: REJECTED, reason: Some(ParentDeleted), seq: false, after: live("A1", 3, Some(A), At::Kept), ..R },
        Row { name: "move under a purged block → parent_deleted", op: Move { parent: Some(PURGED), key: "a5" }, target: LIVE, leases: ALL,
              status: REJECTED, reason: Some(ParentDeleted), seq: false, after: live("A1", 3, Some(A), At::Kept), ..R },
        Row { name: "move under a foreign block → parent_deleted (as under an unknown one)", op: Move { parent: Some(FOREIGN), key: "a5" }, target: LIVE, leases: ALL,
              status: REJECTED, reason: Some(ParentDeleted), seq: false, after: live("A1", 3, Some(A), At::Kept), ..R },
        Row { name: "move a tombstone (parent live) → deleted", op: to_b, target: TOMB, leases: ALL,
              status: REJECTED, reason: Some(Deleted), seq: false, after: dead("T", 2, Some(A), At::Kept), ..R },
        Row { name: "move a tombstone under a deleted parent → deleted", op: to_b, target: TOMB_DP, leases: ALL,
              status: REJECTED, reason: Some(Deleted), seq: false, after: dead("DC", 5, Some(D), At::Kept), ..R },
        Row { name: "move purged → purged", op: to_b, target: PURGED, leases: ALL,
              status: REJECTED, reason: Some(Purged), seq: false, after: After::Absent, ..R },
        Row { name: "move unknown → unknown_block", op: to_b, target: UNKNOWN, leases: ALL,
              status: REJECTED, reason: Some(UnknownBlock), seq: false, after: After::Absent, ..R },
        Row { name: "move foreign → unknown_block (as if unknown)", op: to_b, target: FOREIGN, leases: ALL,
              status: REJECTED, reason: Some(UnknownBlock), seq: false, after: After::Absent, ..R },

        // ── delete (rule 6) ─────────────────────────────────────────────────────────────────
        Row { name: "delete live, lease free/own/expired → subtree tombstoned", op: Delete, target: LIVE, leases: NOT_OTHER,
              status: APPLIED, reason: None, seq: true, after: dead("A1", 3, Some(A), At::Kept),
              others: &[(LIVE_CHILD, DELETED, Some(LIVE)), (A2, NOT_DELETED, Some(A))], ..R },
        Row { name: "delete live, other's lease on the block → locked", op: Delete, target: LIVE, leases: OTHERS,
              status: REJECTED, reason: Some(Locked), seq: false, after: live("A1", 3, Some(A), At::Kept), others: &[(LIVE_CHILD, NOT_DELETED, Some(LIVE))], ..R },
        Row { name: "delete live, other's live lease on a descendant → locked", op: Delete, target: LIVE, lease_on: Some(LIVE_CHILD), leases: OTHERS,
              status: REJECTED, reason: Some(Locked), seq: false, after: live("A1", 3, Some(A), At::Kept), others: &[(LIVE_CHILD, NOT_DELETED, Some(LIVE))], ..R },
        Row { name: "delete live, free/own/expired lease on a descendant → applied", op: Delete, target: LIVE, lease_on: Some(LIVE_CHILD), leases: NOT_OTHER,
              status: APPLIED, reason: None, seq: true, after: dead("A1", 3, Some(A), At::Kept), others: &[(LIVE_CHILD, DELETED, Some(LIVE))], ..R },
        Row { name: "delete live, other's lease on a tombstone inside → applied (only the live subtree counts)", op: Delete, target: A, lease_on: Some(TOMB), leases: OTHERS,
              status: APPLIED, reason: None, seq: true, after: dead("A", 1, None, At::Kept),
              others: &[(LIVE, DELETED, Some(A)), (LIVE_CHILD, DELETED, Some(LIVE)), (A2, DELETED, Some(A)), (TOMB, DELETED, Some(A))], ..R },
        Row { name: "delete tombstone (parent live) → applied, nothing logged", op: Delete, target: TOMB, leases: ALL,
              status: APPLIED, reason: None, seq: false, after: dead("T", 2, Some(A), At::Kept), ..R },
        Row { name: "delete tombstone under deleted parent → applied, nothing logged", op: Delete, target: TOMB_DP, leases: ALL,
              status: APPLIED, reason: None, seq: false, after: dead("DC", 5, Some(D), At::Kept), ..R },
        Row { name: "delete purged → applied, nothing logged", op: Delete, target: PURGED, leases: ALL,
              status: APPLIED, reason: None, seq: false, after: After::Absent, ..R },
        Row { name: "delete unknown → unknown_block", op: Delete, target: UNKNOWN, leases: ALL,
              status: REJECTED, reason: Some(UnknownBlock), seq: false, after: After::Absent, ..R },
        Row { name: "delete foreign → unknown_block (as if unknown)", op: Delete, target: FOREIGN, leases: ALL,
              status: REJECTED, reason: Some(UnknownBlock), seq: false, after: After::Absent, ..R },

        // ── restore (rule 9) ────────────────────────────────────────────────────────────────
        Row { name: "restore live → applied, nothing logged", op: Restore, target: LIVE, leases: ALL,
              status: APPLIED, reason: None, seq: false, after: live("A1", 3, Some(A), At::Kept), ..R },
        Row { name: "restore tombstone (parent live) → revived in place", op: Restore, target: TOMB, leases: ALL,
              status: APPLIED, reason: None, seq: true, after: live("T", 2, Some(A), At::Kept), ..R },
        Row { name: "restore tombstone under deleted parent → at top after the branch, with its same-delete child", op: Restore, target: TOMB_DP, leases: ALL,
              status: APPLIED, reason: None, seq: true, after: live("DC", 5, None, At::After(D)),
              others: &[(DCC, NOT_DELETED, Some(TOMB_DP)), (D, DELETED, None), (DOLD, DELETED, Some(D))], ..R },
        Row { name: "restore a deleted branch → same-delete descendants back, earlier delete stays", op: Restore, target: D, leases: ALL,
              status: APPLIED, reason: None, seq: true, after: live("D", 1, None, At::Kept),
              others: &[(TOMB_DP, NOT_DELETED, Some(D)), (DCC, NOT_DELETED, Some(TOMB_DP)), (DOLD, DELETED, Some(D))], ..R },
        Row { name: "restore purged → purged", op: Restore, target: PURGED, leases: ALL,
              status: REJECTED, reason: Some(Purged), seq: false, after: After::Absent, ..R },
        Row { name: "restore unknown → unknown_block", op: Restore, target: UNKNOWN, leases: ALL,
              status: REJECTED, reason: Some(UnknownBlock), seq: false, after: After::Absent, ..R },
        Row { name: "restore foreign → unknown_block (as if unknown)", op: Restore, target: FOREIGN, leases: ALL,
              status: REJECTED, reason: Some(UnknownBlock), seq: false, after: After::Absent, ..R },

        // ── insert (rule 7): new ID under each parent state, then each existing-ID state ────
        Row { name: "insert under live parent, any lease on the parent → applied with its key", op: Insert { parent: Some(A), key: "a5" }, target: UNKNOWN, lease_on: Some(A), leases: ALL,
              status: APPLIED, reason: None, seq: true, after: live(NEW_TEXT, 1, Some(A), At::Key("a5")), ..R },
        Row { name: "insert at top level → applied with its key", op: Insert { parent: None, key: "a5" }, target: UNKNOWN, leases: FREE,
              status: APPLIED, reason: None, seq: true, after: live(NEW_TEXT, 1, None, At::Key("a5")), ..R },
        Row { name: "insert under tombstone (parent live) → under the live grandparent, after the tombstone", op: Insert { parent: Some(TOMB), key: "a5" }, target: UNKNOWN, leases: FREE,
              status: APPLIED, reason: None, seq: true, after: live(NEW_TEXT, 1, Some(A), At::After(TOMB)), ..R },
        Row { name: "insert under tombstone under deleted parent → top level after the deleted branch", op: Insert { parent: Some(TOMB_DP), key: "a5" }, target: UNKNOWN, leases: FREE,
              status: APPLIED, reason: None, seq: true, after: live(NEW_TEXT, 1, None, At::After(D)), ..R },
        Row { name: "insert under purged parent → top level at the end", op: Insert { parent: Some(PURGED), key: "a0" }, target: UNKNOWN, leases: FREE,
              status: APPLIED, reason: None, seq: true, after: live(NEW_TEXT, 1, None, At::Last), ..R },
        Row { name: "insert under unknown parent → top level at the end", op: Insert { parent: Some(UNKNOWN2), key: "a0" }, target: UNKNOWN, leases: FREE,
              status: APPLIED, reason: None, seq: true, after: live(NEW_TEXT, 1, None, At::Last), ..R },
        Row { name: "insert under foreign parent → top level at the end", op: Insert { parent: Some(FOREIGN), key: "a0" }, target: UNKNOWN, leases: FREE,
              status: APPLIED, reason: None, seq: true, after: live(NEW_TEXT, 1, None, At::Last), ..R },
        Row { name: "insert with a live block's ID → duplicate_block", op: Insert { parent: Some(B), key: "a5" }, target: LIVE, leases: ALL,
              status: REJECTED, reason: Some(DuplicateBlock), seq: false, after: live("A1", 3, Some(A), At::Kept), ..R },
        Row { name: "insert with a tombstone's ID → duplicate_block", op: Insert { parent: Some(B), key: "a5" }, target: TOMB, leases: ALL,
              status: REJECTED, reason: Some(DuplicateBlock), seq: false, after: dead("T", 2, Some(A), At::Kept), ..R },
        Row { name: "insert with the ID of a tombstone under a deleted parent → duplicate_block", op: Insert { parent: Some(B), key: "a5" }, target: TOMB_DP, leases: ALL,
              status: REJECTED, reason: Some(DuplicateBlock), seq: false, after: dead("DC", 5, Some(D), At::Kept), ..R },
        Row { name: "insert with a purged ID → duplicate_block", op: Insert { parent: Some(B), key: "a5" }, target: PURGED, leases: ALL,
              status: REJECTED, reason: Some(DuplicateBlock), seq: false, after: After::Absent, ..R },
        Row { name: "insert with a foreign ID → duplicate_block (the ID is taken)", op: Insert { parent: Some(B), key: "a5" }, target: FOREIGN, leases: ALL,
              status: REJECTED, reason: Some(DuplicateBlock), seq: false, after: After::Absent, ..R },

        // ── set_title (rule 4, title lease) ─────────────────────────────────────────────────
        Row { name: "set_title, lease free/own/expired, base = titleVersion → applied", op: SetTitle, target: TITLE_T, leases: NOT_OTHER, bases: EQ,
              status: APPLIED, reason: None, seq: true, after: After::Title { title: NEW_TITLE, version: 5 }, ..R },
        Row { name: "set_title, other's title lease → title conflict copy", op: SetTitle, target: TITLE_T, leases: OTHERS, bases: EQ,
              status: CONFLICT, reason: None, seq: true, after: After::Title { title: TITLE, version: 4 }, ..R },
        Row { name: "set_title, base stale/ahead → title conflict copy under any lease", op: SetTitle, target: TITLE_T, leases: ALL, bases: NE,
              status: CONFLICT, reason: None, seq: true, after: After::Title { title: TITLE, version: 4 }, ..R },
        Row { name: "set_title, same title → applied, nothing logged", op: SetTitleSame, target: TITLE_T, leases: ALL, bases: ANY_BASE,
              status: APPLIED, reason: None, seq: false, after: After::Title { title: TITLE, version: 4 }, ..R },
    ]
}

/// `prefix` + the first 20 hex digits of SHA-256(docId ":" opId), computed here on its own.
fn derived(prefix: &str, op_id: &str) -> String {
    let digest = Sha256::digest(format!("{DOC}:{op_id}").as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("{prefix}{}", &hex[..20])
}

fn assert_same_state(a: &DocState, b: &DocState, what: &str) {
    assert_eq!(a.title, b.title, "{what}: title");
    assert_eq!(a.title_version, b.title_version, "{what}: titleVersion");
    assert_eq!(a.block_count(), b.block_count(), "{what}: block count");
    assert_eq!(a.ordered(), b.ordered(), "{what}: blocks in document order");
    let pa: BTreeSet<&String> = a.purged_ids().collect();
    let pb: BTreeSet<&String> = b.purged_ids().collect();
    assert_eq!(pa, pb, "{what}: purged IDs");
}

/// One expanded cell of the matrix, after the op ran on a fresh fixture.
struct Cell<'a> {
    name: String,
    row: &'a Row,
    op: Op,
    before: DocState,
    doc: DocState,
    applied: Applied,
}

impl Cell<'_> {
    fn block(&self, id: &str) -> &Block {
        self.doc
            .get(id)
            .unwrap_or_else(|| panic!("{}: block {id} missing", self.name))
    }

    fn key_of(&self, id: &str) -> &str {
        &self.block(id).order_key
    }

    fn text(&self) -> &str {
        match &self.op.kind {
            OpKind::Insert { content, .. } | OpKind::SetContent { content, .. } => content,
            OpKind::SetTitle { title, .. } => title,
            _ => "",
        }
    }
}

fn build_op(row: &Row, op_id: &str, base: Base, before: &DocState) -> Op {
    let current = before.get(row.target);
    let version = if row.op.is_title() {
        before.title_version
    } else {
        current.map_or(1, |b| b.version)
    };
    let base_version = match base {
        Base::Equal => version,
        Base::Stale => version - 1,
        Base::Ahead => version + 1,
    };
    let block_id = row.target.to_string();
    let kind = match row.op {
        Do::Insert { parent, key } => OpKind::Insert {
            block_id,
            parent_id: parent.map(str::to_string),
            order_key: key.to_string(),
            content: NEW_TEXT.to_string(),
            block_type: Some(BlockType::Todo),
            checked: Some(true),
            language: None,
        },
        Do::SetContent => OpKind::SetContent {
            block_id,
            content: NEW_TEXT.to_string(),
            base_version,
        },
        Do::SetContentSame => OpKind::SetContent {
            block_id,
            content: current
                .expect("same-text rows need a block")
                .content
                .clone(),
            base_version,
        },
        Do::SetProps | Do::SetPropsNoop => OpKind::SetProps {
            block_id,
            props: Props {
                collapsed: Some(matches!(row.op, Do::SetProps)),
                ..Props::default()
            },
        },
        Do::Move { parent, key } => OpKind::Move {
            block_id,
            parent_id: parent.map(str::to_string),
            order_key: key.to_string(),
        },
        Do::Delete => OpKind::Delete { block_id },
        Do::Restore => OpKind::Restore { block_id },
        Do::SetTitle => OpKind::SetTitle {
            title: NEW_TITLE.to_string(),
            base_version,
        },
        Do::SetTitleSame => OpKind::SetTitle {
            title: before.title.clone(),
            base_version,
        },
    };
    Op {
        op_id: op_id.to_string(),
        kind,
    }
}

fn run_cell(row: &Row, lease: L, base: Base, op_id: &str) {
    let name = format!("row {:?} [lease {lease:?}, base {base:?}]", row.name);
    let before = fixture();
    let author = me();
    let foreign = foreign_set();
    let ctx = ctx(&author, &foreign, true);
    let lease_on = row.lease_on.unwrap_or(row.target);
    let leases = lease_table(lease, lease_on);
    assert_eq!(
        leases
            .held_by_other(lease_on, ME, &me().user_id, NOW)
            .is_some(),
        lease == L::Other,
        "{name}: lease set-up"
    );
    let op = build_op(row, op_id, base, &before);
    let mut doc = before.clone();
    let applied = apply_op(&mut doc, &leases, &ctx, &op);
    let cell = Cell {
        name,
        row,
        op,
        before,
        doc,
        applied,
    };
    let name = &cell.name;
    let res = &cell.applied.result;

    assert_eq!(res.op_id, op_id, "{name}: result.opId");
    assert_eq!(res.seq, None, "{name}: the rules never assign seq");
    assert_eq!(res.status, row.status, "{name}: status of {res:?}");
    assert_eq!(res.reason, row.reason, "{name}: reason of {res:?}");
    assert_eq!(
        !cell.applied.effects.is_empty(),
        row.seq,
        "{name}: seq-worthy effects: {:?}",
        cell.applied.effects
    );
    let copy_id = derived("blk_cf_", op_id);
    let rescue_id = derived("blk_rs_", op_id);
    let expected_block_id = if row.rescue {
        Some(rescue_id.clone())
    } else if row.op.is_title() {
        (row.status == CONFLICT).then(|| TITLE_LEASE.to_string())
    } else {
        Some(row.target.to_string())
    };
    assert_eq!(res.block_id, expected_block_id, "{name}: result.blockId");

    check_effects(&cell);
    check_after(&cell);
    for &(id, deleted, parent) in row.others {
        let b = cell.block(id);
        assert_eq!(b.deleted, deleted, "{name}: {id} deleted");
        assert_eq!(b.parent_id.as_deref(), parent, "{name}: {id} parent");
        check_deleted_at(&cell, id);
    }

    if row.status == CONFLICT {
        check_conflict_copy(&cell, &copy_id);
    } else {
        assert_eq!(res.conflict_block_id, None, "{name}: conflictBlockId");
        assert!(
            cell.doc.get(&copy_id).is_none(),
            "{name}: unexpected conflict copy"
        );
    }
    if row.rescue {
        check_rescue(&cell, &rescue_id);
    } else {
        assert!(
            cell.doc.get(&rescue_id).is_none(),
            "{name}: unexpected rescue block"
        );
    }

    let expected_grants = if row.status == CONFLICT {
        vec![copy_id]
    } else if row.rescue {
        vec![rescue_id]
    } else if matches!(row.op, Do::Insert { .. }) && row.status == APPLIED {
        vec![row.target.to_string()]
    } else {
        Vec::new()
    };
    assert_eq!(
        cell.applied.lease_grants, expected_grants,
        "{name}: lease grants"
    );

    match row.op {
        Do::Insert { .. } if row.status == APPLIED => {
            let b = cell.block(row.target);
            assert_eq!(
                (b.block_type, b.checked),
                (BlockType::Todo, true),
                "{name}: insert props"
            );
            assert_eq!(b.conflict_of, None, "{name}: insert is no conflict copy");
        }
        Do::SetProps if row.status == APPLIED => {
            assert!(cell.block(row.target).collapsed, "{name}: collapsed set");
        }
        _ => {}
    }

    // The same op on another fresh state: the same result, effects and state (deterministic
    // IDs and keys), so a retry after a lost response cannot diverge.
    let mut fresh = cell.before.clone();
    let again = apply_op(&mut fresh, &leases, &ctx, &cell.op);
    assert_eq!(again, cell.applied, "{name}: the same op on a fresh state");
    assert_same_state(
        &fresh,
        &cell.doc,
        &format!("{name}: the same op on a fresh state"),
    );

    // The same op again on the resulting state never makes a second copy or rescue block.
    if row.status == CONFLICT || row.rescue {
        let mut doc = cell.doc.clone();
        let retry = apply_op(&mut doc, &leases, &ctx, &cell.op);
        assert_eq!(retry.result, cell.applied.result, "{name}: retry result");
        assert!(
            retry.effects.is_empty(),
            "{name}: retry effects {:?}",
            retry.effects
        );
        assert_same_state(&doc, &cell.doc, &format!("{name}: retry"));
    }
}

/// No effects ⇔ nothing changed; effects carry exactly the resulting blocks and replaying
/// them onto the old state gives the new one.
fn check_effects(cell: &Cell) {
    let name = &cell.name;
    if cell.applied.effects.is_empty() {
        assert_same_state(
            &cell.before,
            &cell.doc,
            &format!("{name}: no effects, so no change"),
        );
        return;
    }
    let mut replica = cell.before.clone();
    let mut seen = HashSet::new();
    for e in &cell.applied.effects {
        apply_effect(&mut replica, e);
        match e {
            Effect::Block { block } => {
                assert!(
                    seen.insert(block.id.clone()),
                    "{name}: two effects for {}",
                    block.id
                );
                assert_eq!(
                    cell.doc.get(&block.id),
                    Some(block),
                    "{name}: effect = resulting block"
                );
                assert_ne!(
                    cell.before.get(&block.id),
                    Some(block),
                    "{name}: effect for unchanged {}",
                    block.id
                );
                assert_eq!(
                    (block.updated_at, block.updated_by.as_str()),
                    (NOW, "usr_me"),
                    "{name}: updatedAt/updatedBy of {}",
                    block.id
                );
            }
            Effect::Title {
                title,
                title_version,
            } => {
                assert_eq!(
                    (title.as_str(), *title_version),
                    (cell.doc.title.as_str(), cell.doc.title_version),
                    "{name}: title effect"
                );
            }
            Effect::Purge { .. } => panic!("{name}: ops never purge"),
        }
    }
    assert_same_state(&replica, &cell.doc, &format!("{name}: replayed effects"));
}

/// A tombstone made by this op carries `deletedAt = now`; an older one keeps its stamp; a
/// live block has none.
fn check_deleted_at(cell: &Cell, id: &str) {
    let b = cell.block(id);
    let expected = match cell.before.get(id) {
        _ if !b.deleted => None,
        Some(old) if old.deleted => old.deleted_at,
        _ => Some(NOW),
    };
    assert_eq!(b.deleted_at, expected, "{}: deletedAt of {id}", cell.name);
}

fn check_after(cell: &Cell) {
    let (name, row) = (&cell.name, cell.row);
    match row.after {
        After::Absent => {
            assert!(
                cell.doc.get(row.target).is_none(),
                "{name}: {} must not exist",
                row.target
            );
            assert_eq!(
                cell.doc.is_purged(row.target),
                cell.before.is_purged(row.target),
                "{name}: purged flag of {}",
                row.target
            );
        }
        After::Title { title, version } => {
            assert_eq!(
                (cell.doc.title.as_str(), cell.doc.title_version),
                (title, version),
                "{name}: title"
            );
        }
        After::Block {
            content,
            version,
            deleted,
            parent,
            at,
        } => {
            let b = cell.block(row.target);
            assert_eq!(b.content, content, "{name}: content");
            assert_eq!(b.version, version, "{name}: version");
            assert_eq!(b.deleted, deleted, "{name}: deleted");
            assert_eq!(b.parent_id.as_deref(), parent, "{name}: parent");
            check_deleted_at(cell, row.target);
            check_at(cell, row.target, at);
        }
    }
    if !row.op.is_title() {
        assert_eq!(
            (&cell.doc.title, cell.doc.title_version),
            (&cell.before.title, cell.before.title_version),
            "{name}: title untouched"
        );
    }
}

fn check_at(cell: &Cell, id: &str, at: At) {
    let name = &cell.name;
    let b = cell.block(id);
    let sibs = cell.doc.children_of(b.parent_id.as_deref());
    let i = sibs
        .iter()
        .position(|s| s == id)
        .unwrap_or_else(|| panic!("{name}: {id} not among its parent's children"));
    match at {
        At::Kept => {
            let old = cell
                .before
                .get(id)
                .expect("At::Kept needs an existing block");
            assert_eq!(
                (b.parent_id.as_deref(), b.order_key.as_str()),
                (old.parent_id.as_deref(), old.order_key.as_str()),
                "{name}: position kept"
            );
        }
        At::Key(k) => assert_eq!(b.order_key, k, "{name}: order key"),
        At::Last => {
            assert_eq!(i + 1, sibs.len(), "{name}: {id} last among {sibs:?}");
            for s in &sibs[..i] {
                assert!(
                    cell.key_of(s) < b.order_key.as_str(),
                    "{name}: key of {id} after {s}"
                );
            }
        }
        At::After(prev) => {
            assert!(
                i > 0 && sibs[i - 1] == prev,
                "{name}: {id} directly after {prev} in {sibs:?}"
            );
            assert!(
                cell.key_of(prev) < b.order_key.as_str(),
                "{name}: key of {id} after {prev}"
            );
            if let Some(next) = sibs.get(i + 1) {
                assert!(
                    b.order_key.as_str() < cell.key_of(next),
                    "{name}: key of {id} before {next}"
                );
            }
        }
    }
}

/// Rule 4: deterministic ID, the rejected text, same parent, directly after the original
/// (key strictly between it and its next sibling), conflictOf / conflictAuthor, leased to
/// the author. Title copies: conflictOf "title", first at top level.
fn check_conflict_copy(cell: &Cell, copy_id: &str) {
    let name = &cell.name;
    assert!(
        copy_id.starts_with("blk_cf_") && copy_id.len() == 27,
        "{name}: copy ID shape {copy_id}"
    );
    assert_eq!(
        conflict_copy_id(DOC, &cell.op.op_id),
        copy_id,
        "{name}: rules::conflict_copy_id"
    );
    assert_eq!(
        cell.applied.result.conflict_block_id.as_deref(),
        Some(copy_id),
        "{name}: conflictBlockId"
    );
    assert!(cell.before.get(copy_id).is_none(), "{name}: copy is new");
    let copy = cell.block(copy_id);
    assert_eq!(
        copy.content,
        cell.text(),
        "{name}: copy holds the rejected text"
    );
    assert_eq!(copy.conflict_author, Some(me()), "{name}: conflictAuthor");
    assert_eq!(
        (copy.version, copy.deleted, copy.conflict_resolved),
        (1, false, false),
        "{name}: fresh copy"
    );
    let sibs = cell.doc.children_of(copy.parent_id.as_deref());
    let pos = |id: &str| sibs.iter().position(|s| s == id);
    if cell.row.op.is_title() {
        assert_eq!(
            copy.conflict_of.as_deref(),
            Some("title"),
            "{name}: conflictOf"
        );
        assert_eq!(copy.parent_id, None, "{name}: title copy at top level");
        assert_eq!(
            pos(copy_id),
            Some(0),
            "{name}: title copy first in {sibs:?}"
        );
        for s in &sibs[1..] {
            assert!(
                copy.order_key.as_str() < cell.key_of(s),
                "{name}: title copy key before {s}"
            );
        }
    } else {
        let original = cell.row.target;
        let ob = cell.block(original);
        assert_eq!(
            copy.conflict_of.as_deref(),
            Some(original),
            "{name}: conflictOf"
        );
        assert_eq!(
            copy.parent_id, ob.parent_id,
            "{name}: copy has the original's parent"
        );
        let i = pos(original).expect("original among its siblings");
        assert_eq!(
            pos(copy_id),
            Some(i + 1),
            "{name}: copy directly after the original in {sibs:?}"
        );
        // The original's next sibling, as it would be without the copy, now follows the copy.
        let mut without = cell.doc.clone();
        without.purge(&[copy_id.to_string()]);
        let wsibs = without.children_of(copy.parent_id.as_deref());
        let wi = wsibs.iter().position(|s| s == original).expect("original");
        let next = wsibs.get(wi + 1);
        assert_eq!(
            sibs.get(i + 2),
            next,
            "{name}: copy before the original's next sibling"
        );
        assert!(
            ob.order_key < copy.order_key,
            "{name}: copy key after the original's"
        );
        if let Some(next) = next {
            assert!(
                copy.order_key.as_str() < cell.key_of(next),
                "{name}: copy key before {next}'s"
            );
        }
    }
}

/// Text for a purged or unknown block lands in a new top-level block at the end.
fn check_rescue(cell: &Cell, rescue_id: &str) {
    let name = &cell.name;
    assert_eq!(
        rescue_block_id(DOC, &cell.op.op_id),
        rescue_id,
        "{name}: rules::rescue_block_id"
    );
    assert!(
        cell.before.get(rescue_id).is_none(),
        "{name}: rescue block is new"
    );
    let b = cell.block(rescue_id);
    assert_eq!(b.content, cell.text(), "{name}: rescued text");
    assert_eq!(b.parent_id, None, "{name}: rescue block at top level");
    assert_eq!(
        (b.version, b.deleted),
        (1, false),
        "{name}: fresh rescue block"
    );
    assert_eq!(
        (&b.conflict_of, &b.conflict_author),
        (&None, &None),
        "{name}: no conflict copy"
    );
    check_at(cell, rescue_id, At::Last);
}

#[test]
fn conflict_matrix() {
    let rows = matrix();
    let mut cells = 0;
    for (r, row) in rows.iter().enumerate() {
        assert!(!row.name.is_empty() && !row.leases.is_empty() && !row.bases.is_empty());
        for (l, &lease) in row.leases.iter().enumerate() {
            for (b, &base) in row.bases.iter().enumerate() {
                run_cell(row, lease, base, &format!("op_m{r}_{l}_{b}"));
                cells += 1;
            }
        }
    }
    assert!(cells > rows.len(), "{cells} cells from {} rows", rows.len());
}

/// Every cell the brief names appears in some row: op kind × target state × lease (× base
/// for the text ops), every move destination, every insert parent, the descendant lease.
#[test]
fn matrix_covers_every_cell() {
    let rows = matrix();
    let mut have: HashSet<(&str, &str, L, Base)> = HashSet::new();
    for row in &rows {
        for &lease in row.leases {
            for &base in row.bases {
                have.insert((row.op.kind(), row.target, lease, base));
            }
        }
    }
    let mut missing = Vec::new();
    for kind in [
        "insert",
        "set_content",
        "set_props",
        "move",
        "delete",
        "restore",
    ] {
        let bases = if kind == "set_content" { ANY_BASE } else { EQ };
        for target in TARGETS {
            for &lease in ALL {
                for &base in bases {
                    if !have.contains(&(kind, target, lease, base)) {
                        missing.push(format!("{kind} {target} {lease:?} {base:?}"));
                    }
                }
            }
        }
    }
    for &lease in ALL {
        for &base in ANY_BASE {
            if !have.contains(&("set_title", TITLE_T, lease, base)) {
                missing.push(format!("set_title {lease:?} {base:?}"));
            }
        }
    }
    let dests: HashSet<Option<&str>> = rows
        .iter()
        .filter_map(|r| match r.op {
            Do::Move { parent, .. } if r.target == LIVE => Some(parent),
            _ => None,
        })
        .collect();
    for d in [LIVE, LIVE_CHILD, TOMB, TOMB_DP, UNKNOWN, PURGED, FOREIGN, B]
        .map(Some)
        .into_iter()
        .chain([None])
    {
        if !dests.contains(&d) {
            missing.push(format!("move to {d:?}"));
        }
    }
    let parents: HashSet<Option<&str>> = rows
        .iter()
        .filter_map(|r| match r.op {
            Do::Insert { parent, .. } if r.target == UNKNOWN => Some(parent),
            _ => None,
        })
        .collect();
    for p in [A, TOMB, TOMB_DP, PURGED, UNKNOWN2, FOREIGN]
        .map(Some)
        .into_iter()
        .chain([None])
    {
        if !parents.contains(&p) {
            missing.push(format!("insert under {p:?}"));
        }
    }
    if !rows.iter().any(|r| {
        matches!(r.op, Do::Delete) && r.lease_on == Some(LIVE_CHILD) && r.leases.contains(&L::Other)
    }) {
        missing.push("delete with another client's lease on a descendant".into());
    }
    assert!(missing.is_empty(), "cells without a row: {missing:#?}");
}

#[test]
fn repeated_conflicts_each_land_directly_after_the_original() {
    let mut doc = fixture();
    let leases = LeaseTable::new(TTL);
    let (author, foreign) = (me(), foreign_set());
    let ctx = ctx(&author, &foreign, true);
    let mut copies = Vec::new();
    for op_id in ["op_first", "op_second"] {
        let op = Op {
            op_id: op_id.into(),
            kind: OpKind::SetContent {
                block_id: LIVE.into(),
                content: format!("text of {op_id}"),
                base_version: 1,
            },
        };
        let applied = apply_op(&mut doc, &leases, &ctx, &op);
        assert_eq!(applied.result.status, CONFLICT, "{op_id}");
        copies.push(applied.result.conflict_block_id.expect("copy"));
    }
    assert_ne!(copies[0], copies[1], "one copy per op");
    let expected = vec![LIVE, copies[1].as_str(), copies[0].as_str(), A2, TOMB];
    assert_eq!(doc.children_of(Some(A)), expected.as_slice());
    let keys: Vec<&str> = expected
        .iter()
        .map(|id| doc.get(id).unwrap().order_key.as_str())
        .collect();
    assert!(
        keys.windows(2).all(|w| w[0] < w[1]),
        "strictly increasing keys {keys:?}"
    );
    assert_eq!(
        doc.get(LIVE).unwrap().content,
        "A1",
        "original keeps its text"
    );
}

/// Restore brings back only what hangs under a live parent again: a same-stamp block below
/// a block deleted by another delete stays gone (no live block under a tombstone), even in a
/// state the rules themselves never produce.
#[test]
fn restore_never_revives_below_a_still_deleted_parent() {
    let mut meta = DocState::new(DOC, TITLE);
    meta.title_version = TITLE_VERSION;
    let blocks = vec![
        block("blk_r", None, "a0", "R", 1, Some(500)),
        block("blk_r1", Some("blk_r"), "a0", "R1", 1, Some(400)),
        block("blk_r11", Some("blk_r1"), "a0", "R11", 1, Some(500)),
        block("blk_r2", Some("blk_r"), "a1", "R2", 1, Some(500)),
    ];
    let mut doc = DocState::from_parts(meta, blocks, Vec::<String>::new());
    let (author, foreign) = (me(), foreign_set());
    let op = Op {
        op_id: "op_restore".into(),
        kind: OpKind::Restore {
            block_id: "blk_r".into(),
        },
    };
    let applied = apply_op(
        &mut doc,
        &LeaseTable::new(TTL),
        &ctx(&author, &foreign, true),
        &op,
    );
    assert_eq!(applied.result.status, APPLIED);
    let deleted = |id: &str| doc.get(id).unwrap().deleted;
    assert_eq!(
        [
            deleted("blk_r"),
            deleted("blk_r1"),
            deleted("blk_r11"),
            deleted("blk_r2")
        ],
        [false, true, true, false]
    );
    assert_eq!(
        applied.effects.len(),
        2,
        "effects for blk_r and blk_r2 only"
    );
}

/// Y → Y1, Y2 (all live), for the same-millisecond delete cases.
fn y_tree() -> DocState {
    let blocks = vec![
        block("blk_y", None, "a0", "Y", 1, None),
        block("blk_y1", Some("blk_y"), "a0", "Y1", 1, None),
        block("blk_y2", Some("blk_y"), "a1", "Y2", 1, None),
        block("blk_z", None, "a1", "Z", 1, None),
    ];
    DocState::from_parts(DocState::new(DOC, TITLE), blocks, Vec::<String>::new())
}

/// Runs `ops` (kind, block) in order, all at the same millisecond (one `/sync`), and checks
/// each is applied.
fn run_same_ms(doc: &mut DocState, ops: &[(&str, &str)]) {
    let (author, foreign) = (me(), foreign_set());
    let leases = LeaseTable::new(TTL);
    for (i, (kind, id)) in ops.iter().enumerate() {
        let block_id = id.to_string();
        let kind = match *kind {
            "delete" => OpKind::Delete { block_id },
            "restore" => OpKind::Restore { block_id },
            other => panic!("{other}"),
        };
        let op = Op {
            op_id: format!("op_same_{i}"),
            kind,
        };
        let before = doc.clone();
        let applied = apply_op(doc, &leases, &ctx(&author, &foreign, true), &op);
        assert_eq!(applied.result.status, APPLIED, "{op:?}");
        let mut replayed = before;
        for e in &applied.effects {
            apply_effect(&mut replayed, e);
        }
        assert_same_state(doc, &replayed, &format!("{op:?}"));
    }
}

fn deleted_flags(doc: &DocState, ids: &[&str]) -> Vec<bool> {
    ids.iter().map(|id| doc.get(id).unwrap().deleted).collect()
}

/// Rule 9 with two deletes in one request: `delete Y2` then `delete Y` share a `deletedAt`,
/// yet `restore Y` brings back Y and Y1 only (the delete is identified by its opId).
#[test]
fn same_millisecond_nested_deletes_restore_separately() {
    let ids = ["blk_y", "blk_y1", "blk_y2"];
    // Outer first, then the inner one.
    let mut doc = y_tree();
    run_same_ms(&mut doc, &[("delete", "blk_y2"), ("delete", "blk_y")]);
    assert_eq!(deleted_flags(&doc, &ids), [true, true, true]);
    assert_eq!(
        doc.get("blk_y2").unwrap().deleted_at,
        doc.get("blk_y").unwrap().deleted_at,
        "the same millisecond"
    );
    assert_eq!(
        doc.get("blk_y2").unwrap().deleted_by.as_deref(),
        Some("op_same_0")
    );
    assert_eq!(
        doc.get("blk_y1").unwrap().deleted_by.as_deref(),
        Some("op_same_1")
    );
    run_same_ms(&mut doc, &[("restore", "blk_y")]);
    assert_eq!(deleted_flags(&doc, &ids), [false, false, true]);
    run_same_ms(&mut doc, &[("restore", "blk_y2")]);
    assert_eq!(deleted_flags(&doc, &ids), [false, false, false]);
    let y2 = doc.get("blk_y2").unwrap();
    assert_eq!(
        (y2.parent_id.as_deref(), y2.order_key.as_str()),
        (Some("blk_y"), "a1")
    );
    assert!(doc
        .blocks()
        .all(|b| b.deleted_by.is_none() && b.deleted_at.is_none()));

    // The reverse: the inner one first (its parent still deleted: top level, after Y), then Y.
    let mut doc = y_tree();
    run_same_ms(
        &mut doc,
        &[
            ("delete", "blk_y2"),
            ("delete", "blk_y"),
            ("restore", "blk_y2"),
        ],
    );
    assert_eq!(deleted_flags(&doc, &ids), [true, true, false]);
    let y2 = doc.get("blk_y2").unwrap();
    assert_eq!(y2.parent_id, None);
    assert!(y2.order_key.as_str() > "a0" && y2.order_key.as_str() < "a1");
    run_same_ms(&mut doc, &[("restore", "blk_y")]);
    assert_eq!(deleted_flags(&doc, &ids), [false, false, false]);
    assert_eq!(
        doc.get("blk_y2").unwrap().parent_id,
        None,
        "stays where it came back"
    );

    // Everything in one request: delete inner, delete outer, restore outer, restore inner.
    let mut doc = y_tree();
    run_same_ms(
        &mut doc,
        &[
            ("delete", "blk_y2"),
            ("delete", "blk_y"),
            ("restore", "blk_y"),
            ("restore", "blk_y2"),
        ],
    );
    assert_eq!(deleted_flags(&doc, &ids), [false, false, false]);
}

/// Tombstones written before `deletedBy` existed: `deletedAt` alone still groups a delete,
/// and a newer tombstone of the same millisecond is never taken for the old delete.
#[test]
fn restore_of_old_tombstones_falls_back_to_deleted_at() {
    let mut meta = DocState::new(DOC, TITLE);
    meta.title_version = TITLE_VERSION;
    let mut newer = block("blk_o3", Some("blk_o"), "a2", "O3", 1, Some(500));
    newer.deleted_by = Some("op_newer".into());
    let blocks = vec![
        block("blk_o", None, "a0", "O", 1, Some(500)),
        block("blk_o1", Some("blk_o"), "a0", "O1", 1, Some(500)),
        block("blk_o2", Some("blk_o"), "a1", "O2", 1, Some(400)),
        newer,
    ];
    let mut doc = DocState::from_parts(meta, blocks, Vec::<String>::new());
    run_same_ms(&mut doc, &[("restore", "blk_o")]);
    assert_eq!(
        deleted_flags(&doc, &["blk_o", "blk_o1", "blk_o2", "blk_o3"]),
        [false, false, true, true]
    );
}

/// Private mode (PROTOCOL §5): the same effects, but no lease is handed out.
#[test]
fn private_mode_hands_out_no_leases() {
    let (author, foreign) = (me(), foreign_set());
    let leases = LeaseTable::new(TTL);
    let ops = [
        OpKind::Insert {
            block_id: UNKNOWN.into(),
            parent_id: Some(A.into()),
            order_key: "a5".into(),
            content: "x".into(),
            block_type: None,
            checked: None,
            language: None,
        },
        OpKind::SetContent {
            block_id: LIVE.into(),
            content: "x".into(),
            base_version: 1,
        },
        OpKind::SetContent {
            block_id: PURGED.into(),
            content: "x".into(),
            base_version: 1,
        },
        OpKind::SetTitle {
            title: "x".into(),
            base_version: 1,
        },
    ];
    for (i, kind) in ops.into_iter().enumerate() {
        let op = Op {
            op_id: format!("op_p{i}"),
            kind,
        };
        let full = apply_op(&mut fixture(), &leases, &ctx(&author, &foreign, true), &op);
        let private = apply_op(&mut fixture(), &leases, &ctx(&author, &foreign, false), &op);
        assert_eq!(
            full.lease_grants.len(),
            1,
            "op {i}: full mode grants the new block"
        );
        assert!(
            private.lease_grants.is_empty(),
            "op {i}: private mode grants nothing"
        );
        assert_eq!(
            (private.result, private.effects),
            (full.result, full.effects),
            "op {i}"
        );
    }
}

// ── Random sequences: replay and "no text is ever lost" ─────────────────────────────────────

/// Picks index into the pool of known block IDs (modulo its length).
type Pick = usize;

#[derive(Debug, Clone)]
enum Step {
    Insert {
        client: usize,
        parent: Option<Pick>,
        slot: usize,
        reuse_id: Option<Pick>,
    },
    SetContent {
        client: usize,
        block: Pick,
        /// Pick among the tombstones (to exercise revival) when there are any.
        tomb: bool,
        delta: i64,
        same_text: bool,
    },
    SetProps {
        client: usize,
        block: Pick,
        collapsed: bool,
    },
    Move {
        client: usize,
        block: Pick,
        parent: Option<Pick>,
        slot: usize,
    },
    Delete {
        client: usize,
        block: Pick,
    },
    Restore {
        client: usize,
        block: Pick,
        tomb: bool,
    },
    SetTitle {
        client: usize,
        delta: i64,
    },
    Hold {
        client: usize,
        blocks: Vec<Pick>,
        title: bool,
    },
    Tick(i64),
    Purge(Pick),
}

fn step_strategy() -> impl Strategy<Value = Step> {
    let client = || 0usize..3;
    let pick = || 0usize..64;
    let delta = || prop_oneof![4 => Just(0i64), 1 => Just(-1i64), 1 => Just(1i64)];
    prop_oneof![
        6 => (client(), prop::option::weighted(0.7, pick()), 0usize..64, prop::option::weighted(0.1, pick()))
            .prop_map(|(client, parent, slot, reuse_id)| Step::Insert { client, parent, slot, reuse_id }),
        6 => (client(), pick(), prop::bool::weighted(0.2), delta(), prop::bool::weighted(0.1))
            .prop_map(|(client, block, tomb, delta, same_text)| Step::SetContent { client, block, tomb, delta, same_text }),
        1 => (client(), pick(), any::<bool>())
            .prop_map(|(client, block, collapsed)| Step::SetProps { client, block, collapsed }),
        3 => (client(), pick(), prop::option::weighted(0.8, pick()), 0usize..64)
            .prop_map(|(client, block, parent, slot)| Step::Move { client, block, parent, slot }),
        2 => (client(), pick()).prop_map(|(client, block)| Step::Delete { client, block }),
        2 => (client(), pick(), prop::bool::weighted(0.7))
            .prop_map(|(client, block, tomb)| Step::Restore { client, block, tomb }),
        1 => (client(), delta()).prop_map(|(client, delta)| Step::SetTitle { client, delta }),
        3 => (client(), prop::collection::vec(pick(), 0..3), prop::bool::weighted(0.2))
            .prop_map(|(client, blocks, title)| Step::Hold { client, blocks, title }),
        2 => (0i64..30_000).prop_map(Step::Tick),
        1 => pick().prop_map(Step::Purge),
    ]
}

struct Sim {
    doc: DocState,
    replica: DocState,
    leases: LeaseTable,
    now: i64,
    /// Every block ID seen, plus one never-inserted and one foreign ID.
    pool: Vec<String>,
    foreign: HashSet<String>,
    /// Where each text ended up: block ID (or "title") → the last text that landed there.
    landed: HashMap<String, String>,
    ops: usize,
}

impl Sim {
    fn new() -> Sim {
        Sim {
            doc: DocState::new(DOC, ""),
            replica: DocState::new(DOC, ""),
            leases: LeaseTable::new(TTL),
            now: NOW,
            pool: vec![UNKNOWN.into(), FOREIGN.into()],
            foreign: foreign_set(),
            landed: HashMap::new(),
            ops: 0,
        }
    }

    fn pick(&self, i: Pick) -> String {
        self.pool[i % self.pool.len()].clone()
    }

    /// A tombstone when `tomb` is set and there is one, else any pool ID.
    fn pick_maybe_tomb(&self, i: Pick, tomb: bool) -> String {
        let mut tombs: Vec<&String> = self
            .doc
            .blocks()
            .filter(|b| b.deleted)
            .map(|b| &b.id)
            .collect();
        if !tomb || tombs.is_empty() {
            return self.pick(i);
        }
        tombs.sort();
        tombs[i % tombs.len()].clone()
    }

    fn author(client: usize) -> Author {
        Author {
            user_id: format!("usr_{client}"),
            name: format!("User {client}"),
        }
    }

    /// A key among the children of `parent`: in one of the gaps, or (to provoke ties) equal
    /// to an existing sibling's key.
    fn key_in(&self, parent: Option<&str>, slot: usize) -> String {
        let keys: Vec<&str> = self
            .doc
            .children_of(parent)
            .iter()
            .map(|id| self.doc.get(id).unwrap().order_key.as_str())
            .collect();
        let s = slot % (2 * keys.len() + 1);
        if s > keys.len() {
            return keys[s - keys.len() - 1].to_string();
        }
        let prev = s.checked_sub(1).map(|j| keys[j]);
        let next = keys.get(s).copied();
        key_between(prev, next).unwrap_or_else(|_| prev.or(next).unwrap_or("a0").to_string())
    }

    fn existing_parent(&self, parent: Option<String>) -> Option<String> {
        parent.filter(|p| self.doc.get(p).is_some())
    }

    fn apply(&mut self, client: usize, kind: OpKind) -> Applied {
        self.ops += 1;
        let op = Op {
            op_id: format!("op_{}", self.ops),
            kind,
        };
        let client_id = format!("cl_{client}");
        let author = Sim::author(client);
        let ctx = OpContext {
            client_id: &client_id,
            author: &author,
            now: self.now,
            foreign: &self.foreign,
            leases_enabled: true,
            max_depth: SIM_MAX_DEPTH,
        };
        let applied = apply_op(&mut self.doc, &self.leases, &ctx, &op);
        let what = format!("{op:?} → {:?}", applied.result);
        match applied.result.status {
            OpStatus::Rejected => {
                assert!(applied.effects.is_empty(), "{what}: rejected with effects")
            }
            OpStatus::Conflict => assert!(applied.result.conflict_block_id.is_some(), "{what}"),
            OpStatus::Applied => {}
        }
        for e in &applied.effects {
            apply_effect(&mut self.replica, e);
            if let Effect::Block { block } = e {
                if !self.pool.contains(&block.id) {
                    self.pool.push(block.id.clone());
                }
            }
        }
        for id in &applied.lease_grants {
            self.leases.grant(id, &client_id, &author, self.now);
        }
        applied
    }

    /// Records where a text went (the block in the result, the copy, or the title) and checks
    /// it is there now.
    fn land(&mut self, applied: &Applied, text: String, title: bool) {
        let r = &applied.result;
        let at = match r.status {
            OpStatus::Applied if title => TITLE_LEASE.to_string(),
            OpStatus::Applied => r.block_id.clone().expect("applied text op names its block"),
            OpStatus::Conflict => r
                .conflict_block_id
                .clone()
                .expect("conflict names its copy"),
            OpStatus::Rejected => {
                // Only IDs that cannot be used (another document's, or taken) drop an op.
                assert!(
                    matches!(r.reason, Some(DuplicateBlock)),
                    "text op rejected: {r:?}"
                );
                return;
            }
        };
        self.landed.insert(at, text);
    }

    fn step(&mut self, step: &Step) {
        match *step {
            Step::Insert {
                client,
                parent,
                slot,
                reuse_id,
            } => {
                let block_id = match reuse_id {
                    Some(i) => self.pick(i),
                    None => format!("blk_n{}", self.ops + 1),
                };
                let parent_id = parent.map(|p| self.pick(p));
                let order_key =
                    self.key_in(self.existing_parent(parent_id.clone()).as_deref(), slot);
                let text = format!("text {}", self.ops + 1);
                let kind = OpKind::Insert {
                    block_id,
                    parent_id,
                    order_key,
                    content: text.clone(),
                    block_type: None,
                    checked: None,
                    language: None,
                };
                let applied = self.apply(client, kind);
                self.land(&applied, text, false);
            }
            Step::SetContent {
                client,
                block,
                tomb,
                delta,
                same_text,
            } => {
                let block_id = self.pick_maybe_tomb(block, tomb);
                let current = self.doc.get(&block_id).cloned();
                let base_version = current.as_ref().map_or(1, |b| b.version) + delta;
                let text = match current {
                    Some(b) if same_text => b.content.clone(),
                    _ => format!("text {}", self.ops + 1),
                };
                let kind = OpKind::SetContent {
                    block_id,
                    content: text.clone(),
                    base_version,
                };
                let applied = self.apply(client, kind);
                self.land(&applied, text, false);
            }
            Step::SetProps {
                client,
                block,
                collapsed,
            } => {
                let props = Props {
                    collapsed: Some(collapsed),
                    ..Props::default()
                };
                let block_id = self.pick(block);
                self.apply(client, OpKind::SetProps { block_id, props });
            }
            Step::Move {
                client,
                block,
                parent,
                slot,
            } => {
                let block_id = self.pick(block);
                let parent_id = parent.map(|p| self.pick(p));
                let order_key =
                    self.key_in(self.existing_parent(parent_id.clone()).as_deref(), slot);
                self.apply(
                    client,
                    OpKind::Move {
                        block_id,
                        parent_id,
                        order_key,
                    },
                );
            }
            Step::Delete { client, block } => {
                let block_id = self.pick(block);
                self.apply(client, OpKind::Delete { block_id });
            }
            Step::Restore {
                client,
                block,
                tomb,
            } => {
                let block_id = self.pick_maybe_tomb(block, tomb);
                self.apply(client, OpKind::Restore { block_id });
            }
            Step::SetTitle { client, delta } => {
                let title = format!("title {}", self.ops + 1);
                let base_version = self.doc.title_version + delta;
                let applied = self.apply(
                    client,
                    OpKind::SetTitle {
                        title: title.clone(),
                        base_version,
                    },
                );
                self.land(&applied, title, true);
            }
            Step::Hold {
                client,
                ref blocks,
                title,
            } => {
                let mut wanted: Vec<String> = blocks.iter().map(|&i| self.pick(i)).collect();
                if title {
                    wanted.push(TITLE_LEASE.into());
                }
                self.leases.hold(
                    &format!("cl_{client}"),
                    &Sim::author(client),
                    &wanted,
                    self.now,
                );
            }
            Step::Tick(ms) => self.now += ms,
            Step::Purge(i) => {
                // Compaction purges whole deleted branches (tombstones whose parent lives).
                let mut roots: Vec<String> = self
                    .doc
                    .blocks()
                    .filter(|b| {
                        b.deleted
                            && b.parent_id
                                .as_ref()
                                .is_none_or(|p| self.doc.get(p).is_some_and(|pb| !pb.deleted))
                    })
                    .map(|b| b.id.clone())
                    .collect();
                if roots.is_empty() {
                    return;
                }
                roots.sort();
                let root = &roots[i % roots.len()];
                let ids: Vec<String> = self
                    .doc
                    .subtree(root)
                    .iter()
                    .map(|b| {
                        assert!(b.deleted, "live {} inside deleted branch {root}", b.id);
                        b.id.clone()
                    })
                    .collect();
                self.doc.purge(&ids);
                apply_effect(&mut self.replica, &Effect::Purge { block_ids: ids });
            }
        }
    }

    fn check(&self, what: &str) {
        assert_same_state(&self.doc, &self.replica, what);
        for (depth, b) in self.doc.ordered() {
            assert!(
                (depth as usize) < SIM_MAX_DEPTH,
                "{what}: {} at depth {depth}",
                b.id
            );
        }
        for b in self.doc.blocks() {
            assert!(
                !self.doc.is_purged(&b.id),
                "{what}: {} both present and purged",
                b.id
            );
            if let Some(p) = &b.parent_id {
                let parent = self
                    .doc
                    .get(p)
                    .unwrap_or_else(|| panic!("{what}: {} has a missing parent {p}", b.id));
                assert!(
                    b.deleted || !parent.deleted,
                    "{what}: live {} under deleted {p}",
                    b.id
                );
            }
        }
        for (at, text) in &self.landed {
            if at == TITLE_LEASE {
                assert_eq!(&self.doc.title, text, "{what}: title");
            } else if !self.doc.is_purged(at) {
                let b = self
                    .doc
                    .get(at)
                    .unwrap_or_else(|| panic!("{what}: {at} vanished"));
                assert_eq!(&b.content, text, "{what}: text of {at}");
            }
        }
    }

    /// Every text whose block was not purged by compaction is somewhere in the document.
    fn check_no_text_lost(&self) {
        let present: HashSet<&str> = self
            .doc
            .blocks()
            .map(|b| b.content.as_str())
            .chain([self.doc.title.as_str()])
            .collect();
        for (at, text) in &self.landed {
            if !self.doc.is_purged(at) {
                assert!(
                    present.contains(text.as_str()),
                    "text {text:?} (last at {at}) is lost"
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn replayed_effects_rebuild_the_state_and_no_text_is_lost(
        steps in prop::collection::vec(step_strategy(), 1..80)
    ) {
        let mut sim = Sim::new();
        for (i, step) in steps.iter().enumerate() {
            sim.step(step);
            sim.check(&format!("after step {i} {step:?}"));
        }
        sim.check_no_text_lost();
    }
}
