//! Every integration test in one binary (one link of the server library and the shared
//! `common` helpers instead of one per file; `autotests = false` in Cargo.toml). Each module
//! starts real servers on real sockets with their own SQLite files, so modules run side by
//! side like separate binaries did. Run one file's tests with
//! `cargo test --test integration permissions::`.

mod common;

mod api;
mod bad_input;
mod bullet_shares;
mod channels;
mod client_ids;
mod cluster;
mod compaction;
mod compression;
mod crash;
mod disk_full;
mod docs;
mod feed;
mod folders;
mod history;
mod limits;
mod links;
mod openapi;
mod operations;
mod people;
mod permissions;
mod proxy;
mod revocation;
mod simulation;
mod static_files;
mod streams;
mod versions;
mod wakeups;
mod webhooks;
mod workspace;
