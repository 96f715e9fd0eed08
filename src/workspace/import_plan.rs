//! A workspace import as a plan: the documents to make, each bullet with its new ID and
//! parent, and the links between them resolved — before anything is written, so a request
//! that breaks a limit is refused whole. Pure (IDs come from the caller), so the rules are
//! tested without a server.
//!
//! The browser reads the files (Logseq pages and journals, an OPML backup) with the same
//! readers as a one-file import and sends what it read; the rules that need every file at
//! once live here:
//! - `[[Page]]` becomes `[[doc_…]]` when a page of that title or alias is in the import,
//!   else when the importer can read a document of that title; else it stays as written and
//!   the report names it. Titles match without regard to case.
//! - `((block-ref))` becomes a link to the bullet that carried `id:: block-ref`
//!   (`[its first words](/d/doc_…/b/blk_…)`, the editor's zoom link); a ref to a bullet
//!   outside the import stays as written and is counted.
//! - Code bullets are left alone (a `[[` in code is code).

use std::collections::{BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use docsync_actors::collab::block::BlockType;
use docsync_actors::collab::validate::fixed::MAX_NAME_BYTES;
use docsync_actors::collab::validate::Limits;

/// Documents one import makes at most.
pub const MAX_IMPORT_DOCUMENTS: usize = 5_000;
/// Bullets one import makes at most, over all its documents.
pub const MAX_IMPORT_BULLETS: usize = 200_000;
/// The body of `POST /import`, in bytes.
pub const MAX_IMPORT_BODY_BYTES: usize = 64 * 1024 * 1024;
/// Unresolved link names a document's report lists (the count is always whole).
const MAX_NAMED_UNRESOLVED: usize = 20;
/// Characters of a bullet's text a block-ref link shows.
const REF_LABEL_CHARS: usize = 60;

/// `POST /import`: documents read from files, made in one operation.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImportBody {
    /// An existing folder to import into (write access needed).
    #[serde(default)]
    pub folder_id: Option<String>,
    /// A new folder made for the import (inside `folderId` when both are given).
    #[serde(default)]
    pub new_folder: Option<String>,
    pub documents: Vec<ImportDoc>,
}

/// One document to make, as read from one file (or one top-level bullet of a backup).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImportDoc {
    /// Where it came from (`pages/Project.md`), for the report.
    pub file: String,
    pub title: String,
    /// More names `[[links]]` may use for it (Logseq's `alias::`, a journal's date formats).
    #[serde(default)]
    pub aliases: Vec<String>,
    /// A subfolder of the import's folder to put it in (`journals`, or a path like
    /// `Work/Plans` for folders inside folders), each made once by its path.
    #[serde(default)]
    pub folder: Option<String>,
    pub items: Vec<ImportItem>,
    /// What the reader could not carry over from this file, for the report.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// One bullet in document order: `depth` 0 is the top level; a jump of more than one level
/// is taken as one.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImportItem {
    pub depth: u32,
    pub content: String,
    #[serde(default, rename = "type")]
    pub block_type: Option<BlockType>,
    #[serde(default)]
    pub checked: bool,
    #[serde(default)]
    pub language: Option<String>,
    /// The ID other bullets' `((ref))` name this one by (Logseq's `id::`).
    #[serde(default, rename = "ref")]
    pub reference: Option<String>,
}

/// A bullet as it will be inserted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedBlock {
    pub id: String,
    pub parent: Option<String>,
    pub content: String,
    pub block_type: BlockType,
    pub checked: bool,
    pub language: Option<String>,
}

#[derive(Debug)]
pub struct PlannedDoc {
    pub doc_id: String,
    pub title: String,
    pub folder: Option<String>,
    pub blocks: Vec<PlannedBlock>,
    pub report: DocReport,
}

/// What became of one file.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DocReport {
    pub file: String,
    pub doc_id: String,
    pub title: String,
    pub bullets: usize,
    /// `[[links]]` that now point at a document.
    pub links: usize,
    /// `((refs))` that now point at a bullet.
    pub block_refs: usize,
    /// Names of `[[links]]` no document answered (at most 20 listed; kept as text).
    pub unresolved_links: Vec<String>,
    pub unresolved_link_count: usize,
    /// `((refs))` to bullets outside the import (kept as text).
    pub unresolved_refs: usize,
    /// What the reader could not carry over.
    pub notes: Vec<String>,
}

/// The whole import, ready to write.
#[derive(Debug)]
pub struct Plan {
    pub documents: Vec<PlannedDoc>,
    /// Subfolder paths the documents use and every folder on them, each made once; a
    /// folder's path sorts before the paths inside it.
    pub subfolders: BTreeSet<String>,
}

/// A request that breaks a rule: the field's path and what is wrong (a 400).
#[derive(Debug, PartialEq, Eq)]
pub struct Refused(pub String);

