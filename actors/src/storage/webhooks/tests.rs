//! A webhook's life on both backends, step by step, with the same answers: made, a batch
//! cut and kept, a second cut refused while one is pending, failures counted, a stale
//! delivery ID changing nothing, delivered, skipped forward (never back), paused once,
//! resumed, the lease held by one node at a time, the delivery log trimmed, deleted.

use rusqlite::Connection;

use super::*;
use crate::storage::db::Db;
use crate::storage::postgres::migrate as pg_migrate;
use crate::storage::postgres::testing::{on_pg, TempPostgres};

fn hook() -> Webhook {
    Webhook::new(
        "wh_1".into(),
        "usr_1".into(),
        "https://example.com/h".into(),
        vec!["ops".into()],
        Some(vec!["doc_a".into()]),
        1,
        5,
    )
}

fn attempt(n: i64, outcome: &str) -> Delivery {
    Delivery {
        delivery_id: format!("dlv_{n}"),
        attempt: n,
        at: n,
        entries: 3,
        cursor: "9".into(),
        outcome: outcome.into(),
        status: Some(500),
        error: Some("the receiver answered 500".into()),
        ms: 2,
    }
}

/// One step of the life: reads or writes, and says what it saw.
type Step<'a> = &'a mut dyn FnMut(&mut Db) -> Result<String>;

/// Runs the life through `run` (one backend); returns what each step saw, to compare.
fn life(run: &mut dyn FnMut(Step) -> String) -> Vec<String> {
    let mut seen = Vec::new();
    let mut step = |f: Step| seen.push(run(f));
    let show = |db: &mut Db| -> Result<String> {
        let h = by_id(db, "wh_1")?.expect("the webhook");
        Ok(format!(
            "cursor={} pending={:?} attempts={} failing={:?} next={:?} paused={:?} {:?} delivered={:?} docs={:?} events={:?}",
            h.cursor, h.pending, h.attempts, h.failing_since, h.next_attempt_at, h.paused_at,
            h.paused_reason, h.delivered_at, h.doc_ids, h.events
        ))
    };
    step(&mut |db| {
        insert(db, &hook(), "sealed")?;
        Ok(format!("{:?}", secret_sealed(db, "wh_1")?))
    });
    step(&mut |db| show(db));
    step(&mut |db| Ok(format!("{}", set_pending(db, "wh_1", "dlv_a", 5, 9)?)));
    step(&mut |db| Ok(format!("{}", set_pending(db, "wh_1", "dlv_b", 5, 12)?)));
    step(&mut |db| {
        failed(db, "wh_1", 1, 100, 200)?;
        skip_to(db, "wh_1", 50)?; // refused: a batch is pending
        delivered(db, "wh_1", "dlv_stale", 300)?; // refused: not the pending delivery
        show(db)
    });
    step(&mut |db| {
        delivered(db, "wh_1", "dlv_a", 300)?;
        show(db)
    });
    step(&mut |db| {
        skip_to(db, "wh_1", 20)?;
        skip_to(db, "wh_1", 15)?; // never back
        Ok(format!("{}", set_pending(db, "wh_1", "dlv_c", 9, 30)?))
    });
    step(&mut |db| {
        let first = pause(db, "wh_1", 400, "the receiver answered 410 Gone")?;
        let again = pause(db, "wh_1", 500, "other")?;
        Ok(format!("{first} {again} {}", show(db)?))
    });
    step(&mut |db| {
        resume(db, "wh_1")?;
        show(db)
    });
    step(&mut |db| {
        let a = claim(db, "wh_1", "node-a", 1000, 2000)?;
        let b = claim(db, "wh_1", "node-b", 1500, 2500)?;
        let a_again = claim(db, "wh_1", "node-a", 1900, 2900)?;
        let b_later = claim(db, "wh_1", "node-b", 3000, 4000)?;
        Ok(format!("{a} {b} {a_again} {b_later}"))
    });
    step(&mut |db| {
        for n in 1..=5 {
            record(db, "wh_1", &attempt(n, "failed"), 3)?;
        }
        Ok(format!("{:?}", deliveries(db, "wh_1", 10)?))
    });
    step(&mut |db| {
        let gone = delete(db, "wh_1")?;
        let again = delete(db, "wh_1")?;
        Ok(format!(
            "{gone} {again} {:?} {}",
            by_id(db, "wh_1")?,
            deliveries(db, "wh_1", 10)?.len()
        ))
    });
    seen
}

#[test]
fn both_backends_keep_a_webhook_alike() {
    let mut conn = Connection::open_in_memory().unwrap();
    crate::storage::sqlite::migrate::apply(&mut conn).unwrap();
    let lite = life(&mut |f| f(&mut Db::Sqlite(&conn)).unwrap());
    // What SQLite answered, checked once here; PostgreSQL must answer the same.
    assert_eq!(lite[2], "true", "the first cut is kept");
    assert_eq!(lite[3], "false", "a second cut waits for the first");
    assert!(lite[4].starts_with("cursor=5 pending=Some(Pending { id: \"dlv_a\", after: 5, to: 9 }) attempts=1 failing=Some(100) next=Some(200)"), "{}", lite[4]);
    assert!(lite[5].starts_with("cursor=9 pending=None attempts=0 failing=None next=None paused=None None delivered=Some(300)"), "{}", lite[5]);
    assert_eq!(
        lite[6], "false",
        "the cursor moved to 20, not back to 15: a cut from 9 is refused"
    );
    assert!(lite[7].starts_with("true false cursor=20"), "{}", lite[7]);
    assert!(
        lite[7].contains("paused=Some(400) Some(\"the receiver answered 410 Gone\")"),
        "{}",
        lite[7]
    );
    assert!(lite[8].contains("paused=None None"), "{}", lite[8]);
    assert_eq!(
        lite[9], "true false true true",
        "one node at a time, until the lease ends"
    );
    assert_eq!(
        lite[10].matches("delivery_id").count(),
        3,
        "the newest 3 kept"
    );
    assert!(
        lite[10].find("dlv_5").unwrap() < lite[10].find("dlv_3").unwrap(),
        "newest first"
    );
    assert_eq!(lite[11], "true false None 0");

    let pg = TempPostgres::start();
    pg_migrate::apply(&mut pg.client()).unwrap();
    let mut client = pg.client();
    let pgs = life(&mut |f| on_pg(&mut client, |db| f(db)).unwrap());
    assert_eq!(lite, pgs);
}
