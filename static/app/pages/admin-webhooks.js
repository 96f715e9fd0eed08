// Admin › Webhooks (PROTOCOL §11): make a webhook (a receiver's URL and its signing secret),
// see where each stands — delivering, retrying since when, or paused and why — and its recent
// attempts; resume a paused one, delete one. An admin's webhook reaches every document.

import { describeError, seg } from '../api.js';
import { h, replaceChildren } from '../ui/dom.js';
import { confirmDialog } from '../ui/dialog.js';
import { shortDate } from '../ui/secret.js';
import { listLoader } from '../ui/states.js';
import { toast } from '../ui/toast.js';

/**
 * @typedef {{id: string, createdBy: string, createdByName: string|null, url: string, events: string[], docIds: string[]|null,
 *   createdAt: number, cursor: string, state: 'active'|'paused', pausedAt: number|null,
 *   pausedReason: string|null, pendingDelivery: string|null, attempts: number,
 *   failingSince: number|null, nextAttemptAt: number|null, deliveredAt: number|null}} Webhook
 * @typedef {{deliveryId: string, attempt: number, at: number, entries: number, cursor: string,
 *   outcome: 'delivered'|'failed'|'paused'|'dropped', status: number|null, error: string|null, ms: number}} Delivery
 */

/** A random secret: 32 bytes as hex. */
export function randomSecret() {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * One line on where a webhook stands.
 * @param {Webhook} w
 */
export function standing(w) {
  if (w.state === 'paused') return `Paused ${w.pausedAt ? shortDate(w.pausedAt) : ''}: ${w.pausedReason ?? 'no reason given'}`;
  if (w.failingSince != null) {
    const next = w.nextAttemptAt ? `, next try ${shortDate(w.nextAttemptAt)}` : '';
    return `Retrying since ${shortDate(w.failingSince)} (${w.attempts} failed attempt${w.attempts === 1 ? '' : 's'}${next})`;
  }
  return w.deliveredAt ? `Delivering · last delivery ${shortDate(w.deliveredAt)}` : 'Delivering · nothing sent yet';
}

/**
 * @param {HTMLElement} body
 * @param {{api: import('../api.js').Api}} ctx
 */
export function renderWebhooks(body, ctx) {
  const url = h('input', { class: 'input', id: 'webhook-url', type: 'url', placeholder: 'https://example.com/docsync-hook', autocomplete: 'off', required: true });
  const secret = h('input', { class: 'input mono', id: 'webhook-secret', autocomplete: 'off', spellcheck: 'false', value: randomSecret() });
  const fresh = h('button', { type: 'button', class: 'btn', id: 'webhook-secret-new' }, 'New secret');
  fresh.addEventListener('click', () => { secret.value = randomSecret(); });
  const make = h('button', { type: 'submit', class: 'btn btn-primary', id: 'webhook-make' }, 'Make webhook');
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true, id: 'webhooks-error' });
  const form = h('form', { class: 'admin-form', novalidate: true, id: 'webhook-new' },
    h('div', { class: 'field field-wide' }, h('label', { class: 'label', for: 'webhook-url' }, 'Receiver URL'), url),
    h('div', { class: 'field field-wide' }, h('label', { class: 'label', for: 'webhook-secret' }, 'Signing secret (copy it now: it is not shown again)'),
      h('div', { class: 'input-row' }, secret, fresh)),
    h('div', { class: 'token-submit' }, make));
  const list = h('ul', { class: 'share-list admin-list', id: 'webhooks', 'aria-busy': 'true' });
  /** @type {() => Promise<void>} */
  const load = listLoader(list, error,
    async () => /** @type {{webhooks: Webhook[]}} */ (await ctx.api.get('/webhooks')).webhooks,
    (w) => webhookRow(ctx, w, load),
    () => h('li', { class: 'share-empty muted' }, 'No webhooks yet.'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    error.hidden = true;
    if (!/^https?:\/\/\S+$/.test(url.value.trim())) {
      error.textContent = 'Receiver URL: an address starting with https:// or http://.';
      error.hidden = false;
      url.focus();
      return;
    }
    make.disabled = true;
    try {
      await ctx.api.post('/webhooks', { url: url.value.trim(), events: ['ops'], secret: secret.value });
      toast('Webhook made: it delivers every change from now on.');
      url.value = '';
      secret.value = randomSecret();
      load();
    } catch (e) {
      error.textContent = describeError(e);
      error.hidden = false;
    } finally {
      make.disabled = false;
    }
  });
  replaceChildren(body,
    h('p', { class: 'muted small' }, 'A webhook POSTs every change to a receiver, in order, signed with its secret (',
      h('code', null, 'X-Docsync-Signature: sha256=…'), '). A receiver that fails is retried for a day, then the webhook pauses until you resume it.'),
    form, error, list);
  load();
  return {};
}

