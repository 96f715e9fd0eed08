// The document's history panel (PROTOCOL §8): its versions — named ones first, then the
// automatic ones by day — a read-only preview of any version drawn like the outline, the
// changes from that version to now (added, removed, changed word by word, moved), and the
// ways back: "Restore all" and "Restore selected bullets". Restoring is done by the server as
// ordinary ops of this tab (`clientId`), so everyone's open editor shows it live; bullets
// someone is typing in get conflict copies instead of being overwritten.
//
// Invariants: a viewer sees versions and changes but no button that writes; every request's
// failure is said in the panel, never swallowed; a restore is sent with one opIdPrefix and
// retried with the same one, so a lost answer never restores twice.

import { h, replaceChildren } from '../ui/dom.js';
import { formDialog, openModal } from '../ui/dialog.js';
import { describeError } from '../api.js';
import { newOpId } from '../../engine/ids.js';
import { dayLabel, timeLabel, when, words } from './format.js';

/** @typedef {import('../api.js').Api} Api */
/**
 * @typedef {{versionId: string, seq: number, at: number, name?: string, createdBy?: string,
 *   createdByName?: string, auto: boolean, kind: 'auto'|'named'|'restore', blocks: number}} Version
 * @typedef {{id: string, parentId: string|null, orderKey: string, content: string, type: string,
 *   checked: boolean, collapsed?: boolean}} VBlock
 * @typedef {{blockId: string, parentId: string|null, content: string, type: string, checked: boolean, depth: number}} DiffBlock
 * @typedef {{blockId: string, before: string, after: string, words: {op: 'same'|'add'|'del', text: string}[]}} Changed
 * @typedef {{blockId: string, content: string}} Moved
 * @typedef {{added: DiffBlock[], removed: DiffBlock[], changed: Changed[], moved: Moved[], title?: [string, string]}} Diff
 */

/**
 * What a version without a name (or whose name a bullet guest is not shown) is called.
 * @param {Version} v @param {string} suffix
 */
function unnamed(v, suffix) {
  if (v.kind === 'restore') return 'Before a restore';
  return v.kind === 'named' ? `Version${suffix}` : `Automatic${suffix || ' version'}`;
}

/**
 * @param {{api: Api, docId: string, clientId: string, canEdit: boolean, bulletGuest?: boolean,
 *   onRestored?: (summary: string) => void}} o
 */
