//! Order keys for siblings in the outline: strings that sort by plain byte comparison (so
//! SQL `ORDER BY` works) and always leave room between two neighbours. Byte-identical to the
//! npm `fractional-indexing` package the browser uses, pinned by `tests/vectors/order-keys.json`.

/// The package's base-62 alphabet; ascending in ASCII, so digit order and
/// byte order agree.
const DIGITS: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const ZERO: u8 = b'0';
const MAX_DIGIT: u8 = b'z';

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OrderKeyError {
    #[error("invalid order key {0:?}")]
    Invalid(String),
    #[error("order keys out of order: {0:?} >= {1:?}")]
    OutOfOrder(String, String),
}

fn digit_value(c: u8) -> Option<usize> {
    match c {
        b'0'..=b'9' => Some((c - b'0') as usize),
        b'A'..=b'Z' => Some((c - b'A') as usize + 10),
        b'a'..=b'z' => Some((c - b'a') as usize + 36),
        _ => None,
    }
}

/// A key is an "integer" (a head letter, then digits) plus an optional fraction; the head
/// carries the integer's length so that longer integers still sort correctly.
/// Lowercase heads are non-negative integers that grow longer as they grow;
/// uppercase heads are negative ones that grow longer as they shrink. "a" and
/// "Z" both mean two characters (head + one digit), so "Zz" < "a0" is adjacent.
fn integer_length(head: u8) -> Option<usize> {
    match head {
        b'a'..=b'z' => Some((head - b'a') as usize + 2),
        b'A'..=b'Z' => Some((b'Z' - head) as usize + 2),
        _ => None,
    }
}

fn is_smallest_integer(int: &[u8]) -> bool {
    int.len() == 27 && int[0] == b'A' && int[1..].iter().all(|&c| c == ZERO)
}

fn invalid(key: &[u8]) -> OrderKeyError {
    OrderKeyError::Invalid(String::from_utf8_lossy(key).into_owned())
}

/// Splits a key into its integer part and fraction. Callers validate first, so
/// this only re-derives what validation already proved possible.
fn split(key: &[u8]) -> (&[u8], &[u8]) {
    let len = integer_length(key[0]).expect("validated key");
    key.split_at(len)
}

/// Accepts exactly the keys the npm package accepts, except that it also
/// insists on base-62 characters: the package never checks the alphabet and
/// then computes nonsense for such keys, while we get them from the network.
pub fn validate_order_key(key: &str) -> Result<(), OrderKeyError> {
    let bytes = key.as_bytes();
    let err = || OrderKeyError::Invalid(key.to_owned());
    let head = *bytes.first().ok_or_else(err)?;
    let int_len = integer_length(head).ok_or_else(err)?;
    if bytes.len() < int_len || bytes[1..].iter().any(|&c| digit_value(c).is_none()) {
        return Err(err());
    }
    // The smallest integer has nothing below it to decrement to, so the
    // package reserves it: keys before it are fractions of it instead.
    if bytes == b"A00000000000000000000000000" {
        return Err(err());
    }
    // A trailing zero would make two spellings of one position ("a0V" and
    // "a0V0"), and there would be no key strictly between them.
    if bytes.len() > int_len && bytes.last() == Some(&ZERO) {
        return Err(err());
    }
    Ok(())
}

