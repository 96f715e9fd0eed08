//! HTTP: thin handlers that decode, authorise through the one role function, send one
//! message to a document actor (or one read or write to storage) and encode the answer.
//! This file only declares the modules and routes: shared state is in `state.rs`, who may
//! do what in `access.rs`, errors become statuses in `error.rs`.

pub mod access;
pub mod access_cache;
pub mod accounts;
pub mod admin;
pub mod assets;
pub mod audited;
pub mod auth;
pub mod body;
pub mod bullet_shares;
pub mod channels;
pub mod client_address;
pub mod client_owners;
pub mod compression;
pub mod docs;
pub mod error;
pub mod feed;
pub mod first_rows;
pub mod guest_part;
pub mod head_requests;
pub mod health;
pub mod history;
pub mod invites;
pub mod me;
pub mod openapi;
pub mod origin;
pub mod people;
pub mod read;
pub mod scope;
pub mod security_headers;
pub mod sharing;
pub mod sso;
pub mod state;
pub mod static_files;
pub mod sync;
pub mod webhooks;
pub mod workspace;
pub mod write_budget;

use actix_web::web;

pub fn routes(cfg: &mut web::ServiceConfig) {
    // Debug builds only (tests); before the `/api/v1` scope, which would otherwise take it.
    #[cfg(debug_assertions)]
    cfg.route(
        "/api/v1/testing/max_page_count",
        web::post().to(health::set_max_page_count),
    );
    cfg.route("/healthz", web::get().to(health::healthz))
        .route("/metrics", web::get().to(admin::metrics))
        .route("/admin", web::get().to(static_files::admin_page))
        // The web app's pages; its files are found by `default_service`.
        .route("/", web::get().to(static_files::app_page))
        .route("/index.html", web::get().to(static_files::app_page))
        .route("/login", web::get().to(static_files::app_page))
        .route("/invite/{token}", web::get().to(static_files::app_page))
        .route("/auth/oidc/start", web::get().to(sso::start))
        .route("/auth/oidc/callback", web::get().to(sso::callback))
        .route("/settings", web::get().to(static_files::app_page))
        .route("/admin/{tab}", web::get().to(static_files::app_page))
        .route("/d/{docId}", web::get().to(static_files::app_page))
        .route(
            "/d/{docId}/b/{blockId}",
            web::get().to(static_files::app_page),
        )
        .route("/readyz", web::get().to(health::readyz))
        // Cluster mode, nodes only: whether this node is the incarnation they wait on, and
        // a node's one stream of a document this node owns.
        .route(
            crate::cluster::hop::MEMBER_PATH,
            web::get().to(crate::cluster::member::member),
        )
        .route(
            "/cluster/v1/docs/{id}/stream",
            web::get().to(crate::cluster::node_stream::stream),
        )
        .service(
            web::scope("/api/v1")
                // The data path first: routes are tried in order (a regex each), and these
                // are most of the requests.
                .route("/docs/{id}/sync", web::post().to(sync::sync))
                .route("/docs/{id}/snapshot", web::get().to(sync::snapshot))
                .route(
                    "/docs/{id}/first-rows",
                    web::get().to(first_rows::first_rows),
                )
                .route(
                    "/docs/{id}/changes",
                    web::get().to(channels::longpoll::changes),
                )
                .route("/feed", web::get().to(feed::feed))
                .route("/feed/events", web::get().to(feed::events))
                .route("/import", web::post().to(workspace::import))
                .route("/export", web::get().to(workspace::export))
                .route("/webhooks", web::post().to(webhooks::create))
                .route("/webhooks", web::get().to(webhooks::list))
                .route("/webhooks/{id}", web::get().to(webhooks::get))
                .route("/webhooks/{id}", web::delete().to(webhooks::delete))
                .route("/webhooks/{id}/resume", web::post().to(webhooks::resume))
                .route(
                    "/webhooks/{id}/deliveries",
                    web::get().to(webhooks::deliveries),
                )
                .route("/openapi.json", web::get().to(openapi::serve))
                .route("/admin/compact", web::post().to(admin::compact))
                .route("/admin/actors", web::get().to(admin::actors))
                .route("/testing/clock", web::post().to(admin::advance_clock))
                .route("/auth/login", web::post().to(accounts::login))
                .route("/auth/logout", web::post().to(accounts::logout))
                .route("/auth/methods", web::get().to(sso::methods))
                .route("/me", web::get().to(accounts::me))
                .route("/me", web::patch().to(me::patch_me))
                .route("/me/password", web::post().to(me::change_password))
                .route("/me/sessions", web::get().to(me::list_sessions))
                .route("/me/sessions/{id}", web::delete().to(me::end_session))
                .route("/admin/users", web::get().to(people::list_people))
                .route("/admin/users", web::post().to(people::create_person))
                .route("/admin/users/{id}", web::patch().to(people::patch_person))
                .route("/admin/users/{id}", web::delete().to(people::remove_person))
                .route(
                    "/admin/users/{id}/reset-link",
                    web::post().to(people::reset_link),
                )
                .route("/admin/invites", web::get().to(people::list_invites))
                .route("/admin/invites", web::post().to(people::create_invite))
                .route(
                    "/admin/invites/{id}",
                    web::delete().to(people::revoke_invite),
                )
                .route("/admin/audit", web::get().to(people::audit_log))
                .route("/admin/teams", web::get().to(people::list_teams))
                .route(
                    "/admin/teams/{id}/members",
                    web::put().to(people::put_team_members),
                )
                .route("/invites/{token}", web::get().to(invites::open))
                .route("/invites/{token}/accept", web::post().to(invites::accept))
                .route("/tokens", web::post().to(accounts::create_token))
                .route("/tokens", web::get().to(accounts::list_tokens))
                .route("/tokens/{id}", web::delete().to(accounts::delete_token))
                .route("/users", web::get().to(sharing::find_user))
                .route("/users/search", web::get().to(sharing::search_users))
                .route("/teams", web::post().to(sharing::create_team))
                .route("/teams", web::get().to(sharing::list_teams))
                .route("/teams/{id}/members", web::put().to(sharing::put_members))
                .route(
                    "/teams/{id}/members/me",
                    web::delete().to(sharing::leave_team),
                )
                .route("/folders", web::post().to(sharing::create_folder))
                .route("/folders", web::get().to(sharing::list_folders))
                .route("/folders/{id}", web::patch().to(sharing::patch_folder))
                .route("/folders/{id}", web::delete().to(sharing::delete_folder))
                .route(
                    "/folders/{id}/shares",
                    web::get().to(sharing::get_folder_shares),
                )
                .route(
                    "/folders/{id}/shares",
                    web::put().to(sharing::put_folder_shares),
                )
                .route("/docs/{id}", web::patch().to(sharing::patch_doc))
                .route("/docs/{id}/shares", web::get().to(sharing::get_doc_shares))
                .route("/docs/{id}/access", web::get().to(sharing::who_has_access))
                .route("/docs/{id}/shares", web::put().to(sharing::put_doc_shares))
                .route(
                    "/docs/{id}/blocks/{blockId}/shares",
                    web::get().to(bullet_shares::get_block_shares),
                )
                .route(
                    "/docs/{id}/blocks/{blockId}/shares",
                    web::put().to(bullet_shares::put_block_shares),
                )
                .route(
                    "/docs/{id}/blocks/{blockId}/access",
                    web::get().to(bullet_shares::who_sees_bullet),
                )
                .route(
                    "/shared/bullets",
                    web::get().to(bullet_shares::shared_with_me),
                )
                .route(
                    "/docs/{id}/shares/me",
                    web::delete().to(sharing::leave_doc_share),
                )
                .route(
                    "/folders/{id}/shares/me",
                    web::delete().to(sharing::leave_folder_share),
                )
                .route("/docs", web::post().to(docs::create))
                .route("/docs", web::get().to(docs::list))
                .route("/docs/{id}", web::delete().to(docs::delete))
                .route("/ws", web::get().to(channels::ws::connect))
                .route("/docs/{id}/events", web::get().to(channels::sse::events))
                .route("/docs/{id}/leave", web::post().to(sync::leave))
                .route("/docs/{id}/usage", web::get().to(sync::usage))
                .route("/docs/{id}/markdown", web::get().to(read::markdown))
                .route("/docs/{id}/backlinks", web::get().to(read::backlinks))
                .route(
                    "/docs/{id}/blocks/{blockId}/history",
                    web::get().to(history::block_history),
                )
                .route("/docs/{id}/versions", web::get().to(history::list_versions))
                .route(
                    "/docs/{id}/versions",
                    web::post().to(history::create_version),
                )
                .route(
                    "/docs/{id}/versions/{versionId}",
                    web::get().to(history::get_version),
                )
                .route(
                    "/docs/{id}/versions/{versionId}",
                    web::patch().to(history::rename_version),
                )
                .route(
                    "/docs/{id}/versions/{versionId}",
                    web::delete().to(history::delete_version),
                )
                .route(
                    "/docs/{id}/versions/{versionId}/diff",
                    web::get().to(history::diff_version),
                )
                .route(
                    "/docs/{id}/versions/{versionId}/restore",
                    web::post().to(history::restore_version),
                )
                .route("/conflicts", web::get().to(history::list_conflicts))
                .route("/trash", web::get().to(history::list_trash))
                .route(
                    "/trash/{id}/restore",
                    web::post().to(history::restore_trashed),
                )
                .route("/trash/{id}", web::delete().to(history::purge_trashed))
                .route("/search", web::get().to(read::search))
                .route("/tags", web::get().to(read::tags))
                .route("/tags/{tag}", web::get().to(read::tag)),
        )
        .default_service(web::to(static_files::file_or_not_found));
}
