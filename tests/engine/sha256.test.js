// @ts-check
// sha256.js against the FIPS 180-4 examples and against node:crypto over seeded random inputs
// (every padding boundary, multi-byte UTF-8), since a wrong hash mints wrong conflict-copy IDs.
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { sha256Bytes, sha256Hex } from '../../static/engine/sha256.js';
import { mulberry32, helpers } from './prng.js';

const nodeHex = (/** @type {string|Uint8Array} */ x) => createHash('sha256').update(x).digest('hex');

describe('sha256', () => {
  it('known answers', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
  });
  it('every length from 0 to 300 bytes (all padding cases) matches node:crypto', () => {
    const rng = mulberry32(99);
    for (let len = 0; len <= 300; len++) {
      const data = new Uint8Array(len);
      for (let i = 0; i < len; i++) data[i] = Math.floor(rng() * 256);
      expect(Buffer.from(sha256Bytes(data)).toString('hex')).toBe(nodeHex(data));
    }
  });
  it('strings are hashed as UTF-8', () => {
    const { int, pick } = helpers(mulberry32(5));
    const alphabet = ['a', 'Z', '0', ':', 'é', 'ß', '漢', '😀', '\u0000', '_'];
    for (let n = 0; n < 200; n++) {
      let s = '';
      const len = int(90);
      for (let i = 0; i < len; i++) s += pick(alphabet);
      expect(sha256Hex(s)).toBe(nodeHex(s));
    }
    expect(sha256Hex('a'.repeat(1_000_000))).toBe(nodeHex('a'.repeat(1_000_000)));
  });
});