/** @param {{api: import('../api.js').Api}} ctx @param {Webhook} w @param {() => void} reload */
function webhookRow(ctx, w, reload) {
  const paused = w.state === 'paused';
  const failing = !paused && w.failingSince != null;
  const badge = paused ? ['Paused', 'badge-danger'] : failing ? ['Retrying', 'badge-warning'] : ['Active', 'badge-editor'];
  const log = h('div', { class: 'webhook-log', hidden: true });
  const show = h('button', { type: 'button', class: 'btn btn-small', 'aria-expanded': 'false' }, 'Deliveries');
  show.addEventListener('click', async () => {
    const open = log.hidden;
    log.hidden = !open;
    show.setAttribute('aria-expanded', String(open));
    if (open) await loadLog(ctx, w, log);
  });
  const resume = paused ? h('button', { type: 'button', class: 'btn btn-small btn-primary' }, 'Resume') : null;
  resume?.addEventListener('click', async () => {
    try {
      await ctx.api.post(`/webhooks/${seg(w.id)}/resume`, {});
      toast('Webhook resumed: the waiting delivery goes first.');
    } catch (e) {
      toast(describeError(e), { kind: 'error' });
    }
    reload();
  });
  const del = h('button', { type: 'button', class: 'btn btn-small' }, 'Delete');
  del.addEventListener('click', async () => {
    if (!(await confirmDialog({ title: 'Delete this webhook?', message: `Nothing more is sent to ${w.url}. Its delivery log goes too.`, confirmLabel: 'Delete', danger: true }))) return;
    try {
      await ctx.api.del(`/webhooks/${seg(w.id)}`);
      toast('Webhook deleted.');
    } catch (e) {
      toast(describeError(e), { kind: 'error' });
    }
    reload();
  });
  const scope = w.docIds ? `${w.docIds.length} document${w.docIds.length === 1 ? '' : 's'}` : "its maker's documents (every one, for an admin)";
  return h('li', { class: 'share-row webhook-row', dataset: { webhook: w.id, state: w.state } },
    h('span', { class: 'share-who' },
      h('span', { class: 'share-name' }, h('code', { class: 'webhook-url' }, w.url), ' ', h('span', { class: `badge ${badge[1]}` }, badge[0])),
      h('span', { class: `small ${paused ? 'webhook-paused' : 'muted'}`, dataset: { standing: '' } }, standing(w)),
      h('span', { class: 'small muted' }, `${w.events.join(', ')} · ${scope} · at feed position ${w.cursor} · made by ${w.createdByName ?? 'a removed person'} on ${shortDate(w.createdAt)}`)),
    h('span', { class: 'row-actions' }, show, resume, del),
    log);
}

/** @param {{api: import('../api.js').Api}} ctx @param {Webhook} w @param {HTMLElement} into */
async function loadLog(ctx, w, into) {
  try {
    const { deliveries } = /** @type {{deliveries: Delivery[]}} */ (await ctx.api.get(`/webhooks/${seg(w.id)}/deliveries?limit=50`));
    if (!deliveries.length) {
      replaceChildren(into, h('p', { class: 'small muted' }, 'No attempts yet.'));
      return;
    }
    replaceChildren(into, h('div', { class: 'audit-scroll' }, h('table', { class: 'audit-table webhook-deliveries' },
      h('thead', null, h('tr', null, ...['When', 'Delivery', 'Attempt', 'Entries', 'Outcome', 'Answer', 'Took'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', null, ...deliveries.map((d) => h('tr', { class: d.outcome === 'delivered' ? undefined : 'audit-failed', dataset: { outcome: d.outcome } },
        h('td', { class: 'nowrap' }, shortDate(d.at)),
        h('td', null, h('code', { title: d.deliveryId }, d.deliveryId.slice(-8))),
        h('td', { class: 'num' }, String(d.attempt)),
        h('td', { class: 'num' }, String(d.entries)),
        h('td', null, d.outcome),
        h('td', { class: 'small' }, answer(d)),
        h('td', { class: 'num nowrap' }, `${d.ms} ms`)))))));
  } catch (e) {
    replaceChildren(into, h('p', { class: 'form-error', role: 'alert' }, describeError(e)));
  }
}

/**
 * What the receiver answered, in a few words (the status alone when the error only says it).
 * @param {Delivery} d
 */
export function answer(d) {
  if (d.outcome === 'delivered') return String(d.status ?? '');
  const said = d.error ?? '';
  if (d.status == null) return said || '—';
  const rest = said.replace(/^the receiver answered \d{3}( [^:]*)?:? ?/, '');
  return rest ? `${d.status} — ${rest}` : `${d.status}${said.match(/^the receiver answered \d{3}( [^:]*)/)?.[1] ?? ''}`;
}
