//! Statements kept prepared on one connection. A statement given to the `postgres` crate as
//! text is prepared on every call — a round trip to the database before the one that runs
//! it — so the writer's every-op statements are prepared once per connection and kept here
//! (`Kept` lives beside the writer's connection, and goes with it when it reconnects). A
//! `Kept::default()` made for one call still prepares each statement only once within it.
//!
//! A kept statement belongs to the connection that prepared it: never hand a `Kept` to
//! another connection.

use std::collections::HashMap;

use postgres::{GenericClient, Statement};

use crate::storage::error::Result;

#[derive(Default)]
pub struct Kept {
    statements: HashMap<&'static str, Statement>,
}

impl Kept {
    /// `sql` prepared on `c` — at its first use on this connection only.
    pub fn get(&mut self, c: &mut impl GenericClient, sql: &'static str) -> Result<Statement> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let s = c.prepare(sql)?;
        self.statements.insert(sql, s.clone());
        Ok(s)
    }

    /// How many statements are kept (for tests and the curious).
    pub fn len(&self) -> usize {
        self.statements.len()
    }

    pub fn is_empty(&self) -> bool {
        self.statements.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::postgres::testing::TempPostgres;

    #[test]
    fn a_statement_is_prepared_once_per_connection_and_outlives_a_rolled_back_transaction() {
        let pg = TempPostgres::start();
        let mut c = pg.client();
        let mut kept = Kept::default();
        let sql = "SELECT $1::int + 1";
        let first = {
            let mut tx = c.transaction().unwrap();
            let s = kept.get(&mut tx, sql).unwrap();
            let two: i32 = tx.query_one(&s, &[&1i32]).unwrap().get(0);
            assert_eq!(two, 2);
            // A failed job's transaction is rolled back: the statement stays prepared (it
            // belongs to the session, not to the transaction).
            tx.rollback().unwrap();
            s
        };
        drop(first);
        let mut tx = c.transaction().unwrap();
        // Counted by the simple protocol, which prepares nothing itself.
        let prepared = |tx: &mut postgres::Transaction| -> String {
            tx.simple_query("SELECT count(*) FROM pg_prepared_statements")
                .unwrap()
                .into_iter()
                .find_map(|m| match m {
                    postgres::SimpleQueryMessage::Row(r) => r.get(0).map(String::from),
                    _ => None,
                })
                .unwrap()
        };
        let again = kept.get(&mut tx, sql).unwrap();
        assert_eq!(
            prepared(&mut tx),
            "1",
            "the same prepared statement, not another"
        );
        let three: i32 = tx.query_one(&again, &[&2i32]).unwrap().get(0);
        assert_eq!(three, 3);
        assert_eq!(kept.len(), 1);
        // Another statement, another entry; the database holds both under their names.
        kept.get(&mut tx, "SELECT 1").unwrap();
        assert_eq!(kept.len(), 2);
        assert_eq!(prepared(&mut tx), "2");
    }
}
