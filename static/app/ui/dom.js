// A tiny element builder: h('button', {class: 'btn', onclick: fn}, 'Save'). Text children are
// always text nodes (never parsed as HTML), so user content cannot inject markup.

/** @typedef {Node|string|number|null|undefined|false} Child */

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, any>|null} [attrs] `class`, `dataset`, `on<event>` handlers, boolean
 *   attributes (true → present, false/null → absent), anything else via setAttribute
 * @param {...(Child|Child[])} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.className = String(v);
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else if (k === 'value' && 'value' in el) /** @type {any} */ (el).value = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

/**
 * @param {Element|DocumentFragment} el
 * @param {(Child|Child[])[]} children
 */
export function append(el, children) {
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === 'number' ? String(c) : c);
  }
}

/** @param {Element} el @param {...(Child|Child[])} children */
export function replaceChildren(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

let idCounter = 0;
/** A page-unique id for label/aria wiring. @param {string} prefix */
export function uid(prefix) {
  idCounter += 1;
  return `${prefix}-${idCounter}`;
}

/**
 * Runs `fn` when the window is idle, at most `timeoutMs` later (where there is no
 * requestIdleCallback, in the next task): for work a frame need not wait for.
 * @param {Window|null} win @param {() => void} fn @param {number} timeoutMs
 */
export function whenIdle(win, fn, timeoutMs) {
  const idle = /** @type {any} */ (win)?.requestIdleCallback;
  if (typeof idle === 'function') idle.call(win, fn, { timeout: timeoutMs });
  else setTimeout(fn, 0);
}

/**
 * Resolves with `v` once the next frame has been painted (a task after the frame's
 * animation callbacks), or at once where the page draws no frames (hidden): for a long
 * task that must not hold back the paint of what was just drawn.
 * @template T @param {T} v @returns {Promise<T>}
 */
export function afterNextPaint(v) {
  if (typeof requestAnimationFrame !== 'function' || document.visibilityState !== 'visible') return Promise.resolve(v);
  return new Promise((resolve) => requestAnimationFrame(() => setTimeout(() => resolve(v), 0)));
}
