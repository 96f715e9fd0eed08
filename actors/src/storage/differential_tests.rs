//! The two backends answer alike: random op histories go through the pure rules into the
//! writes the document actor makes (`DocWrite`), each write is applied to SQLite and to
//! PostgreSQL, and everything read back — the document's state, every log page, pre-checks,
//! a bullet's history — must be the same.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, OnceLock};

use proptest::prelude::*;
use serde_json::json;

use crate::collab::block::{Author, Block};
use crate::collab::document::DocState;
use crate::collab::lease::LeaseTable;
use crate::collab::op::{Effect, LogEntry, Op};
use crate::collab::rules::{apply_op, OpContext, DEFAULT_MAX_DEPTH};
use crate::storage::cluster::{membership as cluster, ownership};
use crate::storage::documents::{self, DocWrite};
use crate::storage::log::{self, LogRecord};
use crate::storage::postgres::migrate as pg_migrate;
use crate::storage::postgres::testing::{on_pg, TempPostgres};
use crate::storage::sqlite::migrate;
use crate::storage::{
    accounts, clients, compaction, conflicts, derived, roles, search, sharing, trash, versions,
};
use crate::storage::{Db, StorageError};

/// One PostgreSQL for every case (a fresh document each).
fn pg() -> &'static TempPostgres {
    static PG: OnceLock<TempPostgres> = OnceLock::new();
    PG.get_or_init(|| {
        let pg = TempPostgres::start();
        pg_migrate::apply(&mut pg.client()).unwrap();
        pg
    })
}

#[derive(Debug, Clone)]
enum Step {
    Insert(u8, Option<u8>, u8),
    Text(u8, u8, i64),
    Move(u8, Option<u8>, u8),
    Delete(u8),
    Restore(u8),
    Title(u8),
    Purge,
}

fn step() -> impl Strategy<Value = Step> {
    let id = 0u8..6;
    prop_oneof![
        3 => (id.clone(), prop::option::of(0u8..6), 0u8..4).prop_map(|(a, p, k)| Step::Insert(a, p, k)),
        3 => (id.clone(), 0u8..9, 1i64..4).prop_map(|(a, t, v)| Step::Text(a, t, v)),
        2 => (id.clone(), prop::option::of(0u8..6), 0u8..4).prop_map(|(a, p, k)| Step::Move(a, p, k)),
        1 => id.clone().prop_map(Step::Delete),
        1 => id.clone().prop_map(Step::Restore),
        1 => (0u8..3).prop_map(Step::Title),
        1 => Just(Step::Purge),
    ]
}

const KEYS: [&str; 4] = ["a0", "a1", "a2", "a3"];

/// The write one step makes, as the document actor would build it (None: nothing changed).
fn write_of(doc: &mut DocState, n: usize, s: &Step, tag: &str, uid: &str) -> Option<DocWrite> {
    // Block IDs are unique across documents: each case's are its own.
    let b = |i: &u8| format!("blk_{tag}x{i}");
    let author = Author {
        user_id: uid.into(),
        name: "T".into(),
    };
    let mut w = DocWrite {
        doc_id: doc.doc_id.clone(),
        expect_head: doc.head_seq,
        head_after: doc.head_seq,
        now: 1_000 + n as i64,
        ..DocWrite::default()
    };
    let op_id = format!("op_{n}");
    let (effects, kind, result) = if let Step::Purge = s {
        // Compaction's purge: every tombstone subtree.
        let dead: Vec<String> = doc
            .blocks()
            .filter(|x| x.deleted)
            .map(|x| x.id.clone())
            .filter(|id| doc.subtree(id).iter().all(|y| y.deleted))
            .collect();
        if dead.is_empty() {
            return None;
        }
        (
            vec![Effect::Purge { block_ids: dead }],
            "purge".to_string(),
            None,
        )
    } else {
        let v = match s {
            Step::Insert(a, p, k) => {
                json!({"kind": "insert", "blockId": b(a), "parentId": p.as_ref().map(b), "orderKey": KEYS[*k as usize], "content": format!("new {a}")})
            }
            Step::Text(a, t, v) => {
                // Some texts carry #tags and a link to another document (derived data).
                let tagged = if t % 3 == 0 {
                    format!(" #tag{t} #Été")
                } else {
                    String::new()
                };
                let linked = if t % 4 == 0 {
                    format!(" see [[doc_{tag}_target]]")
                } else {
                    String::new()
                };
                json!({"kind": "set_content", "blockId": b(a), "content": format!("text {t}{tagged}{linked}"), "baseVersion": v})
            }
            Step::Move(a, p, k) => {
                json!({"kind": "move", "blockId": b(a), "parentId": p.as_ref().map(b), "orderKey": KEYS[*k as usize]})
            }
            Step::Delete(a) => json!({"kind": "delete", "blockId": b(a)}),
            Step::Restore(a) => json!({"kind": "restore", "blockId": b(a)}),
            Step::Title(t) => {
                json!({"kind": "set_title", "title": format!("title {t}"), "baseVersion": 1})
            }
            Step::Purge => unreachable!(),
        };
        let mut v = v;
        v["opId"] = json!(op_id);
        let op: Op = serde_json::from_value(v).unwrap();
        let foreign = HashSet::new();
        let ctx = OpContext {
            client_id: "cl_t",
            author: &author,
            now: w.now,
            foreign: &foreign,
            leases_enabled: false,
            max_depth: DEFAULT_MAX_DEPTH,
        };
        let applied = apply_op(doc, &LeaseTable::new(20_000), &ctx, &op);
        (
            applied.effects,
            op.kind.name().to_string(),
            Some(applied.result),
        )
    };
    let mut changed: BTreeMap<String, Arc<Block>> = BTreeMap::new();
    if !effects.is_empty() {
        doc.head_seq += 1;
        for e in &effects {
            match e {
                Effect::Block { block } => {
                    changed.insert(block.id.clone(), block.clone());
                }
                Effect::Title {
                    title,
                    title_version,
                } => w.title = Some((title.clone(), *title_version)),
                Effect::Purge { block_ids } => {
                    crate::collab::replay::apply_effect(doc, e);
                    w.purged.extend(block_ids.iter().cloned());
                }
            }
        }
        let entry = LogEntry {
            seq: doc.head_seq,
            op_id: op_id.clone(),
            kind,
            client_id: "cl_t".into(),
            user_id: uid.into(),
            at: w.now,
            effects,
        };
        w.log.push(Arc::new(LogRecord::from_entry(&entry)));
    }
    if let Some(mut r) = result {
        r.seq = (!w.log.is_empty()).then_some(doc.head_seq);
        w.results.push((op_id, serde_json::to_string(&r).unwrap()));
    }
    w.head_after = doc.head_seq;
    w.blocks = changed.into_values().collect();
    (!w.log.is_empty() || !w.results.is_empty()).then_some(w)
}

