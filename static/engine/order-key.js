// Order keys for siblings (PROTOCOL §1.1): strings that sort by plain comparison and always
// leave room between two neighbours. Mirrors actors/src/collab/order_key.rs function for
// function, so both sides produce byte-identical keys (pinned by tests/vectors/order-keys.json).

// Base-62 digits in ASCII order, so digit order and string order agree.
const DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const ZERO = '0';
const MAX_DIGIT = 'z';
const SMALLEST_INTEGER = 'A' + '0'.repeat(26);

/** @param {string} c @returns {number} -1 when not a base-62 digit. Mirrors `digit_value`. */
function digitValue(c) {
  const x = c.charCodeAt(0);
  if (x >= 48 && x <= 57) return x - 48;
  if (x >= 65 && x <= 90) return x - 65 + 10;
  if (x >= 97 && x <= 122) return x - 97 + 36;
  return -1;
}

/**
 * Length of the integer part (head included) announced by the head letter; 0 when the head
 * is not a letter. Lowercase heads grow with the value, uppercase heads grow as it shrinks.
 * Mirrors `integer_length`.
 * @param {string} head
 */
function integerLength(head) {
  const x = head.charCodeAt(0);
  if (x >= 97 && x <= 122) return x - 97 + 2;
  if (x >= 65 && x <= 90) return 90 - x + 2;
  return 0;
}

/**
 * True for exactly the keys the Rust side accepts: the npm package's rules plus a base-62
 * alphabet check (keys arrive from the network). Mirrors `validate_order_key`.
 * @param {string} key
 * @returns {boolean}
 */
export function validateOrderKey(key) {
  if (typeof key !== 'string' || key.length === 0) return false;
  const intLen = integerLength(key[0]);
  if (intLen === 0 || key.length < intLen) return false;
  for (let i = 1; i < key.length; i++) if (digitValue(key[i]) < 0) return false;
  // The smallest integer is reserved: keys below it are fractions of it.
  if (key === SMALLEST_INTEGER) return false;
  // A trailing zero would give two spellings of one position.
  if (key.length > intLen && key[key.length - 1] === ZERO) return false;
  return true;
}

/** @param {string} key */
function assertValid(key) {
  if (!validateOrderKey(key)) throw new Error(`invalid order key ${JSON.stringify(key)}`);
}

/**
 * A fraction strictly between `a` and `b` (null = 1.0), given a < b and no trailing zeros.
 * A loop, not recursion, so long runs of 'z' cannot overflow the stack. Mirrors `midpoint`.
 * @param {string} a
 * @param {string|null} b
 */
function midpoint(a, b) {
  let out = '';
  for (;;) {
    if (b !== null) {
      // A missing digit of `a` counts as zero.
      let n = 0;
      while (n < b.length && (n < a.length ? a[n] : ZERO) === b[n]) n++;
      out += b.slice(0, n);
      a = a.slice(n);
      b = b.slice(n);
    }
    const da = a.length > 0 ? digitValue(a[0]) : 0;
    const db = b !== null ? digitValue(b[0]) : DIGITS.length;
    if (db > da + 1) {
      // Rounding .5 up, as JS Math.round does in the package: that keeps keys identical.
      return out + DIGITS[Math.ceil((da + db) / 2)];
    }
    if (b !== null && b.length > 1) {
      // `b` cut to its first digit is already above `a` and below `b`.
      return out + b[0];
    }
    // No room at this digit: keep `a`'s digit and go one place deeper, bound 1.0.
    out += DIGITS[da];
    a = a.slice(1);
    b = null;
  }
}

/** @param {string} int @returns {string|null} null past the largest integer. Mirrors `increment_integer`. */
function incrementInteger(int) {
  const digits = int.slice(1).split('');
  for (let i = digits.length - 1; i >= 0; i--) {
    if (digits[i] === MAX_DIGIT) {
      digits[i] = ZERO;
    } else {
      digits[i] = DIGITS[digitValue(digits[i]) + 1];
      return int[0] + digits.join('');
    }
  }
  // Every digit overflowed: the head moves up and the length changes with it.
  if (int[0] === 'Z') return 'a0';
  if (int[0] === 'z') return null;
  const head = String.fromCharCode(int.charCodeAt(0) + 1);
  if (head > 'a') digits.push(ZERO);
  else digits.pop();
  return head + digits.join('');
}

