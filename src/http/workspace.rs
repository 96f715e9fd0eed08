//! `POST /import` (many documents from another tool's files, in one operation, with a
//! report) and `GET /export` (everything the caller reads, as a zip of Markdown, OPML and a
//! manifest). The rules are in `crate::workspace`; here: decode, authorise, answer.

use std::io::Write as _;

use actix_web::{web, HttpRequest, HttpResponse};

use docsync_actors::storage::roles;

use super::access::{caller, require_folder_write};
use super::auth::Credentials;
use super::body::read_json;
use super::error::ApiError;
use super::state::AppState;
use super::sync::{charge_bytes, BYTES_PER_OP};
use crate::workspace::export::{ExportFile, Exporter};
use crate::workspace::import::{ImportReport, Importer, Target};
use crate::workspace::import_plan::{self, ImportBody, Plan, MAX_IMPORT_BODY_BYTES};
use docsync_actors::storage::accounts::new_id;

#[utoipa::path(
    post,
    path = "/api/v1/import",
    tag = "documents",
    summary = "Make many documents at once from files read by the client (a Logseq graph, a Workflowy or Dynalist backup); [[links]] and ((block refs)) between them resolved",
    request_body = ImportBody,
    responses(
        (status = 201, description = "made; what became of each file", body = ImportReport),
        (status = 400, description = "the request is malformed or breaks a limit; nothing was written", body = crate::http::error::ErrorBody),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "the caller's role does not allow this", body = crate::http::error::ErrorBody),
        (status = 413, description = "the body is over 64 MiB", body = crate::http::error::ErrorBody),
        (status = 429, description = "the caller's write budget is spent for now; nothing was written (Retry-After)", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn import(
    state: web::Data<AppState>,
    creds: Credentials,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let user = caller(&state, &creds).await?;
    let body: ImportBody = read_json(&req, payload, MAX_IMPORT_BODY_BYTES).await?;
    if let Some(folder) = &body.folder_id {
        require_folder_write(&state, &user, folder, "folderId").await?;
    }
    let uid = user.id.clone();
    let readable: Vec<(String, String)> = state
        .storage
        .read(move |c| roles::readable_documents(c, &uid))
        .await?
        .into_iter()
        .map(|d| (d.title, d.doc_id))
        .collect();
    let plan = import_plan::plan(
        &body,
        &readable,
        &state.limits,
        || new_id("doc_"),
        || new_id("blk_"),
    )
    .map_err(|r| ApiError::BadRequest(r.0))?;
    charge_import(&state, &user.id, &plan)?;
    let target = Target {
        folder_id: body.folder_id.clone(),
        new_folder: body.new_folder.clone(),
    };
    // A task of its own: a client that goes away (a closed tab) drops this handler, never an
    // import half made — it finishes, or its failure trashes what it made.
    let task = actix_web::rt::spawn(async move {
        let importer = Importer {
            storage: &state.storage,
            registry: &state.registry,
            clock: &state.clock,
        };
        importer.run(&user, target, plan).await
    });
    let report = task
        .await
        .map_err(|e| ApiError::Internal(format!("the import stopped: {e}")))??;
    Ok(HttpResponse::Created().json(report))
}

/// An import writes like typing its bullets: it costs the importer's write budget as many
/// bytes (text plus the fixed allowance per op), taken whole before anything is written —
/// 429 when the budget is spent for now; an import bigger than a whole minute's budget could
/// never pass and is told so.
fn charge_import(state: &AppState, user: &str, plan: &Plan) -> Result<(), ApiError> {
    let bytes: u64 = plan
        .documents
        .iter()
        .flat_map(|d| &d.blocks)
        .map(|b| b.content.len() as u64 + BYTES_PER_OP)
        .sum();
    let rate = state.write_budgets.user_rate();
    if rate != 0 && bytes > rate {
        return Err(ApiError::BadRequest(format!(
            "documents: this import would write about {} KiB, more than the {} KiB a person may write in a minute (limits.user_write_bytes_per_minute); import it in parts",
            bytes / 1024,
            rate / 1024
        )));
    }
    charge_bytes(state, user, None, bytes)
}

#[utoipa::path(
    get,
    path = "/api/v1/export",
    tag = "documents",
    summary = "Everything the caller reads as a zip: each document as Markdown and OPML, each shared bullet's part, and manifest.json (folders, documents, who has access)",
    responses(
        (status = 200, description = "a zip file", content_type = "application/zip", body = String),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn export(
    state: web::Data<AppState>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    let user = caller(&state, &creds).await?;
    // The zip is written by a thread of its own into an unnamed temporary file as the files
    // come, and sent from there: one document's text in memory at a time, and compressing
    // never runs on an HTTP worker.
    let (files, zipper) = zip_writer()?;
    let exporter = Exporter {
        storage: &state.storage,
        now: state.clock.now_ms(),
    };
    let exported = exporter
        .run(&user, |f| {
            files
                .send(f)
                .map_err(|_| std::io::Error::other("the zip writer stopped"))
        })
        .await;
    drop(files);
    let zipped = web::block(move || zipper.join())
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?
        .map_err(|_| ApiError::Internal("the zip writer failed".into()))?;
    exported?;
    let file = zipped.map_err(|e| ApiError::Internal(format!("building the zip: {e}")))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    Ok(HttpResponse::Ok()
        .content_type("application/zip")
        .insert_header((
            "Content-Disposition",
            "attachment; filename=\"docsync-export.zip\"",
        ))
        // already compressed: `Compress` leaves an answer that names its encoding alone
        .insert_header((actix_web::http::header::CONTENT_ENCODING, "identity"))
        .no_chunking(size)
        .streaming(read_in_chunks(file)))
}

/// The zip writer's thread: the finished zip, rewound.
type Zipper = std::thread::JoinHandle<zip::result::ZipResult<std::fs::File>>;

/// A thread that puts every file it is handed into a zip in an unnamed temporary file (made
/// in the system's temporary folder, readable by this process only, gone when closed); it
/// answers the file, at its start, when the sender is dropped.
fn zip_writer() -> Result<(std::sync::mpsc::Sender<ExportFile>, Zipper), ApiError> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let path = std::env::temp_dir().join(format!("docsync-export-{}.zip", new_id("")));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| ApiError::Internal(format!("a temporary file for the export: {e}")))?;
    // unnamed from now on: nobody else can open it, and it goes when its handle closes
    let _ = std::fs::remove_file(&path);
    let (tx, rx) = std::sync::mpsc::channel::<ExportFile>();
    let zipper = std::thread::Builder::new()
        .name("export-zip".into())
        .spawn(move || zip(file, rx))
        .map_err(|e| ApiError::Internal(format!("starting the zip writer: {e}")))?;
    Ok((tx, zipper))
}