/// Plans `body` for a person who can read `readable` (title, document ID), with IDs from
/// `new_doc_id` and `new_block_id`. Nothing is decided later: the writer only carries it out.
pub fn plan(
    body: &ImportBody,
    readable: &[(String, String)],
    limits: &Limits,
    mut new_doc_id: impl FnMut() -> String,
    mut new_block_id: impl FnMut() -> String,
) -> Result<Plan, Refused> {
    check_shape(body, limits)?;
    let doc_ids: Vec<String> = body.documents.iter().map(|_| new_doc_id()).collect();
    let titles = title_index(body, &doc_ids, readable);
    // Every bullet's ID first, so a ref can point forward and across files.
    let block_ids: Vec<Vec<String>> = body
        .documents
        .iter()
        .map(|d| d.items.iter().map(|_| new_block_id()).collect())
        .collect();
    let mut refs: HashMap<&str, (String, String, String)> = HashMap::new();
    for (d, doc) in body.documents.iter().enumerate() {
        for (k, item) in doc.items.iter().enumerate() {
            if let Some(r) = item.reference.as_deref().filter(|r| !r.is_empty()) {
                refs.entry(r).or_insert_with(|| {
                    (
                        doc_ids[d].clone(),
                        block_ids[d][k].clone(),
                        label(&item.content),
                    )
                });
            }
        }
    }
    let mut documents = Vec::with_capacity(body.documents.len());
    let mut subfolders = BTreeSet::new();
    for (d, doc) in body.documents.iter().enumerate() {
        let mut report = DocReport {
            file: doc.file.clone(),
            doc_id: doc_ids[d].clone(),
            title: doc.title.trim().to_string(),
            bullets: doc.items.len(),
            links: 0,
            block_refs: 0,
            unresolved_links: Vec::new(),
            unresolved_link_count: 0,
            unresolved_refs: 0,
            notes: doc.notes.clone(),
        };
        let mut unresolved = BTreeSet::new();
        let mut parents: Vec<String> = Vec::new();
        let mut blocks = Vec::with_capacity(doc.items.len());
        for (k, item) in doc.items.iter().enumerate() {
            let depth = (item.depth as usize).min(parents.len());
            parents.truncate(depth);
            let block_type = item.block_type.unwrap_or_default();
            let content = if block_type == BlockType::Code {
                item.content.clone()
            } else {
                let linked = link_pages(&item.content, &titles, &mut report, &mut unresolved);
                link_refs(&linked, &refs, &mut report)
            };
            if content.len() > limits.max_content_bytes {
                return Err(Refused(format!(
                    "documents[{d}].items[{k}].content: {} bytes with its links is over the limit of {}",
                    content.len(),
                    limits.max_content_bytes
                )));
            }
            let id = block_ids[d][k].clone();
            blocks.push(PlannedBlock {
                id: id.clone(),
                parent: parents.last().cloned(),
                content,
                block_type,
                checked: block_type == BlockType::Todo && item.checked,
                language: if block_type == BlockType::Code {
                    item.language.clone().filter(|l| !l.is_empty())
                } else {
                    None
                },
            });
            parents.push(id);
        }
        report.unresolved_link_count = unresolved.len();
        report.unresolved_links = unresolved.into_iter().take(MAX_NAMED_UNRESOLVED).collect();
        let folder = doc
            .folder
            .as_deref()
            .map(|f| f.split('/').map(str::trim).collect::<Vec<_>>().join("/"));
        if let Some(f) = &folder {
            // every folder on the path, outer first (a set's order puts `a` before `a/b`)
            let mut path = String::new();
            for segment in f.split('/') {
                if !path.is_empty() {
                    path.push('/');
                }
                path.push_str(segment);
                subfolders.insert(path.clone());
            }
        }
        documents.push(PlannedDoc {
            doc_id: doc_ids[d].clone(),
            title: report.title.clone(),
            folder,
            blocks,
            report,
        });
    }
    Ok(Plan {
        documents,
        subfolders,
    })
}

/// Counts and sizes the request can be refused for before any ID is made.
fn check_shape(body: &ImportBody, limits: &Limits) -> Result<(), Refused> {
    if body.documents.is_empty() {
        return Err(Refused("documents: the import holds no documents".into()));
    }
    if body.documents.len() > MAX_IMPORT_DOCUMENTS {
        return Err(Refused(format!(
            "documents: {} documents is over the limit of {MAX_IMPORT_DOCUMENTS} per import",
            body.documents.len()
        )));
    }
    let bullets: usize = body.documents.iter().map(|d| d.items.len()).sum();
    if bullets > MAX_IMPORT_BULLETS {
        return Err(Refused(format!(
            "documents: {bullets} bullets is over the limit of {MAX_IMPORT_BULLETS} per import"
        )));
    }
    if let Some(name) = &body.new_folder {
        check_name(name, "newFolder")?;
    }
    for (d, doc) in body.documents.iter().enumerate() {
        if doc.title.len() > limits.max_title_bytes {
            return Err(Refused(format!(
                "documents[{d}].title: {} bytes is over the limit of {}",
                doc.title.len(),
                limits.max_title_bytes
            )));
        }
        if let Some(f) = &doc.folder {
            for segment in f.split('/') {
                check_name(segment, &format!("documents[{d}].folder"))?;
            }
        }
        if doc.file.len() > 4096 || doc.notes.len() > 100 || doc.aliases.len() > 100 {
            return Err(Refused(format!(
                "documents[{d}]: file names over 4096 bytes and more than 100 notes or aliases are refused"
            )));
        }
        for (k, item) in doc.items.iter().enumerate() {
            if item.content.len() > limits.max_content_bytes {
                return Err(Refused(format!(
                    "documents[{d}].items[{k}].content: {} bytes is over the limit of {}",
                    item.content.len(),
                    limits.max_content_bytes
                )));
            }
        }
    }
    Ok(())
}

