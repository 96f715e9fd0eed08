//! Who may do what, over real HTTP (PROTOCOL §3 "Roles"): a table-driven matrix of every
//! path to a role × every endpoint that touches a document, revocation taking effect on the
//! very next request, and the account side (login throttling, logout, tokens, session cookie
//! flags, cross-origin writes). Every refusal and every read is checked against the
//! whole-database fingerprint (`common::db`: every table, FTS, tags, tokens and sessions
//! included): it must leave nothing behind. An allowed write must change exactly what it
//! names, in the tables it is meant to write.

use crate::common;

use std::collections::BTreeSet;

use common::*;
use serde_json::{json, Value};

/// A word only the matrix document contains, and the tag on its block.
const WORD: &str = "zanzibarquokka";
const TAG: &str = "tagx";

// ---------------------------------------------------------------------------------------
// The matrix document's rows (what an allowed write is expected to change). Whether a
// request wrote anything at all is the whole-database fingerprint's job (`common::db`).

/// (head_seq, icon, folder_id, title, title_version) of a document row.
type DocRow = (i64, Option<String>, Option<String>, String, i64);

/// The matrix document's rows, for comparing an allowed write with what it should change.
#[derive(Debug, Clone, PartialEq)]
struct DocRows {
    /// (head_seq, icon, folder_id, title, title_version); None once the document is gone.
    doc: Option<DocRow>,
    /// (id, content, version, deleted) of every block of the document.
    blocks: Vec<(String, String, i64, i64)>,
    op_log: i64,
    op_results: i64,
    doc_shares: Vec<(String, String)>,
    team_shares: Vec<(String, String)>,
    folder_shares: Vec<(String, String, String, String)>,
    folders: Vec<(String, Option<String>, String)>,
    members: Vec<(String, String)>,
    tokens: i64,
}

fn strings<const N: usize>(
    db: &rusqlite::Connection,
    sql: &str,
    args: &[&str],
) -> Vec<[Option<String>; N]> {
    let mut stmt = db.prepare(sql).unwrap();
    stmt.query_map(rusqlite::params_from_iter(args.iter()), |r| {
        let mut out: [Option<String>; N] = std::array::from_fn(|_| None);
        for (i, slot) in out.iter_mut().enumerate() {
            *slot = match r.get_ref(i)? {
                rusqlite::types::ValueRef::Null => None,
                rusqlite::types::ValueRef::Integer(n) => Some(n.to_string()),
                rusqlite::types::ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into()),
                other => Some(format!("{other:?}")),
            };
        }
        Ok(out)
    })
    .unwrap()
    .collect::<rusqlite::Result<Vec<_>>>()
    .unwrap()
}

fn count(db: &rusqlite::Connection, sql: &str, doc: &str) -> i64 {
    db.query_row(sql, [doc], |r| r.get(0)).unwrap()
}

fn doc_rows(srv: &TestServer, doc: &str) -> DocRows {
    let db = srv.db();
    let doc_row = db
        .query_row(
            "SELECT head_seq, icon, folder_id, title, title_version FROM documents WHERE id = ?1",
            [doc],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .ok();
    let s = |v: &Option<String>| v.clone().unwrap_or_default();
    let n = |v: &Option<String>| s(v).parse::<i64>().unwrap_or(-1);
    DocRows {
        doc: doc_row,
        blocks: strings::<4>(
            &db,
            "SELECT id, content, version, deleted FROM blocks WHERE doc_id = ?1 ORDER BY id",
            &[doc],
        )
        .iter()
        .map(|r| (s(&r[0]), s(&r[1]), n(&r[2]), n(&r[3])))
        .collect(),
        op_log: count(&db, "SELECT count(*) FROM doc_ops WHERE doc_id = ?1", doc),
        op_results: count(
            &db,
            "SELECT count(*) FROM doc_op_results WHERE doc_id = ?1",
            doc,
        ),
        doc_shares: strings::<2>(
            &db,
            "SELECT user_id, access FROM doc_shares WHERE doc_id = ?1 ORDER BY user_id",
            &[doc],
        )
        .iter()
        .map(|r| (s(&r[0]), s(&r[1])))
        .collect(),
        team_shares: strings::<2>(
            &db,
            "SELECT team_id, access FROM doc_team_shares WHERE doc_id = ?1 ORDER BY team_id",
            &[doc],
        )
        .iter()
        .map(|r| (s(&r[0]), s(&r[1])))
        .collect(),
        folder_shares: strings::<4>(
            &db,
            "SELECT folder_id, kind, principal_id, access FROM workspace_folder_shares ORDER BY 1, 2, 3",
            &[],
        )
        .iter()
        .map(|r| (s(&r[0]), s(&r[1]), s(&r[2]), s(&r[3])))
        .collect(),
        folders: strings::<3>(
            &db,
            "SELECT id, parent_id, owner_id FROM folders ORDER BY id",
            &[],
        )
        .iter()
        .map(|r| (s(&r[0]), r[1].clone(), s(&r[2])))
        .collect(),
        members: strings::<2>(
            &db,
            "SELECT team_id, user_id FROM team_members ORDER BY 1, 2",
            &[],
        )
        .iter()
        .map(|r| (s(&r[0]), s(&r[1])))
        .collect(),
        tokens: db
            .query_row("SELECT count(*) FROM api_tokens", [], |r| r.get(0))
            .unwrap(),
    }
}

fn block_version(srv: &TestServer, block: &str) -> i64 {
    srv.db()
        .query_row("SELECT version FROM blocks WHERE id = ?1", [block], |r| {
            r.get(0)
        })
        .unwrap()
}

fn block_content(srv: &TestServer, block: &str) -> String {
    srv.db()
        .query_row("SELECT content FROM blocks WHERE id = ?1", [block], |r| {
            r.get(0)
        })
        .unwrap()
}

fn doc_icon(srv: &TestServer, doc: &str) -> Option<String> {
    srv.db()
        .query_row("SELECT icon FROM documents WHERE id = ?1", [doc], |r| {
            r.get(0)
        })
        .unwrap()
}

fn user_id(srv: &TestServer, token: &str, name: &str) -> String {
    let (s, v) = srv.get(token, &format!("/api/v1/users?name={name}"));
    assert_eq!(s, 200, "find user {name}: {v}");
    v["id"].as_str().unwrap().to_string()
}

fn create_folder(srv: &TestServer, token: &str, name: &str, parent: Option<&str>) -> String {
    let (s, v) = srv.post(
        token,
        "/api/v1/folders",
        &json!({"name": name, "parentId": parent}),
    );
    assert_eq!(s, 201, "create folder {name}: {v}");
    v["folderId"].as_str().unwrap().to_string()
}

fn create_team(srv: &TestServer, token: &str, name: &str, members: &[&str]) -> String {
    let (s, v) = srv.post(token, "/api/v1/teams", &json!({"name": name}));
    assert_eq!(s, 201, "create team {name}: {v}");
    let team = v["teamId"].as_str().unwrap().to_string();
    set_members(srv, token, &team, members);
    team
}

fn set_members(srv: &TestServer, token: &str, team: &str, members: &[&str]) {
    let (s, v) = srv.put(
        token,
        &format!("/api/v1/teams/{team}/members"),
        &json!({ "members": members }),
    );
    assert_eq!(s, 200, "set members of {team}: {v}");
}

fn share(kind: &str, id: &str, access: &str) -> Value {
    json!({"kind": kind, "id": id, "access": access})
}

fn put_doc_shares(srv: &TestServer, token: &str, doc: &str, shares: Vec<Value>) {
    let (s, v) = srv.put(
        token,
        &format!("/api/v1/docs/{doc}/shares"),
        &Value::Array(shares),
    );
    assert_eq!(s, 200, "put doc shares: {v}");
}

fn put_folder_shares(srv: &TestServer, token: &str, folder: &str, shares: Vec<Value>) {
    let (s, v) = srv.put(
        token,
        &format!("/api/v1/folders/{folder}/shares"),
        &Value::Array(shares),
    );
    assert_eq!(s, 200, "put folder shares: {v}");
}

fn move_doc(srv: &TestServer, token: &str, doc: &str, folder: Option<&str>) {
    let (s, v) = srv.patch(
        token,
        &format!("/api/v1/docs/{doc}"),
        &json!({ "folderId": folder }),
    );
    assert_eq!(s, 204, "move doc into {folder:?}: {v}");
}

// ---------------------------------------------------------------------------------------
// The matrix

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ep {
    Snapshot,
    SyncRead,
    SyncWrite,
    Leave,
    Markdown,
    Search,
    Tags,
    Tag,
    List,
    PatchIcon,
    PatchFolder,
    GetShares,
    PutShares,
    Versions,
    NameVersion,
    Conflicts,
    Delete,
}

const EPS: [Ep; 17] = [
    Ep::Snapshot,
    Ep::SyncRead,
    Ep::SyncWrite,
    Ep::Leave,
    Ep::Markdown,
    Ep::Search,
    Ep::Tags,
    Ep::Tag,
    Ep::List,
    Ep::PatchIcon,
    Ep::PatchFolder,
    Ep::GetShares,
    Ep::PutShares,
    Ep::Versions,
    Ep::NameVersion,
    Ep::Conflicts,
    Ep::Delete,
];

impl Ep {
    /// The tables (name prefixes: `block_search` covers the FTS shadow tables) an allowed
    /// call may write; empty for reads.
    fn writes(self) -> &'static [&'static str] {
        const DOC_CONTENT: &[&str] = &[
            "documents",
            "blocks",
            "doc_ops",
            "doc_op_results",
            "block_changes",
            "markdown_cache",
            "block_search",
            "block_tags",
            "tags",
            // The change feed's row per log entry (`sqlite_sequence`: its AUTOINCREMENT counter).
            "feed",
            "sqlite_sequence",
        ];
        match self {
            Ep::SyncWrite => DOC_CONTENT,
            // Rights depend on a document's folder and shares, not on its icon: those
            // changes move the access epoch (migration 0004), an icon does not.
            Ep::PatchIcon => &["documents"],
            Ep::PatchFolder => &["documents", "access_epoch"],
            // A changed share is a security event: its audit row (`sqlite_sequence`: the
            // log's AUTOINCREMENT counter).
            Ep::PutShares => &[
                "doc_shares",
                "doc_team_shares",
                "access_epoch",
                "audit_log",
                "sqlite_sequence",
            ],
            Ep::NameVersion => &["doc_versions"],
            Ep::Delete => &[
                "access_epoch",
                "documents",
                "blocks",
                "doc_ops",
                "doc_op_results",
                "block_changes",
                "markdown_cache",
                "block_search",
                "block_tags",
                "tags",
                "purged_blocks",
                "doc_shares",
                "doc_team_shares",
                "audit_log",
                "sqlite_sequence",
            ],
            _ => &[],
        }
    }

    fn label(self) -> &'static str {
        match self {
            Ep::Snapshot => "snap",
            Ep::SyncRead => "sync",
            Ep::SyncWrite => "syncW",
            Ep::Leave => "leave",
            Ep::Markdown => "md",
            Ep::Search => "search",
            Ep::Tags => "tags",
            Ep::Tag => "tag/x",
            Ep::List => "docs",
            Ep::PatchIcon => "icon",
            Ep::PatchFolder => "folder",
            Ep::GetShares => "getSh",
            Ep::PutShares => "putSh",
            Ep::Versions => "vers",
            Ep::NameVersion => "nameV",
            Ep::Conflicts => "confl",
            Ep::Delete => "delete",
        }
    }
}

