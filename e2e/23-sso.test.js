// @ts-check
// Scenario 23: single sign-on with OpenID Connect against a real provider the test starts
// (npm's certified `oidc-provider`, with keys the test makes). The provider is down at
// first: the login page says so and password sign-in still works. Then: a first sign-in
// through an invitation link makes the account; signing in again reaches the same account;
// a person of an allowed email domain signs up without an invitation, one of another domain
// is told to ask for one; a tampered `state` and a sign-in finished in another browser are
// refused; an ID token that expired (the server's clock moved past it while the browser was
// on its way back) is refused; a deactivated person is told so.

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';

import Provider from 'oidc-provider';

import { scenario, waitFor, freePort, Server } from './harness.js';

const shots = process.env.E2E_SHOTS;
const SECRET = 'a-client-secret-only-these-tests-know';

/** The provider's people: `x-…` have an email of another domain. @param {string} id */
function claimsOf(id) {
  const domain = id.startsWith('x-') ? 'elsewhere.example' : 'example.com';
  const name = id.replace(/^x-/, '').replace(/^\w/, (c) => c.toUpperCase());
  return { sub: `sub-${id}`, email: `${id}@${domain}`, email_verified: true, name: `${name} Provider`, preferred_username: id };
}

/**
 * The OpenID provider at `issuer`, listening on `port` until stopped.
 * @param {string} issuer @param {number} port @param {string} redirect
 */
function startProvider(issuer, port, redirect) {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'e2e-key', use: 'sig', alg: 'RS256' };
  const provider = new Provider(issuer, {
    clients: [{
      client_id: 'docsync', client_secret: SECRET, redirect_uris: [redirect],
      grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic',
    }],
    jwks: { keys: [jwk] },
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username'] },
    conformIdTokenClaims: false,
    ttl: { IdToken: 60, AccessToken: 60, Session: 3600, Grant: 3600, Interaction: 600 },
    findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => claimsOf(id) }),
  });
  const server = http.createServer(provider.callback());
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

/** Signs in at the provider's own pages (its development login and consent). @param {import('playwright-core').Page} page @param {string} who */
async function atProvider(page, who) {
  await page.locator('input[name=login]').waitFor({ timeout: 10_000 });
  await page.locator('input[name=login]').fill(who);
  await page.locator('input[name=password]').fill('any password');
  await page.locator('button[type=submit]').click();
  // Consent, the first time for this browser.
  const consent = page.locator('button[type=submit]', { hasText: /continue/i });
  if (await consent.count().then((n) => n > 0).catch(() => false)) await consent.click();
}