/// A string strictly between fractions `a` and `b` (`None` = 1.0), assuming
/// `a < b` and neither ends in zero. Written as a loop rather than the
/// package's recursion so long runs of 'z' cannot blow the stack.
fn midpoint(mut a: &[u8], mut b: Option<&[u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        if let Some(bs) = b {
            // A missing digit of `a` counts as zero, so "" vs "01" shares "0".
            let n = bs
                .iter()
                .enumerate()
                .take_while(|&(i, &c)| a.get(i).copied().unwrap_or(ZERO) == c)
                .count();
            out.extend_from_slice(&bs[..n]);
            a = a.get(n..).unwrap_or(&[]);
            b = Some(&bs[n..]);
        }
        let da = a.first().map_or(0, |&c| digit_value(c).expect("validated"));
        let db = match b {
            Some(bs) => digit_value(bs[0]).expect("validated"),
            None => DIGITS.len(),
        };
        if db > da + 1 {
            // JS Math.round rounds .5 up; matching it is what keeps keys identical.
            out.push(DIGITS[(da + db).div_ceil(2)]);
            return out;
        }
        match b {
            // `b` truncated to its first digit is already above `a` and below `b`.
            Some(bs) if bs.len() > 1 => {
                out.push(bs[0]);
                return out;
            }
            // No room at this digit: keep `a`'s digit and go one place deeper,
            // where the remaining upper bound is effectively 1.0.
            _ => {
                out.push(DIGITS[da]);
                a = a.get(1..).unwrap_or(&[]);
                b = None;
            }
        }
    }
}

/// `None` past the largest integer ("z" + 26 'z's), where callers fall back to
/// fractions.
fn increment_integer(int: &[u8]) -> Option<Vec<u8>> {
    let mut digits = int[1..].to_vec();
    for d in digits.iter_mut().rev() {
        if *d == MAX_DIGIT {
            *d = ZERO;
        } else {
            *d = DIGITS[digit_value(*d).expect("validated") + 1];
            return Some([&[int[0]], &digits[..]].concat());
        }
    }
    // Every digit overflowed: the head moves up and the length changes with it.
    let head = match int[0] {
        b'Z' => return Some(b"a0".to_vec()),
        b'z' => return None,
        h => h + 1,
    };
    if head > b'a' {
        digits.push(ZERO);
    } else {
        digits.pop();
    }
    Some([&[head], &digits[..]].concat())
}

/// `None` below the smallest integer; mirrors `increment_integer`.
fn decrement_integer(int: &[u8]) -> Option<Vec<u8>> {
    let mut digits = int[1..].to_vec();
    for d in digits.iter_mut().rev() {
        if *d == ZERO {
            *d = MAX_DIGIT;
        } else {
            *d = DIGITS[digit_value(*d).expect("validated") - 1];
            return Some([&[int[0]], &digits[..]].concat());
        }
    }
    let head = match int[0] {
        b'a' => return Some(b"Zz".to_vec()),
        b'A' => return None,
        h => h - 1,
    };
    if head < b'Z' {
        digits.push(MAX_DIGIT);
    } else {
        digits.pop();
    }
    Some([&[head], &digits[..]].concat())
}

fn into_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).expect("order keys are ASCII")
}

/// `generateKeyBetween(a, b)`: a key strictly between `a` and `b`, where `None`
/// means the start or end of the list.
///
/// Like the package, `key_between(None, Some("A00000000000000000000000001"))`
/// returns the reserved smallest integer, which is itself not a valid key.
pub fn key_between(a: Option<&str>, b: Option<&str>) -> Result<String, OrderKeyError> {
    if let Some(a) = a {
        validate_order_key(a)?;
    }
    if let Some(b) = b {
        validate_order_key(b)?;
    }
    let (a, b) = (a.map(str::as_bytes), b.map(str::as_bytes));
    match (a, b) {
        (Some(a), Some(b)) if a >= b => Err(OrderKeyError::OutOfOrder(
            into_string(a.to_vec()),
            into_string(b.to_vec()),
        )),
        (None, None) => Ok("a0".to_owned()),
        (None, Some(b)) => {
            let (ib, fb) = split(b);
            if is_smallest_integer(ib) {
                return Ok(into_string([ib, &midpoint(&[], Some(fb))].concat()));
            }
            // Dropping the fraction gives a shorter key just below `b`.
            if !fb.is_empty() {
                return Ok(into_string(ib.to_vec()));
            }
            decrement_integer(ib)
                .map(into_string)
                .ok_or_else(|| invalid(b))
        }
        (Some(a), None) => {
            let (ia, fa) = split(a);
            Ok(into_string(
                increment_integer(ia).unwrap_or_else(|| [ia, &midpoint(fa, None)].concat()),
            ))
        }
        (Some(a), Some(b)) => {
            let (ia, fa) = split(a);
            let (ib, fb) = split(b);
            if ia == ib {
                return Ok(into_string([ia, &midpoint(fa, Some(fb))].concat()));
            }
            // Prefer the next integer when it fits: it is short and fraction-free.
            let next = increment_integer(ia).ok_or_else(|| invalid(a))?;
            if next.as_slice() < b {
                return Ok(into_string(next));
            }
            Ok(into_string([ia, &midpoint(fa, None)].concat()))
        }
    }
}