export function openHistoryPanel(o) {
  const base = `/docs/${encodeURIComponent(o.docId)}/versions`;
  const list = h('div', { class: 'hist-list', role: 'listbox', 'aria-label': 'Versions' });
  const pane = h('div', { class: 'hist-pane', 'aria-live': 'polite' });
  const status = h('p', { class: 'hist-status', role: 'status' });
  // Versions are the whole document's: a bullet guest sees their part of each, unnamed,
  // and may restore it, but names none (the server keeps names and sizes from them).
  const guest = !!o.bulletGuest;
  const nameBtn = o.canEdit && !guest ? h('button', { type: 'button', class: 'btn', id: 'name-version' }, 'Name this version') : null;
  const { dialog } = openModal({
    id: 'history-panel',
    title: 'History',
    description: guest
      ? 'Earlier states of the bullets shared with you. Restoring one changes them for everyone, as edits do; the state before it is kept too.'
      : 'Versions of this document. Restoring one changes the document for everyone, as edits do; the state before it is kept as a version too.',
    content: [h('div', { class: 'hist-top' }, nameBtn, status), h('div', { class: 'hist' }, list, pane)],
  });
  dialog.classList.add('dialog-history');

  /** @type {Version[]} */
  let versions = [];
  /** @type {string|null} */
  let selected = null;

  const say = (/** @type {string} */ msg) => {
    status.textContent = msg;
  };

  async function load() {
    try {
      const r = await o.api.get(base);
      versions = r.versions;
      drawList();
      if (!selected && versions.length) select(sorted()[0].versionId);
      if (!versions.length) replaceChildren(pane, h('p', { class: 'hist-empty' }, 'No versions yet. One is kept automatically soon after the document changes, or name one now.'));
    } catch (e) {
      say(describeError(e));
    }
  }

  /** Named first (newest first), then the automatic ones newest first. */
  const sorted = () => [...versions.filter((v) => !v.auto), ...versions.filter((v) => v.auto)];

  function drawList() {
    const named = versions.filter((v) => !v.auto);
    const auto = versions.filter((v) => v.auto);
    /** @type {Node[]} */
    const out = [];
    if (named.length) {
      out.push(h('h3', { class: 'hist-group' }, 'Named'));
      for (const v of named) out.push(item(v));
    }
    let day = '';
    for (const v of auto) {
      const d = dayLabel(v.at);
      if (d !== day) {
        day = d;
        out.push(h('h3', { class: 'hist-group' }, d));
      }
      out.push(item(v));
    }
    replaceChildren(list, ...out);
  }

  /** @param {Version} v */
  function item(v) {
    const label = v.name ?? unnamed(v, `, ${timeLabel(v.at)}`);
    const by = v.createdByName ? ` · ${v.createdByName}` : '';
    const b = h(
      'button',
      {
        type: 'button',
        class: `hist-item${v.versionId === selected ? ' is-selected' : ''}`,
        role: 'option',
        'aria-selected': v.versionId === selected ? 'true' : 'false',
        dataset: { versionId: v.versionId },
        onclick: () => select(v.versionId),
      },
      h('span', { class: 'hist-item-name' }, label),
      h('span', { class: 'hist-item-meta' }, guest ? when(v.at) : `${when(v.at)}${by} · ${v.blocks === 1 ? '1 bullet' : `${v.blocks} bullets`}`),
    );
    b.addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
      e.preventDefault();
      const items = /** @type {HTMLElement[]} */ ([...list.querySelectorAll('.hist-item')]);
      const i = items.indexOf(b) + (e.key === 'ArrowDown' ? 1 : -1);
      items[Math.max(0, Math.min(items.length - 1, i))]?.focus();
    });
    return b;
  }

  /** @param {string} id */
  async function select(id) {
    selected = id;
    for (const el of list.querySelectorAll('.hist-item')) {
      const on = /** @type {HTMLElement} */ (el).dataset.versionId === id;
      el.classList.toggle('is-selected', on);
      el.setAttribute('aria-selected', on ? 'true' : 'false');
    }
    const v = versions.find((x) => x.versionId === id);
    if (!v) return;
    replaceChildren(pane, h('p', { class: 'hist-empty' }, 'Loading…'));
    try {
      const [body, diff] = await Promise.all([o.api.get(`${base}/${id}`), o.api.get(`${base}/${id}/diff?to=head`)]);
      if (selected !== id) return;
      drawVersion(v, body, diff);
    } catch (e) {
      replaceChildren(pane, h('p', { class: 'hist-error' }, describeError(e)));
    }
  }

  /**
   * @param {Version} v
   * @param {{title: string, blocks: VBlock[]}} body
   * @param {Diff} diff
   */
  function drawVersion(v, body, diff) {
    const changes = diff.added.length + diff.removed.length + diff.changed.length + diff.moved.length + (diff.title ? 1 : 0);
    const previewTab = h('button', { type: 'button', class: 'hist-tab', role: 'tab', 'aria-selected': 'false', id: 'hist-tab-preview' }, 'Preview');
    const diffTab = h('button', { type: 'button', class: 'hist-tab', role: 'tab', 'aria-selected': 'true', id: 'hist-tab-changes' }, changes ? `Changes since (${changes})` : 'Changes since');
    const tabs = h('div', { class: 'hist-tabs', role: 'tablist', 'aria-label': 'Show' }, diffTab, previewTab);
    const preview = h('div', { class: 'hist-preview', role: 'tabpanel', 'aria-labelledby': 'hist-tab-preview', hidden: true }, outline(body));
    const { panel: changesPanel, picked } = changesView(diff, o.canEdit);
    const show = (/** @type {'preview'|'changes'} */ which) => {
      preview.hidden = which !== 'preview';
      changesPanel.hidden = which !== 'changes';
      previewTab.setAttribute('aria-selected', String(which === 'preview'));
      diffTab.setAttribute('aria-selected', String(which === 'changes'));
    };
    previewTab.addEventListener('click', () => show('preview'));
    diffTab.addEventListener('click', () => show('changes'));
    /** @type {Node[]} */
    const actions = [];
    if (o.canEdit) {
      const all = h('button', { type: 'button', class: 'btn btn-primary', id: 'restore-all', disabled: changes === 0 }, 'Restore all');
      all.addEventListener('click', () => void restore(v, null, all));
      const some = h('button', { type: 'button', class: 'btn', id: 'restore-selected', disabled: true }, 'Restore selected bullets');
      some.addEventListener('click', () => void restore(v, [...picked], some));
      changesPanel.addEventListener('change', () => {
        some.disabled = picked.size === 0;
        some.textContent = picked.size ? `Restore ${picked.size === 1 ? '1 bullet' : `${picked.size} bullets`}` : 'Restore selected bullets';
      });
      const rename = h('button', { type: 'button', class: 'btn', id: 'rename-version' }, v.auto ? 'Name it' : 'Rename');
      rename.addEventListener('click', () => void nameVersion(v));
      actions.push(...(guest ? [] : [rename]), some, all);
    }
    const title = v.name ?? unnamed(v, '');
    replaceChildren(
      pane,
      h('div', { class: 'hist-head' }, h('h3', { class: 'hist-title' }, title), h('span', { class: 'hist-when' }, when(v.at))),
      tabs,
      changesPanel,
      preview,
      actions.length ? h('div', { class: 'hist-actions' }, ...actions) : null,
    );
  }

  /** Restores all (ids null) or the chosen bullets; one opIdPrefix for every attempt. */
  async function restore(/** @type {Version} */ v, /** @type {string[]|null} */ ids, /** @type {HTMLButtonElement} */ btn) {
    const prefix = newOpId();
    btn.disabled = true;
    say('Restoring…');
    const body = { clientId: o.clientId, opIdPrefix: prefix, ...(ids ? { blockIds: ids } : {}) };
    for (let attempt = 0; ; attempt++) {
      try {
        const r = await o.api.post(`${base}/${v.versionId}/restore`, body);
        const parts = [r.applied ? `${r.applied === 1 ? '1 change' : `${r.applied} changes`} made` : 'Nothing to change'];
        if (r.conflicts) parts.push(`${r.conflicts === 1 ? '1 bullet' : `${r.conflicts} bullets`} someone is typing in kept as conflict copies`);
        if (r.rejected) parts.push(`${r.rejected} not possible (locked or moved meanwhile)`);
        const summary = `Restored “${v.name ?? when(v.at)}”: ${parts.join('; ')}.`;
        say(summary);
        o.onRestored?.(summary);
        await load();
        // What is left to restore is now measured against the restored document.
        if (selected === v.versionId) await select(v.versionId);
        return;
      } catch (e) {
        const retry = /** @type {any} */ (e)?.status === 0 || /** @type {any} */ (e)?.status >= 500;
        if (!retry || attempt >= 2) {
          say(describeError(e));
          btn.disabled = false;
          return;
        }
      }
    }
  }

  /** @param {Version|null} v null: name the document as it is now */
  async function nameVersion(v) {
    /** @type {Version|null} */
    const saved = await formDialog({
      id: 'version-name-dialog',
      title: v && !v.auto ? 'Rename version' : 'Name this version',
      description: v ? undefined : 'Keeps the document as it is now until an editor deletes the version.',
      fields: [{ name: 'name', label: 'Name', value: v?.name ?? '', maxLength: 200, required: true }],
      submitLabel: 'Save',
      onSubmit: (values) => (v ? o.api.patch(`${base}/${v.versionId}`, { name: values.name }) : o.api.post(base, { name: values.name })),
    });
    if (!saved) return;
    say(`Saved version “${saved.name}”.`);
    await load();
    await select(saved.versionId);
  }

  nameBtn?.addEventListener('click', () => void nameVersion(null));
  void load();
  return dialog;
}

