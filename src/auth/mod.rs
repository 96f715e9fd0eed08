//! Accounts outside HTTP: the rules for names and passwords, password hashing and the login
//! throttle.

pub mod names;
pub mod oidc;
pub mod password;
pub mod password_pool;
pub mod throttle;
