//! Accounts outside HTTP: password hashing and the login throttle.

pub mod password;
pub mod password_pool;
pub mod throttle;