/**
 * The version's outline, read-only, drawn like the editor: nested bullets, to-dos with their
 * box, headings, code and quotes.
 * @param {{title: string, blocks: VBlock[]}} body
 */
function outline(body) {
  /** @type {Map<string|null, VBlock[]>} */
  const kids = new Map();
  const ids = new Set(body.blocks.map((b) => b.id));
  for (const b of body.blocks) {
    const p = b.parentId && ids.has(b.parentId) ? b.parentId : null;
    if (!kids.has(p)) kids.set(p, []);
    kids.get(p)?.push(b);
  }
  for (const l of kids.values()) l.sort((a, b) => (a.orderKey < b.orderKey ? -1 : a.orderKey > b.orderKey ? 1 : a.id < b.id ? -1 : 1));
  /** @param {string|null} parent @param {number} depth @returns {HTMLUListElement|null} */
  const tree = (parent, depth) => {
    const l = kids.get(parent);
    if (!l || depth > 64) return null;
    return h(
      'ul',
      { class: 'hist-tree' },
      l.map((b) =>
        h(
          'li',
          { class: `hist-node type-${b.type}${b.checked ? ' is-checked' : ''}`, dataset: { blockId: b.id } },
          h('span', { class: 'hist-node-text' }, b.type === 'todo' ? h('span', { class: 'hist-box', 'aria-label': b.checked ? 'done' : 'to do' }, b.checked ? '☑' : '☐') : null, b.content || '\u00a0'),
          tree(b.id, depth + 1),
        ),
      ),
    );
  };
  return h('div', { class: 'hist-doc' }, h('h4', { class: 'hist-doc-title' }, body.title || 'Untitled'), tree(null, 0) ?? h('p', { class: 'hist-empty' }, 'No bullets.'));
}

