//! Open conflict copies (PROTOCOL §8 conflict review): every live copy not yet marked
//! resolved, with the text it was made from and the original's text now, in the order they
//! were made. Resolving is ordinary ops of the reviewer (accept: the copy's text into the
//! original and the copy deleted; discard: the copy deleted; keep both: `conflictResolved`).

mod postgres;
mod rows;
mod sqlite;
mod types;

pub use rows::{in_document, readable};
pub use types::OpenConflict;
