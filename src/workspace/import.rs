//! Carries out an import plan: the folders, every document (one storage write), then each
//! document's bullets through its actor as the importer's ops, in requests of the size a
//! client may send — so the log, history, search, the change feed and webhooks see an import
//! as they see typing. Nothing is acknowledged before it is on disk (the actor's rule).
//!
//! One operation for the person: when a step fails, what was made so far goes to the
//! importer's trash (restorable for `history.trash_days`) and the request fails; a server
//! killed half way leaves the documents made so far, each whole up to its last written
//! batch (documented in docs/api.md).

use std::collections::HashMap;
use std::time::Instant;

use docsync_actors::ask::ask_renewing;
use docsync_actors::clock::SharedClock;
use docsync_actors::collab::block::{Author, BlockType};
use docsync_actors::collab::op::{Op, OpKind, OpStatus};
use docsync_actors::collab::order_key::n_keys_between;
use docsync_actors::collab::validate::DocId;
use docsync_actors::document::{Caller, DocError, Sync};
use docsync_actors::registry::{CloseDocument, Documents};
use docsync_actors::storage::accounts::{new_id, User};
use docsync_actors::storage::roles::{Reach, Role};
use docsync_actors::storage::{documents, sharing, trash, Storage, StorageError};

use super::import_plan::{DocReport, Plan};

/// Ops per message to a document's actor: below the 500 a `/sync` may carry.
const OPS_PER_BATCH: usize = 400;

#[derive(Debug, thiserror::Error)]
pub enum ImportFailed {
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error(transparent)]
    Document(#[from] DocError),
    /// An op the rules refused (a bug in the plan, never the person's input).
    #[error("the import stopped: {0}")]
    Refused(String),
}

/// What was made: the folder it went into (if one was made) and a report per document.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    /// The folder made for the import, if one was asked for.
    pub folder_id: Option<String>,
    pub documents: Vec<DocReport>,
    pub bullets: usize,
    pub links: usize,
    pub block_refs: usize,
    pub unresolved_links: usize,
    pub unresolved_refs: usize,
}

/// Where the import lands: an existing folder, and a new one to make inside it.
pub struct Target {
    pub folder_id: Option<String>,
    pub new_folder: Option<String>,
}

pub struct Importer<'a> {
    pub storage: &'a Storage,
    pub registry: &'a Documents,
    pub clock: &'a SharedClock,
}

