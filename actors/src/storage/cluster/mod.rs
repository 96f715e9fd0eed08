//! What only cluster mode stores, all on PostgreSQL: membership (`membership.rs`: one row per
//! incarnation, renewed on the database's clock), claims (`claims.rs`: a claim moves the
//! document's `owner_epoch`, the fence every head-moving write carries — see
//! `documents/postgres.rs`), the facade the document actor asks on either backend
//! (`ownership.rs`: on SQLite the one node owns everything at epoch 0), who cannot reach whom
//! (`reachability.rs`: a node the others cannot reach is evicted by their majority), the
//! access watch with the news of nodes it hears (`node_news.rs`) and the import of a SQLite
//! database.

pub mod access_watch;
pub mod claims;
pub mod import;
pub mod membership;
pub mod node_news;
pub mod ownership;
pub mod reachability;

#[cfg(test)]
mod tests;
