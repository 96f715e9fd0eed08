// This device's copies of documents (IndexedDB) when someone logs out: on a shared computer
// the next person must not find them. Removing is offered, and on by default, when nothing
// typed here is still waiting for the server; what is waiting is never removed — it stays
// until it has been sent (the next sign-in on this device sends it).

import { openStore, deleteStore } from '../engine/store.js';
import { journalCount } from '../engine/journal.js';
import { forgetRecent } from './recent.js';
import { forgetAllFirstScreens, pageStorage } from './first-screen.js';

/** @typedef {{docs: number, pending: number}} DeviceCopies */

/**
 * What the logout dialog offers for these copies.
 * @param {DeviceCopies} c
 * @returns {{offer: boolean, removeByDefault: boolean, canRemove: boolean, note: string}}
 */
export function logoutChoice(c) {
  if (c.pending > 0) {
    const n = c.pending === 1 ? '1 change' : `${c.pending} changes`;
    return {
      offer: true,
      removeByDefault: false,
      canRemove: false,
      note: `${n} made on this device ${c.pending === 1 ? 'has' : 'have'} not reached the server yet. ` +
        'They stay on this device and are sent the next time you sign in here.',
    };
  }
  if (c.docs === 0) return { offer: false, removeByDefault: false, canRemove: false, note: '' };
  const n = c.docs === 1 ? '1 document' : `${c.docs} documents`;
  return {
    offer: true,
    removeByDefault: true,
    canRemove: true,
    note: `This device keeps copies of ${n} for working offline. Everything is saved on the server.`,
  };
}

/**
 * Documents stored and changes not yet on the server — in IndexedDB, and in the journals of
 * tabs that crashed before IndexedDB committed (merged at the next start of that document).
 * @returns {Promise<DeviceCopies>}
 */
export async function countDeviceCopies() {
  let journaled = 0;
  try {
    journaled = journalCount(globalThis.localStorage ?? null);
  } catch {
    journaled = 0;
  }
  try {
    const store = await openStore({ indexedDB: globalThis.indexedDB });
    try {
      const c = await store.counts();
      return { docs: c.docs, pending: c.pending + journaled };
    } finally {
      store.close();
    }
  } catch {
    return { docs: 0, pending: journaled };
  }
}

/**
 * Removes every document copy and the list of recent documents from this device — unless
 * something is still waiting to be sent (checked again right before deleting).
 * @returns {Promise<boolean>} whether they were removed
 */
export async function removeDeviceCopies() {
  const now = await countDeviceCopies();
  if (now.pending > 0) return false;
  await deleteStore({ indexedDB: globalThis.indexedDB });
  forgetRecent();
  forgetAllFirstScreens(pageStorage());
  return true;
}