struct Row {
    /// User name (created through the CLI); "anonymous" sends no credentials.
    who: &'static str,
    /// Role expected in snapshot / sync / GET /docs, None = no read access.
    role: Option<&'static str>,
    /// `via` expected in GET /docs.
    via: Option<&'static str>,
    /// Expected status per endpoint, in the order of `EPS`. search, tags, tag/x and docs
    /// answer 200 to every signed-in user; whether D shows up follows `role`.
    expect: [u16; 17],
}

#[rustfmt::skip]
const MATRIX: &[Row] = &[
    //                                                                       snap sync syncW leave md  search tags tag/x docs icon folder getSh putSh vers nameV confl delete
    Row { who: "alice",       role: Some("owner"),  via: Some("owner"),       expect: [200, 200, 200, 204, 200, 200, 200, 200, 200, 204, 204, 200, 200, 200, 201, 200, 204] },
    Row { who: "ed_direct",   role: Some("editor"), via: Some("direct"),      expect: [200, 200, 200, 204, 200, 200, 200, 200, 200, 204, 403, 403, 403, 200, 201, 200, 403] },
    Row { who: "ed_team",     role: Some("editor"), via: Some("team:writers"), expect: [200, 200, 200, 204, 200, 200, 200, 200, 200, 204, 403, 403, 403, 200, 201, 200, 403] },
    Row { who: "ed_folder",   role: Some("editor"), via: Some("folder:Sub"),  expect: [200, 200, 200, 204, 200, 200, 200, 200, 200, 204, 403, 403, 403, 200, 201, 200, 403] },
    Row { who: "ed_ancestor", role: Some("editor"), via: Some("folder:Top"),  expect: [200, 200, 200, 204, 200, 200, 200, 200, 200, 204, 403, 403, 403, 200, 201, 200, 403] },
    Row { who: "vw_direct",   role: Some("viewer"), via: Some("direct"),      expect: [200, 200, 403, 204, 200, 200, 200, 200, 200, 403, 403, 403, 403, 200, 403, 200, 403] },
    Row { who: "vw_team",     role: Some("viewer"), via: Some("team:readers"), expect: [200, 200, 403, 204, 200, 200, 200, 200, 200, 403, 403, 403, 403, 200, 403, 200, 403] },
    Row { who: "vw_folder",   role: Some("viewer"), via: Some("folder:Sub"),  expect: [200, 200, 403, 204, 200, 200, 200, 200, 200, 403, 403, 403, 403, 200, 403, 200, 403] },
    Row { who: "vw_ancestor", role: Some("viewer"), via: Some("folder:Top"),  expect: [200, 200, 403, 204, 200, 200, 200, 200, 200, 403, 403, 403, 403, 200, 403, 200, 403] },
    Row { who: "nobody",      role: None,           via: None,                expect: [404, 404, 404, 404, 404, 200, 200, 200, 200, 404, 404, 404, 404, 404, 404, 404, 404] },
    Row { who: "anonymous",   role: None,           via: None,                expect: [401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401] },
];

struct World {
    srv: TestServer,
    users: Vec<(&'static str, String, String)>,
    doc: String,
    block: String,
    top: String,
    sub: String,
    /// The document's share list as the owner set it (kind, id, access).
    doc_share_list: BTreeSet<(String, String, String)>,
}

impl World {
    fn token(&self, who: &str) -> Option<&str> {
        self.users
            .iter()
            .find(|(n, _, _)| *n == who)
            .map(|(_, t, _)| t.as_str())
    }

