//! Which user a client ID belongs to: the first user to present it owns it
//! (`migrations/0005_client_owners.sql`); anyone else naming it is refused.

mod postgres;
mod rows;
mod sqlite;

pub use rows::owner;

use super::db::Db;
use super::error::Result;

/// The client's owner after this call: `user_id` when it was unclaimed.
pub fn claim(db: &mut Db, client_id: &str, user_id: &str, now: i64) -> Result<String> {
    rows::insert_unless_owned(db, client_id, user_id, now)?;
    Ok(rows::owner(db, client_id)?.unwrap_or_else(|| user_id.to_string()))
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::*;
    use crate::storage::{accounts, sqlite::migrate};

    #[test]
    fn the_first_user_keeps_the_id() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate::apply(&mut conn).unwrap();
        let db = &mut Db::Sqlite(&conn);
        let a = accounts::create_user(db, "a", "A", false, 1).unwrap();
        let b = accounts::create_user(db, "b", "B", false, 1).unwrap();
        assert_eq!(owner(db, "cl_1").unwrap(), None);
        assert_eq!(claim(db, "cl_1", &a.id, 1).unwrap(), a.id);
        assert_eq!(claim(db, "cl_1", &b.id, 2).unwrap(), a.id);
        assert_eq!(owner(db, "cl_1").unwrap(), Some(a.id));
    }
}
