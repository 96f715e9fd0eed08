// @ts-check
// A Map-backed stand-in for `localStorage` (one origin's, shared by the "tabs" of a test).

/** @returns {import('../../static/engine/journal.js').StorageLike & {map: Map<string, string>}} */
export function memoryStorage() {
  /** @type {Map<string, string>} */
  const map = new Map();
  return {
    map,
    get length() {
      return map.size;
    },
    key: (i) => [...map.keys()][i] ?? null,
    getItem: (k) => map.get(k) ?? null,
    setItem: (k, v) => void map.set(k, String(v)),
    removeItem: (k) => void map.delete(k),
  };
}