    fn uid(&self, who: &str) -> &str {
        self.users
            .iter()
            .find(|(n, _, _)| *n == who)
            .map(|(_, _, id)| id.as_str())
            .unwrap()
    }
}

/// alice owns Top ⊃ Sub ⊃ D; D has a block with the search word and `#tagx`; one user per
/// path to each role.
fn build_world() -> World {
    let srv = TestServer::start();
    let mut users = Vec::new();
    for row in MATRIX.iter().filter(|r| r.who != "anonymous") {
        let token = srv.add_user(row.who);
        users.push((row.who, token, String::new()));
    }
    let alice = users[0].1.clone();
    for u in users.iter_mut() {
        u.2 = user_id(&srv, &alice, u.0);
    }
    let uid = |n: &str| users.iter().find(|u| u.0 == n).unwrap().2.clone();

    let top = create_folder(&srv, &alice, "Top", None);
    let sub = create_folder(&srv, &alice, "Sub", Some(&top));
    let writers = create_team(&srv, &alice, "writers", &[&uid("ed_team")]);
    let readers = create_team(&srv, &alice, "readers", &[&uid("vw_team")]);

    let doc = srv.create_doc(&alice, "Matrix");
    let block = id("blk_");
    srv.sync_ok(
        &alice,
        &doc,
        "cl_setup",
        0,
        vec![insert(&block, None, "a0", &format!("{WORD} plan #{TAG}"))],
    );
    move_doc(&srv, &alice, &doc, Some(&sub));
    let shares = vec![
        share("user", &uid("ed_direct"), "write"),
        share("user", &uid("vw_direct"), "read"),
        share("team", &writers, "write"),
        share("team", &readers, "read"),
    ];
    let doc_share_list = share_set(&Value::Array(shares.clone()));
    put_doc_shares(&srv, &alice, &doc, shares);
    put_folder_shares(
        &srv,
        &alice,
        &sub,
        vec![
            share("user", &uid("ed_folder"), "write"),
            share("user", &uid("vw_folder"), "read"),
        ],
    );
    put_folder_shares(
        &srv,
        &alice,
        &top,
        vec![
            share("user", &uid("ed_ancestor"), "write"),
            share("user", &uid("vw_ancestor"), "read"),
        ],
    );
    let (s, _) = srv.post(
        &alice,
        &format!("/api/v1/docs/{doc}/leave"),
        &json!({"clientId": "cl_setup"}),
    );
    assert_eq!(s, 204);
    World {
        srv,
        users,
        doc,
        block,
        top,
        sub,
        doc_share_list,
    }
}

fn share_set(v: &Value) -> BTreeSet<(String, String, String)> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|s| {
                    (
                        s["kind"].as_str().unwrap_or("?").to_string(),
                        s["id"].as_str().unwrap_or("?").to_string(),
                        s["access"].as_str().unwrap_or("?").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn docs_entry<'a>(list: &'a Value, doc: &str) -> Option<&'a Value> {
    list["documents"]
        .as_array()?
        .iter()
        .find(|d| d["docId"] == doc)
}

fn lists_doc(v: &Value, array: &str, doc: &str) -> bool {
    v[array]
        .as_array()
        .is_some_and(|a| a.iter().any(|h| h["docId"] == doc))
}

/// Runs one cell; returns the status and pushes every broken expectation onto `fails`.
fn run_cell(w: &World, row: &Row, ep: Ep, expected: u16, fails: &mut Vec<String>) -> u16 {
    let srv = &w.srv;
    let doc = w.doc.as_str();
    let auth = match w.token(row.who) {
        Some(t) => Auth::Bearer(t),
        None => Auth::None,
    };
    let client = format!("cl_{}", row.who);
    let whole = srv.fingerprint();
    let before = doc_rows(srv, doc);
    let mut fail = |what: String| fails.push(format!("{} × {}: {what}", row.who, ep.label()));
    let readable = row.role.is_some();
    // Which fields a successful call may change; everything else must stay as it was.
    let mut changed = before.clone();
    let status;
    match ep {
        Ep::Snapshot => {
            let r = srv.send(
                "GET",
                &format!("/api/v1/docs/{doc}/snapshot"),
                &auth,
                &[],
                None,
            );
            status = r.status;
            if status == 200 {
                if r.body["role"].as_str() != row.role {
                    fail(format!("role {} expected {:?}", r.body["role"], row.role));
                }
                if !r.body["blocks"].to_string().contains(WORD) {
                    fail("snapshot lacks the block".into());
                }
            }
        }
        Ep::SyncRead => {
            let r = srv.send(
                "POST",
                &format!("/api/v1/docs/{doc}/sync"),
                &auth,
                &[],
                Some(&json!({"clientId": client, "lastSeq": 0})),
            );
            status = r.status;
            if status == 200 {
                if r.body["role"].as_str() != row.role {
                    fail(format!("role {} expected {:?}", r.body["role"], row.role));
                }
                if r.body["headSeq"].as_i64() != before.doc.as_ref().map(|d| d.0) {
                    fail(format!("headSeq {}", r.body["headSeq"]));
                }
            }
        }
        Ep::SyncWrite => {
            let version = block_version(srv, &w.block);
            let content = format!("{WORD} edited by {} #{TAG}", row.who);
            let r = srv.send(
                "POST",
                &format!("/api/v1/docs/{doc}/sync"),
                &auth,
                &[],
                Some(&json!({"clientId": client, "lastSeq": 0,
                             "ops": [set_content(&w.block, &content, version)]})),
            );
            status = r.status;
            if status == 200 {
                if r.body["results"][0]["status"] != "applied" {
                    fail(format!("op not applied: {}", r.body["results"]));
                }
                let d = changed.doc.as_mut().unwrap();
                d.0 += 1;
                changed.op_log += 1;
                changed.op_results += 1;
                for b in changed.blocks.iter_mut().filter(|b| b.0 == w.block) {
                    b.1 = content.clone();
                    b.2 = version + 1;
                }
            }
        }
        Ep::Leave => {
            let r = srv.send(
                "POST",
                &format!("/api/v1/docs/{doc}/leave"),
                &auth,
                &[],
                Some(&json!({ "clientId": client })),
            );
            status = r.status;
        }
        Ep::Markdown => {
            let r = srv.send(
                "GET",
                &format!("/api/v1/docs/{doc}/markdown"),
                &auth,
                &[],
                None,
            );
            status = r.status;
            if status == 200 && !r.body.as_str().unwrap_or("").contains(WORD) {
                fail(format!("markdown lacks the block: {}", r.body));
            }
        }
        Ep::Search => {
            let r = srv.send("GET", &format!("/api/v1/search?q={WORD}"), &auth, &[], None);
            status = r.status;
            if status == 200 && lists_doc(&r.body, "results", doc) != readable {
                fail(format!(
                    "D's block visible in search ≠ {readable}: {}",
                    r.body
                ));
            }
        }
        Ep::Tags => {
            let r = srv.send("GET", "/api/v1/tags", &auth, &[], None);
            status = r.status;
            let seen = r.body["tags"]
                .as_array()
                .is_some_and(|a| a.iter().any(|t| t["tag"] == TAG));
            if status == 200 && seen != readable {
                fail(format!("#{TAG} listed ≠ {readable}: {}", r.body));
            }
        }
        Ep::Tag => {
            let r = srv.send("GET", &format!("/api/v1/tags/{TAG}"), &auth, &[], None);
            status = r.status;
            if status == 200 && lists_doc(&r.body, "blocks", doc) != readable {
                fail(format!("D's block under #{TAG} ≠ {readable}: {}", r.body));
            }
        }
        Ep::List => {
            let r = srv.send("GET", "/api/v1/docs", &auth, &[], None);
            status = r.status;
            if status == 200 {
                let entry = docs_entry(&r.body, doc);
                let got = entry.map(|e| (e["role"].as_str(), e["via"].as_str()));
                let want = row.role.map(|role| (Some(role), row.via));
                if got != want {
                    fail(format!("listed as {got:?}, expected {want:?}"));
                }
            }
        }
        Ep::PatchIcon => {
            let icon = format!("ic-{}", row.who);
            let r = srv.send(
                "PATCH",
                &format!("/api/v1/docs/{doc}"),
                &auth,
                &[],
                Some(&json!({ "icon": icon })),
            );
            status = r.status;
            if status == 204 {
                changed.doc.as_mut().unwrap().1 = Some(icon);
            }
        }
        Ep::PatchFolder => {
            if row.who == "alice" {
                // The owner moves D up to Top and back to Sub; the net effect is nil.
                let path = format!("/api/v1/docs/{doc}");
                let r = srv.send(
                    "PATCH",
                    &path,
                    &auth,
                    &[],
                    Some(&json!({"folderId": w.top})),
                );
                status = r.status;
                let now = doc_rows(srv, doc).doc.and_then(|d| d.2);
                if status == 204 && now.as_deref() != Some(w.top.as_str()) {
                    fail(format!("moved to Top but folder_id is {now:?}"));
                }
                let r = srv.send(
                    "PATCH",
                    &path,
                    &auth,
                    &[],
                    Some(&json!({"folderId": w.sub})),
                );
                if r.status != 204 {
                    fail(format!("moving back to Sub: {} {}", r.status, r.body));
                }
            } else {
                // Everybody else tries to take D out of its folders.
                let r = srv.send(
                    "PATCH",
                    &format!("/api/v1/docs/{doc}"),
                    &auth,
                    &[],
                    Some(&json!({ "folderId": null })),
                );
                status = r.status;
            }
        }
        Ep::GetShares => {
            let r = srv.send(
                "GET",
                &format!("/api/v1/docs/{doc}/shares"),
                &auth,
                &[],
                None,
            );
            status = r.status;
            if status == 200 && share_set(&r.body["shares"]) != w.doc_share_list {
                fail(format!("shares {}", r.body));
            }
        }
        Ep::PutShares => {
            let body = if row.who == "alice" {
                // The owner writes the same list back: allowed, nothing changes.
                let list: Vec<Value> = w
                    .doc_share_list
                    .iter()
                    .map(|(k, i, a)| share(k, i, a))
                    .collect();
                Value::Array(list)
            } else {
                // Everybody else tries to replace all shares with write access for themselves.
                let me = w
                    .users
                    .iter()
                    .find(|u| u.0 == row.who)
                    .map_or_else(|| w.uid("nobody").to_string(), |u| u.2.clone());
                json!([share("user", &me, "write")])
            };
            let r = srv.send(
                "PUT",
                &format!("/api/v1/docs/{doc}/shares"),
                &auth,
                &[],
                Some(&body),
            );
            status = r.status;
            if status == 200 && share_set(&r.body["shares"]) != w.doc_share_list {
                fail(format!("shares after PUT {}", r.body));
            }
        }
        Ep::Versions => {
            let r = srv.send(
                "GET",
                &format!("/api/v1/docs/{doc}/versions"),
                &auth,
                &[],
                None,
            );
            status = r.status;
            if status == 200 && !r.body["versions"].is_array() {
                fail(format!("no version list: {}", r.body));
            }
        }
        Ep::NameVersion => {
            let r = srv.send(
                "POST",
                &format!("/api/v1/docs/{doc}/versions"),
                &auth,
                &[],
                Some(&json!({ "name": format!("by {}", row.who) })),
            );
            status = r.status;
            if status == 201 && r.body["blocks"] != 1 {
                fail(format!("the version lacks the block: {}", r.body));
            }
        }
        Ep::Conflicts => {
            let r = srv.send(
                "GET",
                &format!("/api/v1/conflicts?docId={doc}"),
                &auth,
                &[],
                None,
            );
            status = r.status;
            if status == 200 && r.body["conflicts"] != json!([]) {
                fail(format!("conflicts where there are none: {}", r.body));
            }
        }
        Ep::Delete => {
            status = srv
                .send("DELETE", &format!("/api/v1/docs/{doc}"), &auth, &[], None)
                .status;
            if status == 204 {
                // Deleted means in the owner's trash: every row kept, nobody can read it.
                changed = doc_rows(srv, doc);
                let trashed: Option<i64> = srv
                    .db()
                    .query_row(
                        "SELECT trashed_at FROM documents WHERE id = ?1",
                        [doc],
                        |r| r.get(0),
                    )
                    .ok()
                    .flatten();
                if trashed.is_none() {
                    fail("document not in the trash after 204".into());
                }
                let path = format!("/api/v1/docs/{doc}/snapshot");
                if srv.send("GET", &path, &auth, &[], None).status != 404 {
                    fail("a trashed document can still be read".into());
                }
            }
        }
    }
    if status != expected {
        fail(format!("status {status}, expected {expected}"));
    }
    let now = srv.fingerprint();
    if status / 100 == 2 && !ep.writes().is_empty() {
        // An allowed write: the document changed exactly as expected, and no table it is
        // not meant to write changed at all.
        let after = doc_rows(srv, doc);
        if after != changed {
            fail(format!(
                "document rows (status {status}):\n  expected {changed:?}\n  found    {after:?}"
            ));
        }
        let stray: Vec<String> = whole
            .changed_tables(&now)
            .into_iter()
            .filter(|t| !ep.writes().iter().any(|w| t.starts_with(w)))
            .collect();
        if !stray.is_empty() {
            fail(format!(
                "wrote tables it has no business in: {stray:?} ({})",
                whole.diff(&now)
            ));
        }
    } else if now != whole {
        // A refusal, or a read: nothing at all may have been written.
        fail(format!(
            "database changed (status {status}): {}",
            whole.diff(&now)
        ));
    }
    status
}

#[test]
fn permission_matrix() {
    let w = build_world();
    let mut fails = Vec::new();
    let mut got = vec![[0u16; 17]; MATRIX.len()];
    for (i, row) in MATRIX.iter().enumerate() {
        for (j, ep) in EPS.iter().enumerate() {
            if *ep != Ep::Delete {
                got[i][j] = run_cell(&w, row, *ep, row.expect[j], &mut fails);
            }
        }
    }
    // DELETE last: everybody else first (the document must survive), the owner at the end.
    let del = EPS.iter().position(|e| *e == Ep::Delete).unwrap();
    let order = (1..MATRIX.len()).chain([0]);
    for i in order {
        let row = &MATRIX[i];
        got[i][del] = run_cell(&w, row, Ep::Delete, row.expect[del], &mut fails);
    }
    // After the delete nobody reaches D any more, whatever path they had.
    for who in ["alice", "ed_direct", "vw_folder", "ed_ancestor"] {
        let t = w.token(who).unwrap();
        let (s, _) = w.srv.get(t, &format!("/api/v1/docs/{}/snapshot", w.doc));
        if s != 404 {
            fails.push(format!("{who}: snapshot of deleted doc → {s}"));
        }
        let (_, v) = w.srv.get(t, "/api/v1/docs");
        if docs_entry(&v, &w.doc).is_some() {
            fails.push(format!("{who}: deleted doc still listed"));
        }
        let (_, v) = w.srv.get(t, &format!("/api/v1/search?q={WORD}"));
        if lists_doc(&v, "results", &w.doc) {
            fails.push(format!("{who}: deleted doc still found by search"));
        }
    }

    let mut table = format!("{:<12}", "");
    for ep in EPS {
        table.push_str(&format!("{:>7}", ep.label()));
    }
    for (i, row) in MATRIX.iter().enumerate() {
        table.push_str(&format!("\n{:<12}", row.who));
        for (j, s) in got[i].iter().enumerate() {
            let mark = if *s == row.expect[j] { ' ' } else { '!' };
            table.push_str(&format!("{:>6}{mark}", s));
        }
    }
    eprintln!("{table}");
    assert!(
        fails.is_empty(),
        "{} broken cells:\n{}\n\n{table}",
        fails.len(),
        fails.join("\n")
    );
}

// ---------------------------------------------------------------------------------------
// Revocation

/// One sync with an edit, as `token`; returns the status. The block's content only changes
/// when the status is 200.
fn try_edit(srv: &TestServer, token: &str, doc: &str, block: &str, client: &str) -> u16 {
    let before = srv.fingerprint();
    let content = format!("edit {}", id(""));
    let version = block_version(srv, block);
    let (s, v) = srv.sync(
        token,
        doc,
        &json!({"clientId": client, "lastSeq": 0, "ops": [set_content(block, &content, version)],
                "leases": {"hold": [block]}}),
    );
    if s == 200 {
        assert_eq!(v["results"][0]["status"], "applied", "{v}");
        assert_eq!(block_content(srv, block), content);
    } else {
        srv.assert_unchanged(&before, &format!("a refused edit ({s})"));
    }
    s
}

fn try_read(srv: &TestServer, token: &str, doc: &str, client: &str) -> u16 {
    let (s, _) = srv.sync(token, doc, &json!({"clientId": client, "lastSeq": 0}));
    s
}

#[test]
fn revocation_applies_to_the_next_sync() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob"); // direct share
    let carol = srv.add_user("carol"); // team share
    let dave = srv.add_user("dave"); // share of Sub
    let erin = srv.add_user("erin"); // share of Top (ancestor)
    let frank = srv.add_user("frank"); // share of Sub; then D leaves the folder
    let [bob_id, carol_id, dave_id, erin_id, frank_id] =
        ["bob", "carol", "dave", "erin", "frank"].map(|n| user_id(&srv, &alice, n));
    let top = create_folder(&srv, &alice, "Top", None);
    let sub = create_folder(&srv, &alice, "Sub", Some(&top));
    let team = create_team(&srv, &alice, "crew", &[&carol_id]);
    let doc = srv.create_doc(&alice, "Revoked");
    // One block per user, so that one user's lease never turns another's edit into a conflict.
    let [b_a, b_bob, b_carol, b_dave, b_erin]: [String; 5] = std::array::from_fn(|_| id("blk_"));
    let inserts = [&b_a, &b_bob, &b_carol, &b_dave, &b_erin]
        .iter()
        .enumerate()
        .map(|(i, b)| insert(b, None, &format!("a{i}"), "x"))
        .collect();
    srv.sync_ok(&alice, &doc, "cl_a", 0, inserts);
    move_doc(&srv, &alice, &doc, Some(&sub));
    put_doc_shares(
        &srv,
        &alice,
        &doc,
        vec![
            share("user", &bob_id, "write"),
            share("team", &team, "write"),
        ],
    );
    put_folder_shares(
        &srv,
        &alice,
        &sub,
        vec![
            share("user", &dave_id, "write"),
            share("user", &frank_id, "read"),
        ],
    );
    put_folder_shares(&srv, &alice, &top, vec![share("user", &erin_id, "write")]);