fn check_name(name: &str, field: &str) -> Result<(), Refused> {
    if name.trim().is_empty() || name.len() > MAX_NAME_BYTES {
        return Err(Refused(format!(
            "{field}: a folder name must have 1 to {MAX_NAME_BYTES} bytes"
        )));
    }
    Ok(())
}

/// Lower-cased title or alias → document: the import's own pages first (in file order),
/// then the documents the importer already reads.
fn title_index(
    body: &ImportBody,
    doc_ids: &[String],
    readable: &[(String, String)],
) -> HashMap<String, String> {
    let mut index = HashMap::new();
    for (doc, id) in body.documents.iter().zip(doc_ids) {
        for name in std::iter::once(&doc.title).chain(&doc.aliases) {
            let key = name.trim().to_lowercase();
            if !key.is_empty() {
                index.entry(key).or_insert_with(|| id.clone());
            }
        }
    }
    for (title, id) in readable {
        let key = title.trim().to_lowercase();
        if !key.is_empty() {
            index.entry(key).or_insert_with(|| id.clone());
        }
    }
    index
}

/// `[[Page]]` → `[[doc_…]]` where a title answers; `[[doc_…]]` already there is kept.
fn link_pages(
    text: &str,
    titles: &HashMap<String, String>,
    report: &mut DocReport,
    unresolved: &mut BTreeSet<String>,
) -> String {
    replace_between(text, "[[", "]]", |name| {
        if name.contains('[') || name.starts_with("doc_") && !name.contains(' ') {
            return None;
        }
        match titles.get(&name.trim().to_lowercase()) {
            Some(id) => {
                report.links += 1;
                Some(format!("[[{id}]]"))
            }
            None => {
                unresolved.insert(name.trim().to_string());
                None
            }
        }
    })
}

/// `((ref))` → `[label](/d/doc/b/blk)` where a bullet of the import carries that ref.
fn link_refs(
    text: &str,
    refs: &HashMap<&str, (String, String, String)>,
    report: &mut DocReport,
) -> String {
    replace_between(text, "((", "))", |r| match refs.get(r.trim()) {
        Some((doc, blk, label)) => {
            report.block_refs += 1;
            Some(format!("[{label}](/d/{doc}/b/{blk})"))
        }
        None => {
            if is_uuid_like(r) {
                report.unresolved_refs += 1;
            }
            None
        }
    })
}

/// Logseq's block IDs are UUIDs; other `((…))` is just text in parentheses.
fn is_uuid_like(s: &str) -> bool {
    let s = s.trim();
    s.len() == 36 && s.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
}

/// Replaces each `open … close` span (no line break inside) with what `f` gives for its
/// inside; a span `f` declines is kept as it was.
fn replace_between(
    text: &str,
    open: &str,
    close: &str,
    mut f: impl FnMut(&str) -> Option<String>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(open) {
        let after = &rest[start + open.len()..];
        let Some(end) = after.find(close) else { break };
        let inside = &after[..end];
        out.push_str(&rest[..start]);
        if inside.is_empty() || inside.contains('\n') {
            out.push_str(open);
            rest = after;
            continue;
        }
        match f(inside) {
            Some(replacement) => out.push_str(&replacement),
            None => {
                out.push_str(open);
                out.push_str(inside);
                out.push_str(close);
            }
        }
        rest = &after[end + close.len()..];
    }
    out.push_str(rest);
    out
}

/// A bullet's first line as a link's text: markup that would break the link dropped,
/// shortened to a few words.
fn label(content: &str) -> String {
    let first = content.lines().next().unwrap_or("");
    let cleaned: String = first
        .chars()
        .filter(|c| !matches!(c, '[' | ']' | '(' | ')' | '\n'))
        .collect();
    let cleaned = cleaned.trim();
    let mut out: String = cleaned.chars().take(REF_LABEL_CHARS).collect();
    if cleaned.chars().count() > REF_LABEL_CHARS {
        out.push('…');
    }
    if out.is_empty() {
        "bullet".into()
    } else {
        out
    }
}

#[cfg(test)]
#[path = "import_plan_tests.rs"]
mod tests;
