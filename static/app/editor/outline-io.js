// Outlines in and out of other formats: nested Markdown lists, OPML (Workflowy, Dynalist and
// most outliners export it), HTML lists (what Workflowy, Dynalist, Logseq and Google Docs put
// on the clipboard) and plain indented text. Everything comes in as `Item`s (a depth and a
// bullet's fields) and goes out from rows with depths, so copy/paste, import and export share
// one reader and one writer per format.
//
// Invariants: reading never produces a depth jump of more than one level and starts at 0;
// `toMarkdown(fromMarkdown(t))` gives `t` back for text this writer produced; user text is
// never parsed as markup for display (the HTML and OPML readers only read text and
// attributes; the writers escape everything).

/** @typedef {import('../../engine/types.js').BlockType} BlockType */
/**
 * @typedef {{depth: number, content: string, type: BlockType, checked: boolean,
 *   language: string|null}} Item
 */
/** @typedef {{depth: number, content: string, type?: BlockType, checked?: boolean, language?: string|null}} OutRow */

/** @param {Partial<Item> & {depth: number, content: string}} x @returns {Item} */
const item = (x) => ({ type: 'bullet', checked: false, language: null, ...x });

/** Depths that start at 0 and never jump by more than one level. @param {Item[]} items */
function normalize(items) {
  let prev = -1;
  const base = items.length ? Math.min(...items.map((i) => i.depth)) : 0;
  for (const it of items) {
    it.depth = Math.max(0, Math.min(it.depth - base, prev + 1));
    prev = it.depth;
  }
  return items;
}