    // Everyone edits (and holds a lease, so the actor knows their session).
    for (who, t, b) in [
        ("bob", &bob, &b_bob),
        ("carol", &carol, &b_carol),
        ("dave", &dave, &b_dave),
        ("erin", &erin, &b_erin),
    ] {
        assert_eq!(
            try_edit(&srv, t, &doc, b, &format!("cl_{who}")),
            200,
            "{who} edits"
        );
    }
    assert_eq!(try_read(&srv, &frank, &doc, "cl_frank"), 200);

    // Direct share: write → read → removed.
    put_doc_shares(
        &srv,
        &alice,
        &doc,
        vec![
            share("user", &bob_id, "read"),
            share("team", &team, "write"),
        ],
    );
    assert_eq!(
        try_edit(&srv, &bob, &doc, &b_bob, "cl_bob"),
        403,
        "bob downgraded"
    );
    assert_eq!(try_read(&srv, &bob, &doc, "cl_bob"), 200, "bob still reads");
    put_doc_shares(&srv, &alice, &doc, vec![share("team", &team, "write")]);
    assert_eq!(
        try_edit(&srv, &bob, &doc, &b_bob, "cl_bob"),
        404,
        "bob removed"
    );
    assert_eq!(try_read(&srv, &bob, &doc, "cl_bob"), 404);
    assert_eq!(
        srv.get(&bob, &format!("/api/v1/docs/{doc}/snapshot")).0,
        404
    );

