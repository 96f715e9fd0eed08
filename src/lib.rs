//! The docsync service: configuration, HTTP handlers, authentication, start-up and CLI
//! helpers. The core (rules, storage, actors) lives in the `docsync-actors` crate.

pub mod auth;
pub mod cli;
pub mod cluster;
pub mod config;
pub mod demo;
pub mod history_check;
pub mod http;
pub mod memory;
pub mod server;
pub mod shutdown;
pub mod telemetry;
pub mod webhooks;
pub mod workspace;
