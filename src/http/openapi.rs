//! The HTTP API as an OpenAPI 3.1 document for integrators, served at
//! `GET /api/v1/openapi.json`. Generated from the server's own types: every request body and
//! response is the Rust type the handler decodes or encodes (`utoipa::ToSchema` derived beside
//! it, serde's renames and tags included), and every operation is declared on its handler
//! (`#[utoipa::path]`). The test hooks (`/api/v1/testing/…`) are left out: they exist only
//! for the test suite. The wake-up channels' messages (PROTOCOL §4) are described in words:
//! OpenAPI has no vocabulary for a WebSocket's frames.

use std::sync::OnceLock;

use actix_web::HttpResponse;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use super::auth::SESSION_COOKIE;

/// Bearer tokens (API tokens) and the browser's session cookie; every operation takes either
/// unless it says otherwise.
struct Security;

impl Modify for Security {
    fn modify(&self, api: &mut utoipa::openapi::OpenApi) {
        let components = api.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::new(SESSION_COOKIE))),
        );
        let either = [
            utoipa::openapi::security::SecurityRequirement::new("bearer", Vec::<String>::new()),
            utoipa::openapi::security::SecurityRequirement::new("session", Vec::<String>::new()),
        ];
        api.security = Some(either.to_vec());
    }
}

/// Answers every operation can give that its handler does not produce itself — they come
/// from the layers around it (body reading, the origin guard, the cluster routing, the
/// writer) — added to each operation they apply to, so the document lists every answer the
/// server can give (the contract test, `tests/contract/`, holds the server to it).
struct EveryAnswer;

