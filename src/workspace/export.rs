//! Everything a person can read, as files: each document as Markdown (the same text as
//! `GET /docs/{id}/markdown`) and OPML, each bullet shared with them as its part alone, and
//! `manifest.json` with the folders, the documents, who has access and how. `docsync export
//! --to DIR` writes the files into a folder, `GET /export` puts them in a zip.
//!
//! Rights are the role function's, read when each document is read: a document the person
//! lost meanwhile is left out, and a bullet guest's files hold their shared bullets only.
//! Names are made safe for every file system (no separators, no reserved characters, at most
//! 80 characters) and unique without regard to case; the manifest maps each to its ID.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde::Serialize;

use docsync_actors::collab::block::Block;
use docsync_actors::collab::document::DocState;
use docsync_actors::storage::accounts::User;
use docsync_actors::storage::roles::{self, AccessList, DocSummary, FolderSummary, Reach};
use docsync_actors::storage::sharing::{self, NamedShare, SharedBullet};
use docsync_actors::storage::{derived, documents, Storage, StorageError};

use super::opml;

/// One file of an export: its path inside the export (always `/`-separated) and bytes.
pub struct ExportFile {
    pub path: String,
    pub bytes: Vec<u8>,
}

/// `manifest.json`: what the files are.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub format: &'static str,
    pub version: u32,
    pub exported_at: i64,
    pub exported_by: Person,
    pub folders: Vec<FolderEntry>,
    pub documents: Vec<DocEntry>,
    pub shared_bullets: Vec<BulletEntry>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Person {
    pub user_id: String,
    pub name: String,
    pub display_name: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FolderEntry {
    #[serde(flatten)]
    pub folder: FolderSummary,
    /// Where its documents are in the export.
    pub path: String,
    /// The folder's own shares (folders the person owns).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shares: Option<Vec<NamedShare>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DocEntry {
    #[serde(flatten)]
    pub doc: DocSummary,
    pub bullets: usize,
    pub markdown: String,
    pub opml: String,
    /// Everyone who can open it, with their role and how they have it.
    pub access: AccessList,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BulletEntry {
    #[serde(flatten)]
    pub bullet: SharedBullet,
    pub bullets: usize,
    pub markdown: String,
    pub opml: String,
}

/// What one export held.
#[derive(Debug, Default, Clone, Copy)]
pub struct ExportCounts {
    pub documents: usize,
    pub shared_bullets: usize,
    pub bullets: usize,
    pub files: usize,
}

pub struct Exporter<'a> {
    pub storage: &'a Storage,
    pub now: i64,
}

/// What is read of one document (or shared bullet) for its files.
struct Read {
    markdown: String,
    opml: String,
    bullets: usize,
    access: Option<AccessList>,
}

impl Exporter<'_> {
    /// Hands every file of `user`'s export to `sink`, the manifest last.
    pub async fn run(
        &self,
        user: &User,
        mut sink: impl FnMut(ExportFile) -> std::io::Result<()>,
    ) -> Result<ExportCounts, ExportFailed> {
        let uid = user.id.clone();
        let (folders, docs, bullets) = self
            .storage
            .read(move |c| {
                Ok((
                    roles::readable_folders(c, &uid)?,
                    roles::readable_documents(c, &uid)?,
                    sharing::shared_bullets(c, &uid)?,
                ))
            })
            .await?;
        let mut names = Names::default();
        let folder_paths = folder_paths(&folders, &mut names);
        let mut counts = ExportCounts::default();
        let mut folder_entries = Vec::with_capacity(folders.len());
        for f in folders {
            let shares = if f.owner_id == user.id {
                let id = f.folder_id.clone();
                Some(
                    self.storage
                        .read(move |c| {
                            let shares = sharing::folder_shares(c, &id)?;
                            sharing::with_names(c, shares)
                        })
                        .await?,
                )
            } else {
                None
            };
            folder_entries.push(FolderEntry {
                path: folder_paths.get(&f.folder_id).cloned().unwrap_or_default(),
                folder: f,
                shares,
            });
        }
        let mut doc_entries = Vec::with_capacity(docs.len());
        for doc in docs {
            let (id, uid) = (doc.doc_id.clone(), user.id.clone());
            let title = doc.title.clone();
            let read = self
                .storage
                .read(move |c| {
                    // asked again now: a right lost since the list was read leaves it out
                    if roles::doc_grant(c, &uid, &id)?.is_none() {
                        return Ok(None);
                    }
                    let state = documents::load(c, &id)?;
                    let rows = visible_rows(&state, None);
                    Ok(Some(Read {
                        markdown: derived::document_markdown(c, &id, &title)?,
                        opml: opml::write(&title, &rows),
                        bullets: rows.len(),
                        access: roles::who_has_access(c, &id)?,
                    }))
                })
                .await?;
            let Some(mut read) = read else { continue };
            let dir = doc
                .folder_id
                .as_ref()
                .and_then(|f| folder_paths.get(f))
                .cloned()
                .unwrap_or_else(|| "documents".into());
            let stem = names.unique(&dir, &doc.title, "Untitled");
            let (bullets, access) = (read.bullets, read.access.take().unwrap_or_default());
            let (markdown, opml) = write_pair(&mut sink, &stem, read, &mut counts)?;
            counts.documents += 1;
            doc_entries.push(DocEntry {
                doc,
                bullets,
                markdown,
                opml,
                access,
            });
        }
        let mut bullet_entries = Vec::new();
        for bullet in bullets.into_iter().filter(|b| !b.deleted) {
            let (id, uid, root) = (
                bullet.doc_id.clone(),
                user.id.clone(),
                bullet.block_id.clone(),
            );
            let title = bullet.title.lines().next().unwrap_or("").to_string();
            let read = self
                .storage
                .read(move |c| {
                    let Some(view) = roles::doc_view(c, &uid, &id)? else {
                        return Ok(None);
                    };
                    let allowed = match &view.reach {
                        Reach::Bullets(roots) => roots.iter().any(|r| r.block_id == root),
                        Reach::Document => true,
                    };
                    if !allowed {
                        return Ok(None);
                    }
                    let state = documents::load(c, &id)?;
                    let rows = visible_rows(&state, Some(&root));
                    let markdown: String =
                        derived::markdown_export_under(c, &id, std::slice::from_ref(&root))?
                            .collect();
                    Ok(Some(Read {
                        markdown,
                        opml: opml::write(&title, &rows),
                        bullets: rows.len(),
                        access: None,
                    }))
                })
                .await?;
            let Some(read) = read else { continue };
            let stem = names.unique("shared bullets", &bullet.title, "Shared bullet");
            let bullets = read.bullets;
            let (markdown, opml) = write_pair(&mut sink, &stem, read, &mut counts)?;
            counts.shared_bullets += 1;
            bullet_entries.push(BulletEntry {
                bullet,
                bullets,
                markdown,
                opml,
            });
        }
        let manifest = Manifest {
            format: "docsync-export",
            version: 1,
            exported_at: self.now,
            exported_by: Person {
                user_id: user.id.clone(),
                name: user.name.clone(),
                display_name: user.display_name.clone(),
            },
            folders: folder_entries,
            documents: doc_entries,
            shared_bullets: bullet_entries,
        };
        let json = serde_json::to_vec_pretty(&manifest).map_err(std::io::Error::other)?;
        sink(ExportFile {
            path: "manifest.json".into(),
            bytes: json,
        })?;
        counts.files += 1;
        Ok(counts)
    }
}

