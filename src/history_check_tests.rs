//! The checker finds what it is for — each kind of violation in a small made-up history —
//! and accepts a sound one.

use super::*;

/// Breaks a sound history or its log in one way.
type Breaker = Box<dyn Fn(&mut Vec<Event>, &mut BTreeMap<String, FinalLog>)>;

fn ev(i: u64, time: u64, process: &str, kind: Type, op: &str, seq: Option<i64>) -> Event {
    Event {
        index: i,
        time,
        process: process.into(),
        kind,
        f: if kind == Type::Observe {
            "page".into()
        } else {
            "sync".into()
        },
        value: Value {
            doc: "doc_a".into(),
            op_id: op.into(),
            seq,
            epoch: None,
        },
    }
}

fn log(rows: &[(i64, &str, Option<i64>)]) -> BTreeMap<String, FinalLog> {
    let mut m = BTreeMap::new();
    m.insert(
        "doc_a".to_string(),
        FinalLog {
            floor: 0,
            rows: rows
                .iter()
                .map(|(seq, op, epoch)| LogRow {
                    doc: "doc_a".into(),
                    seq: *seq,
                    op_id: (*op).into(),
                    epoch: *epoch,
                })
                .collect(),
        },
    );
    m
}

/// Two clients: p1's op_1 acknowledged at 1, p2's op_2 at 2 (invoked after op_1's ack);
/// p2's op_3 unanswered but applied at 3; an observation of seq 2.
fn sound() -> (Vec<Event>, BTreeMap<String, FinalLog>) {
    let h = vec![
        ev(0, 10, "p1", Type::Invoke, "op_1", None),
        ev(1, 20, "p1", Type::Ok, "op_1", Some(1)),
        ev(2, 30, "p2", Type::Invoke, "op_2", None),
        ev(3, 40, "p2", Type::Ok, "op_2", Some(2)),
        ev(4, 41, "p1", Type::Observe, "op_2", Some(2)),
        ev(5, 50, "p2", Type::Invoke, "op_3", None),
        ev(6, 60, "p2", Type::Info, "op_3", None),
        ev(7, 70, "p1", Type::Invoke, "op_4", None),
        ev(8, 80, "p1", Type::Fail, "op_4", None),
    ];
    let l = log(&[
        (1, "op_1", Some(1)),
        (2, "op_2", Some(1)),
        (3, "op_3", Some(2)),
    ]);
    (h, l)
}

#[test]
fn a_sound_history_passes_and_is_counted() {
    let (h, l) = sound();
    let v = check(&h, &l);
    assert!(v.valid, "{:?}", v.violations);
    assert_eq!(
        (
            v.invoked,
            v.acknowledged,
            v.failed,
            v.indeterminate,
            v.indeterminate_applied,
            v.observations,
            v.log_entries
        ),
        (4, 2, 1, 1, 1, 1, 3)
    );
}

#[test]
fn each_kind_of_violation_is_found() {
    let cases: Vec<(&str, Breaker)> = vec![
        (
            "is lost",
            Box::new(|_, l| {
                l.get_mut("doc_a")
                    .unwrap()
                    .rows
                    .retain(|r| r.op_id != "op_1");
                for r in &mut l.get_mut("doc_a").unwrap().rows {
                    r.seq -= 1;
                }
            }),
        ),
        (
            "acknowledged at seq 1 but is at",
            Box::new(|_, l| {
                let rows = &mut l.get_mut("doc_a").unwrap().rows;
                rows[0].op_id = "op_2".into();
                rows[1].op_id = "op_1".into();
            }),
        ),
        (
            "in the log twice",
            Box::new(|_, l| {
                l.get_mut("doc_a").unwrap().rows.push(LogRow {
                    doc: "doc_a".into(),
                    seq: 4,
                    op_id: "op_1".into(),
                    epoch: Some(2),
                });
            }),
        ),
        (
            "failed but is in the log",
            Box::new(|_, l| {
                l.get_mut("doc_a").unwrap().rows.push(LogRow {
                    doc: "doc_a".into(),
                    seq: 4,
                    op_id: "op_4".into(),
                    epoch: Some(2),
                });
            }),
        ),
        (
            "fork at seq 2",
            Box::new(|h, _| {
                h.push(ev(9, 90, "p3", Type::Observe, "op_x", Some(2)));
            }),
        ),
        (
            "a gap or a repeat",
            Box::new(|_, l| {
                l.get_mut("doc_a").unwrap().rows[2].seq = 5;
            }),
        ),
        (
            "epoch goes down",
            Box::new(|_, l| {
                l.get_mut("doc_a").unwrap().rows[2].epoch = Some(0);
            }),
        ),
        (
            "landed at seq",
            Box::new(|h, l| {
                // op_2 invoked after op_1's ack, but ordered before it.
                let rows = &mut l.get_mut("doc_a").unwrap().rows;
                rows[0].op_id = "op_2".into();
                rows[1].op_id = "op_1".into();
                for e in h.iter_mut() {
                    if e.value.op_id == "op_1" && e.kind == Type::Ok {
                        e.value.seq = Some(2);
                    }
                    if e.value.op_id == "op_2" && e.kind != Type::Invoke {
                        e.value.seq = Some(1);
                    }
                }
            }),
        ),
    ];
    for (want, break_it) in cases {
        let (mut h, mut l) = sound();
        break_it(&mut h, &mut l);
        let v = check(&h, &l);
        assert!(!v.valid, "{want}: not found");
        assert!(
            v.violations.iter().any(|x| x.contains(want)),
            "{want}: found {:?}",
            v.violations
        );
    }
}

#[test]
fn a_history_survives_its_jsonl() {
    let r = Recorder::default();
    r.record(
        "p1",
        Type::Invoke,
        "sync",
        Value {
            doc: "doc_a".into(),
            op_id: "op_1".into(),
            seq: None,
            epoch: None,
        },
    );
    r.record(
        "p1",
        Type::Ok,
        "sync",
        Value {
            doc: "doc_a".into(),
            op_id: "op_1".into(),
            seq: Some(1),
            epoch: Some(3),
        },
    );
    let mut out = Vec::new();
    r.write_jsonl(&mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.lines().next().unwrap().contains("\"type\":\"invoke\""),
        "{text}"
    );
    assert_eq!(read_jsonl(&text).unwrap(), r.events());
}
