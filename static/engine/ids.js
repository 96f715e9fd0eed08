// Client-minted IDs (PROTOCOL: "Clients mint block, op and client IDs themselves"): a prefix
// plus a UUID v4 from crypto.randomUUID, so IDs from different tabs and devices never collide
// without any coordination. Pure; no state.

/** @param {string} prefix */
function mint(prefix) {
  return prefix + globalThis.crypto.randomUUID();
}

/** An operation ID: unique per document; a resend with the same ID is applied once. */
export function newOpId() {
  return mint('op_');
}

/** A block ID, chosen by the client that inserts the block. */
export function newBlockId() {
  return mint('blk_');
}

/** A client ID: one per browser tab (the app keeps it in sessionStorage across reloads). */
export function newClientId() {
  return mint('cl_');
}
