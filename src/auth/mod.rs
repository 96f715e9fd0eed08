//! Accounts outside HTTP: password hashing and the login throttle.

pub mod password;
pub mod throttle;