impl Importer<'_> {
    pub async fn run(
        &self,
        user: &User,
        target: Target,
        plan: Plan,
    ) -> Result<ImportReport, ImportFailed> {
        let now = self.clock.now_ms();
        let (folder_id, subfolders) = self.make_folders(user, &target, &plan, now).await?;
        let made: Vec<String> = plan.documents.iter().map(|d| d.doc_id.clone()).collect();
        let rows: Vec<(String, String, Option<String>)> = plan
            .documents
            .iter()
            .map(|d| {
                let folder = match &d.folder {
                    Some(name) => subfolders.get(name).cloned(),
                    None => folder_id.clone().or_else(|| target.folder_id.clone()),
                };
                (d.doc_id.clone(), d.title.clone(), folder)
            })
            .collect();
        let owner = user.id.clone();
        self.storage
            .write(move |c| {
                for (id, title, folder) in &rows {
                    documents::create(c, id, &owner, title, folder.as_deref(), now)?;
                }
                Ok(())
            })
            .await?;
        let caller = Caller {
            client: None,
            author: Author {
                user_id: user.id.clone(),
                name: user.display_name.clone(),
            },
            role: Role::Owner,
            shared: false,
            reach: Reach::Document,
        };
        let mut reports = Vec::with_capacity(plan.documents.len());
        for doc in plan.documents {
            if let Err(e) = self.fill(&caller, &doc.doc_id, &doc.blocks).await {
                self.undo(user, &made).await;
                return Err(e);
            }
            reports.push(doc.report);
        }
        Ok(ImportReport {
            folder_id: if target.new_folder.is_some() {
                folder_id
            } else {
                None
            },
            bullets: reports.iter().map(|r| r.bullets).sum(),
            links: reports.iter().map(|r| r.links).sum(),
            block_refs: reports.iter().map(|r| r.block_refs).sum(),
            unresolved_links: reports.iter().map(|r| r.unresolved_link_count).sum(),
            unresolved_refs: reports.iter().map(|r| r.unresolved_refs).sum(),
            documents: reports,
        })
    }

    /// The new folder (if asked for) and the subfolders the documents name, inside the
    /// target: (the folder documents without a subfolder go to, subfolder name → ID).
    async fn make_folders(
        &self,
        user: &User,
        target: &Target,
        plan: &Plan,
        now: i64,
    ) -> Result<(Option<String>, HashMap<String, String>), ImportFailed> {
        let owner = user.id.clone();
        let parent = target.folder_id.clone();
        let new_folder = target.new_folder.clone();
        let names: Vec<String> = plan.subfolders.iter().cloned().collect();
        let made = self
            .storage
            .write(move |c| {
                let base = match &new_folder {
                    Some(name) => Some(
                        sharing::create_folder(c, name.trim(), &owner, parent.as_deref(), now)?
                            .folder_id,
                    ),
                    None => parent.clone(),
                };
                let mut subs: HashMap<String, String> = HashMap::new();
                // outer folders first (sorted paths), so each one's parent is already made
                for path in names {
                    let (parent, name) = match path.rsplit_once('/') {
                        Some((outer, name)) => (subs.get(outer).cloned(), name),
                        None => (base.clone(), path.as_str()),
                    };
                    let f = sharing::create_folder(c, name, &owner, parent.as_deref(), now)?;
                    subs.insert(path.clone(), f.folder_id);
                }
                Ok((base, subs))
            })
            .await?;
        Ok(made)
    }

    /// One document's bullets, in document order, batch after batch through its actor.
    async fn fill(
        &self,
        caller: &Caller,
        doc_id: &str,
        blocks: &[super::import_plan::PlannedBlock],
    ) -> Result<(), ImportFailed> {
        if blocks.is_empty() {
            return Ok(());
        }
        let doc = DocId::parse(doc_id).map_err(|e| ImportFailed::Refused(e.to_string()))?;
        // Keys in document order: each bullet sorts after every one before it, so after its
        // earlier siblings too.
        let keys = n_keys_between(None, None, blocks.len())
            .map_err(|e| ImportFailed::Refused(e.to_string()))?;
        let ops: Vec<Op> = blocks
            .iter()
            .zip(keys)
            .map(|(b, order_key)| Op {
                op_id: new_id("op_"),
                kind: OpKind::Insert {
                    block_id: b.id.clone(),
                    parent_id: b.parent.clone(),
                    order_key,
                    content: b.content.clone(),
                    block_type: (b.block_type != BlockType::Bullet).then_some(b.block_type),
                    checked: (b.block_type == BlockType::Todo).then_some(b.checked),
                    language: b.language.clone(),
                },
            })
            .collect();
        let mut after = 0;
        for batch in ops.chunks(OPS_PER_BATCH) {
            let message = Sync::seed(caller.clone(), batch.to_vec(), Instant::now()).after(after);
            // A brand-new actor distrusts pre-checks older than itself; ours names only
            // blocks made here, so renewing it is only a new time stamp.
            let renew = || {
                let fresh = Sync::seed(caller.clone(), batch.to_vec(), Instant::now()).after(after);
                async move { Ok::<_, ImportFailed>(fresh) }
            };
            let reply = ask_renewing(self.registry, &doc, message, renew).await?;
            if let Some(bad) = reply
                .fields
                .results
                .iter()
                .find(|r| r.status != OpStatus::Applied)
            {
                return Err(ImportFailed::Refused(format!(
                    "a bullet of {doc_id} was not applied ({:?})",
                    bad.reason
                )));
            }
            after = reply.fields.head_seq;
        }
        Ok(())
    }

    /// A failed import's documents go to the importer's trash (their actors closed first).
    async fn undo(&self, user: &User, made: &[String]) {
        for id in made {
            if let Ok(doc) = DocId::parse(id) {
                let _ = self.registry.send(CloseDocument { doc_id: doc }).await;
            }
        }
        let (ids, by, now) = (made.to_vec(), user.id.clone(), self.clock.now_ms());
        let undone = self
            .storage
            .write(move |c| {
                for id in &ids {
                    trash::trash(c, id, &by, now)?;
                }
                Ok(())
            })
            .await;
        if let Err(e) = undone {
            tracing::error!(error = %e, "a failed import's documents could not be moved to the trash");
        }
    }
}
