//! Whole workspaces in and out: `POST /import` makes many documents in one operation (links
//! and block refs between them resolved, a report per file, bad input refusing the whole
//! import), a 10,000-bullet import is acknowledged on disk (it survives kill -9), and
//! `GET /export` / `docsync export` give everything a person reads — each document's Markdown
//! as its own endpoint gives it, OPML, a shared bullet's part alone, and the manifest.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read as _;
use std::time::Instant;

use serde_json::{json, Value};

use crate::common::*;

fn uid(srv: &TestServer, token: &str) -> String {
    let (s, v) = srv.get(token, "/api/v1/me");
    assert_eq!(s, 200, "me: {v}");
    v["id"].as_str().unwrap().to_string()
}

/// The live bullets of a snapshot as `depth|type|checked|content` lines in document order.
fn outline(srv: &TestServer, token: &str, doc: &str) -> Vec<String> {
    let snap = srv.snapshot(token, doc);
    let blocks = snap["blocks"].as_array().unwrap();
    let mut children: BTreeMap<Option<String>, Vec<&Value>> = BTreeMap::new();
    for b in blocks.iter().filter(|b| b["deleted"] != true) {
        children
            .entry(b["parentId"].as_str().map(str::to_string))
            .or_default()
            .push(b);
    }
    for list in children.values_mut() {
        list.sort_by_key(|b| b["orderKey"].as_str().unwrap().to_string());
    }
    let mut out = Vec::new();
    fn walk(
        parent: Option<String>,
        depth: usize,
        children: &BTreeMap<Option<String>, Vec<&Value>>,
        out: &mut Vec<String>,
    ) {
        for b in children.get(&parent).into_iter().flatten() {
            out.push(format!(
                "{depth}|{}|{}|{}",
                b["type"].as_str().unwrap(),
                b["checked"],
                b["content"].as_str().unwrap()
            ));
            walk(
                b["id"].as_str().map(str::to_string),
                depth + 1,
                children,
                out,
            );
        }
    }
    walk(None, 0, &children, &mut out);
    out
}

fn doc_list(srv: &TestServer, token: &str) -> Vec<Value> {
    let (s, v) = srv.get(token, "/api/v1/docs");
    assert_eq!(s, 200, "{v}");
    v["documents"].as_array().unwrap().clone()
}

fn graph() -> Value {
    json!({
        "newFolder": "My graph",
        "documents": [
            {"file": "pages/Project Alpha.md", "title": "Project Alpha", "aliases": ["alpha"],
             "items": [
                {"depth": 0, "content": "Kickoff with [[Existing notes]] and [[Nobody]]"},
                {"depth": 1, "content": "Send the agenda", "type": "todo", "checked": true,
                 "ref": "6512a3f1-0c4e-4a55-9d0b-1f2e3d4c5b6a"},
                {"depth": 1, "content": "Book the room", "type": "todo"},
                {"depth": 0, "content": "fn main() {}", "type": "code", "language": "rust"}
             ],
             "notes": ["page properties kept as text: tags"]},
            {"file": "journals/2024_03_05.md", "title": "2024-03-05", "folder": "journals",
             "aliases": ["Mar 5th, 2024"],
             "items": [
                {"depth": 0, "content": "Met the [[alpha]] team, see ((6512a3f1-0c4e-4a55-9d0b-1f2e3d4c5b6a))"}
             ]}
        ]
    })
}