/** Line-start shortcuts inside a list item: `[ ]`, `[x]`, `#`…`###`, `>`. @param {string} s */
function typed(s) {
  /** @type {[RegExp, BlockType, boolean][]} */
  const rules = [
    [/^\[ ?\] /, 'todo', false],
    [/^\[[xX]\] /, 'todo', true],
    [/^### /, 'h3', false],
    [/^## /, 'h2', false],
    [/^# /, 'h1', false],
    [/^> /, 'quote', false],
  ];
  for (const [re, type, checked] of rules) {
    const m = re.exec(s);
    if (m) return { type, checked, content: s.slice(m[0].length) };
  }
  return { type: /** @type {BlockType} */ ('bullet'), checked: false, content: s };
}

// ---- Markdown -----------------------------------------------------------------------------

const MARKER = /^([ \t]*)([-*+•]|\d+[.)])(?: +|$)/;

/** Columns of leading whitespace (a tab is four). @param {string} ws */
function columns(ws) {
  let n = 0;
  for (const ch of ws) n += ch === '\t' ? 4 - (n % 4) : 1;
  return n;
}

/**
 * Reads a nested Markdown list (or, when no line has a list marker, plain indented text: one
 * bullet per line, depth from the indentation). A `# Heading` before the list is the title.
 * Lines indented under an item without a marker continue its text; ```` ``` ```` fences in
 * an item make a code bullet.
 * @param {string} text
 * @returns {{title: string|null, items: Item[]}}
 */
export function fromMarkdown(text) {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  if (!lines.some((l) => MARKER.test(l))) return { title: null, items: fromPlainText(text) };
  /** @type {string|null} */
  let title = null;
  /** @type {Item[]} */
  const items = [];
  /** @type {number[]} marker columns of the open items */
  const stack = [];
  /** @type {{item: Item, contentCol: number, markerCol: number}|null} */
  let open = null;
  /** The item whose quoted note (Workflowy's text export) runs over more lines. @type {Item|null} */
  let note = null;
  /** @type {{item: Item, col: number}|null} an open code fence */
  let fence = null;
  for (const line of lines) {
    if (fence) {
      const ws = /^[ \t]*/.exec(line)?.[0] ?? '';
      const rest = line.slice(Math.min(line.length, fenceCut(line, fence.col)));
      if (/^[ \t]*```\s*$/.test(line) && columns(ws) >= fence.col - 2) {
        fence = null;
        continue;
      }
      fence.item.content = fence.item.content === '\u0000' ? rest : `${fence.item.content}\n${rest}`;
      continue;
    }
    if (note) {
      // a quoted note goes on until the line that closes its quote
      const t = line.trim();
      const last = t.endsWith('"');
      note.content += `\n${last ? t.slice(0, -1) : t}`;
      if (last) note = null;
      continue;
    }
    const m = MARKER.exec(line);
    if (!m) {
      if (line.trim() === '') continue;
      const col = columns(/^[ \t]*/.exec(line)?.[0] ?? '');
      const quoted = /^"/.test(line.trim());
      if (open && quoted && col >= open.markerCol) {
        // Workflowy's text export writes a bullet's note as a quoted line below it
        const t = line.trim();
        const closed = t.length > 1 && t.endsWith('"');
        open.item.content += `\n${t.slice(1, closed ? -1 : undefined)}`;
        if (!closed) note = open.item;
        continue;
      }
      if (open && col >= open.contentCol) {
        open.item.content += `\n${line.slice(fenceCut(line, open.contentCol))}`;
        continue;
      }
      if (items.length === 0 && title == null && /^# /.test(line)) {
        title = line.slice(2).trim();
        continue;
      }
      // a line outside any list: a bullet of its own at the top
      const t = typed(line.trim());
      const it = item({ depth: 0, ...t });
      stack.length = 0;
      items.push(it);
      open = null;
      continue;
    }
    const col = columns(m[1]);
    while (stack.length && stack[stack.length - 1] > col) stack.pop();
    if (!stack.length || stack[stack.length - 1] < col) stack.push(col);
    const depth = stack.length - 1;
    const body = line.slice(m[0].length).replace(/\s+$/, '');
    const f = /^```([A-Za-z0-9_+#.-]*)$/.exec(body);
    if (f) {
      const it = item({ depth, content: '\u0000', type: 'code', language: f[1] || null });
      items.push(it);
      fence = { item: it, col: columns(m[1]) + (m[0].length - m[1].length) };
      open = null;
      continue;
    }
    const it = item({ depth, ...typed(body) });
    items.push(it);
    open = { item: it, contentCol: columns(m[1]) + (m[0].length - m[1].length), markerCol: columns(m[1]) };
  }
  for (const it of items) if (it.content === '\u0000') it.content = '';
  return { title, items: normalize(items) };
}

/** Index in `line` after `col` columns of its leading whitespace. @param {string} line @param {number} col */
function fenceCut(line, col) {
  let n = 0;
  let i = 0;
  while (i < line.length && n < col && (line[i] === ' ' || line[i] === '\t')) {
    n += line[i] === '\t' ? 4 - (n % 4) : 1;
    i++;
  }
  return i;
}

/**
 * Plain text: one bullet per non-blank line, indentation (tabs, or a unit of 2–4 spaces found
 * from the text) kept as depth, line-start shortcuts turned into types.
 * @param {string} text
 * @returns {Item[]}
 */
export function fromPlainText(text) {
  const lines = text.replace(/\r\n?/g, '\n').split('\n').filter((l) => l.trim() !== '');
  let unit = Infinity;
  for (const l of lines) {
    const ws = /^[ \t]*/.exec(l)?.[0] ?? '';
    if (ws.length > 0 && !ws.includes('\t')) unit = Math.min(unit, ws.length);
  }
  unit = unit === Infinity ? 2 : Math.min(4, Math.max(2, unit));
  /** @type {Item[]} */
  const out = [];
  for (const l of lines) {
    const ws = /^[ \t]*/.exec(l)?.[0] ?? '';
    let tabs = 0;
    let spaces = 0;
    for (const ch of ws) {
      if (ch === '\t') tabs++;
      else spaces++;
    }
    const depth = tabs + Math.floor(spaces / unit);
    const text = l.slice(ws.length).replace(/\s+$/, '');
    const last = out[out.length - 1];
    if (last && depth > last.depth && /^".*"$/.test(text) && text.length > 1) {
      // a quoted line under a bullet is its note (Workflowy's text export)
      last.content += `\n${text.slice(1, -1)}`;
      continue;
    }
    out.push(item({ depth, ...typed(text) }));
  }
  return normalize(out);
}

/**
 * A nested Markdown list, two spaces per level; todos as `[ ]`/`[x]`, headings and quotes
 * with their markers, code bullets as fenced blocks, line breaks as continuation lines.
 * @param {OutRow[]} rows depths relative to the first row's level or deeper
 * @param {{title?: string}} [opts]
 */
export function toMarkdown(rows, opts = {}) {
  const base = rows.length ? Math.min(...rows.map((r) => r.depth)) : 0;
  /** @type {string[]} */
  const out = [];
  if (opts.title != null) out.push(`# ${opts.title}`, '');
  for (const r of rows) {
    const pad = '  '.repeat(r.depth - base);
    const cont = `${pad}  `;
    if (r.type === 'code') {
      out.push(`${pad}- \`\`\`${r.language ?? ''}`);
      for (const l of r.content.split('\n')) out.push(l === '' ? '' : cont + l);
      out.push(`${cont}\`\`\``);
      continue;
    }
    const prefix =
      r.type === 'todo' ? (r.checked ? '[x] ' : '[ ] ') : r.type === 'h1' ? '# ' : r.type === 'h2' ? '## ' : r.type === 'h3' ? '### ' : r.type === 'quote' ? '> ' : '';
    const [first, ...more] = r.content.split('\n');
    out.push(`${pad}- ${prefix}${first}`.replace(/\s+$/, ''));
    for (const l of more) out.push(l === '' ? '' : cont + l);
  }
  return `${out.join('\n')}\n`;
}

/** Plain text: a tab per level, line breaks inside a bullet as spaces. @param {OutRow[]} rows */
export function toPlainText(rows) {
  const base = rows.length ? Math.min(...rows.map((r) => r.depth)) : 0;
  return rows.map((r) => `${'\t'.repeat(r.depth - base)}${r.type === 'todo' ? (r.checked ? '[x] ' : '[ ] ') : ''}${r.content.replace(/\n/g, ' ')}`).join('\n') + (rows.length ? '\n' : '');
}

// ---- HTML and OPML --------------------------------------------------------------------------

/** @param {string} s */
function escapeXml(s) {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/\n/g, '&#10;');
}

/**
 * Nested HTML lists for the clipboard's `text/html` (word processors and other outliners
 * paste them as lists). Todos get a checkbox; text is escaped.
 * @param {OutRow[]} rows
 */
export function toHtml(rows) {
  const base = rows.length ? Math.min(...rows.map((r) => r.depth)) : 0;
  let html = '';
  let level = -1;
  for (const r of rows) {
    const d = r.depth - base;
    if (d > level) html += '<ul>'.repeat(d - level);
    else {
      html += '</li>';
      if (d < level) html += '</ul></li>'.repeat(level - d);
    }
    level = d;
    const body = escapeXml(r.content).replace(/&#10;/g, '<br>');
    const tag = r.type === 'h1' || r.type === 'h2' || r.type === 'h3' ? r.type : r.type === 'code' ? 'pre' : r.type === 'quote' ? 'blockquote' : null;
    const check = r.type === 'todo' ? `<input type="checkbox"${r.checked ? ' checked' : ''}> ` : '';
    html += `<li>${check}${tag ? `<${tag}>${body}</${tag}>` : body}`;
  }
  if (level >= 0) html += '</li>' + '</ul></li>'.repeat(level) + '</ul>';
  return html;
}

/**
 * Reads the lists in a piece of HTML: nested `<ul>`/`<ol>` (Workflowy, Dynalist, Logseq) and
 * flat lists whose items carry `aria-level` (Google Docs). Returns [] when it holds no list.
 * @param {string} html
 * @param {DOMParser} parser
 * @returns {Item[]}
 */
export function fromHtml(html, parser) {
  const doc = parser.parseFromString(html, 'text/html');
  const lists = [...doc.querySelectorAll('ul, ol')].filter((l) => !l.parentElement?.closest('ul, ol'));
  if (!lists.length) return [];
  /** @type {Item[]} */
  const items = [];
  /** @param {Element} list @param {number} depth */
  const walk = (list, depth) => {
    for (const child of list.children) {
      const tag = child.tagName.toLowerCase();
      if (tag === 'ul' || tag === 'ol') {
        walk(child, depth + 1); // a list directly in a list (some editors nest this way)
        continue;
      }
      if (tag !== 'li') continue;
      const level = Number(child.getAttribute('aria-level'));
      const d = Number.isFinite(level) && level > 0 ? level - 1 + depth : depth;
      items.push(readLi(child, d));
      for (const sub of child.children) {
        const st = sub.tagName.toLowerCase();
        if (st === 'ul' || st === 'ol') walk(sub, d + 1);
      }
    }
  };
  for (const l of lists) walk(l, 0);
  return normalize(items);
}

/** The bullet an `<li>` stands for (its own text, not its nested lists'). @param {Element} li @param {number} depth */
function readLi(li, depth) {
  let text = '';
  /** @type {BlockType} */
  let type = 'bullet';
  let checked = false;
  /** @param {Node} n */
  const read = (n) => {
    if (n.nodeType === 3) {
      text += (n.textContent ?? '').replace(/\s+/g, ' ');
      return;
    }
    if (n.nodeType !== 1) return;
    const e = /** @type {Element} */ (n);
    const tag = e.tagName.toLowerCase();
    if (tag === 'ul' || tag === 'ol') return;
    if (tag === 'input' && e.getAttribute('type') === 'checkbox') {
      type = 'todo';
      checked = e.hasAttribute('checked');
      return;
    }
    if (tag === 'br') {
      text += '\n';
      return;
    }
    if (tag === 'h1' || tag === 'h2' || tag === 'h3') type = tag;
    if (tag === 'blockquote') type = 'quote';
    if (tag === 'pre') type = 'code';
    if (tag === 'pre') {
      text += e.textContent ?? '';
      return;
    }
    for (const c of e.childNodes) read(c);
  };
  for (const c of li.childNodes) read(c);
  if (/^(complete|done)$/i.test(li.getAttribute('data-state') ?? '') || li.classList.contains('done')) {
    type = 'todo';
    checked = true;
  }
  let content = text.replace(/[ \t]+\n/g, '\n').trim();
  if (type === 'bullet') {
    const t = typed(content);
    type = t.type;
    checked = t.checked;
    content = t.content;
  }
  return item({ depth, content, type, checked });
}

/**
 * OPML 2.0 with the title in the head; todos as `_complete` (Workflowy's attribute) on a
 * checked item plus `_todo="true"`, code bullets with `_type`, notes not used.
 * @param {string} title @param {OutRow[]} rows
 */
export function toOpml(title, rows) {
  const base = rows.length ? Math.min(...rows.map((r) => r.depth)) : 0;
  let body = '';
  /** @type {number[]} depths of the items still open */
  const open = [];
  /** @param {number} d */
  const pad = (d) => '  '.repeat(d + 2);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    const d = r.depth - base;
    const next = i + 1 < rows.length ? rows[i + 1].depth - base : -1;
    let attrs = ` text="${escapeXml(r.content)}"`;
    if (r.type === 'todo') attrs += ` _todo="true"${r.checked ? ' _complete="true"' : ''}`;
    else if (r.type && r.type !== 'bullet') attrs += ` _type="${r.type}"`;
    if (r.type === 'code' && r.language) attrs += ` _language="${escapeXml(r.language)}"`;
    if (next > d) {
      body += `${pad(d)}<outline${attrs}>\n`;
      open.push(d);
      continue;
    }
    body += `${pad(d)}<outline${attrs}/>\n`;
    while (open.length && open[open.length - 1] >= next) body += `${pad(/** @type {number} */ (open.pop()))}</outline>\n`;
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n<opml version="2.0">\n  <head>\n    <title>${escapeXml(title)}</title>\n    <flavor>docsync</flavor>\n  </head>\n  <body>\n${body}  </body>\n</opml>\n`;
}

/**
 * Reads OPML (Workflowy, Dynalist, Logseq and others): `text` is the bullet, `_note` its
 * second line, `_complete`/`complete`/`checked` a done todo, `checkbox`/`_todo` a todo.
 * @param {string} xml @param {DOMParser} parser
 * @returns {{title: string|null, items: Item[]}}
 * @throws {Error} when the text is not OPML
 */
export function fromOpml(xml, parser) {
  const doc = parser.parseFromString(xml, 'application/xml');
  const body = doc.querySelector('opml > body') ?? doc.querySelector('body');
  if (!body || doc.querySelector('parsererror')) throw new Error('This file is not OPML (no <opml><body> found).');
  const title = doc.querySelector('opml > head > title')?.textContent?.trim() || null;
  // docsync and Dynalist write Markdown in `text`; Workflowy and others HTML
  const flavor = doc.querySelector('opml > head > flavor')?.textContent?.trim().toLowerCase() ?? '';
  const markdownText = flavor === 'docsync' || flavor === 'dynalist';
  /** @type {Item[]} */
  const items = [];
  /** @param {Element} parent @param {number} depth */
  const walk = (parent, depth) => {
    for (const o of parent.children) {
      if (o.tagName.toLowerCase() !== 'outline') continue;
      const yes = (/** @type {string} */ a) => /^(true|1|yes)$/i.test(o.getAttribute(a) ?? '');
      const done = yes('_complete') || yes('complete') || yes('checked');
      const todo = done || yes('checkbox') || yes('_todo');
      const note = (o.getAttribute('_note') ?? '').trim();
      const raw = o.getAttribute('text') ?? o.getAttribute('title') ?? '';
      const text = markdownText ? raw : inlineHtmlToMarkdown(raw);
      const t = todo ? { type: /** @type {BlockType} */ ('todo'), checked: done, content: text } : typedOpml(o, text);
      const it = item({ depth, ...t, content: note ? `${t.content}\n${note}` : t.content });
      if (it.type === 'code') it.language = o.getAttribute('_language') || null;
      items.push(it);
      walk(o, depth + 1);
    }
  };
  walk(body, 0);
  return { title, items: normalize(items) };
}

/**
 * Workflowy writes formatting as HTML inside `text` (`<b>`, `<i>`, `<a href>`): turned into
 * the editor's Markdown; other tags are dropped, their text kept; entities decoded.
 * @param {string} s
 */
export function inlineHtmlToMarkdown(s) {
  if (!/[<&]/.test(s)) return s;
  return s
    .replace(/<\s*(b|strong)\s*>([\s\S]*?)<\s*\/\s*\1\s*>/gi, '**$2**')
    .replace(/<\s*(i|em)\s*>([\s\S]*?)<\s*\/\s*\1\s*>/gi, '*$2*')
    .replace(/<\s*(s|strike|del)\s*>([\s\S]*?)<\s*\/\s*\1\s*>/gi, '~~$2~~')
    .replace(/<\s*a\s[^>]*href\s*=\s*"([^"]*)"[^>]*>([\s\S]*?)<\s*\/\s*a\s*>/gi, (_, href, t) => (t === href ? href : `[${t}](${href})`))
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&');
}

/** @param {Element} o @param {string} text */
function typedOpml(o, text) {
  const t = o.getAttribute('_type');
  if (t === 'h1' || t === 'h2' || t === 'h3' || t === 'quote' || t === 'code') return { type: /** @type {BlockType} */ (t), checked: false, content: text };
  return typed(text);
}