    // Team: share downgraded to read, then carol leaves the team.
    put_doc_shares(&srv, &alice, &doc, vec![share("team", &team, "read")]);
    assert_eq!(try_edit(&srv, &carol, &doc, &b_carol, "cl_carol"), 403);
    assert_eq!(try_read(&srv, &carol, &doc, "cl_carol"), 200);
    put_doc_shares(&srv, &alice, &doc, vec![share("team", &team, "write")]);
    assert_eq!(try_edit(&srv, &carol, &doc, &b_carol, "cl_carol"), 200);
    set_members(&srv, &alice, &team, &[]);
    assert_eq!(
        try_edit(&srv, &carol, &doc, &b_carol, "cl_carol"),
        404,
        "carol left the team"
    );
    assert_eq!(try_read(&srv, &carol, &doc, "cl_carol"), 404);

    // Folder share of Sub: write → read → removed (frank keeps his read share).
    put_folder_shares(
        &srv,
        &alice,
        &sub,
        vec![
            share("user", &dave_id, "read"),
            share("user", &frank_id, "read"),
        ],
    );
    assert_eq!(try_edit(&srv, &dave, &doc, &b_dave, "cl_dave"), 403);
    assert_eq!(try_read(&srv, &dave, &doc, "cl_dave"), 200);
    put_folder_shares(&srv, &alice, &sub, vec![share("user", &frank_id, "read")]);
    assert_eq!(
        try_edit(&srv, &dave, &doc, &b_dave, "cl_dave"),
        404,
        "dave's folder share removed"
    );
    assert_eq!(try_read(&srv, &dave, &doc, "cl_dave"), 404);

    // Ancestor folder share: write → read → removed.
    put_folder_shares(&srv, &alice, &top, vec![share("user", &erin_id, "read")]);
    assert_eq!(try_edit(&srv, &erin, &doc, &b_erin, "cl_erin"), 403);
    assert_eq!(try_read(&srv, &erin, &doc, "cl_erin"), 200);
    put_folder_shares(&srv, &alice, &top, vec![]);
    assert_eq!(
        try_edit(&srv, &erin, &doc, &b_erin, "cl_erin"),
        404,
        "erin's Top share removed"
    );
    assert_eq!(try_read(&srv, &erin, &doc, "cl_erin"), 404);

    // The document leaves the shared folder: frank's folder share no longer reaches it.
    assert_eq!(try_read(&srv, &frank, &doc, "cl_frank"), 200);
    move_doc(&srv, &alice, &doc, None);
    assert_eq!(
        try_read(&srv, &frank, &doc, "cl_frank"),
        404,
        "doc moved out of Sub"
    );

    // None of them sees it listed any more; the owner still edits.
    for t in [&bob, &carol, &dave, &erin, &frank] {
        let (_, v) = srv.get(t, "/api/v1/docs");
        assert!(docs_entry(&v, &doc).is_none(), "{v}");
    }
    assert_eq!(try_edit(&srv, &alice, &doc, &b_a, "cl_a"), 200);
}

/// A viewer is read-only (PROTOCOL §3 "Roles"): asking for leases must not let them lock
/// blocks, or every editor's typing would turn into conflict copies and deletes would fail.
#[test]
fn viewers_cannot_lock_blocks_with_leases() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let ed = srv.add_user("ed");
    let vw = srv.add_user("vw");
    let [ed_id, vw_id] = ["ed", "vw"].map(|n| user_id(&srv, &alice, n));
    let doc = srv.create_doc(&alice, "Leases");
    let (b1, b2) = (id("blk_"), id("blk_"));
    srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        0,
        vec![
            insert(&b1, None, "a0", "one"),
            insert(&b2, None, "a1", "two"),
        ],
    );
    put_doc_shares(
        &srv,
        &alice,
        &doc,
        vec![
            share("user", &ed_id, "write"),
            share("user", &vw_id, "read"),
        ],
    );
    let (s, _) = srv.post(
        &alice,
        &format!("/api/v1/docs/{doc}/leave"),
        &json!({"clientId": "cl_a"}),
    );
    assert_eq!(s, 204);
    // The editor opens the document, then the viewer focuses both bullets.
    assert_eq!(try_read(&srv, &ed, &doc, "cl_ed"), 200);
    let (s, v) = srv.sync(
        &vw,
        &doc,
        &json!({"clientId": "cl_vw", "lastSeq": 0, "leases": {"hold": [b1, b2]}}),
    );
    assert!(s == 200 || s == 403, "{s} {v}");
    let granted = v["leases"]["granted"].clone();
    let version = block_version(&srv, &b1);
    let r = srv.sync_ok(
        &ed,
        &doc,
        "cl_ed",
        0,
        vec![set_content(&b1, "typed by the editor", version)],
    );
    assert_eq!(
        r["results"][0]["status"], "applied",
        "the viewer's lease turned an editor's edit into a conflict: {}",
        r["results"]
    );
    let r = srv.sync_ok(
        &ed,
        &doc,
        "cl_ed",
        0,
        vec![json!({"opId": id("op_"), "kind": "delete", "blockId": b2})],
    );
    assert_eq!(
        r["results"][0]["status"], "applied",
        "the viewer's lease locked a delete: {}",
        r["results"]
    );
    assert!(
        s == 403 || granted == json!([]),
        "a viewer was granted leases: {granted}"
    );
}

