//! docsync's core: pure collaboration rules (`collab`), SQLite storage behind one writer
//! (`storage`), and the actors that give each document its order (`document`, `registry`).
//! Arrows point down: actors use storage and collab; storage uses collab; collab uses nothing.

pub mod ask;
pub mod clock;
pub mod collab;
pub mod compaction;
pub mod document;
pub mod membership;
pub mod metrics;
pub mod registry;
pub mod storage;
