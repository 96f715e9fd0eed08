use docsync_actors::collab::block::BlockType;
use docsync_actors::collab::validate::Limits;

use super::{plan, ImportBody, Refused};

fn body(json: serde_json::Value) -> ImportBody {
    serde_json::from_value(json).expect("a valid body")
}

/// IDs numbered in the order they are asked for.
fn ids(prefix: &'static str) -> impl FnMut() -> String {
    let mut n = 0;
    move || {
        n += 1;
        format!("{prefix}{n}")
    }
}

fn two_pages() -> ImportBody {
    body(serde_json::json!({
        "newFolder": "My graph",
        "documents": [
            {"file": "pages/Project Alpha.md", "title": "Project Alpha", "aliases": ["alpha"],
             "items": [
                {"depth": 0, "content": "Kickoff with [[Bob]] and [[Nobody]]"},
                {"depth": 1, "content": "Send the agenda", "type": "todo", "checked": true,
                 "ref": "6512a3f1-0c4e-4a55-9d0b-1f2e3d4c5b6a"},
                {"depth": 3, "content": "too deep is one level"},
                {"depth": 0, "content": "```[[Bob]]```", "type": "code", "language": "md"}
             ]},
            {"file": "journals/2024_03_05.md", "title": "2024-03-05", "folder": "journals",
             "aliases": ["Mar 5th, 2024"],
             "items": [
                {"depth": 0, "content": "Met the [[ALPHA]] team, see ((6512a3f1-0c4e-4a55-9d0b-1f2e3d4c5b6a))"},
                {"depth": 0, "content": "Old ref ((00000000-0000-0000-0000-000000000000)) and ((not a ref))"},
                {"depth": 0, "content": "Already [[doc_keep]] and [[project alpha]]", "checked": true}
             ],
             "notes": ["page properties kept: tags"]}
        ]
    }))
}

#[test]
fn links_between_imported_pages_and_to_readable_documents() {
    let readable = vec![("Bob".to_string(), "doc_bob".to_string())];
    let p = plan(
        &two_pages(),
        &readable,
        &Limits::default(),
        ids("doc_"),
        ids("blk_"),
    )
    .unwrap();
    let alpha = &p.documents[0];
    let journal = &p.documents[1];
    assert_eq!(alpha.doc_id, "doc_1");
    assert_eq!(
        alpha.blocks[0].content,
        "Kickoff with [[doc_bob]] and [[Nobody]]"
    );
    assert_eq!(alpha.report.links, 1);
    assert_eq!(alpha.report.unresolved_links, vec!["Nobody".to_string()]);
    // a code bullet is code
    assert_eq!(alpha.blocks[3].content, "```[[Bob]]```");
    assert_eq!(alpha.blocks[3].language.as_deref(), Some("md"));
    // alias, any case; the ref points at the bullet that carried it, in another document
    assert_eq!(
        journal.blocks[0].content,
        "Met the [[doc_1]] team, see [Send the agenda](/d/doc_1/b/blk_2)"
    );
    // the alias here and the title in the last bullet
    assert_eq!((journal.report.links, journal.report.block_refs), (2, 1));
    // a UUID no bullet carries is counted; other parentheses are text
    assert_eq!(
        journal.blocks[1].content,
        "Old ref ((00000000-0000-0000-0000-000000000000)) and ((not a ref))"
    );
    assert_eq!(journal.report.unresolved_refs, 1);
    assert_eq!(
        journal.blocks[2].content,
        "Already [[doc_keep]] and [[doc_1]]"
    );
    assert_eq!(
        journal.report.notes,
        vec!["page properties kept: tags".to_string()]
    );
    assert_eq!(p.subfolders.iter().collect::<Vec<_>>(), vec!["journals"]);
    assert_eq!(journal.folder.as_deref(), Some("journals"));
}

#[test]
fn tree_shape_types_and_checks() {
    let p = plan(
        &two_pages(),
        &[],
        &Limits::default(),
        ids("doc_"),
        ids("blk_"),
    )
    .unwrap();
    let b = &p.documents[0].blocks;
    assert_eq!(b[0].parent, None);
    assert_eq!(b[1].parent.as_deref(), Some("blk_1"));
    assert_eq!((b[1].block_type, b[1].checked), (BlockType::Todo, true));
    // depth 3 after depth 1: one level below, not a gap
    assert_eq!(b[2].parent.as_deref(), Some("blk_2"));
    assert_eq!(b[3].parent, None);
    // `checked` only means something on a todo
    assert!(!p.documents[1].blocks[2].checked);
    // an imported page wins over a readable document of the same title
    let readable = vec![("project alpha".to_string(), "doc_old".to_string())];
    let p = plan(
        &two_pages(),
        &readable,
        &Limits::default(),
        ids("doc_"),
        ids("blk_"),
    )
    .unwrap();
    assert!(p.documents[1].blocks[2].content.ends_with("[[doc_1]]"));
}

#[test]
fn refusals_name_the_field_and_plan_nothing() {
    let limits = Limits {
        max_content_bytes: 30,
        ..Limits::default()
    };
    // the link makes the text longer than the limit: refused, with the bullet's path
    let long = body(serde_json::json!({"documents": [
        {"file": "a.md", "title": "A", "items": [{"depth": 0, "content": "see [[A]] and [[A]] and more"}]}
    ]}));
    let err = plan(&long, &[], &limits, ids("doc_"), ids("blk_")).unwrap_err();
    assert!(
        err.0.starts_with("documents[0].items[0].content:"),
        "{err:?}"
    );
    let empty = body(serde_json::json!({"documents": []}));
    assert_eq!(
        plan(&empty, &[], &limits, ids("doc_"), ids("blk_")).unwrap_err(),
        Refused("documents: the import holds no documents".into())
    );
    let nested = body(serde_json::json!({"documents": [
        {"file": "Work/Plans/a.opml", "title": "A", "folder": "Work/Plans", "items": []},
        {"file": "Work/b.opml", "title": "B", "folder": "Work", "items": []},
        {"file": "bad.opml", "title": "C", "folder": "Work//x", "items": []}
    ]}));
    assert!(plan(&nested, &[], &limits, ids("doc_"), ids("blk_"))
        .unwrap_err()
        .0
        .starts_with("documents[2].folder:"));
    let mut nested = nested;
    nested.documents.pop();
    let p = plan(&nested, &[], &limits, ids("doc_"), ids("blk_")).unwrap();
    assert_eq!(
        p.subfolders.iter().collect::<Vec<_>>(),
        vec!["Work", "Work/Plans"]
    );
    let folder = body(serde_json::json!({"newFolder": " ", "documents": [
        {"file": "a.md", "title": "A", "items": []}
    ]}));
    assert!(plan(&folder, &[], &limits, ids("doc_"), ids("blk_"))
        .unwrap_err()
        .0
        .starts_with("newFolder:"));
    let unknown: Result<ImportBody, _> = serde_json::from_value(serde_json::json!({
        "documents": [], "surprise": 1
    }));
    assert!(unknown.is_err(), "unknown fields are refused");
}