impl Modify for EveryAnswer {
    fn modify(&self, api: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::{ContentBuilder, Ref, RefOr, ResponseBuilder};
        let error = |why: &str| {
            RefOr::T(
                ResponseBuilder::new()
                    .description(why)
                    .content(
                        "application/json",
                        ContentBuilder::new()
                            .schema(Some(Ref::from_schema_name("ErrorBody")))
                            .build(),
                    )
                    .build(),
            )
        };
        for (path, item) in api.paths.paths.iter_mut() {
            let ops = [
                ("get", item.get.as_mut()),
                ("put", item.put.as_mut()),
                ("post", item.post.as_mut()),
                ("delete", item.delete.as_mut()),
                ("patch", item.patch.as_mut()),
            ];
            for (method, op) in ops {
                let Some(op) = op else { continue };
                let mut add = |code: &str, why: &str| {
                    op.responses
                        .responses
                        .entry(code.to_string())
                        .or_insert_with(|| error(why));
                };
                let writes = method != "get";
                let has_params =
                    op.parameters.as_ref().is_some_and(|p| !p.is_empty()) || path.contains('{');
                if op.request_body.is_some() {
                    add(
                        "415",
                        "`unsupported_media_type`: the body is not `application/json`",
                    );
                    add(
                        "413",
                        "`too_large`: the body is larger than `limits.max_body_bytes`",
                    );
                    add(
                        "408",
                        "`request_timeout`: the body did not arrive within `server.body_read_timeout_secs`",
                    );
                    add(
                        "400",
                        "`bad_request`: the body is not what this operation takes",
                    );
                }
                if has_params {
                    add(
                        "400",
                        "`bad_request`: a path or query parameter is not valid",
                    );
                }
                if writes {
                    add(
                        "403",
                        "`forbidden`: not allowed for this caller, or a cookie-authenticated write from another origin; `scope`: an API token whose scope does not reach this",
                    );
                    add(
                        "507",
                        "`storage_full`: the disk or database is full; nothing was written",
                    );
                }
                if path.starts_with("/api/v1/docs/{id}") {
                    add(
                        "503",
                        "`not_owner`: cluster mode, another node serves the document now; ask again (`Retry-After`)",
                    );
                }
                if path == "/api/v1/auth/login" {
                    add(
                        "503",
                        "`busy`: every password check is taken; try again (`Retry-After`)",
                    );
                }
            }
        }
    }
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "docsync",
        description = "Live outliner notes: a server-authoritative op log per document.                        The contract in prose is PROTOCOL.md; this document gives the shapes.                        Writes from a browser must come from the server's own origin.",
    ),
    paths(
        crate::http::accounts::login,
        crate::http::accounts::logout,
        crate::http::sso::methods,
        crate::http::accounts::me,
        crate::http::accounts::create_token,
        crate::http::accounts::list_tokens,
        crate::http::accounts::delete_token,
        crate::http::me::patch_me,
        crate::http::me::change_password,
        crate::http::me::list_sessions,
        crate::http::me::end_session,
        crate::http::invites::open,
        crate::http::invites::accept,
        crate::http::people::list_people,
        crate::http::people::create_person,
        crate::http::people::patch_person,
        crate::http::people::remove_person,
        crate::http::people::reset_link,
        crate::http::people::create_invite,
        crate::http::people::list_invites,
        crate::http::people::revoke_invite,
        crate::http::people::audit_log,
        crate::http::people::list_teams,
        crate::http::people::put_team_members,
        crate::http::docs::create,
        crate::http::docs::list,
        crate::http::docs::delete,
        crate::http::sync::snapshot,
        crate::http::first_rows::first_rows,
        crate::http::sync::sync,
        crate::http::sync::leave,
        crate::http::sync::usage,
        crate::http::sharing::get_doc_shares,
        crate::http::bullet_shares::get_block_shares,
        crate::http::bullet_shares::put_block_shares,
        crate::http::bullet_shares::shared_with_me,
        crate::http::bullet_shares::who_sees_bullet,
        crate::http::sharing::who_has_access,
        crate::http::sharing::search_users,
        crate::http::sharing::put_doc_shares,
        crate::http::sharing::patch_doc,
        crate::http::sharing::create_folder,
        crate::http::sharing::patch_folder,
        crate::http::sharing::delete_folder,
        crate::http::sharing::get_folder_shares,
        crate::http::sharing::put_folder_shares,
        crate::http::sharing::create_team,
        crate::http::sharing::list_teams,
        crate::http::sharing::list_folders,
        crate::http::sharing::put_members,
        crate::http::sharing::find_user,
        crate::http::sharing::leave_doc_share,
        crate::http::sharing::leave_folder_share,
        crate::http::sharing::leave_team,
        crate::http::read::markdown,
        crate::http::read::backlinks,
        crate::http::history::block_history,
        crate::http::history::list_versions,
        crate::http::history::create_version,
        crate::http::history::get_version,
        crate::http::history::rename_version,
        crate::http::history::delete_version,
        crate::http::history::diff_version,
        crate::http::history::restore_version,
        crate::http::history::list_conflicts,
        crate::http::history::list_trash,
        crate::http::history::restore_trashed,
        crate::http::history::purge_trashed,
        crate::http::read::search,
        crate::http::read::tags,
        crate::http::read::tag,
        crate::http::channels::longpoll::changes,
        crate::http::feed::feed,
        crate::http::feed::events,
        crate::http::workspace::import,
        crate::http::workspace::export,
        crate::http::webhooks::create,
        crate::http::webhooks::list,
        crate::http::webhooks::get,
        crate::http::webhooks::delete,
        crate::http::webhooks::resume,
        crate::http::webhooks::deliveries,
        crate::http::channels::sse::events,
        crate::http::channels::ws::connect,
        crate::http::admin::compact,
        crate::http::admin::actors,
        crate::http::admin::metrics,
        crate::http::health::healthz,
        crate::http::health::readyz,
    ),
    components(schemas(
        crate::http::error::ErrorBody,
        docsync_actors::collab::op::Op,
        docsync_actors::collab::op::LogEntry,
    )),
    modifiers(&Security, &EveryAnswer),
    tags(
        (name = "sync", description = "The data path: snapshot, sync, leave (PROTOCOL §3)"),
        (name = "wake-ups", description = "Hints that something changed; data always comes over /sync (PROTOCOL §4)"),
        (name = "documents"), (name = "folders"), (name = "sharing"), (name = "teams"),
        (name = "accounts"), (name = "read"), (name = "operators"),
        (name = "integrations", description = "Following changes without polling snapshots: the feed and webhooks (PROTOCOL §11)"),
    )
)]
pub struct ApiDoc;

/// The document, built once (it never changes while the server runs).
pub fn document() -> &'static str {
    static JSON: OnceLock<String> = OnceLock::new();
    JSON.get_or_init(|| {
        let mut doc = ApiDoc::openapi();
        doc.info.version = env!("CARGO_PKG_VERSION").to_string();
        doc.to_pretty_json().expect("the API document serialises")
    })
}

/// `GET /api/v1/openapi.json`: public, like the protocol it describes.
pub async fn serve() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(document())
}