/** @param {string} int @returns {string|null} null below the smallest integer. Mirrors `decrement_integer`. */
function decrementInteger(int) {
  const digits = int.slice(1).split('');
  for (let i = digits.length - 1; i >= 0; i--) {
    if (digits[i] === ZERO) {
      digits[i] = MAX_DIGIT;
    } else {
      digits[i] = DIGITS[digitValue(digits[i]) - 1];
      return int[0] + digits.join('');
    }
  }
  if (int[0] === 'a') return 'Zz';
  if (int[0] === 'A') return null;
  const head = String.fromCharCode(int.charCodeAt(0) - 1);
  if (head < 'Z') digits.push(MAX_DIGIT);
  else digits.pop();
  return head + digits.join('');
}

/** @param {string} key @returns {[string, string]} integer part and fraction. Mirrors `split`. */
function split(key) {
  const n = integerLength(key[0]);
  return [key.slice(0, n), key.slice(n)];
}

/**
 * A key strictly between `a` and `b` (null = start / end of the list). Throws on an invalid
 * key or when a >= b. Mirrors `key_between` (npm `generateKeyBetween`).
 * @param {string|null} a
 * @param {string|null} b
 * @returns {string}
 */
export function keyBetween(a, b) {
  if (a !== null) assertValid(a);
  if (b !== null) assertValid(b);
  if (a !== null && b !== null && a >= b) {
    throw new Error(`order keys out of order: ${JSON.stringify(a)} >= ${JSON.stringify(b)}`);
  }
  if (a === null && b === null) return 'a0';
  if (a === null) {
    const [ib, fb] = split(/** @type {string} */ (b));
    if (ib === SMALLEST_INTEGER) return ib + midpoint('', fb);
    // Dropping the fraction gives a shorter key just below `b`.
    if (fb.length > 0) return ib;
    const dec = decrementInteger(ib);
    if (dec === null) throw new Error(`invalid order key ${JSON.stringify(b)}`);
    return dec;
  }
  const [ia, fa] = split(a);
  if (b === null) {
    return incrementInteger(ia) ?? ia + midpoint(fa, null);
  }
  const [ib, fb] = split(b);
  if (ia === ib) return ia + midpoint(fa, fb);
  // Prefer the next integer when it fits: short and fraction-free.
  const next = incrementInteger(ia);
  if (next === null) throw new Error(`invalid order key ${JSON.stringify(a)}`);
  if (next < b) return next;
  return ia + midpoint(fa, null);
}

/**
 * `n` sorted keys strictly between `a` and `b`. Like the package (and the Rust side), n = 0
 * returns [] without looking at the bounds. Mirrors `n_keys_between`.
 * @param {string|null} a
 * @param {string|null} b
 * @param {number} n
 * @returns {string[]}
 */
export function nKeysBetween(a, b, n) {
  if (n === 0) return [];
  if (n === 1) return [keyBetween(a, b)];
  if (b === null) {
    // Open-ended ranges step integer by integer, keeping keys short.
    const keys = [keyBetween(a, null)];
    for (let i = 1; i < n; i++) keys.push(keyBetween(keys[keys.length - 1], null));
    return keys;
  }
  if (a === null) {
    const keys = [keyBetween(null, b)];
    for (let i = 1; i < n; i++) keys.push(keyBetween(null, keys[keys.length - 1]));
    return keys.reverse();
  }
  // Bisecting keeps key length logarithmic in n.
  const mid = Math.floor(n / 2);
  const c = keyBetween(a, b);
  return [...nKeysBetween(a, c, mid), c, ...nKeysBetween(c, b, n - mid - 1)];
}
