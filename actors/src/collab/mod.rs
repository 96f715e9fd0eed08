//! Pure collaboration rules: the data model, ops, order keys, leases and the rules that turn
//! an op into effects. Nothing here does I/O, reads a clock or knows about actors, so the
//! whole conflict matrix is tested here, fast. The browser's `model.js` mirrors these rules.

pub mod block;
pub mod diff;
pub mod document;
pub mod first_rows;
pub mod lease;
pub mod op;
pub mod order_key;
pub mod replay;
pub mod restore_plan;
pub mod rules;
pub mod subtree;
pub mod sync_request;
pub mod validate;

#[cfg(test)]
mod depth_tests;
#[cfg(test)]
mod matrix_tests;
#[cfg(test)]
mod vectors_tests;