/// The file sent 64 KiB at a time, each read off the HTTP worker.
fn read_in_chunks(
    file: std::fs::File,
) -> impl futures::Stream<Item = Result<actix_web::web::Bytes, actix_web::Error>> {
    futures::stream::unfold(Some(file), |file| async move {
        let mut file = file?;
        let read = web::block(move || {
            let mut buf = vec![0u8; 64 * 1024];
            let n = std::io::Read::read(&mut file, &mut buf)?;
            buf.truncate(n);
            Ok::<_, std::io::Error>((buf, file))
        })
        .await;
        match read.map_err(std::io::Error::other).and_then(|r| r) {
            Ok((buf, _)) if buf.is_empty() => None,
            Ok((buf, file)) => Some((Ok(actix_web::web::Bytes::from(buf)), Some(file))),
            Err(e) => Some((Err(actix_web::error::ErrorInternalServerError(e)), None)),
        }
    })
}

/// The files in a zip, under one folder named like the download; the file answered rewound.
fn zip(
    file: std::fs::File,
    files: std::sync::mpsc::Receiver<ExportFile>,
) -> zip::result::ZipResult<std::fs::File> {
    let mut out = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for f in files {
        out.start_file(format!("docsync-export/{}", f.path), options)?;
        out.write_all(&f.bytes)?;
    }
    let mut file = out.finish()?;
    std::io::Seek::rewind(&mut file)?;
    Ok(file)
}