/**
 * The changes from a version to now, each a line; the version's bullets (removed, changed,
 * moved) can be picked for "Restore selected bullets".
 * @param {Diff} d
 * @param {boolean} pickable
 */
function changesView(d, pickable) {
  /** @type {Set<string>} */
  const picked = new Set();
  /** @param {string} id @param {string} label */
  const pick = (id, label) => {
    if (!pickable) return null;
    const box = h('input', { type: 'checkbox', class: 'hist-pick', 'aria-label': `Restore ${label}`, dataset: { blockId: id } });
    box.addEventListener('change', () => {
      if (box.checked) picked.add(id);
      else picked.delete(id);
    });
    return box;
  };
  /** @type {Node[]} */
  const out = [];
  if (d.title) out.push(h('p', { class: 'hist-change is-title' }, 'Title: ', words([{ op: 'del', text: d.title[0] }, { op: 'add', text: d.title[1] }])));
  /** @param {string} heading @param {Node[]} rows @param {string} cls */
  const section = (heading, rows, cls) => {
    if (rows.length) out.push(h('section', { class: `hist-section ${cls}` }, h('h4', { class: 'hist-section-title' }, `${heading} (${rows.length})`), h('ul', { class: 'hist-changes' }, rows)));
  };
  section(
    'Removed since',
    d.removed.map((b) => h('li', { class: 'hist-change is-removed', dataset: { blockId: b.blockId } }, h('label', { class: 'hist-line' }, pick(b.blockId, b.content), h('del', { dataset: { depth: String(Math.min(b.depth, 8)) } }, b.content || '(empty)')))),
    'removed',
  );
  section(
    'Changed since',
    d.changed.map((c) => h('li', { class: 'hist-change is-changed', dataset: { blockId: c.blockId } }, h('label', { class: 'hist-line' }, pick(c.blockId, c.before), c.words.length ? words(c.words) : h('span', null, c.after, h('em', { class: 'hist-note' }, ' (type or check box changed)'))))),
    'changed',
  );
  section(
    'Moved since',
    d.moved.map((m) => h('li', { class: 'hist-change is-moved', dataset: { blockId: m.blockId } }, h('label', { class: 'hist-line' }, pick(m.blockId, m.content), h('span', null, m.content || '(empty)')))),
    'moved',
  );
  section(
    'Added since',
    d.added.map((b) => h('li', { class: 'hist-change is-added', dataset: { blockId: b.blockId } }, h('ins', { dataset: { depth: String(Math.min(b.depth, 8)) } }, b.content || '(empty)'))),
    'added',
  );
  if (!out.length) out.push(h('p', { class: 'hist-empty' }, 'The document is the same as this version.'));
  const panel = h('div', { class: 'hist-diff', role: 'tabpanel', 'aria-labelledby': 'hist-tab-changes' }, ...out);
  return { panel, picked };
}