#[test]
fn a_graph_comes_in_whole_with_its_links_and_a_report() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let existing = srv.create_doc(&alice, "Existing notes");
    let before = doc_list(&srv, &alice).len();

    let (s, report) = srv.post(&alice, "/api/v1/import", &graph());
    assert_eq!(s, 201, "{report}");
    let docs = report["documents"].as_array().unwrap();
    assert_eq!(docs.len(), 2, "{report}");
    let alpha = docs[0]["docId"].as_str().unwrap().to_string();
    let journal = docs[1]["docId"].as_str().unwrap().to_string();
    assert_eq!(docs[0]["bullets"], 4);
    assert_eq!(docs[0]["links"], 1);
    assert_eq!(docs[0]["unresolvedLinks"], json!(["Nobody"]));
    assert_eq!(
        docs[0]["notes"],
        json!(["page properties kept as text: tags"])
    );
    assert_eq!(
        (docs[1]["links"].clone(), docs[1]["blockRefs"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(report["bullets"], 5);
    assert_eq!(report["unresolvedLinks"], 1);

    // the outlines, with links pointing at documents and the ref at its bullet
    assert_eq!(
        outline(&srv, &alice, &alpha),
        vec![
            format!("0|bullet|false|Kickoff with [[{existing}]] and [[Nobody]]"),
            "1|todo|true|Send the agenda".to_string(),
            "1|todo|false|Book the room".to_string(),
            "0|code|false|fn main() {}".to_string(),
        ]
    );
    let snap = srv.snapshot(&alice, &alpha);
    let agenda = snap["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["content"] == "Send the agenda")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        outline(&srv, &alice, &journal),
        vec![format!(
            "0|bullet|false|Met the [[{alpha}]] team, see [Send the agenda](/d/{alpha}/b/{agenda})"
        )]
    );
    // the folder made for it, the journal in its subfolder; both listed with their titles
    let folder = report["folderId"].as_str().unwrap().to_string();
    let list = doc_list(&srv, &alice);
    assert_eq!(list.len(), before + 2);
    let by_id: BTreeMap<&str, &Value> = list
        .iter()
        .map(|d| (d["docId"].as_str().unwrap(), d))
        .collect();
    assert_eq!(by_id[alpha.as_str()]["title"], "Project Alpha");
    assert_eq!(by_id[alpha.as_str()]["folderId"], folder.as_str());
    let (s, folders) = srv.get(&alice, "/api/v1/folders");
    assert_eq!(s, 200, "{folders}");
    let journals = folders["folders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "journals")
        .expect("a journals subfolder");
    assert_eq!(journals["parentId"], folder.as_str());
    assert_eq!(by_id[journal.as_str()]["folderId"], journals["folderId"]);
    // the backlink from the journal is indexed like a typed one
    let (s, v) = srv.get(&alice, &format!("/api/v1/docs/{alpha}/backlinks"));
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["backlinks"].as_array().unwrap().len(), 1, "{v}");
    // and the import is in the change feed, as typing is
    let (s, feed) = srv.get(&alice, "/api/v1/feed?limit=1000");
    assert_eq!(s, 200, "{feed}");
    let imported: BTreeSet<&str> = feed["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "insert")
        .map(|e| e["docId"].as_str().unwrap())
        .collect();
    assert!(imported.contains(alpha.as_str()) && imported.contains(journal.as_str()));
}

#[test]
fn bad_imports_change_nothing() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let (s, v) = srv.post(&bob, "/api/v1/folders", &json!({"name": "Bob's"}));
    assert_eq!(s, 201, "{v}");
    let bobs_folder = v["folderId"].as_str().unwrap().to_string();
    let count = |t: &str| doc_list(&srv, t).len();
    let folders = |t: &str| {
        srv.get(t, "/api/v1/folders").1["folders"]
            .as_array()
            .unwrap()
            .len()
    };
    let (docs0, folders0) = (count(&alice), folders(&alice));

    let too_long = "x".repeat(100_001);
    let mut cases = vec![
        (json!({"documents": []}), 400, "no documents"),
        (
            json!({"documents": [{"file": "a", "title": "A", "items": [{"depth": 0, "content": too_long}]}]}),
            400,
            "documents[0].items[0].content",
        ),
        (
            json!({"folderId": "fld_nope", "documents": [{"file": "a", "title": "A", "items": []}]}),
            400,
            "folderId",
        ),
        (
            json!({"folderId": bobs_folder, "documents": [{"file": "a", "title": "A", "items": []}]}),
            400,
            "folderId",
        ),
        (
            json!({"documents": [{"file": "a", "title": "A", "items": [{"depth": 0, "content": "x", "type": "table"}]}]}),
            400,
            "type",
        ),
        (
            json!({"documents": [{"file": "a", "title": "A", "items": []}], "extra": true}),
            400,
            "extra",
        ),
    ];
    // a second, valid document after a bad one: still nothing at all
    cases.push((
        json!({"newFolder": "Half", "documents": [
            {"file": "good.md", "title": "Good", "items": [{"depth": 0, "content": "fine"}]},
            {"file": "bad.md", "title": "t".repeat(1001), "items": []}
        ]}),
        400,
        "documents[1].title",
    ));
    for (body, status, says) in cases {
        let (s, v) = srv.post(&alice, "/api/v1/import", &body);
        assert_eq!(s, status, "{body} → {v}");
        let message = v["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{says:?} not in {message:?}");
    }
    assert_eq!((count(&alice), folders(&alice)), (docs0, folders0));
    // without credentials: 401, and still nothing
    let (s, v) = srv.post("dsw_not_a_token", "/api/v1/import", &graph());
    assert_eq!(s, 401, "{v}");
    assert_eq!((count(&alice), folders(&alice)), (docs0, folders0));
}

#[test]
fn ten_thousand_imported_bullets_are_on_disk_when_acknowledged() {
    let mut srv = TestServer::start();
    let alice = srv.add_user("alice");
    // a wide and deep outline: 100 top bullets, each with 99 below it in two levels
    let mut items = Vec::new();
    for top in 0..100 {
        items.push(json!({"depth": 0, "content": format!("Section {top}")}));
        for k in 0..99 {
            items.push(json!({"depth": 1 + (k % 2), "content": format!("Point {top}.{k}"), "type": if k % 3 == 0 {"todo"} else {"bullet"}}));
        }
    }
    let body = json!({"documents": [{"file": "big.opml", "title": "Big", "items": items}]});
    let started = Instant::now();
    let (s, report) = srv.post(&alice, "/api/v1/import", &body);
    let took = started.elapsed();
    assert_eq!(s, 201, "{report}");
    println!("import of 10,000 bullets acknowledged after {took:?}");
    let doc = report["documents"][0]["docId"]
        .as_str()
        .unwrap()
        .to_string();
    srv.kill9();
    srv.restart_after_kill();
    let lines = outline(&srv, &alice, &doc);
    assert_eq!(lines.len(), 10_000);
    assert_eq!(lines[0], "0|bullet|false|Section 0");
    assert_eq!(lines[1], "1|todo|false|Point 0.0");
    assert_eq!(lines[2], "2|bullet|false|Point 0.1");
    assert_eq!(lines[9_999], "1|bullet|false|Point 99.98");
}

/// The files of a zip by path (below its one top folder).
fn unzip(bytes: &[u8]) -> BTreeMap<String, Vec<u8>> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("a zip");
    let mut out = BTreeMap::new();
    for i in 0..archive.len() {
        let mut f = archive.by_index(i).unwrap();
        let name = f.name().trim_start_matches("docsync-export/").to_string();
        let mut data = Vec::new();
        f.read_to_end(&mut data).unwrap();
        out.insert(name, data);
    }
    out
}

#[test]
fn everything_readable_goes_out_as_markdown_opml_and_a_manifest() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let bob = srv.add_user("bob");
    let bob_id = uid(&srv, &bob);
    let (s, report) = srv.post(&alice, "/api/v1/import", &graph());
    assert_eq!(s, 201, "{report}");
    let alpha = report["documents"][0]["docId"]
        .as_str()
        .unwrap()
        .to_string();
    let secret = srv.create_doc(&alice, "Private plans");
    // bob reads Project Alpha, and one bullet of another document
    let (s, v) = srv.put(
        &alice,
        &format!("/api/v1/docs/{alpha}/shares"),
        &json!([{"kind": "user", "id": bob_id, "access": "read"}]),
    );
    assert_eq!(s, 200, "{v}");
    let root = id("blk_");
    srv.sync_ok(
        &alice,
        &secret,
        "cl_export_a",
        0,
        vec![
            insert(&id("blk_"), None, "a0", "Salary: not for bob"),
            insert(&root, None, "a1", "Offsite"),
            insert(&id("blk_"), Some(&root), "a0", "Lisbon in May"),
        ],
    );
    let (s, v) = srv.put(
        &alice,
        &format!("/api/v1/docs/{secret}/blocks/{root}/shares"),
        &json!([{"kind": "user", "id": bob_id, "access": "read"}]),
    );
    assert_eq!(s, 200, "{v}");

    let (s, kind, bytes) = srv.get_bytes(&alice, "/api/v1/export");
    assert_eq!(s, 200);
    assert_eq!(kind, "application/zip");
    let files = unzip(&bytes);
    let manifest: Value = serde_json::from_slice(&files["manifest.json"]).unwrap();
    assert_eq!(manifest["format"], "docsync-export");
    assert_eq!(manifest["exportedBy"]["name"], "alice");
    let docs = manifest["documents"].as_array().unwrap();
    assert_eq!(docs.len(), 3, "{manifest}");
    for d in docs {
        let id = d["docId"].as_str().unwrap();
        let md = d["markdown"].as_str().unwrap();
        let (s, expected) = srv.get_text(&alice, &format!("/api/v1/docs/{id}/markdown"));
        assert_eq!(s, 200);
        assert_eq!(String::from_utf8_lossy(&files[md]), expected, "{md}");
        let opml = String::from_utf8_lossy(&files[d["opml"].as_str().unwrap()]).to_string();
        assert_eq!(
            opml.matches("<outline").count(),
            d["bullets"].as_u64().unwrap() as usize,
            "{opml}"
        );
    }
    let alpha_entry = docs.iter().find(|d| d["docId"] == alpha.as_str()).unwrap();
    assert_eq!(alpha_entry["markdown"], "folders/My graph/Project Alpha.md");
    let people: Vec<&str> = alpha_entry["access"]["people"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(people, vec!["alice", "bob"]);
    let opml = String::from_utf8_lossy(&files["folders/My graph/Project Alpha.opml"]).to_string();
    assert!(
        opml.contains("<outline text=\"Send the agenda\" _todo=\"true\" _complete=\"true\"/>"),
        "{opml}"
    );
    let journal_paths: Vec<&String> = files
        .keys()
        .filter(|p| p.starts_with("folders/My graph/journals/"))
        .collect();
    assert_eq!(journal_paths.len(), 2, "{:?}", files.keys());

    // bob's export: what bob reads, and of the other document only the shared bullet's part
    let (s, _, bytes) = srv.get_bytes(&bob, "/api/v1/export");
    assert_eq!(s, 200);
    let files = unzip(&bytes);
    let manifest: Value = serde_json::from_slice(&files["manifest.json"]).unwrap();
    let ids: Vec<&str> = manifest["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["docId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![alpha.as_str()]);
    let bullets = manifest["sharedBullets"].as_array().unwrap();
    assert_eq!(bullets.len(), 1, "{manifest}");
    let part =
        String::from_utf8_lossy(&files[bullets[0]["markdown"].as_str().unwrap()]).to_string();
    assert!(part.contains("Lisbon in May"), "{part}");
    let everything: String = files
        .values()
        .map(|b| String::from_utf8_lossy(b).to_string())
        .collect();
    assert!(!everything.contains("Salary"), "nothing outside bob's part");
    assert!(!everything.contains("Private plans"), "not even its title");

    // the command line writes the same files for alice into a folder
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let (ok, out, err) = srv.cli(&[
        "export",
        "--to",
        out_dir.to_str().unwrap(),
        "--user",
        "alice",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("exported 3 documents"), "{out}");
    let md = std::fs::read_to_string(out_dir.join("folders/My graph/Project Alpha.md")).unwrap();
    let (_, expected) = srv.get_text(&alice, &format!("/api/v1/docs/{alpha}/markdown"));
    assert_eq!(md, expected);
    assert!(out_dir.join("manifest.json").exists());
    // a folder with something in it is refused, and left alone
    let (ok, _, err) = srv.cli(&[
        "export",
        "--to",
        out_dir.to_str().unwrap(),
        "--user",
        "alice",
    ]);
    assert!(!ok && err.contains("not empty"), "{err}");
    let (ok, _, err) = srv.cli(&[
        "export",
        "--to",
        dir.path().join("x").to_str().unwrap(),
        "--user",
        "nobody",
    ]);
    assert!(!ok && err.contains("no user named nobody"), "{err}");
}

#[test]
fn an_import_costs_the_write_budget_like_typing() {
    // a budget of 2 MiB a minute (the least the server takes)
    let srv = TestServer::start_with(&[
        ("DOCSYNC_LIMITS__USER_WRITE_BYTES_PER_MINUTE", "2097152"),
        ("DOCSYNC_TESTING__CLOCK", "manual"),
    ]);
    let alice = srv.add_user("alice");
    let docs0 = doc_list(&srv, &alice).len();
    let import_of = |bullets: usize| {
        let items: Vec<Value> = (0..bullets)
            .map(|i| json!({"depth": 0, "content": format!("bullet {i}")}))
            .collect();
        json!({"documents": [{"file": "a.md", "title": "A", "items": items}]})
    };
    // ≈ 2.6 MiB: more than a minute's budget can ever hold
    let (s, v) = srv.post(&alice, "/api/v1/import", &import_of(10_000));
    assert_eq!(s, 400, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("import it in parts"),
        "{v}"
    );
    // ≈ 1.3 MiB fits once; the second at once waits for the budget to fill again
    let (s, v) = srv.post(&alice, "/api/v1/import", &import_of(5_000));
    assert_eq!(s, 201, "{v}");
    let r = srv.send(
        "POST",
        "/api/v1/import",
        &Auth::Bearer(&alice),
        &[],
        Some(&import_of(5_000)),
    );
    assert_eq!(r.status, 429, "{}", r.body);
    assert_eq!(r.body["error"]["code"], "write_budget");
    assert!(r.headers.get("retry-after").is_some());
    assert_eq!(
        doc_list(&srv, &alice).len(),
        docs0 + 1,
        "only the import that fitted"
    );
    // the movable clock: a minute later it fits again
    srv.advance_clock(60_000);
    let (s, v) = srv.post(&alice, "/api/v1/import", &import_of(5_000));
    assert_eq!(s, 201, "{v}");
}

#[test]
fn an_import_whose_client_went_away_is_made_whole() {
    let srv = TestServer::start();
    let alice = srv.add_user("alice");
    let items: Vec<Value> = (0..10_000)
        .map(|i| json!({"depth": (i % 2), "content": format!("bullet {i}")}))
        .collect();
    let body = json!({"documents": [{"file": "big.md", "title": "Left behind", "items": items}]});
    // a tab closed while the import runs: the client gives up long before the answer
    let impatient = reqwest::blocking::Client::builder()
        .timeout(std::time::Duration::from_millis(150))
        .build()
        .unwrap();
    let sent = impatient
        .post(srv.url("/api/v1/import"))
        .bearer_auth(&alice)
        .header("Content-Type", "application/json")
        .body(body.to_string())
        .send();
    assert!(sent.is_err(), "the client gave up before the answer");
    // the import goes on to the end: one document with every bullet
    let deadline = Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let doc = doc_list(&srv, &alice)
            .into_iter()
            .find(|d| d["title"] == "Left behind");
        if let Some(d) = doc {
            let n = outline(&srv, &alice, d["docId"].as_str().unwrap()).len();
            if n == 10_000 {
                break;
            }
        }
        assert!(Instant::now() < deadline, "the import did not finish");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