/// One document's (or shared bullet's) two files, `stem.md` and `stem.opml`; their paths.
fn write_pair(
    sink: &mut impl FnMut(ExportFile) -> std::io::Result<()>,
    stem: &str,
    read: Read,
    counts: &mut ExportCounts,
) -> std::io::Result<(String, String)> {
    let (md, op) = (format!("{stem}.md"), format!("{stem}.opml"));
    sink(ExportFile {
        path: md.clone(),
        bytes: read.markdown.into_bytes(),
    })?;
    sink(ExportFile {
        path: op.clone(),
        bytes: read.opml.into_bytes(),
    })?;
    counts.bullets += read.bullets;
    counts.files += 2;
    Ok((md, op))
}

#[derive(Debug, thiserror::Error)]
pub enum ExportFailed {
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error("writing the export: {0}")]
    Io(#[from] std::io::Error),
}

/// The live bullets in document order with their depth, from the top or (a shared bullet)
/// below `root` — whose children are the top level, as its guests see it. A deleted bullet
/// hides everything below it.
fn visible_rows<'s>(state: &'s DocState, root: Option<&str>) -> Vec<(usize, &'s Block)> {
    let ordered = state.ordered();
    let mut out = Vec::new();
    // (depth of the root, inside it yet) when exporting one shared bullet's part
    let mut inside: Option<u32> = None;
    let mut hidden_below: Option<u32> = None;
    for (depth, block) in &ordered {
        if let Some(h) = hidden_below {
            if *depth > h {
                continue;
            }
            hidden_below = None;
        }
        if let Some(r) = root {
            match inside {
                Some(rd) if *depth > rd => {}
                Some(_) => break,
                None => {
                    if block.id == r {
                        inside = Some(*depth);
                    }
                    continue;
                }
            }
        }
        if block.deleted {
            hidden_below = Some(*depth);
            continue;
        }
        let base = inside.map_or(0, |rd| rd + 1);
        let Some(b) = state.get(&block.id) else {
            continue;
        };
        out.push(((*depth - base) as usize, Arc::as_ref(b)));
    }
    out
}