scenario('23 single sign-on: invitation, second sign-in, domains, tampered state, expiry, provider down', async (h) => {
  const [pport, dport] = [await freePort(), await freePort()];
  const issuer = `http://127.0.0.1:${pport}`;
  const base = `http://127.0.0.1:${dport}`;
  const srv = new Server({ env: {
    DOCSYNC_AUTH__OIDC__ISSUER: issuer,
    DOCSYNC_AUTH__OIDC__CLIENT_ID: 'docsync',
    DOCSYNC_AUTH__OIDC__CLIENT_SECRET: SECRET,
    DOCSYNC_AUTH__OIDC__PUBLIC_URL: base,
    DOCSYNC_AUTH__OIDC__LABEL: 'Example SSO',
    DOCSYNC_AUTH__OIDC__ALLOWED_DOMAINS: 'example.com',
    // The server's movable clock starts now: the provider's tokens carry real times.
    DOCSYNC_TESTING__CLOCK_ORIGIN_MS: String(Date.now()),
  } });
  srv.addr = `127.0.0.1:${dport}`;
  h.servers.push(srv);
  await srv.start();
  const { alice } = await h.users(srv, ['alice']);
  const api = srv.api(alice);

  // The provider is down: the login page says so; the password still works.
  const ctx = await h.context('carla', base);
  const page = await ctx.newPage();
  await page.goto('/login');
  await page.locator('#sso-start').click();
  await waitFor(async () => /cannot be reached/.test((await page.locator('#login-error').textContent()) ?? ''), { message: 'the login page says the provider is down' });
  if (shots) await page.screenshot({ path: `${shots}/sso-provider-down.png` });
  const pw = await h.context('alice-pw', base);
  const alicePage = await pw.newPage();
  await h.loginViaForm(alicePage, alice);

  const provider = await startProvider(issuer, pport, `${base}/auth/oidc/callback`);
  try {
    // A first sign-in through an invitation link makes the account.
    const invite = await api.json('POST', '/api/v1/admin/invites', { expiresInHours: 24, maxUses: 1 });
    await page.goto(invite.link);
    await page.locator('#invite-sso-start').waitFor();
    if (shots) await page.screenshot({ path: `${shots}/sso-invite.png` });
    await page.locator('#invite-sso-start').click();
    await atProvider(page, 'x-carla');
    await waitFor(() => new URL(page.url()).pathname === '/', { timeout: 15_000, message: 'carla is back, signed in' });
    await waitFor(async () => /Carla Provider/.test((await page.locator('#whoami').textContent()) ?? ''), { message: 'named by the provider' });
    const people = (await api.json('GET', '/api/v1/admin/users')).people;
    const carla = people.find((/** @type {any} */ p) => p.name === 'x-carla');
    assert.equal(carla?.signIn, 'sso', JSON.stringify(people));

    // Signing in again reaches the same account (matched by the provider's `sub`).
    await page.goto('/login');
    await page.locator('#logout').click().catch(() => {});
    await ctx.clearCookies({ domain: '127.0.0.1' }).catch(() => ctx.clearCookies());
    await page.goto('/login');
    await page.locator('#sso-start').click();
    await atProvider(page, 'x-carla');
    await waitFor(() => new URL(page.url()).pathname === '/', { timeout: 15_000, message: 'signed in again' });
    const again = (await api.json('GET', '/api/v1/admin/users')).people.filter((/** @type {any} */ p) => p.name.startsWith('x-carla'));
    assert.equal(again.length, 1, 'the same account, not a second one');

    // An allowed domain signs up without an invitation; another domain is told to ask.
    const dan = await (await h.context('dan', base)).newPage();
    await dan.goto('/login');
    await dan.locator('#sso-start').click();
    await atProvider(dan, 'dan');
    await waitFor(() => new URL(dan.url()).pathname === '/', { timeout: 15_000, message: 'dan of example.com is in' });
    const eve = await (await h.context('eve', base)).newPage();
    await eve.goto('/login');
    await eve.locator('#sso-start').click();
    await atProvider(eve, 'x-eve');
    await waitFor(async () => /no account here for you/.test((await eve.locator('#login-error').textContent()) ?? ''), { timeout: 15_000, message: 'eve of another domain is told to ask for an invitation' });
    if (shots) await eve.screenshot({ path: `${shots}/sso-not-invited.png` });

    // A tampered state, and a sign-in finished in a browser that did not begin it.
    await eve.goto(`/auth/oidc/callback?code=whatever&state=tampered`);
    await waitFor(async () => /another browser|already used/.test((await eve.locator('#login-error').textContent()) ?? ''), { message: 'a tampered state is refused' });
    // A sign-in begun in one browser and finished in another (login CSRF): the state is
    // real, but the browser lacks the cookie that began it.
    const starter = await (await h.context('starter', base)).newPage();
    /** @type {string|null} */
    let begun = null;
    starter.on('request', (r) => {
      const u = new URL(r.url());
      if (u.origin === issuer && u.searchParams.get('state')) begun = u.searchParams.get('state');
    });
    await starter.goto('/login');
    await starter.locator('#sso-start').click();
    await starter.locator('input[name=login]').waitFor({ timeout: 10_000 });
    assert.ok(begun, 'the authorization request carried a state');
    await eve.goto(`/auth/oidc/callback?code=stolen&state=${encodeURIComponent(begun ?? '')}`);
    await waitFor(async () => /another browser/.test((await eve.locator('#login-error').textContent()) ?? ''), { message: 'finishing in another browser is refused' });

    // Deactivated: the provider still vouches for carla, docsync does not let her in.
    await api.json('PATCH', `/api/v1/admin/users/${carla.id}`, { active: false });
    const back = await (await h.context('carla-again', base)).newPage();
    await back.goto('/login');
    await back.locator('#sso-start').click();
    await atProvider(back, 'x-carla');
    await waitFor(async () => /deactivated/.test((await back.locator('#login-error').textContent()) ?? ''), { timeout: 15_000, message: 'a deactivated person is told so' });

    // Last, as it moves the server's clock ahead of the provider's: an ID token that has
    // expired by the server's clock when it arrives (the provider's
    // ID tokens live 60 s; the server's clock moves 5 minutes while the person is at the
    // provider — within the sign-in's own 10).
    const late = await (await h.context('late', base)).newPage();
    await late.goto('/login');
    await late.locator('#sso-start').click();
    await late.locator('input[name=login]').waitFor({ timeout: 10_000 });
    await srv.advanceClock(5 * 60_000);
    await atProvider(late, 'dan');
    await waitFor(async () => /could not be verified/.test((await late.locator('#login-error').textContent()) ?? ''), { timeout: 15_000, message: 'an expired ID token is refused' });

    // Every outcome is in the audit log.
    const rows = (await api.json('GET', '/api/v1/admin/audit?action=login')).entries;
    const reasons = rows.filter((/** @type {any} */ r) => r.action === 'login.failed').map((/** @type {any} */ r) => r.detail.reason);
    for (const r of ['not_invited', 'state', 'invalid', 'deactivated']) assert.ok(reasons.includes(r), `${r} in ${JSON.stringify(reasons)}`);
    assert.ok(rows.some((/** @type {any} */ r) => r.action === 'login.ok' && r.detail.method === 'oidc'));
  } finally {
    await new Promise((resolve) => provider.close(() => resolve(undefined)));
  }
});
