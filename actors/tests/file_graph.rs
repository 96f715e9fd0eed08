//! The crate's files import each other in one direction only: no file uses one that uses it
//! back, directly or around a circle. And the document actor keeps its state private: its
//! handlers live in child modules and reach the parts through their methods, so no field of
//! `DocumentActor` is `pub` in any form.
//!
//! "Uses" means a path a file names: `crate::…`, `super::…`, `self::…`, or a `use` of a child
//! module, resolved to the deepest module file it reaches (`crate::document::messages::Caller`
//! is `document/messages.rs`). Declaring a module (`mod x;`) is not a use. Inline
//! `mod tests { … }` blocks and comments are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `src/a/b.rs` → `[a, b]`; `src/a/mod.rs` → `[a]`; `src/lib.rs` → `[]`.
fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file
        .strip_prefix(src)
        .expect("under src")
        .with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// The text that counts: no comments, no inline test module, visibility `pub(…)` as `pub`.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests {") {
        Some(i) => &text[..i],
        None => text,
    };
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let line = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        out.push_str(line);
        out.push('\n');
    }
    for vis in ["pub(crate)", "pub(super)", "pub(self)"] {
        out = out.replace(vis, "pub");
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every `a::b::c` path in `code` whose first segment is one of `heads`, as segments.
fn paths(code: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !is_ident(chars[i]) || (i > 0 && (is_ident(chars[i - 1]) || chars[i - 1] == ':')) {
            i += 1;
            continue;
        }
        let mut segs = Vec::new();
        let mut j = i;
        loop {
            let start = j;
            while j < chars.len() && is_ident(chars[j]) {
                j += 1;
            }
            segs.push(chars[start..j].iter().collect::<String>());
            if j + 2 < chars.len()
                && chars[j] == ':'
                && chars[j + 1] == ':'
                && is_ident(chars[j + 2])
            {
                j += 2;
            } else {
                break;
            }
        }
        out.push(segs);
        i = j.max(i + 1);
    }
    out
}

/// The modules a file uses.
fn uses(module: &Module, code: &str, known: &BTreeSet<Module>) -> BTreeSet<Module> {
    let mut out = BTreeSet::new();
    let is_use_of_child = |segs: &[String]| {
        let mut child = module.clone();
        child.push(segs[0].clone());
        known.contains(&child)
    };
    for segs in paths(code) {
        let mut cur: Module;
        let rest: &[String];
        match segs[0].as_str() {
            "crate" => {
                cur = Vec::new();
                rest = &segs[1..];
            }
            "self" => {
                cur = module.clone();
                rest = &segs[1..];
            }
            "super" => {
                cur = module.clone();
                let mut k = 0;
                while k < segs.len() && segs[k] == "super" {
                    cur.pop();
                    k += 1;
                }
                rest = &segs[k..];
            }
            _ if segs.len() > 1 && is_use_of_child(&segs) => {
                cur = module.clone();
                rest = &segs[..];
            }
            _ => continue,
        }
        for s in rest {
            let mut next = cur.clone();
            next.push(s.clone());
            if known.contains(&next) {
                cur = next;
            } else {
                break;
            }
        }
        if &cur != module {
            out.insert(cur);
        }
    }
    out
}