/// Folder ID → its path in the export (`folders/Work/Plans`), parents the person cannot
/// see left out of the path.
fn folder_paths(folders: &[FolderSummary], names: &mut Names) -> HashMap<String, String> {
    let by_id: HashMap<&str, &FolderSummary> =
        folders.iter().map(|f| (f.folder_id.as_str(), f)).collect();
    let mut paths: HashMap<String, String> = HashMap::new();
    // parents before children: depth first from each top folder, by name
    fn place(
        f: &FolderSummary,
        by_id: &HashMap<&str, &FolderSummary>,
        paths: &mut HashMap<String, String>,
        names: &mut Names,
        guard: usize,
    ) -> String {
        if let Some(p) = paths.get(&f.folder_id) {
            return p.clone();
        }
        let parent = match f.parent_id.as_deref().and_then(|p| by_id.get(p)) {
            Some(p) if guard < 256 => place(p, by_id, paths, names, guard + 1),
            _ => "folders".to_string(),
        };
        let path = names.unique(&parent, &f.name, "Folder");
        paths.insert(f.folder_id.clone(), path.clone());
        path
    }
    for f in folders {
        place(f, &by_id, &mut paths, names, 0);
    }
    paths
}

/// Names already given in the export, without regard to case.
#[derive(Default)]
struct Names(HashSet<String>);

impl Names {
    /// `dir/name` made safe, with ` (2)`, ` (3)`… when the name is taken.
    fn unique(&mut self, dir: &str, name: &str, fallback: &str) -> String {
        let base = safe_name(name, fallback);
        let mut candidate = format!("{dir}/{base}");
        let mut n = 1;
        while !self.0.insert(candidate.to_lowercase()) {
            n += 1;
            candidate = format!("{dir}/{base} ({n})");
        }
        candidate
    }
}

/// A title as a file or folder name every system takes: its first line, separators,
/// reserved and control characters replaced, no leading or trailing dots or spaces, at most
/// 80 characters.
pub fn safe_name(title: &str, fallback: &str) -> String {
    let first = title.lines().next().unwrap_or("");
    let replaced: String = first
        .chars()
        .map(|c| match c {
            '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|' => '_',
            c if c.is_control() => '_',
            c => c,
        })
        .take(80)
        .collect();
    let trimmed = replaced.trim_matches(|c: char| c == '.' || c.is_whitespace());
    if trimmed.is_empty() {
        fallback.to_string()
    } else {
        trimmed.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::{safe_name, Names};

    #[test]
    fn names_are_safe_and_unique_without_regard_to_case() {
        assert_eq!(
            safe_name("Plans: 2027/Q1 <draft>?", "x"),
            "Plans_ 2027_Q1 _draft__"
        );
        assert_eq!(safe_name("  ..  ", "Untitled"), "Untitled");
        assert_eq!(safe_name("first line\nsecond", "x"), "first line");
        assert_eq!(safe_name(&"é".repeat(100), "x").chars().count(), 80);
        let mut names = Names::default();
        assert_eq!(names.unique("documents", "Notes", "U"), "documents/Notes");
        assert_eq!(
            names.unique("documents", "notes", "U"),
            "documents/notes (2)"
        );
        assert_eq!(
            names.unique("documents", "NOTES", "U"),
            "documents/NOTES (3)"
        );
        assert_eq!(names.unique("folders/A", "Notes", "U"), "folders/A/Notes");
    }
}