/// Both backends list the same versions with the same states.
fn same_versions(lite: &rusqlite::Connection, pgc: &mut postgres::Client, doc_id: &str) {
    let a = versions::list(&mut Db::Sqlite(lite), doc_id).unwrap();
    let b = on_pg(&mut *pgc, |db| versions::list(db, doc_id)).unwrap();
    assert_eq!(a, b);
    for m in &a {
        assert_eq!(
            versions::get(&mut Db::Sqlite(lite), doc_id, &m.version_id).unwrap(),
            on_pg(&mut *pgc, |db| versions::get(db, doc_id, &m.version_id)).unwrap()
        );
    }
    assert_eq!(
        versions::latest(&mut Db::Sqlite(lite), doc_id).unwrap(),
        on_pg(&mut *pgc, |db| versions::latest(db, doc_id)).unwrap()
    );
    let mine = |v: Vec<crate::storage::versions::Retained>| {
        v.into_iter()
            .filter(|r| r.doc_id == doc_id)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        mine(versions::automatic_older_than(&mut Db::Sqlite(lite), i64::MAX).unwrap()),
        mine(on_pg(&mut *pgc, |db| versions::automatic_older_than(db, i64::MAX)).unwrap())
    );
}

/// A log page as comparable values.
fn records(v: Vec<Arc<LogRecord>>) -> Vec<(i64, String, String, String)> {
    v.iter()
        .map(|r| {
            (
                r.seq,
                r.op_id.clone(),
                r.kind.clone(),
                r.json.get().to_string(),
            )
        })
        .collect()
}

fn same_state(a: &DocState, b: &DocState) {
    let blocks = |d: &DocState| {
        d.blocks()
            .map(|x| (x.id.clone(), serde_json::to_value(&**x).unwrap()))
            .collect::<BTreeMap<_, _>>()
    };
    assert_eq!(blocks(a), blocks(b));
    let purged = |d: &DocState| {
        let mut p: Vec<String> = d.purged_ids().cloned().collect();
        p.sort();
        p
    };
    assert_eq!(purged(a), purged(b));
    assert_eq!(
        (a.head_seq, &a.title, a.title_version),
        (b.head_seq, &b.title, b.title_version)
    );
}

