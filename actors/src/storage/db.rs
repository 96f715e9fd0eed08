//! `Db`: the connection one storage call runs on — SQLite's, or a PostgreSQL transaction —
//! and `dispatch!`, which writes the facade functions (`storage::roles::doc_role(db, …)`)
//! that send each question to the backend in use. Callers never see which one it is; the
//! two implementations live in `sqlite/` and `postgres/` with the same typed signatures,
//! and `postgres/backend_tests.rs` holds them to the same answers.

use rusqlite::Connection;

pub enum Db<'a, 'c> {
    Sqlite(&'a Connection),
    Postgres(&'a mut postgres::Transaction<'c>),
}

impl Db<'_, '_> {
    /// The SQLite connection, for the few things only SQLite has (its disk-full probe,
    /// tests' fingerprints); None on PostgreSQL.
    pub fn sqlite(&self) -> Option<&Connection> {
        match self {
            Db::Sqlite(c) => Some(c),
            Db::Postgres(_) => None,
        }
    }
}

/// `dispatch! { pub fn name(arg: Type, …) -> Answer => sqlite::path, postgres::path; … }`
/// defines `pub fn name(db: &mut Db, arg: Type, …) -> Result<Answer>` calling one or the
/// other with the same arguments.
macro_rules! dispatch {
    ($(
        $(#[$meta:meta])*
        pub fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty => $lite:path, $pg:path;
    )*) => {$(
        $(#[$meta])*
        pub fn $name(
            db: &mut $crate::storage::db::Db<'_, '_>,
            $($arg: $ty),*
        ) -> $crate::storage::error::Result<$ret> {
            match db {
                $crate::storage::db::Db::Sqlite(c) => $lite(c, $($arg),*),
                $crate::storage::db::Db::Postgres(t) => $pg(&mut **t, $($arg),*),
            }
        }
    )*};
}
pub(crate) use dispatch;
