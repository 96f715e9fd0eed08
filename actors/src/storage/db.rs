//! `Db`: the connection one storage call runs on — SQLite's, or a PostgreSQL transaction —
//! and `row_questions!`, which writes a concept's row questions (`roles::rows::doc_place(db,
//! …)`) that send each question to the backend in use. Callers never see which one it is;
//! each concept's folder holds its rules once (`mod.rs`) and the twin answers
//! (`sqlite.rs`, `postgres.rs`) under the same names, and `differential_tests.rs` holds the
//! twins to the same answers.

use rusqlite::Connection;

pub enum Db<'a, 'c> {
    Sqlite(&'a Connection),
    /// A transaction, and — on the writer — the statements kept prepared on its connection
    /// (`postgres/kept.rs`; None elsewhere).
    Postgres(
        &'a mut postgres::Transaction<'c>,
        Option<&'a mut super::postgres::kept::Kept>,
    ),
}

impl Db<'_, '_> {
    /// The SQLite connection, for the few things only SQLite has (its disk-full probe,
    /// tests' fingerprints); None on PostgreSQL.
    pub fn sqlite(&self) -> Option<&Connection> {
        match self {
            Db::Sqlite(c) => Some(c),
            Db::Postgres(..) => None,
        }
    }
}

/// `row_questions! { pub fn name(arg: Type, …) -> Answer; … }`, written in a concept's
/// `rows.rs` (which imports `super::postgres` and `super::sqlite`), defines `pub fn name(db: &mut Db,
/// arg: Type, …) -> Result<Answer>` asking `sqlite::name` or `postgres::name` — the twin
/// answers beside it, which must therefore exist under the same name with the same
/// arguments.
macro_rules! row_questions {
    ($(
        $(#[$meta:meta])*
        pub fn $name:ident $(<$lt:lifetime>)? ($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty;
    )*) => {$(
        $(#[$meta])*
        pub fn $name $(<$lt>)? (
            db: &mut Db<'_, '_>,
            $($arg: $ty),*
        ) -> Result<$ret> {
            match db {
                Db::Sqlite(c) => sqlite::$name(c, $($arg),*),
                Db::Postgres(t, _) => postgres::$name(&mut **t, $($arg),*),
            }
        }
    )*};
}
pub(crate) use row_questions;
