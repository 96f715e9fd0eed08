// Inline SVG icons built in JS (no icon font, no external files; CSP-safe). 20×20 viewBox,
// stroke = currentColor, hidden from assistive tech (buttons carry their own labels).

const NS = 'http://www.w3.org/2000/svg';

/** @type {Record<string, string[]>} path data per icon */
const PATHS = {
  doc: ['M6 2.75h5.5L15 6.25v11H6a1 1 0 0 1-1-1V3.75a1 1 0 0 1 1-1Z', 'M11.25 2.75v3.5h3.5', 'M7.75 10h4.5M7.75 13h4.5'],
  folder: ['M2.75 5.5a1 1 0 0 1 1-1h3.6l1.6 1.75h7.3a1 1 0 0 1 1 1v8a1 1 0 0 1-1 1H3.75a1 1 0 0 1-1-1Z'],
  chevron: ['M7.5 5l5 5-5 5'],
  plus: ['M10 4.5v11M4.5 10h11'],
  search: ['M8.75 14.5a5.75 5.75 0 1 0 0-11.5 5.75 5.75 0 0 0 0 11.5Z', 'M13 13l4 4'],
  more: ['M5 10h.01M10 10h.01M15 10h.01'],
  share: ['M10 12.5V3', 'M6.75 6.25 10 3l3.25 3.25', 'M4.5 10.5v5.75h11V10.5'],
  trash: ['M3.75 5.75h12.5', 'M8 5.75V4h4v1.75', 'M5.5 5.75l.75 10.5h7.5l.75-10.5'],
  pencil: ['M12.75 3.75l3.5 3.5L8 15.5l-4.25.75.75-4.25Z'],
  move: ['M2.75 5.5a1 1 0 0 1 1-1h3.6l1.6 1.75h7.3a1 1 0 0 1 1 1v8a1 1 0 0 1-1 1H3.75a1 1 0 0 1-1-1Z', 'M8 11.25h4.5', 'M10.75 9.25l2 2-2 2'],
  hash: ['M8 3.5 6.5 16.5M13.5 3.5 12 16.5M4 7.5h12.5M3.5 12.5H16'],
  close: ['M5.5 5.5l9 9M14.5 5.5l-9 9'],
  logout: ['M8 4H4.75v12H8', 'M12 6.5 15.5 10 12 13.5', 'M15.5 10H7.5'],
  offline: ['M3 3l14 14', 'M6.5 9.75a6 6 0 0 1 2.25-1.1M3.5 7.25A10 10 0 0 1 6 5.6M13.9 9.4a6 6 0 0 1 1 .6M10.9 5.1A10 10 0 0 1 16.5 7.25', 'M8.25 12.6a3 3 0 0 1 3.5 0', 'M10 15.5h.01'],
  user: ['M10 9.5a3.25 3.25 0 1 0 0-6.5 3.25 3.25 0 0 0 0 6.5Z', 'M3.75 17a6.25 6.25 0 0 1 12.5 0'],
  team: ['M7.5 9a2.75 2.75 0 1 0 0-5.5 2.75 2.75 0 0 0 0 5.5Z', 'M2.5 16a5 5 0 0 1 10 0', 'M13 4a2.75 2.75 0 0 1 0 5.25M14.5 11.25A5 5 0 0 1 17.5 16'],
  check: ['M4.5 10.5l3.5 3.5 7.5-8'],
  smile: ['M10 17a7 7 0 1 0 0-14 7 7 0 0 0 0 14Z', 'M7.25 11.75a3.5 3.5 0 0 0 5.5 0', 'M7.75 8h.01M12.25 8h.01'],
  clock: ['M10 17a7 7 0 1 0 0-14 7 7 0 0 0 0 14Z', 'M10 6.5V10l2.5 1.5'],
};

/**
 * @param {keyof typeof PATHS} name
 * @param {{size?: number, class?: string}} [opts]
 * @returns {SVGSVGElement}
 */
export function icon(name, opts = {}) {
  const size = opts.size ?? 18;
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', '0 0 20 20');
  svg.setAttribute('width', String(size));
  svg.setAttribute('height', String(size));
  svg.setAttribute('fill', 'none');
  svg.setAttribute('stroke', 'currentColor');
  svg.setAttribute('stroke-width', name === 'more' ? '2.5' : '1.5');
  svg.setAttribute('stroke-linecap', 'round');
  svg.setAttribute('stroke-linejoin', 'round');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  svg.setAttribute('class', `icon icon-${name}${opts.class ? ` ${opts.class}` : ''}`);
  for (const d of PATHS[name]) {
    const p = document.createElementNS(NS, 'path');
    p.setAttribute('d', d);
    svg.append(p);
  }
  return svg;
}

/** The app's mark (same drawing as /app/icon.svg). */
export function logo() {
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', '0 0 32 32');
  svg.setAttribute('width', '24');
  svg.setAttribute('height', '24');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('class', 'logo');
  const rect = document.createElementNS(NS, 'rect');
  for (const [k, v] of Object.entries({ width: '32', height: '32', rx: '8', class: 'logo-bg' })) rect.setAttribute(k, v);
  svg.append(rect);
  for (const [cx, cy, x2] of [[9, 10, 24], [13, 16, 24], [13, 22, 21]]) {
    const c = document.createElementNS(NS, 'circle');
    c.setAttribute('cx', String(cx));
    c.setAttribute('cy', String(cy));
    c.setAttribute('r', '1.8');
    c.setAttribute('fill', '#fff');
    const l = document.createElementNS(NS, 'path');
    l.setAttribute('d', `M${cx + 4} ${cy}H${x2}`);
    l.setAttribute('stroke', '#fff');
    l.setAttribute('stroke-width', '2');
    l.setAttribute('stroke-linecap', 'round');
    svg.append(c, l);
  }
  return svg;
}
