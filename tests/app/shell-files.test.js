// @ts-check
// The service worker caches exactly the files in static/app/shell-files.json: a new module
// that is not listed would silently break offline starts, so every .js/.css file under
// static/app and static/engine must be listed, and every listed file must exist.
import { describe, it, expect } from 'vitest';
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';

const STATIC = join(import.meta.dirname, '..', '..', 'static');
const list = JSON.parse(readFileSync(join(STATIC, 'app', 'shell-files.json'), 'utf8'));

/** @param {string} dir @returns {string[]} */
function walk(dir) {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

describe('shell-files.json', () => {
  it('lists every .js and .css file of static/app and static/engine', () => {
    const onDisk = [...walk(join(STATIC, 'app')), ...walk(join(STATIC, 'engine'))]
      .filter((p) => /\.(js|css)$/.test(p))
      .map((p) => `/${relative(STATIC, p).split('\\').join('/')}`);
    const missing = onDisk.filter((f) => !list.files.includes(f));
    expect(missing, `add these to static/app/shell-files.json so they work offline: ${missing.join(', ')}`).toEqual([]);
  });

  it('lists only files that exist, once each, as absolute paths', () => {
    for (const f of list.files) {
      expect(f.startsWith('/'), f).toBe(true);
      expect(existsSync(join(STATIC, f)), `${f} is listed but does not exist`).toBe(true);
    }
    expect(new Set(list.files).size).toBe(list.files.length);
  });

  it('includes the page, the manifest, the stylesheet and the entry module', () => {
    for (const f of ['/index.html', '/manifest.webmanifest', '/app/app.css', '/app/main.js', '/app/icon.svg']) {
      expect(list.files).toContain(f);
    }
  });

  it('does not list the service worker itself or anything under /api', () => {
    expect(list.files).not.toContain('/sw.js');
    expect(list.files.some((/** @type {string} */ f) => f.startsWith('/api/'))).toBe(false);
  });
});

describe('index.html', () => {
  const html = readFileSync(join(STATIC, 'index.html'), 'utf8');
  it('has no inline script or style', () => {
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/i);
    expect(html).not.toMatch(/\sstyle=/i);
    expect(html).not.toMatch(/<style/i);
    expect(html).not.toMatch(/\son[a-z]+=/i);
  });
  it('preloads every module main.js imports, so the app starts without an import chain', () => {
    const hrefs = new Set([...html.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)].map((m) => m[1]));
    /** @type {Set<string>} */
    const graph = new Set();
    /** @param {string} href */
    const walk = (href) => {
      if (graph.has(href)) return;
      graph.add(href);
      const src = readFileSync(join(STATIC, href), 'utf8');
      for (const m of src.matchAll(/^import[^'"]*['"](\.[^'"]+)['"]/gm)) walk(new URL(m[1], `http://x${href}`).pathname);
    };
    walk('/app/main.js');
    graph.delete('/app/main.js'); // the script itself
    expect([...graph].filter((m) => !hrefs.has(m))).toEqual([]);
  });
  it('preloads every module the editor imports, so opening a document fetches no import chain', () => {
    const hrefs = new Set([...html.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)].map((m) => m[1]));
    /** @type {Set<string>} */
    const graph = new Set();
    /** @param {string} href */
    const walk = (href) => {
      if (graph.has(href)) return;
      graph.add(href);
      const src = readFileSync(join(STATIC, href), 'utf8');
      for (const m of src.matchAll(/^import[^'"]*['"](\.[^'"]+)['"]/gm)) walk(new URL(m[1], `http://x${href}`).pathname);
    };
    walk('/app/editor/page.js');
    expect([...graph].filter((m) => !hrefs.has(m))).toEqual([]);
  });
  it('preloads only modules that exist and are in the shell list', () => {
    const hrefs = [...html.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)].map((m) => m[1]);
    expect(hrefs.length).toBeGreaterThan(0);
    for (const href of hrefs) {
      expect(existsSync(join(STATIC, href)), href).toBe(true);
      expect(list.files).toContain(href);
    }
  });
});