fn run_case(case: usize, steps: Vec<Step>) {
    let tag = uuid::Uuid::new_v4().simple().to_string();
    let doc_id = format!("doc_{tag}_{case}");
    let mut lite = rusqlite::Connection::open_in_memory().unwrap();
    migrate::apply(&mut lite).unwrap();
    let user = accounts::create_user(&mut Db::Sqlite(&lite), "t", "T", false, 0).unwrap();
    documents::create(&mut Db::Sqlite(&lite), &doc_id, &user.id, "start", None, 0).unwrap();
    let mut pgc = pg().client();
    pgc.execute(
        "INSERT INTO users (id, name, display_name, created_at) VALUES ($1, $2, $3, 0)",
        &[&user.id, &tag, &user.display_name],
    )
    .unwrap();
    on_pg(&mut pgc, |db| {
        documents::create(db, &doc_id, &user.id, "start", None, 0)
    })
    .unwrap();
    let me =
        cluster::register(&mut pgc, "node-t", "t", std::time::Duration::from_secs(60)).unwrap();
    let epoch = on_pg(&mut pgc, |db| ownership::claim(db, &doc_id, &me))
        .unwrap()
        .unwrap()
        .epoch;

    let mut doc = DocState::new(&doc_id, "start");
    for (n, s) in steps.iter().enumerate() {
        let Some(w) = write_of(&mut doc, n, s, &tag, &user.id) else {
            continue;
        };
        let tx = lite.transaction().unwrap();
        documents::apply_write(&mut Db::Sqlite(&tx), &w, 0).unwrap();
        tx.commit().unwrap();
        let mut tx = pgc.transaction().unwrap();
        on_pg(&mut tx, |db| documents::apply_write(db, &w, epoch)).unwrap();
        tx.commit().unwrap();
        if n % 4 == 3 {
            // A version of the state as it is now, kept by both.
            let v = crate::storage::versions::NewVersion {
                version_id: format!("ver_{tag}_{n}"),
                doc_id: doc_id.clone(),
                seq: doc.head_seq,
                at: 2_000 + n as i64,
                kind: if n % 8 == 3 {
                    crate::storage::versions::VersionKind::Named
                } else {
                    crate::storage::versions::VersionKind::Auto
                },
                name: (n % 8 == 3).then(|| format!("v{n}")),
                created_by: Some(user.id.clone()),
                state: crate::storage::versions::VersionState {
                    title: doc.title.clone(),
                    blocks: doc.blocks().filter(|b| !b.deleted).cloned().collect(),
                },
            };
            versions::insert(&mut Db::Sqlite(&lite), &v, 0).unwrap();
            on_pg(&mut pgc, |db| versions::reserve(db, &v, epoch)).unwrap();
            let (body, raw) = versions::encode(&v.state).unwrap();
            on_pg(&mut pgc, |db| {
                versions::fill(db, &doc_id, &v.version_id, &body, raw)
            })
            .unwrap();
        }
    }
    assert_eq!(
        documents::load_floor(&mut Db::Sqlite(&lite), &doc_id).unwrap(),
        on_pg(&mut pgc, |db| documents::load_floor(db, &doc_id)).unwrap()
    );
    assert_eq!(
        documents::meta_title(&mut Db::Sqlite(&lite), &doc_id).unwrap(),
        on_pg(&mut pgc, |db| documents::meta_title(db, &doc_id)).unwrap()
    );
    // Derived data and the reads over it.
    assert_eq!(
        derived::document_markdown(&mut Db::Sqlite(&lite), &doc_id, &doc.title).unwrap(),
        on_pg(&mut pgc, |db| derived::markdown_export(
            db, &doc_id, &doc.title
        ))
        .unwrap()
        .collect::<String>()
    );
    let tags_a = search::tags(&mut Db::Sqlite(&lite), &user.id).unwrap();
    let tags_b = on_pg(&mut pgc, |db| search::tags(db, &user.id)).unwrap();
    let counts = |v: &[crate::storage::search::TagCount]| {
        v.iter()
            .map(|t| (t.tag.clone(), t.blocks, t.documents))
            .collect::<Vec<_>>()
    };
    assert_eq!(counts(&tags_a), counts(&tags_b));
    let ids = |v: Vec<crate::storage::search::BlockHit>| {
        let mut v: Vec<String> = v.into_iter().map(|h| h.block_id).collect();
        v.sort();
        v
    };
    for t in &tags_a {
        assert_eq!(
            ids(search::blocks_with_tag(&mut Db::Sqlite(&lite), &user.id, &t.tag, 100).unwrap()),
            ids(on_pg(&mut pgc, |db| search::blocks_with_tag(
                db, &user.id, &t.tag, 100
            ))
            .unwrap()),
            "#{}",
            t.tag
        );
    }
    let target = format!("doc_{tag}_target");
    assert_eq!(
        ids(search::backlinks(&mut Db::Sqlite(&lite), &user.id, &target, 100).unwrap()),
        ids(on_pg(&mut pgc, |db| search::backlinks(db, &user.id, &target, 100)).unwrap())
    );
    for q in [
        "text",
        "tex",
        "new 3",
        "text 4 tag",
        "ete",
        "see doc",
        "nothing",
    ] {
        assert_eq!(
            ids(search::search(&mut Db::Sqlite(&lite), &user.id, q, 100).unwrap()),
            ids(on_pg(&mut pgc, |db| search::search(db, &user.id, q, 100)).unwrap()),
            "search {q:?}"
        );
    }
    // Open conflict copies (stale base versions made some).
    assert_eq!(
        conflicts::in_document(&mut Db::Sqlite(&lite), &doc_id, 100).unwrap(),
        on_pg(&mut pgc, |db| conflicts::in_document(db, &doc_id, 100)).unwrap()
    );
    // Compaction: the floor raised to half the log, the rows below it deleted in chunks.
    let half = 1_000 + steps.len() as i64 / 2;
    let r = crate::storage::compaction::Retention::default();
    let mine = |v: Vec<String>| v.contains(&doc_id);
    assert_eq!(
        mine(
            compaction::due_documents(&mut Db::Sqlite(&lite), half + 30 * 86_400_000, &r).unwrap()
        ),
        mine(
            on_pg(&mut pgc, |db| compaction::due_documents(
                db,
                half + 30 * 86_400_000,
                &r
            ))
            .unwrap()
        )
    );
    let fa = compaction::raise_floor(&mut Db::Sqlite(&lite), &doc_id, half, doc.head_seq).unwrap();
    let fb = on_pg(&mut pgc, |db| {
        compaction::raise_floor(db, &doc_id, half, doc.head_seq)
    })
    .unwrap();
    assert_eq!(fa, fb);
    assert_eq!(
        compaction::delete_block_changes(&mut Db::Sqlite(&lite), &doc_id, fa).unwrap(),
        on_pg(&mut pgc, |db| compaction::delete_block_changes(
            db, &doc_id, fb
        ))
        .unwrap()
    );
    assert_eq!(
        compaction::delete_log_chunk(&mut Db::Sqlite(&lite), &doc_id, fa, 3).unwrap(),
        on_pg(&mut pgc, |db| compaction::delete_log_chunk(
            db, &doc_id, fb, 3
        ))
        .unwrap()
    );
    assert_eq!(
        compaction::delete_results_chunk(&mut Db::Sqlite(&lite), &doc_id, half, 1_000).unwrap(),
        on_pg(&mut pgc, |db| compaction::delete_results_chunk(
            db, &doc_id, half, 1_000
        ))
        .unwrap()
    );
    assert_eq!(
        records(log::read_after(&mut Db::Sqlite(&lite), &doc_id, 0, doc.head_seq, 100).unwrap()),
        records(
            on_pg(&mut pgc, |db| log::read_after(
                db,
                &doc_id,
                0,
                doc.head_seq,
                100
            ))
            .unwrap()
        ),
        "the log after compaction"
    );
    // The trash.
    assert_eq!(
        trash::trash(&mut Db::Sqlite(&lite), &doc_id, &user.id, 7).unwrap(),
        on_pg(&mut pgc, |db| trash::trash(db, &doc_id, &user.id, 7)).unwrap()
    );
    assert_eq!(
        trash::list(&mut Db::Sqlite(&lite), &user.id, 100).unwrap(),
        on_pg(&mut pgc, |db| trash::list(db, &user.id, 100)).unwrap()
    );
    assert_eq!(
        mine(trash::due(&mut Db::Sqlite(&lite), 8).unwrap()),
        mine(on_pg(&mut pgc, |db| trash::due(db, 8)).unwrap())
    );
    assert_eq!(
        trash::untrash(&mut Db::Sqlite(&lite), &doc_id, &user.id).unwrap(),
        on_pg(&mut pgc, |db| trash::untrash(db, &doc_id, &user.id)).unwrap()
    );
    same_versions(&lite, &mut pgc, &doc_id);
    if let Some(first) = versions::list(&mut Db::Sqlite(&lite), &doc_id)
        .unwrap()
        .last()
        .cloned()
    {
        let id = first.version_id.as_str();
        assert_eq!(
            versions::delete_named(&mut Db::Sqlite(&lite), &doc_id, id).unwrap(),
            on_pg(&mut pgc, |db| versions::delete_named(db, &doc_id, id)).unwrap()
        );
        assert_eq!(
            versions::rename(&mut Db::Sqlite(&lite), &doc_id, id, "renamed").unwrap(),
            on_pg(&mut pgc, |db| versions::rename(db, &doc_id, id, "renamed")).unwrap()
        );
        same_versions(&lite, &mut pgc, &doc_id);
    }
    same_state(
        &documents::load(&mut Db::Sqlite(&lite), &doc_id).unwrap(),
        &on_pg(&mut pgc, |db| documents::load(db, &doc_id)).unwrap(),
    );
    for after in [0, 1, doc.head_seq / 2] {
        assert_eq!(
            records(
                log::read_after(&mut Db::Sqlite(&lite), &doc_id, after, doc.head_seq, 7).unwrap()
            ),
            records(
                on_pg(&mut pgc, |db| log::read_after(
                    db,
                    &doc_id,
                    after,
                    doc.head_seq,
                    7
                ))
                .unwrap()
            ),
            "page after {after}"
        );
    }
    let ops: Vec<String> = (0..steps.len() + 2).map(|n| format!("op_{n}")).collect();
    let blocks: Vec<String> = (0..6).map(|i| format!("blk_{tag}x{i}")).collect();
    let a = log::precheck(
        &mut Db::Sqlite(&lite),
        &doc_id,
        ops.iter().map(String::as_str),
        blocks.iter().map(String::as_str),
    )
    .unwrap();
    let b = on_pg(&mut pgc, |db| {
        log::precheck(
            db,
            &doc_id,
            ops.iter().map(String::as_str),
            blocks.iter().map(String::as_str),
        )
    })
    .unwrap();
    assert_eq!(a.known, b.known);
    assert_eq!(a.foreign, b.foreign);
    let (mut ids_a, mut ids_b) = (Vec::new(), Vec::new());
    log::for_each_result_op_id(&mut Db::Sqlite(&lite), &doc_id, |id| {
        ids_a.push(id.to_string())
    })
    .unwrap();
    on_pg(&mut pgc, |db| {
        log::for_each_result_op_id(db, &doc_id, |id| ids_b.push(id.to_string()))
    })
    .unwrap();
    ids_a.sort();
    ids_b.sort();
    assert_eq!(ids_a, ids_b);
    for blk in &blocks {
        let strip = |v: Vec<crate::storage::log::BlockChange>| {
            v.into_iter()
                .map(|c| (c.seq, c.name, c.kind, c.content, c.parent_id, c.deleted))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            strip(log::block_history(&mut Db::Sqlite(&lite), &doc_id, blk, i64::MAX, 100).unwrap()),
            strip(
                on_pg(&mut pgc, |db| log::block_history(
                    db,
                    &doc_id,
                    blk,
                    i64::MAX,
                    100
                ))
                .unwrap()
            ),
            "history of {blk}"
        );
    }
    // Purged for good: nothing of the document is left in any table.
    assert!(documents::delete(&mut Db::Sqlite(&lite), &doc_id).unwrap());
    assert!(on_pg(&mut pgc, |db| documents::delete(db, &doc_id)).unwrap());
    let tables: Vec<String> = pgc
        .query(
            "SELECT table_name::text FROM information_schema.columns
              WHERE table_schema = 'public' AND column_name = 'doc_id'",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(tables.len() >= 10, "{tables:?}");
    for t in tables {
        let n: i64 = pgc
            .query_one(
                &format!("SELECT count(*) FROM {t} WHERE doc_id = $1"),
                &[&doc_id],
            )
            .unwrap()
            .get(0);
        assert_eq!(n, 0, "{t} keeps rows of a deleted document");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn sqlite_and_postgres_read_back_the_same(steps in prop::collection::vec(step(), 1..30)) {
        static CASE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        run_case(CASE.fetch_add(1, std::sync::atomic::Ordering::Relaxed), steps);
    }
}

/// A random world of people, teams, nested folders, documents (some in the trash) and every
/// kind of share, built the same way in both backends.
#[derive(Debug, Clone)]
struct World {
    doc_owner: Vec<u8>,
    doc_folder: Vec<Option<u8>>,
    trashed: Vec<bool>,
    folder_owner: Vec<u8>,
    folder_parent: Vec<Option<u8>>,
    members: Vec<(u8, u8)>,
    doc_user_shares: Vec<(u8, u8, bool)>,
    doc_team_shares: Vec<(u8, u8, bool)>,
    folder_shares: Vec<(u8, bool, u8, bool)>,
}

const USERS: u8 = 6;
const TEAMS: u8 = 3;
const FOLDERS: usize = 5;
const DOCS: usize = 5;

fn world() -> impl Strategy<Value = World> {
    (
        prop::collection::vec(0..USERS, DOCS),
        prop::collection::vec(prop::option::of(0..FOLDERS as u8), DOCS),
        prop::collection::vec(prop::bool::weighted(0.2), DOCS),
        prop::collection::vec(0..USERS, FOLDERS),
        // A folder's parent is an earlier folder (no cycles, as the API guarantees).
        (0..FOLDERS)
            .map(|i| prop::option::of(0..(i.max(1) as u8)))
            .collect::<Vec<_>>(),
        prop::collection::vec((0..TEAMS, 0..USERS), 0..8),
        prop::collection::vec((0..DOCS as u8, 0..USERS, any::<bool>()), 0..6),
        prop::collection::vec((0..DOCS as u8, 0..TEAMS, any::<bool>()), 0..4),
        prop::collection::vec(
            (0..FOLDERS as u8, any::<bool>(), 0..USERS, any::<bool>()),
            0..6,
        ),
    )
        .prop_map(
            |(
                doc_owner,
                doc_folder,
                trashed,
                folder_owner,
                mut folder_parent,
                members,
                du,
                dt,
                fs,
            )| {
                folder_parent[0] = None;
                World {
                    doc_owner,
                    doc_folder,
                    trashed,
                    folder_owner,
                    folder_parent,
                    members,
                    doc_user_shares: du,
                    doc_team_shares: dt,
                    folder_shares: fs,
                }
            },
        )
}

/// The same statements for both backends: SQLite's `?N` become PostgreSQL's `$N`.
struct Both<'a> {
    lite: &'a rusqlite::Connection,
    pg: &'a mut postgres::Client,
}

impl Both<'_> {
    fn exec(&mut self, sql: &str, args: &[&str]) {
        let lite_args: Vec<&dyn rusqlite::ToSql> =
            args.iter().map(|a| a as &dyn rusqlite::ToSql).collect();
        self.lite.execute(sql, lite_args.as_slice()).unwrap();
        let mut pg_sql = sql.to_string();
        for i in (1..=args.len()).rev() {
            pg_sql = pg_sql.replace(&format!("?{i}"), &format!("${i}"));
        }
        let pg_args: Vec<&(dyn postgres::types::ToSql + Sync)> = args
            .iter()
            .map(|a| a as &(dyn postgres::types::ToSql + Sync))
            .collect();
        self.pg
            .execute(pg_sql.as_str(), pg_args.as_slice())
            .unwrap();
    }
}

