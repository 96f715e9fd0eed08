// @ts-check
// The webhooks admin page's pure parts: a generated secret, a webhook's standing in one line,
// and what a receiver answered in a few words.
import { describe, it, expect } from 'vitest';
import { answer, randomSecret, standing } from '../../static/app/pages/admin-webhooks.js';

/** @returns {import('../../static/app/pages/admin-webhooks.js').Webhook} */
const hook = (/** @type {Partial<import('../../static/app/pages/admin-webhooks.js').Webhook>} */ over = {}) => ({
  id: 'wh_1', createdBy: 'usr_1', createdByName: 'ann', url: 'https://example.com/h', events: ['ops'], docIds: null,
  createdAt: 0, cursor: '7', state: 'active', pausedAt: null, pausedReason: null, pendingDelivery: null,
  attempts: 0, failingSince: null, nextAttemptAt: null, deliveredAt: null, ...over,
});

/** @returns {import('../../static/app/pages/admin-webhooks.js').Delivery} */
const attempt = (/** @type {Partial<import('../../static/app/pages/admin-webhooks.js').Delivery>} */ over = {}) => ({
  deliveryId: 'dlv_1', attempt: 1, at: 0, entries: 1, cursor: '7', outcome: 'failed', status: null, error: null, ms: 3, ...over,
});

describe('randomSecret', () => {
  it('is 64 hex digits, new each time', () => {
    const a = randomSecret();
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(randomSecret()).not.toBe(a);
  });
});

describe('standing', () => {
  it('says why a webhook is paused', () => {
    expect(standing(hook({ state: 'paused', pausedAt: 1, pausedReason: 'the receiver answered 410 Gone' }))).toMatch(/^Paused .*410 Gone$/);
  });
  it('counts failed attempts while retrying', () => {
    expect(standing(hook({ failingSince: 1, attempts: 1 }))).toMatch(/^Retrying since .*\(1 failed attempt\)$/);
    expect(standing(hook({ failingSince: 1, attempts: 3, nextAttemptAt: 2 }))).toMatch(/3 failed attempts, next try /);
  });
  it('says whether anything was sent', () => {
    expect(standing(hook())).toBe('Delivering · nothing sent yet');
    expect(standing(hook({ deliveredAt: 1 }))).toMatch(/^Delivering · last delivery /);
  });
});

describe('answer', () => {
  it('is the status of a delivery', () => {
    expect(answer(attempt({ outcome: 'delivered', status: 204 }))).toBe('204');
  });
  it('keeps the reason but not the words the status already says', () => {
    expect(answer(attempt({ outcome: 'paused', status: 410, error: 'the receiver answered 410 Gone: not retried (fix the receiver, then resume)' })))
      .toBe('410 — not retried (fix the receiver, then resume)');
    expect(answer(attempt({ status: 503, error: 'the receiver answered 503 Service Unavailable' }))).toBe('503 Service Unavailable');
  });
  it('says what happened when nothing answered', () => {
    expect(answer(attempt({ error: 'no answer within 10 s' }))).toBe('no answer within 10 s');
    expect(answer(attempt())).toBe('—');
  });
});