/// `GET /folders`: the folders a user reaches (owned, shared with them or a team, and every
/// subfolder), with their role; a parent they cannot see is not named.
#[test]
fn folder_list_shows_what_each_user_reaches() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let carol = srv.add_user("carol");
    let bob_id = user_id(&srv, &alice, "bob");
    let carol_id = user_id(&srv, &alice, "carol");
    let space = create_folder(&srv, &alice, "Space", None);
    let projects = create_folder(&srv, &alice, "Projects", Some(&space));
    let private = create_folder(&srv, &alice, "Private", None);
    let team = create_team(&srv, &alice, "Writers", &[&bob_id]);
    put_folder_shares(&srv, &alice, &space, vec![share("team", &team, "write")]);
    put_folder_shares(
        &srv,
        &alice,
        &projects,
        vec![share("user", &carol_id, "read")],
    );
    let list = |token: &str| -> Vec<(String, String, Option<String>, String)> {
        let (s, v) = srv.get(token, "/api/v1/folders");
        assert_eq!(s, 200, "{v}");
        v["folders"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["folderId"].as_str().unwrap().to_string(),
                    f["name"].as_str().unwrap().to_string(),
                    f["parentId"].as_str().map(str::to_string),
                    f["role"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let owner = |id: &str, name: &str, parent: Option<&str>| {
        (
            id.to_string(),
            name.to_string(),
            parent.map(str::to_string),
            "owner".to_string(),
        )
    };
    assert_eq!(
        list(&alice),
        vec![
            owner(&private, "Private", None),
            owner(&projects, "Projects", Some(&space)),
            owner(&space, "Space", None),
        ]
    );
    let as_role = |id: &str, name: &str, parent: Option<&str>, role: &str| {
        (
            id.to_string(),
            name.to_string(),
            parent.map(str::to_string),
            role.to_string(),
        )
    };
    assert_eq!(
        list(&bob),
        vec![
            as_role(&projects, "Projects", Some(&space), "editor"),
            as_role(&space, "Space", None, "editor"),
        ]
    );
    // Carol sees Projects only; its parent Space is not hers to see, so it is not named.
    assert_eq!(
        list(&carol),
        vec![as_role(&projects, "Projects", None, "viewer")]
    );
    let (s, _) = srv.get("not-a-token", "/api/v1/folders");
    assert_eq!(s, 401);

    // Share lists name who they are for, so the owner sees people, not IDs.
    let (_, v) = srv.get(&alice, &format!("/api/v1/folders/{space}/shares"));
    assert_eq!(v["shares"][0]["name"], "Writers", "{v}");
    let (_, v) = srv.get(&alice, &format!("/api/v1/folders/{projects}/shares"));
    assert_eq!(
        (&v["shares"][0]["id"], &v["shares"][0]["name"]),
        (&json!(carol_id), &json!("carol")),
        "{v}"
    );
    assert!(v["shares"][0]["displayName"].is_string(), "{v}");
}

#[test]
fn create_doc_directly_in_a_folder() {
    // PROTOCOL §3: `POST /docs {title?, folderId?}`.
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let bob_id = user_id(&srv, &alice, "bob");
    let sub = create_folder(&srv, &alice, "Sub", None);
    put_folder_shares(&srv, &alice, &sub, vec![share("user", &bob_id, "read")]);
    // A reader of the folder may not add documents to it.
    let before = srv.fingerprint();
    let (s, v) = srv.post(
        &bob,
        "/api/v1/docs",
        &json!({"title": "sneaky", "folderId": sub}),
    );
    assert_ne!(s, 201, "a folder reader created a document in it: {v}");
    srv.assert_unchanged(&before, "a refused document creation");

    let (s, v) = srv.post(
        &alice,
        "/api/v1/docs",
        &json!({"title": "In Sub", "folderId": sub}),
    );
    assert_eq!(s, 201, "owner creates a document inside her folder: {v}");
    let doc = v["docId"].as_str().unwrap().to_string();
    let folder: Option<String> = srv
        .db()
        .query_row(
            "SELECT folder_id FROM documents WHERE id = ?1",
            [&doc],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(folder.as_deref(), Some(sub.as_str()));
    let (_, v) = srv.get(&bob, "/api/v1/docs");
    let e = docs_entry(&v, &doc).expect("bob sees the new doc through the folder share");
    assert_eq!(
        (e["role"].as_str(), e["via"].as_str()),
        (Some("viewer"), Some("folder:Sub"))
    );
}

// ---------------------------------------------------------------------------------------
// Accounts: throttling, sessions, tokens, cross-origin writes

const PW: &str = "correct horse battery";

#[test]
fn login_is_throttled_after_the_limit() {
    let srv = TestServer::start();
    srv.add_user_with_password("alice", PW);
    srv.add_user_with_password("bob", PW);
    for i in 1..=5 {
        let r = srv.login("alice", "wrong password", &[]);
        assert_eq!(r.status, 401, "failure {i}: {}", r.body);
        assert!(session_cookie(&r).is_none_or(|c| c.is_empty()));
    }
    let r = srv.login("alice", "wrong password", &[]);
    assert_eq!(r.status, 429, "6th failed login: {}", r.body);
    let retry = r
        .headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    assert!(
        retry.is_some_and(|s| (1..=300).contains(&s)),
        "Retry-After: {:?}",
        r.headers.get("retry-after")
    );
    assert_eq!(r.body["error"]["code"], "too_many_requests");
    // The right password does not get through a lockout, and sets no session.
    let before = srv.fingerprint();
    let r = srv.login("alice", PW, &[]);
    assert_eq!(r.status, 429);
    assert!(session_cookie(&r).is_none_or(|c| c.is_empty()));
    srv.assert_unchanged(&before, "a locked-out login");
    assert_eq!(before.rows("login_sessions"), 0);
    // Failures count per (name, address): another user from here still gets in, so one
    // person's typos do not lock out a shared office address.
    let r = srv.login("bob", PW, &[]);
    assert_eq!(r.status, 200, "same address, other user: {}", r.body);

    // A guesser cannot lock the real user out: alice from another address gets in while
    // the guesser's address waits (addresses from X-Forwarded-For, as behind a proxy).
    let srv = TestServer::start_with(&[("DOCSYNC_AUTH__TRUST_FORWARDED_FOR", "true")]);
    srv.add_user_with_password("alice", PW);
    let guesser = [("X-Forwarded-For", "203.0.113.7")];
    let alice_home = [("X-Forwarded-For", "198.51.100.2")];
    for _ in 0..5 {
        assert_eq!(srv.login("alice", "wrong password", &guesser).status, 401);
    }
    assert_eq!(srv.login("alice", PW, &guesser).status, 429);
    let r = srv.login("alice", PW, &alice_home);
    assert_eq!(r.status, 200, "the real user elsewhere: {}", r.body);

    // One address spraying many names is stopped by the per-address limit (4 × max).
    for i in 0..20 {
        let r = srv.login(&format!("nobody{i}"), "guess guess", &guesser);
        assert!(r.status == 401 || r.status == 429, "{}", r.status);
    }
    let r = srv.login("someone-new", "guess guess", &guesser);
    assert_eq!(r.status, 429, "address limit: {}", r.body);
    assert!(r.headers.contains_key("retry-after"));

    // The limit comes from the configuration.
    let srv = TestServer::start_with(&[("DOCSYNC_AUTH__LOGIN_MAX_FAILURES", "2")]);
    srv.add_user_with_password("alice", PW);
    assert_eq!(srv.login("alice", "nope nope", &[]).status, 401);
    assert_eq!(srv.login("alice", "nope nope", &[]).status, 401);
    assert_eq!(srv.login("alice", PW, &[]).status, 429);
}

/// Login sessions end by the server's clock — the same clock that made them — and a pull
/// answered from the access cache honours that end too. (Before: sessions were made with the
/// injectable clock but checked against wall time, so with a moved clock they ended at the
/// wrong moment: here they never ended.)
#[test]
fn login_sessions_end_by_the_servers_clock() {
    let srv = TestServer::start_with(&[
        ("DOCSYNC_TESTING__CLOCK", "manual"),
        ("DOCSYNC_AUTH__SESSION_TTL_HOURS", "1"),
    ]);
    let token = srv.add_user_with_password("alice", PW);
    let doc = srv.create_doc(&token, "Clocked");
    let r = srv.login("alice", PW, &[]);
    assert_eq!(r.status, 200, "{}", r.body);
    let cookie = session_cookie(&r).expect("session cookie");
    let c = Auth::Cookie(&cookie);
    let pull = |srv: &TestServer| {
        srv.send(
            "POST",
            &format!("/api/v1/docs/{doc}/sync"),
            &c,
            &[],
            Some(&json!({"clientId": "cl_clock", "lastSeq": 0})),
        )
        .status
    };
    let me = |srv: &TestServer| srv.send("GET", "/api/v1/me", &c, &[], None).status;
    assert_eq!((me(&srv), pull(&srv)), (200, 200));
    // One second before the end: still in (the second pull is served from the cache).
    srv.advance_clock(3_599_000);
    assert_eq!((me(&srv), pull(&srv), pull(&srv)), (200, 200, 200));
    // At the end: out, also for the pull whose access was remembered.
    srv.advance_clock(1_000);
    assert_eq!((me(&srv), pull(&srv)), (401, 401));
}

/// Rights remembered by the access cache are dropped by any change they depend on — through
/// this server on the very next request, and through the CLI (another process on the same
/// database) as soon as the server's epoch refresh sees it. Checked with pulls, the path the
/// cache serves.
#[test]
fn remembered_rights_follow_every_change() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let bob_id = user_id(&srv, &alice, "bob");
    let doc = srv.create_doc(&alice, "Shared");
    let pull = |token: &str| {
        srv.send(
            "POST",
            &format!("/api/v1/docs/{doc}/sync"),
            &Auth::Bearer(token),
            &[],
            Some(&json!({"clientId": "cl_pull", "lastSeq": 0})),
        )
        .status
    };
    assert_eq!(pull(&bob), 404);
    put_doc_shares(&srv, &alice, &doc, vec![share("user", &bob_id, "read")]);
    assert_eq!((pull(&bob), pull(&bob)), (200, 200), "shared");
    put_doc_shares(&srv, &alice, &doc, vec![]);
    assert_eq!(
        pull(&bob),
        404,
        "a removed share holds on the very next request"
    );

    // A team changed by the CLI, a process the server hears nothing from.
    let (ok, _, err) = srv.cli(&["team", "add", "crew", "--owner", "alice"]);
    assert!(ok, "team add: {err}");
    let (ok, _, err) = srv.cli(&["team", "members", "crew", "bob"]);
    assert!(ok, "team members: {err}");
    let (s, teams) = srv.get(&alice, "/api/v1/teams");
    assert_eq!(s, 200, "{teams}");
    let team = teams["teams"][0]["teamId"]
        .as_str()
        .expect("teamId")
        .to_string();
    put_doc_shares(&srv, &alice, &doc, vec![share("team", &team, "read")]);
    assert_eq!(
        (pull(&bob), pull(&bob)),
        (200, 200),
        "shared with bob's team"
    );
    let (ok, _, err) = srv.cli(&["team", "members", "crew"]);
    assert!(ok, "team members: {err}");
    // Seen within the refresh period (1 s): wait for the answer, bounded, not for a time.
    let refused = (0..200).any(|_| {
        let s = pull(&bob);
        if s != 404 {
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        s == 404
    });
    assert!(refused, "bob left the team by the CLI but still reads");

    // A revoked token holds on the very next request.
    put_doc_shares(&srv, &alice, &doc, vec![share("user", &bob_id, "read")]);
    assert_eq!((pull(&bob), pull(&bob)), (200, 200));
    let (s, tokens) = srv.get(&bob, "/api/v1/tokens");
    assert_eq!(s, 200, "{tokens}");
    let token_id = tokens["tokens"][0]["tokenId"]
        .as_str()
        .expect("tokenId")
        .to_string();
    let r = srv.send(
        "DELETE",
        &format!("/api/v1/tokens/{token_id}"),
        &Auth::Bearer(&bob),
        &[],
        None,
    );
    assert!(r.status < 300, "{}", r.body);
    assert_eq!(
        pull(&bob),
        401,
        "a revoked token holds on the very next request"
    );
}

#[test]
fn sessions_tokens_and_cross_origin_writes() {
    let srv = TestServer::start();
    let alice_token = srv.add_user_with_password("alice", PW);
    let bob = srv.add_user("bob");
    let bob_id = user_id(&srv, &bob, "bob");

    // Login: cookie flags.
    let r = srv.login("alice", PW, &[]);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["name"], "alice");
    let header = set_cookie_header(&r).expect("Set-Cookie docsync_session");
    let lower = header.to_ascii_lowercase();
    assert!(lower.contains("httponly"), "{header}");
    assert!(lower.contains("samesite=lax"), "{header}");
    assert!(lower.contains("path=/"), "{header}");
    let cookie = session_cookie(&r).unwrap();
    assert!(cookie.len() >= 32, "session secret too short: {cookie}");
    let me = srv.send("GET", "/api/v1/me", &Auth::Cookie(&cookie), &[], None);
    assert_eq!((me.status, me.body["name"].as_str()), (200, Some("alice")));

    // The session works for writes without an Origin header and with our own origin.
    let c = Auth::Cookie(&cookie);
    let r = srv.send(
        "POST",
        "/api/v1/docs",
        &c,
        &[],
        Some(&json!({"title": "Mine"})),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let doc = r.body["docId"].as_str().unwrap().to_string();
    let blk = id("blk_");
    let own = srv.origin();
    let r = srv.send(
        "POST",
        &format!("/api/v1/docs/{doc}/sync"),
        &c,
        &[("Origin", &own)],
        Some(
            &json!({"clientId": "cl_c", "lastSeq": 0, "ops": [insert(&blk, None, "a0", "hello")]}),
        ),
    );
    assert_eq!(r.status, 200, "same-origin sync: {}", r.body);

    // Cross-origin writes with the cookie: refused, nothing changes.
    let evil_writes: Vec<(&str, String, Value)> = vec![
        (
            "PATCH",
            format!("/api/v1/docs/{doc}"),
            json!({"icon": "pwned"}),
        ),
        (
            "POST",
            format!("/api/v1/docs/{doc}/sync"),
            json!({"clientId": "cl_evil", "lastSeq": 0, "ops": [set_content(&blk, "pwned", 1)]}),
        ),
        (
            "PUT",
            format!("/api/v1/docs/{doc}/shares"),
            json!([share("user", &bob_id, "write")]),
        ),
        ("DELETE", format!("/api/v1/docs/{doc}"), Value::Null),
        (
            "POST",
            "/api/v1/tokens".to_string(),
            json!({"label": "evil"}),
        ),
        ("POST", "/api/v1/docs".to_string(), json!({"title": "spam"})),
    ];
    let port_other = {
        let (host, port) = own.rsplit_once(':').unwrap();
        format!("{host}:{}", port.parse::<u16>().unwrap().wrapping_add(1))
    };
    // A forwarded host naming the attacker's origin is not believed from an untrusted peer
    // (server.trusted_proxies is empty by default).
    let forged = [
        ("X-Forwarded-Host", "evil.example"),
        ("Forwarded", "host=evil.example"),
    ];
    for (origin, extra) in [
        ("http://evil.example", None),
        ("null", None),
        (port_other.as_str(), None),
        ("http://evil.example", Some(forged[0])),
        ("http://evil.example", Some(forged[1])),
    ] {
        for (method, path, body) in &evil_writes {
            let before = srv.fingerprint();
            let body = (!body.is_null()).then_some(body);
            let mut headers = vec![("Origin", origin)];
            headers.extend(extra);
            let r = srv.send(method, path, &c, &headers, body);
            assert_eq!(
                r.status, 403,
                "{method} {path} from {origin} with a cookie: {}",
                r.body
            );
            assert_eq!(r.body["error"]["code"], "forbidden");
            srv.assert_unchanged(&before, &format!("{method} {path} from {origin}"));
        }
    }

    // From a configured trusted proxy the forwarded host is believed: a browser that
    // reached the proxy as https://notes.example passes with that origin.
    let proxied = TestServer::start_with(&[("DOCSYNC_SERVER__TRUSTED_PROXIES", "127.0.0.1")]);
    proxied.add_user_with_password("alice", PW);
    let r = proxied.login(
        "alice",
        PW,
        &[
            ("Origin", "https://notes.example"),
            ("X-Forwarded-Host", "notes.example"),
        ],
    );
    assert_eq!(r.status, 200, "login through a trusted proxy: {}", r.body);
    let r = proxied.login("alice", PW, &[("Origin", "https://notes.example")]);
    assert_eq!(r.status, 403, "without the forwarded host: {}", r.body);

    // Allowed: same origin, no Origin, and bearer tokens from anywhere.
    let icon = |v: &str| {
        let r = srv.send(
            "PATCH",
            &format!("/api/v1/docs/{doc}"),
            &c,
            &[("Origin", &own)],
            Some(&json!({ "icon": v })),
        );
        assert_eq!(r.status, 204, "same-origin PATCH: {}", r.body);
        assert_eq!(doc_icon(&srv, &doc).as_deref(), Some(v));
    };
    icon("star");
    let r = srv.send(
        "PATCH",
        &format!("/api/v1/docs/{doc}"),
        &c,
        &[],
        Some(&json!({"icon": "moon"})),
    );
    assert_eq!(r.status, 204, "no Origin: {}", r.body);
    assert_eq!(doc_icon(&srv, &doc).as_deref(), Some("moon"));
    let r = srv.send(
        "PATCH",
        &format!("/api/v1/docs/{doc}"),
        &Auth::Bearer(&alice_token),
        &[("Origin", "http://evil.example")],
        Some(&json!({"icon": "sun"})),
    );
    assert_eq!(r.status, 204, "bearer from another origin: {}", r.body);
    assert_eq!(doc_icon(&srv, &doc).as_deref(), Some("sun"));
    let r = srv.send(
        "POST",
        &format!("/api/v1/docs/{doc}/sync"),
        &Auth::Bearer(&alice_token),
        &[("Origin", "http://evil.example")],
        Some(
            &json!({"clientId": "cl_t", "lastSeq": 0, "ops": [set_content(&blk, "via token", 1)]}),
        ),
    );
    assert_eq!(r.status, 200, "bearer sync from another origin: {}", r.body);
    assert_eq!(block_content(&srv, &blk), "via token");

    // Logout ends the session: the cookie no longer works, for reads or writes.
    let r = srv.send("POST", "/api/v1/auth/logout", &c, &[], None);
    assert_eq!(r.status, 204, "{}", r.body);
    let cleared = set_cookie_header(&r)
        .unwrap_or_default()
        .to_ascii_lowercase();
    assert!(
        cleared.starts_with("docsync_session=;") || cleared.contains("max-age=0"),
        "logout should clear the cookie: {cleared}"
    );
    let r = srv.send("GET", "/api/v1/me", &c, &[], None);
    assert_eq!(r.status, 401, "old session after logout: {}", r.body);
    let r = srv.send(
        "PATCH",
        &format!("/api/v1/docs/{doc}"),
        &c,
        &[],
        Some(&json!({"icon": "ghost"})),
    );
    assert_eq!(r.status, 401);
    assert_eq!(doc_icon(&srv, &doc).as_deref(), Some("sun"));
    let r = srv.send(
        "GET",
        &format!("/api/v1/docs/{doc}/snapshot"),
        &c,
        &[],
        None,
    );
    assert_eq!(r.status, 401);

    // Tokens: a new one works until it is deleted; another user cannot delete it.
    let (s, v) = srv.post(&alice_token, "/api/v1/tokens", &json!({"label": "laptop"}));
    assert_eq!(s, 201, "{v}");
    let (tid, tok) = (
        v["tokenId"].as_str().unwrap().to_string(),
        v["token"].as_str().unwrap().to_string(),
    );
    assert_eq!(srv.get(&tok, "/api/v1/me").1["name"], "alice");
    let (s, v) = srv.get(&alice_token, "/api/v1/tokens");
    assert_eq!(s, 200);
    assert!(v.to_string().contains(&tid), "{v}");
    let before = srv.fingerprint();
    assert_ne!(srv.delete(&bob, &format!("/api/v1/tokens/{tid}")), 204);
    srv.assert_unchanged(&before, "bob deleting alice's token");
    assert_eq!(
        srv.get(&tok, "/api/v1/me").0,
        200,
        "bob deleted alice's token"
    );
    assert_eq!(
        srv.delete(&alice_token, &format!("/api/v1/tokens/{tid}")),
        204
    );
    let (s, _) = srv.get(&tok, "/api/v1/me");
    assert_eq!(s, 401, "deleted token still works");
    let (s, _) = srv.sync(&tok, &doc, &json!({"clientId": "cl_t", "lastSeq": 0}));
    assert_eq!(s, 401);
    assert_eq!(
        srv.get(&alice_token, "/api/v1/me").0,
        200,
        "other tokens unaffected"
    );
}

/// Once a user's access is gone, so are their leases: a removed collaborator must not keep
/// locking blocks (every edit by the remaining users becoming a conflict copy) nor keep
/// appearing in `leases.others` for up to the lease TTL.
#[test]
fn revoked_users_leases_are_released() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let bob_id = user_id(&srv, &alice, "bob");
    let doc = srv.create_doc(&alice, "Lease after revoke");
    let b = id("blk_");
    srv.sync_ok(&alice, &doc, "cl_a", 0, vec![insert(&b, None, "a0", "x")]);
    put_doc_shares(&srv, &alice, &doc, vec![share("user", &bob_id, "write")]);
    let (s, v) = srv.sync(
        &bob,
        &doc,
        &json!({"clientId": "cl_b", "lastSeq": 0, "leases": {"hold": [b]}}),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["leases"]["granted"], json!([b]), "bob holds the bullet");
    put_doc_shares(&srv, &alice, &doc, vec![]);
    assert_eq!(try_read(&srv, &bob, &doc, "cl_b"), 404, "bob is out");
    let v = srv.sync_ok(
        &alice,
        &doc,
        "cl_a",
        0,
        vec![set_content(&b, "owner types", block_version(&srv, &b))],
    );
    assert_eq!(
        v["results"][0]["status"], "applied",
        "a removed user's lease still locks the block: {}",
        v["results"]
    );
    assert!(
        !v["leases"]["others"].to_string().contains("cl_b"),
        "a removed user still shows as present: {}",
        v["leases"]
    );
}

/// A document can be shared only with teams the sharer belongs to (an admin with any): a
/// stranger cannot push documents into every member's lists. A team share already in place
/// stays when the list is saved again, even if its owner left the team.
#[test]
fn sharing_is_only_with_teams_you_belong_to() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let root = srv.add_admin("root");
    let alice_id = user_id(&srv, &bob, "alice");
    let bob_id = user_id(&srv, &alice, "bob");
    let bobs = create_team(&srv, &bob, "bobs", &[]);
    let crew = create_team(&srv, &bob, "crew", &[&alice_id]);
    let doc = srv.create_doc(&alice, "Pushed?");
    let folder = create_folder(&srv, &alice, "Folder", None);
    let before = srv.fingerprint();
    for path in [
        format!("/api/v1/docs/{doc}/shares"),
        format!("/api/v1/folders/{folder}/shares"),
    ] {
        let (s, v) = srv.put(&alice, &path, &json!([share("team", &bobs, "read")]));
        assert_eq!(s, 403, "{path}: {v}");
        assert_eq!(v["error"]["code"], "forbidden");
    }
    srv.assert_unchanged(&before, "refused team shares");
    let (s, list) = srv.get(&bob, "/api/v1/docs");
    assert_eq!(s, 200);
    assert!(
        !list.to_string().contains(&doc),
        "bob's list got alice's document"
    );

    // A team she belongs to is fine; so is any team for an admin.
    put_doc_shares(&srv, &alice, &doc, vec![share("team", &crew, "read")]);
    let root_doc = srv.create_doc(&root, "Admin's");
    put_doc_shares(&srv, &root, &root_doc, vec![share("team", &bobs, "read")]);
    // Bob drops her from the crew: the share in place stays when she saves the list again,
    // but she cannot add it anew elsewhere.
    set_members(&srv, &bob, &crew, &[]);
    put_doc_shares(
        &srv,
        &alice,
        &doc,
        vec![
            share("team", &crew, "read"),
            share("user", &bob_id, "write"),
        ],
    );
    let other = srv.create_doc(&alice, "Other");
    let (s, v) = srv.put(
        &alice,
        &format!("/api/v1/docs/{other}/shares"),
        &json!([share("team", &crew, "read")]),
    );
    assert_eq!(s, 403, "{v}");
}