/// `generateNKeysBetween(a, b, n)`: `n` sorted keys strictly between `a` and
/// `b`. Matches the package even where it is lenient: `n == 0` returns an empty
/// list without looking at `a` and `b`.
pub fn n_keys_between(
    a: Option<&str>,
    b: Option<&str>,
    n: usize,
) -> Result<Vec<String>, OrderKeyError> {
    match n {
        0 => return Ok(Vec::new()),
        1 => return Ok(vec![key_between(a, b)?]),
        _ => {}
    }
    match (a, b) {
        // Open-ended ranges step integer by integer, keeping keys short.
        (_, None) => {
            let mut keys = vec![key_between(a, None)?];
            for _ in 1..n {
                let next = key_between(keys.last().map(String::as_str), None)?;
                keys.push(next);
            }
            Ok(keys)
        }
        (None, Some(_)) => {
            let mut keys = vec![key_between(None, b)?];
            for _ in 1..n {
                let next = key_between(None, keys.last().map(String::as_str))?;
                keys.push(next);
            }
            keys.reverse();
            Ok(keys)
        }
        // Bisecting keeps every key's length logarithmic in `n`, instead of
        // each key being one digit longer than the last.
        (Some(_), Some(_)) => {
            let mid = n / 2;
            let c = key_between(a, b)?;
            let mut keys = n_keys_between(a, Some(&c), mid)?;
            keys.push(c.clone());
            keys.extend(n_keys_between(Some(&c), b, n - mid - 1)?);
            Ok(keys)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::Value;

    const VECTORS: &str = include_str!("../../../tests/vectors/order-keys.json");

    fn vectors() -> Value {
        serde_json::from_str(VECTORS).expect("order-keys.json parses")
    }

    fn opt_str(v: &Value) -> Option<&str> {
        match v {
            Value::Null => None,
            Value::String(s) => Some(s),
            other => panic!("expected string or null, got {other}"),
        }
    }

    #[test]
    fn documented_examples() {
        assert_eq!(key_between(None, None).unwrap(), "a0");
        assert_eq!(key_between(Some("a0"), None).unwrap(), "a1");
        assert_eq!(key_between(Some("a0"), Some("a1")).unwrap(), "a0V");
        assert_eq!(key_between(None, Some("a0")).unwrap(), "Zz");
    }

    #[test]
    fn between_vectors_match_npm() {
        let v = vectors();
        let cases = v["between"].as_array().unwrap();
        assert!(cases.len() > 100, "suspiciously few vectors");
        for case in cases {
            let (a, b) = (opt_str(&case[0]), opt_str(&case[1]));
            let got = key_between(a, b);
            match opt_str(&case[2]) {
                Some(want) => assert_eq!(got.as_deref(), Ok(want), "between({a:?}, {b:?})"),
                None => assert!(got.is_err(), "between({a:?}, {b:?}) = {got:?}, npm throws"),
            }
        }
    }

    #[test]
    fn n_between_vectors_match_npm() {
        let v = vectors();
        for case in v["nBetween"].as_array().unwrap() {
            let (a, b) = (opt_str(&case[0]), opt_str(&case[1]));
            let n = case[2].as_u64().unwrap() as usize;
            let got = n_keys_between(a, b, n);
            match &case[3] {
                Value::Null => assert!(got.is_err(), "n({a:?}, {b:?}, {n}) = {got:?}, npm throws"),
                want => {
                    let want: Vec<String> = serde_json::from_value(want.clone()).unwrap();
                    assert_eq!(got, Ok(want), "n({a:?}, {b:?}, {n})");
                }
            }
        }
    }

    #[test]
    fn invalid_vectors_are_rejected() {
        let v = vectors();
        for key in v["invalid"].as_array().unwrap() {
            let key = key.as_str().unwrap();
            assert!(validate_order_key(key).is_err(), "{key:?} accepted");
            assert!(
                key_between(Some(key), None).is_err(),
                "{key:?} as lower bound"
            );
            assert!(
                key_between(None, Some(key)).is_err(),
                "{key:?} as upper bound"
            );
        }
    }

    #[test]
    fn rejects_characters_outside_base62() {
        for key in ["a0 ", "a!", "a0é", "a0~", "\u{0}a0"] {
            assert!(validate_order_key(key).is_err(), "{key:?} accepted");
        }
    }

    #[test]
    fn out_of_order_reports_both_keys() {
        assert_eq!(
            key_between(Some("a1"), Some("a0")),
            Err(OrderKeyError::OutOfOrder("a1".into(), "a0".into()))
        );
    }

    #[test]
    fn long_runs_of_max_digits_do_not_recurse() {
        let a = format!("{}{}", "z".repeat(27), "z".repeat(200_000));
        let k = key_between(Some(&a), None).unwrap();
        assert!(k > a);
        assert_eq!(k.len(), a.len() + 1);
    }

    fn digit() -> impl Strategy<Value = char> {
        // Biased towards the extremes, where carries and head changes happen.
        prop_oneof![
            Just('0'),
            Just('z'),
            proptest::sample::select(DIGITS.to_vec()).prop_map(char::from),
        ]
    }

    fn fraction() -> impl Strategy<Value = String> {
        (proptest::collection::vec(digit(), 0..6), 1..DIGITS.len()).prop_map(|(ds, last)| {
            let mut s: String = ds.into_iter().collect();
            s.push(char::from(DIGITS[last]));
            s
        })
    }

    fn integer() -> impl Strategy<Value = String> {
        let head = prop_oneof![
            proptest::sample::select(b"YZabc".to_vec()),
            proptest::sample::select(DIGITS[10..].to_vec()),
        ];
        head.prop_flat_map(|h| {
            let len = integer_length(h).unwrap() - 1;
            proptest::collection::vec(digit(), len)
                .prop_map(move |ds| std::iter::once(char::from(h)).chain(ds).collect::<String>())
        })
    }

    fn valid_key() -> impl Strategy<Value = String> {
        (integer(), proptest::option::of(fraction()))
            .prop_map(|(i, f)| i + &f.unwrap_or_default())
            .prop_filter("smallest integer is reserved", |k| {
                validate_order_key(k).is_ok()
            })
    }

    /// Independent keys mostly differ in their integer part, so also derive
    /// `b` from `a` to exercise shared integers and shared prefixes.
    fn key_pair() -> impl Strategy<Value = (String, String)> {
        prop_oneof![
            (valid_key(), valid_key()),
            (valid_key(), fraction()).prop_map(|(a, f)| (a.clone(), a + &f)),
            (valid_key(), fraction()).prop_map(|(a, f)| {
                let int = split(a.as_bytes()).0.to_vec();
                (a, into_string(int) + &f)
            }),
        ]
        .prop_filter_map("need two distinct valid keys", |(x, y)| {
            validate_order_key(&y).ok()?;
            match x.cmp(&y) {
                std::cmp::Ordering::Less => Some((x, y)),
                std::cmp::Ordering::Greater => Some((y, x)),
                std::cmp::Ordering::Equal => None,
            }
        })
    }

    proptest! {
        #[test]
        fn key_between_is_strictly_between((a, b) in key_pair()) {
            let k = key_between(Some(&a), Some(&b)).unwrap();
            prop_assert!(a < k && k < b, "{a:?} < {k:?} < {b:?}");
            prop_assert!(validate_order_key(&k).is_ok(), "{k:?} invalid");
        }
    }
}