fn check_roles(w: World) {
    let tag = uuid::Uuid::new_v4().simple().to_string();
    let mut lite = rusqlite::Connection::open_in_memory().unwrap();
    migrate::apply(&mut lite).unwrap();
    let mut pgc = pg().client();
    let user = |i: u8| format!("usr_{tag}_{i}");
    let team = |i: u8| format!("team_{tag}_{i}");
    let folder = |i: u8| format!("fld_{tag}_{i}");
    let doc = |i: u8| format!("doc_{tag}_{i}");
    let access = |write: bool| if write { "write" } else { "read" };
    {
        let mut both = Both {
            lite: &lite,
            pg: &mut pgc,
        };
        for i in 0..USERS {
            both.exec(
                "INSERT INTO users (id, name, display_name, created_at) VALUES (?1, ?1, ?1, 0)",
                &[&user(i)],
            );
        }
        for i in 0..TEAMS {
            both.exec(
                "INSERT INTO teams (id, name, owner_id, created_at) VALUES (?1, ?1, ?2, 0)",
                &[&team(i), &user(0)],
            );
        }
        for (t, u) in &w.members {
            both.exec(
                "INSERT INTO team_members (team_id, user_id) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
                &[&team(*t), &user(*u)],
            );
        }
        for i in 0..FOLDERS {
            let parent = w.folder_parent[i].map(folder);
            let owner = user(w.folder_owner[i]);
            match parent {
                Some(p) => both.exec(
                    "INSERT INTO folders (id, owner_id, parent_id, name, created_at) VALUES (?1, ?2, ?3, ?1, 0)",
                    &[&folder(i as u8), &owner, &p],
                ),
                None => both.exec(
                    "INSERT INTO folders (id, owner_id, name, created_at) VALUES (?1, ?2, ?1, 0)",
                    &[&folder(i as u8), &owner],
                ),
            }
        }
        for i in 0..DOCS {
            let owner = user(w.doc_owner[i]);
            match w.doc_folder[i].map(folder) {
                Some(f) => both.exec(
                    "INSERT INTO documents (id, owner_id, folder_id, title, created_at, updated_at) VALUES (?1, ?2, ?3, ?1, 0, 0)",
                    &[&doc(i as u8), &owner, &f],
                ),
                None => both.exec(
                    "INSERT INTO documents (id, owner_id, title, created_at, updated_at) VALUES (?1, ?2, ?1, 0, 0)",
                    &[&doc(i as u8), &owner],
                ),
            }
            if w.trashed[i] {
                both.exec(
                    "UPDATE documents SET trashed_at = 5 WHERE id = ?1",
                    &[&doc(i as u8)],
                );
            }
        }
        for (d, u, wr) in &w.doc_user_shares {
            both.exec(
                "INSERT INTO doc_shares (doc_id, user_id, access) VALUES (?1, ?2, ?3)
                 ON CONFLICT (doc_id, user_id) DO UPDATE SET access = excluded.access",
                &[&doc(*d), &user(*u), access(*wr)],
            );
        }
        for (d, t, wr) in &w.doc_team_shares {
            both.exec(
                "INSERT INTO doc_team_shares (doc_id, team_id, access) VALUES (?1, ?2, ?3)
                 ON CONFLICT (doc_id, team_id) DO UPDATE SET access = excluded.access",
                &[&doc(*d), &team(*t), access(*wr)],
            );
        }
        for (f, to_team, p, wr) in &w.folder_shares {
            let (kind, principal) = if *to_team {
                ("team", team(*p % TEAMS))
            } else {
                ("user", user(*p))
            };
            both.exec(
                "INSERT INTO workspace_folder_shares (folder_id, kind, principal_id, access) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (folder_id, kind, principal_id) DO UPDATE SET access = excluded.access",
                &[&folder(*f), kind, &principal, access(*wr)],
            );
        }
    }
    let category = |g: &Option<crate::storage::roles::Grant>| {
        g.as_ref()
            .map(|g| (g.role, g.via.split(':').next().unwrap_or("").to_string()))
    };
    for u in 0..USERS {
        for d in 0..DOCS as u8 {
            let a = roles::doc_grant(&mut Db::Sqlite(&lite), &user(u), &doc(d)).unwrap();
            let b = on_pg(&mut pgc, |db| roles::doc_grant(db, &user(u), &doc(d))).unwrap();
            assert_eq!(
                category(&a),
                category(&b),
                "user {u} on doc {d}: {a:?} vs {b:?} in {w:?}"
            );
        }
        let mut a = roles::readable_doc_ids(&mut Db::Sqlite(&lite), &user(u)).unwrap();
        let mut b = on_pg(&mut pgc, |db| roles::readable_doc_ids(db, &user(u))).unwrap();
        a.sort();
        b.sort();
        assert_eq!(a, b, "readable documents of user {u} in {w:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn both_backends_give_everyone_the_same_role(w in world()) {
        check_roles(w);
    }
}

/// One sharing operation, on logical people, teams, folders and documents.
#[derive(Debug, Clone)]
enum ShareOp {
    CreateTeam(u8),
    SetMembers(u8, Vec<u8>),
    LeaveTeam(u8, u8),
    CreateFolder(u8, Option<u8>),
    MoveFolder(u8, Option<u8>),
    DeleteFolder(u8),
    DocFolder(u8, Option<u8>),
    DocShares(u8, Vec<(bool, u8, bool)>),
    FolderShares(u8, Vec<(bool, u8, bool)>),
    LeaveDocShare(u8, u8),
    Trash(u8, bool),
}

fn share_op() -> impl Strategy<Value = ShareOp> {
    let u = 0..USERS;
    let t = 0..TEAMS;
    let f = 0..FOLDERS as u8;
    let d = 0..DOCS as u8;
    let shares = prop::collection::vec((any::<bool>(), 0..USERS, any::<bool>()), 0..4);
    prop_oneof![
        u.clone().prop_map(ShareOp::CreateTeam),
        (t.clone(), prop::collection::vec(u.clone(), 0..4))
            .prop_map(|(t, m)| ShareOp::SetMembers(t, m)),
        (t.clone(), u.clone()).prop_map(|(t, u)| ShareOp::LeaveTeam(t, u)),
        (u.clone(), prop::option::of(f.clone())).prop_map(|(u, p)| ShareOp::CreateFolder(u, p)),
        (f.clone(), prop::option::of(f.clone())).prop_map(|(a, p)| ShareOp::MoveFolder(a, p)),
        f.clone().prop_map(ShareOp::DeleteFolder),
        (d.clone(), prop::option::of(f.clone())).prop_map(|(d, p)| ShareOp::DocFolder(d, p)),
        (d.clone(), shares.clone()).prop_map(|(d, s)| ShareOp::DocShares(d, s)),
        (f.clone(), shares).prop_map(|(f, s)| ShareOp::FolderShares(f, s)),
        (d.clone(), u.clone()).prop_map(|(d, u)| ShareOp::LeaveDocShare(d, u)),
        (d, any::<bool>()).prop_map(|(d, on)| ShareOp::Trash(d, on)),
    ]
}

/// IDs the backends made for logical teams and folders (each backend names its own).
#[derive(Default)]
struct Made {
    teams: BTreeMap<u8, String>,
    folders: BTreeMap<u8, String>,
}

fn check_sharing(ops: Vec<ShareOp>) {
    use crate::storage::sharing::{Access, Share, ShareKind};
    let tag = uuid::Uuid::new_v4().simple().to_string();
    let mut lite = rusqlite::Connection::open_in_memory().unwrap();
    migrate::apply(&mut lite).unwrap();
    let mut pgc = pg().client();
    let user = |i: u8| format!("usr_{tag}_{i}");
    let doc = |i: u8| format!("doc_{tag}_{i}");
    for i in 0..USERS {
        lite.execute(
            "INSERT INTO users (id, name, display_name, created_at) VALUES (?1, ?1, ?1, 0)",
            [&user(i)],
        )
        .unwrap();
        pgc.execute(
            "INSERT INTO users (id, name, display_name, created_at) VALUES ($1, $1, $1, 0)",
            &[&user(i)],
        )
        .unwrap();
    }
    for i in 0..DOCS as u8 {
        let owner = user(i % USERS);
        documents::create(&mut Db::Sqlite(&lite), &doc(i), &owner, "d", None, 0).unwrap();
        on_pg(&mut pgc, |db| {
            documents::create(db, &doc(i), &owner, "d", None, 0)
        })
        .unwrap();
    }
    let (mut l, mut p) = (Made::default(), Made::default());
    let outcome =
        |r: &Result<(), StorageError>| r.as_ref().map_err(std::mem::discriminant).map(|_| ());
    for op in &ops {
        let (a, b): (Result<(), StorageError>, Result<(), StorageError>) = match op {
            ShareOp::CreateTeam(u) => {
                let n = l.teams.len() as u8;
                if n >= TEAMS {
                    continue;
                }
                let ta =
                    sharing::create_team(&mut Db::Sqlite(&lite), &format!("t{n}"), &user(*u), 1)
                        .unwrap();
                let tb = on_pg(&mut pgc, |db| {
                    sharing::create_team(db, &format!("t{n}"), &user(*u), 1)
                })
                .unwrap();
                l.teams.insert(n, ta.team_id);
                p.teams.insert(n, tb.team_id);
                (Ok(()), Ok(()))
            }
            ShareOp::SetMembers(t, m) => {
                let (Some(ta), Some(tb)) = (l.teams.get(t).cloned(), p.teams.get(t).cloned())
                else {
                    continue;
                };
                let owner = sharing::team(&mut Db::Sqlite(&lite), &ta)
                    .unwrap()
                    .unwrap()
                    .owner_id;
                let members: Vec<String> = m.iter().map(|u| user(*u)).collect();
                (
                    sharing::set_members(&mut Db::Sqlite(&lite), &ta, &owner, &members),
                    on_pg(&mut pgc, |db| {
                        sharing::set_members(db, &tb, &owner, &members)
                    }),
                )
            }
            ShareOp::LeaveTeam(t, u) => {
                let (Some(ta), Some(tb)) = (l.teams.get(t).cloned(), p.teams.get(t).cloned())
                else {
                    continue;
                };
                assert_eq!(
                    sharing::leave_team(&mut Db::Sqlite(&lite), &ta, &user(*u)).unwrap(),
                    on_pg(&mut pgc, |db| sharing::leave_team(db, &tb, &user(*u))).unwrap()
                );
                continue;
            }
            ShareOp::CreateFolder(u, parent) => {
                let n = (0..FOLDERS as u8).find(|i| !l.folders.contains_key(i));
                let Some(n) = n else { continue };
                let pa = parent.and_then(|x| l.folders.get(&x).cloned());
                let pb = parent.and_then(|x| p.folders.get(&x).cloned());
                let fa = sharing::create_folder(
                    &mut Db::Sqlite(&lite),
                    &format!("f{n}"),
                    &user(*u),
                    pa.as_deref(),
                    1,
                )
                .unwrap();
                let fb = on_pg(&mut pgc, |db| {
                    sharing::create_folder(db, &format!("f{n}"), &user(*u), pb.as_deref(), 1)
                })
                .unwrap();
                l.folders.insert(n, fa.folder_id);
                p.folders.insert(n, fb.folder_id);
                continue;
            }
            ShareOp::MoveFolder(f, parent) => {
                let (Some(fa), Some(fb)) = (l.folders.get(f).cloned(), p.folders.get(f).cloned())
                else {
                    continue;
                };
                let pa = parent.and_then(|x| l.folders.get(&x).cloned());
                let pb = parent.and_then(|x| p.folders.get(&x).cloned());
                let ra = sharing::move_folder(&mut Db::Sqlite(&lite), &fa, pa.as_deref());
                let rb = on_pg(&mut pgc, |db| sharing::move_folder(db, &fb, pb.as_deref()));
                if let (Ok(mut x), Ok(mut y)) = (ra.as_ref().cloned(), rb.as_ref().cloned()) {
                    x.sort();
                    y.sort();
                    assert_eq!(x, y, "documents moved with {op:?}");
                }
                (ra.map(|_| ()), rb.map(|_| ()))
            }
            ShareOp::DeleteFolder(f) => {
                let (Some(fa), Some(fb)) = (l.folders.remove(f), p.folders.remove(f)) else {
                    continue;
                };
                let mut x = sharing::delete_folder(&mut Db::Sqlite(&lite), &fa, 2).unwrap();
                let mut y = on_pg(&mut pgc, |db| sharing::delete_folder(db, &fb, 2)).unwrap();
                x.sort();
                y.sort();
                assert_eq!(x, y);
                continue;
            }
            ShareOp::DocFolder(d, f) => {
                let fa = f.and_then(|x| l.folders.get(&x).cloned());
                let fb = f.and_then(|x| p.folders.get(&x).cloned());
                sharing::set_doc_folder(&mut Db::Sqlite(&lite), &doc(*d), fa.as_deref(), 3)
                    .unwrap();
                on_pg(&mut pgc, |db| {
                    sharing::set_doc_folder(db, &doc(*d), fb.as_deref(), 3)
                })
                .unwrap();
                continue;
            }
            ShareOp::DocShares(d, list) | ShareOp::FolderShares(d, list) => {
                let share = |m: &Made, (to_team, who, write): &(bool, u8, bool)| Share {
                    kind: if *to_team {
                        ShareKind::Team
                    } else {
                        ShareKind::User
                    },
                    id: if *to_team {
                        m.teams
                            .get(&(who % TEAMS))
                            .cloned()
                            .unwrap_or_else(|| format!("team_gone_{who}"))
                    } else {
                        user(*who)
                    },
                    access: if *write { Access::Write } else { Access::Read },
                };
                let sa: Vec<Share> = list.iter().map(|x| share(&l, x)).collect();
                let sb: Vec<Share> = list.iter().map(|x| share(&p, x)).collect();
                if let ShareOp::DocShares(..) = op {
                    let owner = sharing::doc_owner(&mut Db::Sqlite(&lite), &doc(*d))
                        .unwrap()
                        .unwrap();
                    (
                        sharing::set_doc_shares(&mut Db::Sqlite(&lite), &doc(*d), &owner, &sa),
                        on_pg(&mut pgc, |db| {
                            sharing::set_doc_shares(db, &doc(*d), &owner, &sb)
                        }),
                    )
                } else {
                    let (Some(fa), Some(fb)) =
                        (l.folders.get(d).cloned(), p.folders.get(d).cloned())
                    else {
                        continue;
                    };
                    (
                        sharing::set_folder_shares(&mut Db::Sqlite(&lite), &fa, &sa),
                        on_pg(&mut pgc, |db| sharing::set_folder_shares(db, &fb, &sb)),
                    )
                }
            }
            ShareOp::LeaveDocShare(d, u) => {
                assert_eq!(
                    sharing::leave_doc_share(&mut Db::Sqlite(&lite), &doc(*d), &user(*u)).unwrap(),
                    on_pg(&mut pgc, |db| sharing::leave_doc_share(
                        db,
                        &doc(*d),
                        &user(*u)
                    ))
                    .unwrap()
                );
                continue;
            }
            ShareOp::Trash(d, on) => {
                let owner = user(*d % USERS);
                if *on {
                    assert_eq!(
                        trash::trash(&mut Db::Sqlite(&lite), &doc(*d), &owner, 4).unwrap(),
                        on_pg(&mut pgc, |db| trash::trash(db, &doc(*d), &owner, 4)).unwrap()
                    );
                } else {
                    assert_eq!(
                        trash::untrash(&mut Db::Sqlite(&lite), &doc(*d), &owner).unwrap(),
                        on_pg(&mut pgc, |db| trash::untrash(db, &doc(*d), &owner)).unwrap()
                    );
                }
                continue;
            }
        };
        assert_eq!(outcome(&a), outcome(&b), "{op:?}: {a:?} vs {b:?}");
    }
    // Everyone's rights, on every document and folder, are the same.
    let category = |g: &Option<crate::storage::roles::Grant>| {
        g.as_ref()
            .map(|g| (g.role, g.via.split(':').next().unwrap_or("").to_string()))
    };
    for u in 0..USERS {
        for d in 0..DOCS as u8 {
            let a = roles::doc_grant(&mut Db::Sqlite(&lite), &user(u), &doc(d)).unwrap();
            let b = on_pg(&mut pgc, |db| roles::doc_grant(db, &user(u), &doc(d))).unwrap();
            assert_eq!(
                category(&a),
                category(&b),
                "user {u} on doc {d} after {ops:?}"
            );
        }
        for (f, fa) in &l.folders {
            let fb = &p.folders[f];
            assert_eq!(
                roles::folder_role(&mut Db::Sqlite(&lite), &user(u), fa).unwrap(),
                on_pg(&mut pgc, |db| roles::folder_role(db, &user(u), fb)).unwrap(),
                "user {u} on folder {f} after {ops:?}"
            );
        }
        let mut a = roles::readable_doc_ids(&mut Db::Sqlite(&lite), &user(u)).unwrap();
        let mut b = on_pg(&mut pgc, |db| roles::readable_doc_ids(db, &user(u))).unwrap();
        a.sort();
        b.sort();
        assert_eq!(a, b);
        let teams = |v: Vec<crate::storage::sharing::Team>| {
            let mut v: Vec<(String, Vec<String>)> =
                v.into_iter().map(|t| (t.name, t.members)).collect();
            v.sort();
            v
        };
        assert_eq!(
            teams(sharing::my_teams(&mut Db::Sqlite(&lite), &user(u)).unwrap()),
            teams(on_pg(&mut pgc, |db| sharing::my_teams(db, &user(u))).unwrap())
        );
    }
    for d in 0..DOCS as u8 {
        assert_eq!(
            roles::is_shared(&mut Db::Sqlite(&lite), &doc(d)).unwrap(),
            on_pg(&mut pgc, |db| roles::is_shared(db, &doc(d))).unwrap(),
            "shared? doc {d} after {ops:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn sharing_operations_end_in_the_same_rights(ops in prop::collection::vec(share_op(), 1..25)) {
        check_sharing(ops);
    }
}

/// A single SQLite node moved to PostgreSQL: a random history with versions, conflicts and
/// purges, people with tokens and sessions, teams, nested folders and shares — imported into an
/// empty PostgreSQL, everything reads back the same, and the document goes on from there.
fn check_import(steps: Vec<Step>) {
    let mut lite = rusqlite::Connection::open_in_memory().unwrap();
    migrate::apply(&mut lite).unwrap();
    let ann = accounts::create_user(&mut Db::Sqlite(&lite), "Ann", "Ann A.", true, 1).unwrap();
    let bob = accounts::create_user(&mut Db::Sqlite(&lite), "bob", "Bob", false, 1).unwrap();
    let (_, token) = accounts::create_token_with_id(
        &mut Db::Sqlite(&lite),
        &bob.id,
        "cli",
        accounts::Scope::Read,
        Some(9_000),
        2,
    )
    .unwrap();
    let session =
        accounts::create_login_session(&mut Db::Sqlite(&lite), &bob.id, 3, 1_000_000, "Firefox")
            .unwrap();
    let (invite, _) = crate::storage::invites::create(
        &mut Db::Sqlite(&lite),
        crate::storage::invites::InviteKind::Join { admin: false },
        "Ann",
        50_000,
        3,
        4,
    )
    .unwrap();
    crate::storage::invites::revoke(&mut Db::Sqlite(&lite), &invite.invite_id, 5).unwrap();
    let login = crate::storage::audit::AuditEvent {
        actor_id: Some(bob.id.clone()),
        actor_name: Some(bob.name.clone()),
        action: crate::storage::audit::actions::LOGIN_OK,
        target: "user:bob".into(),
        ip: "192.0.2.1".into(),
        detail: json!({"method": "password"}),
    };
    crate::storage::audit::record(&mut Db::Sqlite(&lite), 3, &login).unwrap();
    clients::claim(&mut Db::Sqlite(&lite), "cl_t", &ann.id, 4).unwrap();
    let team = sharing::create_team(&mut Db::Sqlite(&lite), "writers", &ann.id, 5).unwrap();
    sharing::set_members(
        &mut Db::Sqlite(&lite),
        &team.team_id,
        &ann.id,
        std::slice::from_ref(&bob.id),
    )
    .unwrap();
    let top = sharing::create_folder(&mut Db::Sqlite(&lite), "Top", &ann.id, None, 6).unwrap();
    let sub = sharing::create_folder(
        &mut Db::Sqlite(&lite),
        "Sub",
        &ann.id,
        Some(&top.folder_id),
        6,
    )
    .unwrap();
    let doc_id = "doc_imported".to_string();
    documents::create(
        &mut Db::Sqlite(&lite),
        &doc_id,
        &ann.id,
        "start",
        Some(&sub.folder_id),
        0,
    )
    .unwrap();
    documents::create(
        &mut Db::Sqlite(&lite),
        "doc_trashed",
        &ann.id,
        "gone",
        None,
        0,
    )
    .unwrap();
    trash::trash(&mut Db::Sqlite(&lite), "doc_trashed", &ann.id, 9).unwrap();
    sharing::set_folder_shares(
        &mut Db::Sqlite(&lite),
        &top.folder_id,
        &[crate::storage::sharing::Share {
            kind: crate::storage::sharing::ShareKind::Team,
            id: team.team_id.clone(),
            access: crate::storage::sharing::Access::Read,
        }],
    )
    .unwrap();
    let mut doc = DocState::new(&doc_id, "start");
    for (n, s) in steps.iter().enumerate() {
        let Some(w) = write_of(&mut doc, n, s, "imp", &ann.id) else {
            continue;
        };
        let tx = lite.transaction().unwrap();
        documents::apply_write(&mut Db::Sqlite(&tx), &w, 0).unwrap();
        tx.commit().unwrap();
        if n % 5 == 4 {
            let v = crate::storage::versions::NewVersion {
                version_id: format!("ver_imp_{n}"),
                doc_id: doc_id.clone(),
                seq: doc.head_seq,
                at: 2_000 + n as i64,
                kind: crate::storage::versions::VersionKind::Named,
                name: Some(format!("v{n}")),
                created_by: Some(ann.id.clone()),
                state: crate::storage::versions::VersionState {
                    title: doc.title.clone(),
                    blocks: doc.blocks().filter(|b| !b.deleted).cloned().collect(),
                },
            };
            versions::insert(&mut Db::Sqlite(&lite), &v, 0).unwrap();
        }
    }

    // A webhook mid-delivery: its cursor, its pending batch and its log go along.
    {
        use crate::storage::webhooks;
        let db = &mut Db::Sqlite(&lite);
        let hook = webhooks::Webhook::new(
            "wh_imp".into(),
            ann.id.clone(),
            "https://example.com/hook".into(),
            vec!["ops".into()],
            Some(vec![doc_id.clone()]),
            7,
            1,
        );
        webhooks::insert(db, &hook, "sealed-secret").unwrap();
        webhooks::set_pending(db, "wh_imp", "dlv_imp", 1, 3).unwrap();
        webhooks::failed(db, "wh_imp", 2, 8, 9).unwrap();
        let attempt = webhooks::Delivery {
            delivery_id: "dlv_imp".into(),
            attempt: 2,
            at: 8,
            entries: 2,
            cursor: "3".into(),
            outcome: "failed".into(),
            status: None,
            error: Some("no answer within 10 s".into()),
            ms: 10_000,
        };
        webhooks::record(db, "wh_imp", &attempt, 200).unwrap();
    }

    let pg = TempPostgres::start();
    let mut pgc = pg.client();
    pg_migrate::apply(&mut pgc).unwrap();
    let summary = crate::storage::cluster::import::import(&lite, &mut pgc).unwrap();
    {
        use crate::storage::webhooks;
        let lite_hooks = webhooks::list(&mut Db::Sqlite(&lite)).unwrap();
        assert_eq!(lite_hooks.len(), 1);
        assert_eq!(lite_hooks, on_pg(&mut pgc, webhooks::list).unwrap());
        assert_eq!(
            webhooks::deliveries(&mut Db::Sqlite(&lite), "wh_imp", 10).unwrap(),
            on_pg(&mut pgc, |db| webhooks::deliveries(db, "wh_imp", 10)).unwrap()
        );
        assert_eq!(
            webhooks::secret_sealed(&mut Db::Sqlite(&lite), "wh_imp").unwrap(),
            on_pg(&mut pgc, |db| webhooks::secret_sealed(db, "wh_imp")).unwrap()
        );
    }
    assert!(
        summary.tables.iter().any(|(t, n)| t == "users" && *n == 2),
        "{summary:?}"
    );
    // A second import into a database that has data is refused whole.
    assert!(matches!(
        crate::storage::cluster::import::import(&lite, &mut pgc),
        Err(StorageError::Conflict(_))
    ));

    same_state(
        &documents::load(&mut Db::Sqlite(&lite), &doc_id).unwrap(),
        &on_pg(&mut pgc, |db| documents::load(db, &doc_id)).unwrap(),
    );
    assert_eq!(
        records(log::read_after(&mut Db::Sqlite(&lite), &doc_id, 0, doc.head_seq, 1_000).unwrap()),
        records(
            on_pg(&mut pgc, |db| log::read_after(
                db,
                &doc_id,
                0,
                doc.head_seq,
                1_000
            ))
            .unwrap()
        )
    );
    same_versions(&lite, &mut pgc, &doc_id);
    // The feed keeps its numbers: a consumer's cursor goes on across the move.
    let everything = |_: &mut Db, _: &str| Ok(true);
    assert_eq!(
        crate::storage::feed::page(&mut Db::Sqlite(&lite), 0, 1_000, 10_000, everything).unwrap(),
        on_pg(&mut pgc, |db| crate::storage::feed::page(
            db, 0, 1_000, 10_000, everything
        ))
        .unwrap(),
    );
    for u in [&ann, &bob] {
        for d in [doc_id.as_str(), "doc_trashed"] {
            assert_eq!(
                roles::doc_role(&mut Db::Sqlite(&lite), &u.id, d).unwrap(),
                on_pg(&mut pgc, |db| roles::doc_role(db, &u.id, d)).unwrap(),
                "{} on {d}",
                u.name
            );
        }
    }
    assert_eq!(
        on_pg(&mut pgc, |db| accounts::user_by_token(db, &token, 10)).unwrap(),
        Some((bob.clone(), accounts::Scope::Read, Some(9_000)))
    );
    assert_eq!(
        on_pg(&mut pgc, |db| accounts::user_by_session_until(
            db, &session, 10
        ))
        .unwrap()
        .map(|x| x.0),
        Some(bob.clone())
    );
    assert_eq!(
        on_pg(&mut pgc, |db| accounts::user_by_name(db, "ann")).unwrap(),
        Some(ann.clone())
    );
    assert_eq!(
        crate::storage::invites::list(&mut Db::Sqlite(&lite), 10).unwrap(),
        on_pg(&mut pgc, |db| crate::storage::invites::list(db, 10)).unwrap()
    );
    let every = crate::storage::audit::AuditFilter {
        limit: 100,
        ..Default::default()
    };
    let imported = crate::storage::audit::list(&mut Db::Sqlite(&lite), &every).unwrap();
    assert_eq!(
        imported,
        on_pg(&mut pgc, |db| crate::storage::audit::list(db, &every)).unwrap()
    );
    // The log goes on after the imported rows, in order.
    on_pg(&mut pgc, |db| crate::storage::audit::record(db, 9, &login)).unwrap();
    let after = on_pg(&mut pgc, |db| crate::storage::audit::list(db, &every)).unwrap();
    assert!(after[0].id > imported[0].id, "{after:?}");
    assert_eq!(
        on_pg(&mut pgc, |db| clients::owner(db, "cl_t")).unwrap(),
        Some(ann.id.clone())
    );
    let ids = |v: Vec<crate::storage::search::BlockHit>| {
        let mut v: Vec<String> = v.into_iter().map(|h| h.block_id).collect();
        v.sort();
        v
    };
    for q in ["text", "new", "ete"] {
        assert_eq!(
            ids(search::search(&mut Db::Sqlite(&lite), &bob.id, q, 100).unwrap()),
            ids(on_pg(&mut pgc, |db| search::search(db, &bob.id, q, 100)).unwrap()),
            "search {q:?}"
        );
    }
    assert_eq!(
        derived::document_markdown(&mut Db::Sqlite(&lite), &doc_id, &doc.title).unwrap(),
        on_pg(&mut pgc, |db| derived::markdown_export(
            db, &doc_id, &doc.title
        ))
        .unwrap()
        .collect::<String>()
    );

    // The first node to open it claims it, and it goes on.
    let me =
        cluster::register(&mut pgc, "node-a", "a", std::time::Duration::from_secs(60)).unwrap();
    let claim = on_pg(&mut pgc, |db| ownership::claim(db, &doc_id, &me))
        .unwrap()
        .unwrap();
    assert_eq!(claim.head_seq, doc.head_seq);
    let next = Step::Insert(7, None, 0);
    if let Some(w) = write_of(&mut doc, steps.len() + 1, &next, "imp", &ann.id) {
        let mut tx = pgc.transaction().unwrap();
        on_pg(&mut tx, |db| documents::apply_write(db, &w, claim.epoch)).unwrap();
        tx.commit().unwrap();
    }
    assert_eq!(
        on_pg(&mut pgc, |db| documents::load(db, &doc_id))
            .unwrap()
            .head_seq,
        doc.head_seq
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    #[test]
    fn a_sqlite_node_moves_to_postgres_whole(steps in prop::collection::vec(step(), 1..40)) {
        check_import(steps);
    }
}