/// A circle of uses, if there is one: `[a, b, …, a]`.
fn find_circle(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Option<Vec<Module>> {
    // Depth-first search with colours: grey on the stack, black done.
    fn visit(
        m: &Module,
        edges: &BTreeMap<Module, BTreeSet<Module>>,
        grey: &mut Vec<Module>,
        black: &mut BTreeSet<Module>,
    ) -> Option<Vec<Module>> {
        grey.push(m.clone());
        for next in edges.get(m).into_iter().flatten() {
            if let Some(i) = grey.iter().position(|g| g == next) {
                let mut circle = grey[i..].to_vec();
                circle.push(next.clone());
                return Some(circle);
            }
            if !black.contains(next) {
                if let Some(c) = visit(next, edges, grey, black) {
                    return Some(c);
                }
            }
        }
        grey.pop();
        black.insert(m.clone());
        None
    }
    let mut black = BTreeSet::new();
    for m in edges.keys() {
        if !black.contains(m) {
            if let Some(c) = visit(m, edges, &mut Vec::new(), &mut black) {
                return Some(c);
            }
        }
    }
    None
}

fn graph(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    // The service's binaries are crates of their own (their `crate::` is not the library's).
    files.retain(|f| {
        let rel = f.strip_prefix(src).expect("under src");
        !rel.starts_with("bin") && rel != Path::new("main.rs")
    });
    let modules: BTreeMap<Module, PathBuf> = files
        .iter()
        .map(|f| (module_of(src, f), f.clone()))
        .collect();
    let known: BTreeSet<Module> = modules.keys().cloned().collect();
    modules
        .iter()
        .map(|(m, f)| {
            let code = code_of(&std::fs::read_to_string(f).expect("read file"));
            (m.clone(), uses(m, &code, &known))
        })
        .collect()
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_file_uses_one_that_uses_it_back() {
    let edges = graph(&src());
    assert!(edges.len() > 40, "the crate's files were found");
    if let Some(circle) = find_circle(&edges) {
        let names: Vec<String> = circle.iter().map(|m| m.join("::")).collect();
        panic!("files use each other in a circle: {}", names.join(" → "));
    }
}

/// The service crate (`src/`: configuration, HTTP, auth, cluster mode, the CLI) has no
/// circle either.
#[test]
fn no_file_of_the_service_uses_one_that_uses_it_back() {
    let service = Path::new(env!("CARGO_MANIFEST_DIR")).join("../src");
    let edges = graph(&service);
    assert!(edges.len() > 40, "the service's files were found");
    if let Some(circle) = find_circle(&edges) {
        let names: Vec<String> = circle.iter().map(|m| m.join("::")).collect();
        panic!("files use each other in a circle: {}", names.join(" → "));
    }
}

#[test]
fn the_checker_sees_a_circle_through_super_and_crate_paths() {
    let known: BTreeSet<Module> = [vec![], vec!["a".into()], vec!["a".into(), "b".into()]]
        .into_iter()
        .collect();
    let a: Module = vec!["a".into()];
    let b: Module = vec!["a".into(), "b".into()];
    let mut edges = BTreeMap::new();
    edges.insert(a.clone(), uses(&a, &code_of("pub use b::Thing;\n"), &known));
    edges.insert(
        b.clone(),
        uses(&b, &code_of("pub(super) fn f() -> super::X {}\n"), &known),
    );
    assert!(find_circle(&edges).is_some(), "a → a::b → a");
    // `pub(super)` is a visibility, not a use; a comment is not a use either.
    edges.insert(
        b.clone(),
        uses(&b, &code_of("pub(super) fn f() {} // super::X\n"), &known),
    );
    assert!(find_circle(&edges).is_none());
    assert!(uses(&b, "use crate::a::b::C;", &known).is_empty(), "itself");
}

#[test]
fn the_document_actor_keeps_its_fields_private() {
    let text = std::fs::read_to_string(src().join("document/actor.rs")).expect("actor.rs");
    let start = text
        .find("pub struct DocumentActor {")
        .expect("DocumentActor is declared in document/actor.rs");
    let body = &text[start..start + text[start..].find("\n}\n").expect("struct end")];
    let public: Vec<&str> = body
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| l.starts_with("pub"))
        .collect();
    assert!(
        public.is_empty(),
        "fields reachable from outside: {public:?}"
    );
}

/// Which backend a storage module belongs to: the engines (`storage::sqlite::…`,
/// `storage::postgres::…`) and each concept's twins (`storage::roles::sqlite`, …).
fn backend_of(m: &Module) -> Option<&'static str> {
    if m.first().map(String::as_str) != Some("storage") {
        return None;
    }
    ["sqlite", "postgres"]
        .into_iter()
        .find(|b| m.iter().skip(1).any(|s| s == b))
}

/// The storage concepts: folders with row questions (`storage::<concept>::rows`).
fn concepts(edges: &BTreeMap<Module, BTreeSet<Module>>) -> BTreeSet<String> {
    edges
        .keys()
        .filter(|m| m.len() == 3 && m[0] == "storage" && m[2] == "rows")
        .map(|m| m[1].clone())
        .collect()
}

/// What a storage backend uses that it must not: the other backend, a concept's rules (its
/// `mod.rs`: the rules call the backends, never the other way round), or anything outside
/// storage and the pure rules. Test modules (`…tests`) may drive the facades.
fn backend_crossings(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<String> {
    let concepts = concepts(edges);
    let mut wrong = Vec::new();
    for (m, uses) in edges {
        let Some(mine) = backend_of(m) else { continue };
        if m.last().is_some_and(|l| l.ends_with("tests")) {
            continue;
        }
        for u in uses {
            let other_backend = backend_of(u).is_some_and(|b| b != mine);
            let a_rule = u.len() == 2 && u[0] == "storage" && concepts.contains(&u[1]);
            let outside = !matches!(u[0].as_str(), "storage" | "collab" | "metrics");
            if other_backend || a_rule || outside {
                wrong.push(format!("{} uses {}", m.join("::"), u.join("::")));
            }
        }
    }
    wrong
}

#[test]
fn neither_storage_backend_imports_the_other_or_a_rule() {
    let edges = graph(&src());
    let concepts = concepts(&edges);
    assert!(
        concepts.len() >= 10,
        "the concepts were found: {concepts:?}"
    );
    let wrong = backend_crossings(&edges);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_storage_rules_import_no_backend() {
    let edges = graph(&src());
    let mut wrong = Vec::new();
    for c in concepts(&edges) {
        for part in [vec![], vec!["types".to_string()]] {
            let mut m: Module = vec!["storage".into(), c.clone()];
            m.extend(part);
            for u in edges.get(&m).into_iter().flatten() {
                if backend_of(u).is_some() {
                    wrong.push(format!("{} uses {}", m.join("::"), u.join("::")));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_backend_check_sees_a_crossing_and_a_rule_used() {
    let m: Module = vec!["storage".into(), "roles".into(), "sqlite".into()];
    let mut edges = graph(&src());
    assert!(backend_crossings(&edges).is_empty());
    let pg: Module = vec!["storage".into(), "roles".into(), "postgres".into()];
    edges.get_mut(&m).expect("roles/sqlite.rs").insert(pg);
    assert_eq!(
        backend_crossings(&edges),
        vec!["storage::roles::sqlite uses storage::roles::postgres"]
    );
    let mut edges = graph(&src());
    let rules: Module = vec!["storage".into(), "sharing".into()];
    edges.get_mut(&m).expect("roles/sqlite.rs").insert(rules);
    assert_eq!(
        backend_crossings(&edges),
        vec!["storage::roles::sqlite uses storage::sharing"]
    );
}
