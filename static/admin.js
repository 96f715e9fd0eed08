// The operator page (/admin): every open document actor, refreshed every 2 s. In its own
// file: the strict Content-Security-Policy allows no inline script. Loaded as a module
// (deferred), so the DOM is complete when this runs.
import { ApiError, requestJson } from "./engine/http.js";

const ACTORS_URL = "/api/v1/admin/actors";
const LOGIN_URL = "/api/v1/auth/login";
const REFRESH_MS = 2000;
// A hung request would otherwise freeze the page silently; time out and say so instead.
const FETCH_TIMEOUT_MS = 8000;
const SPARK_W = 120, SPARK_H = 24;
const SVG_NS = "http://www.w3.org/2000/svg";

// ---------- types ----------

/**
 * One open document actor, as GET /api/v1/admin/actors reports it: `ActorStats` in
 * actors/src/document/messages.rs, serialized camelCase.
 * @typedef {object} ActorRow
 * @property {string} docId
 * @property {number} mailboxDepth    Requests sent to the actor and not yet answered.
 * @property {number} uptimeMs
 * @property {number} idleMs
 * @property {number} syncP50Ms       0 when nothing was measured (see recentSyncMs).
 * @property {number} syncP99Ms
 * @property {number[]} recentSyncMs  Recent sync latencies (ms), oldest first.
 * @property {boolean} loaded
 * @property {number} blocks
 * @property {number} headSeq
 * @property {number} durableSeq
 * @property {number} sessions
 * @property {number} leases
 * @property {number} inflightWrites
 * @property {number} websocket
 * @property {number} sse
 * @property {number} longPoll
 * @property {number} opsApplied
 * @property {number} conflicts
 * @property {number} rejected
 */

/** @typedef {{ actors: ActorRow[] }} ActorsResponse  The body of GET /api/v1/admin/actors. */

/**
 * The ActorRow fields that have a column of their own.
 * @typedef {"docId" | "mailboxDepth" | "sessions" | "websocket" | "sse" | "longPoll" | "leases"
 *   | "opsApplied" | "conflicts" | "rejected" | "syncP50Ms" | "syncP99Ms" | "idleMs" | "uptimeMs"} FieldKey
 */

/**
 * A column showing one ActorRow field; sorts by that field.
 * @typedef {object} FieldColumn
 * @property {FieldKey} key                     Also the header's data-key.
 * @property {boolean} [num]                    Right-aligned number; greyed out when zero.
 * @property {string} [cls]                     Extra class for the cells.
 * @property {(a: ActorRow) => string} [text]   Cell text; default: the field as a count.
 */

/**
 * The sparkline column of recent sync latencies.
 * @typedef {object} SparkColumn
 * @property {"recentMax"} key
 * @property {true} spark
 * @property {(a: ActorRow) => number} sort     The value the column sorts by.
 * @property {boolean} [num]
 * @property {string} [cls]
 */

/** @typedef {FieldColumn | SparkColumn} Column */
/** @typedef {Column["key"]} ColumnKey */

/**
 * One rendered table row, kept across refreshes.
 * @typedef {object} Row
 * @property {HTMLTableRowElement} tr
 * @property {HTMLTableCellElement[]} tds       One per column, in COLUMNS order.
 * @property {string | null} sparkKey           The latencies the sparkline was drawn for.
 */

/** @typedef {"login" | "forbidden" | "table"} View */

// ---------- DOM lookups ----------

/**
 * `el` as an instance of `type`; throws (naming `what`) if it is missing or something else,
 * so a renamed element in admin.html breaks the page loudly instead of half-working.
 * @template {Element} T
 * @param {Element | null} el
 * @param {{ new (): T; prototype: T; name: string }} type
 * @param {string} what
 * @returns {T}
 */
function must(el, type, what) {
  if (el instanceof type) return el;
  throw new Error(`admin page: ${what} ${el ? `is a <${el.localName}>, expected ${type.name}` : "is missing"}`);
}

/**
 * @template {Element} T
 * @param {string} id
 * @param {{ new (): T; prototype: T; name: string }} type
 * @returns {T}
 */
const $ = (id, type) => must(document.getElementById(id), type, `#${id}`);

const tbody = $("rows", HTMLTableSectionElement);
const statusEl = $("status", HTMLElement);
const bannerEl = $("banner", HTMLElement);
const pauseButton = $("pause", HTMLButtonElement);
const switchUserButton = $("switch-user", HTMLButtonElement);
const loginForm = $("login-form", HTMLFormElement);
const loginError = $("login-error", HTMLElement);
const usernameInput = must(loginForm.querySelector("input[name=username]"), HTMLInputElement, "#login-form username");
const passwordInput = must(loginForm.querySelector("input[name=password]"), HTMLInputElement, "#login-form password");
const submitButton = must(loginForm.querySelector("button[type=submit]"), HTMLButtonElement, "#login-form submit");
/** @type {Record<View, HTMLElement>} */
const views = {
  login: $("login-view", HTMLElement),
  forbidden: $("forbidden-view", HTMLElement),
  table: $("table-view", HTMLElement),
};

// ---------- formatting ----------

/**
 * Seconds/minutes/hours/days, at most two units: operators want magnitude, not precision.
 * @param {number} ms
 * @returns {string}
 */
function duration(ms) {
  const s = Math.floor(Math.max(0, ms) / 1000), m = Math.floor(s / 60), h = Math.floor(m / 60), d = Math.floor(h / 24);
  /** @type {(a: number, ua: string, b: number, ub: string) => string} */
  const two = (a, ua, b, ub) => (b ? `${a} ${ua} ${b} ${ub}` : `${a} ${ua}`);
  if (d) return two(d, "d", h % 24, "h");
  if (h) return two(h, "h", m % 60, "min");
  if (m) return two(m, "min", s % 60, "s");
  return `${s} s`;
}

/**
 * @param {number} ms
 * @returns {string}
 */
function ago(ms) {
  if (ms < 1000) return "just now";
  return `${duration(ms).split(" ").slice(0, 2).join(" ")} ago`;
}

/** @param {ActorRow} a */
const hasSamples = (a) => a.recentSyncMs.length > 0;
// The server reports 0 when nothing was measured; "—" keeps that apart from a fast 0.0 ms.
/** @type {(a: ActorRow, v: number) => string} */
const latency = (a, v) => (hasSamples(a) ? v.toFixed(1) : "—");
/** @param {number} v */
const count = (v) => v.toLocaleString("en-US");

// One entry per <td>, in header order. `sort` is the value the column sorts by.
/** @type {readonly Column[]} */
const COLUMNS = [
  { key: "docId", text: (a) => a.docId, cls: "doc" },
  { key: "mailboxDepth", num: true },
  { key: "sessions", num: true },
  { key: "websocket", num: true },
  { key: "sse", num: true },
  { key: "longPoll", num: true },
  { key: "leases", num: true },
  { key: "opsApplied", num: true },
  { key: "conflicts", num: true },
  { key: "rejected", num: true },
  { key: "syncP50Ms", num: true, text: (a) => latency(a, a.syncP50Ms) },
  { key: "syncP99Ms", num: true, text: (a) => latency(a, a.syncP99Ms) },
  { key: "idleMs", text: (a) => ago(a.idleMs) },
  { key: "uptimeMs", text: (a) => duration(a.uptimeMs) },
  { key: "recentMax", sort: (a) => Math.max(0, ...a.recentSyncMs), spark: true },
];

/** @type {ActorRow[]} */
let actors = [];
let fetchedAt = 0;
/** @type {ColumnKey} */
let sortKey = "docId";
let sortDir = 1; // 1 ascending, -1 descending
let paused = false;
let inflight = false;
let timer = 0;
/** @type {Map<string, Row>} */
const rows = new Map(); // docId -> row

// ---------- sorting ----------

/**
 * @param {string | undefined} key
 * @returns {Column}
 */
function column(key) {
  const col = COLUMNS.find((c) => c.key === key);
  if (!col) throw new Error(`admin page: no column for data-key ${JSON.stringify(key)}`);
  return col;
}

/** @type {(col: Column, a: ActorRow) => number | string} */
const sortValue = (col, a) => ("sort" in col ? col.sort(a) : a[col.key]);

/**
 * @param {ActorRow} a
 * @param {ActorRow} b
 * @returns {number}
 */
function compare(a, b) {
  const col = column(sortKey);
  const x = sortValue(col, a), y = sortValue(col, b);
  const primary = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
  // Tie-break on the document so equal rows don't swap places between refreshes.
  return sortDir * primary || a.docId.localeCompare(b.docId);
}

// Turn each sortable header's text into a button so it is reachable and operable by keyboard.
const headers = Array.from(document.querySelectorAll("th[data-key]"), (el) => {
  const th = must(el, HTMLTableCellElement, "th[data-key]");
  const key = column(th.dataset.key).key;
  const button = document.createElement("button");
  button.type = "button";
  const label = document.createElement("span");
  label.textContent = th.textContent;
  const arrow = document.createElement("span");
  arrow.className = "arrow";
  arrow.setAttribute("aria-hidden", "true");
  button.append(label, arrow);
  th.replaceChildren(button);
  button.addEventListener("click", () => {
    if (sortKey === key) {
      sortDir = -sortDir;
    } else {
      sortKey = key;
      // Numbers start biggest-first: the busy or troubled actors are the ones worth seeing.
      sortDir = key === "docId" ? 1 : -1;
    }
    paintSortHeaders();
    render();
  });
  return { th, arrow, key };
});

function paintSortHeaders() {
  for (const { th, arrow, key } of headers) {
    const on = key === sortKey;
    th.setAttribute("aria-sort", on ? (sortDir > 0 ? "ascending" : "descending") : "none");
    arrow.textContent = on ? (sortDir > 0 ? "▲" : "▼") : "";
  }
}
paintSortHeaders();

// ---------- rendering ----------

/**
 * @param {number[]} values
 * @returns {Element}
 */
function sparkline(values) {
  if (!values.length) {
    const none = document.createElement("span");
    none.className = "zero";
    none.textContent = "—";
    none.title = "No syncs measured yet";
    return none;
  }
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("class", "spark");
  svg.setAttribute("width", String(SPARK_W));
  svg.setAttribute("height", String(SPARK_H));
  svg.setAttribute("viewBox", `0 0 ${SPARK_W} ${SPARK_H}`);
  svg.setAttribute("role", "img");
  const max = Math.max(0, ...values);
  const label = `Last ${values.length} sync latencies, max ${max.toFixed(1)} ms`;
  svg.setAttribute("aria-label", label);
  const title = document.createElementNS(SVG_NS, "title");
  title.textContent = label;
  svg.append(title);

  // A single sample still gets a (flat) line so the cell doesn't look broken.
  const pts = values.length === 1 ? [values[0], values[0]] : values;
  const step = (SPARK_W - 2) / (pts.length - 1);
  /** @param {number} v */
  const y = (v) => (SPARK_H - 2 - (max ? (v / max) * (SPARK_H - 4) : 0)).toFixed(1);
  const line = pts.map((v, i) => `${(1 + i * step).toFixed(1)},${y(v)}`).join(" ");
  const area = document.createElementNS(SVG_NS, "polygon");
  area.setAttribute("points", `1,${SPARK_H - 2} ${line} ${SPARK_W - 1},${SPARK_H - 2}`);
  const poly = document.createElementNS(SVG_NS, "polyline");
  poly.setAttribute("points", line);
  svg.append(area, poly);
  return svg;
}

/** @returns {Row} */
function makeRow() {
  const tr = document.createElement("tr");
  const tds = COLUMNS.map((col) => {
    const td = document.createElement("td");
    td.className = [col.num && "num", col.cls].filter(Boolean).join(" ");
    return td;
  });
  tr.append(...tds);
  return { tr, tds, sparkKey: null };
}

/**
 * Writes only what changed, so text selection and hover survive the 2 s refresh.
 * @param {HTMLElement} td
 * @param {string} text
 * @param {string} [title]
 */
function setText(td, text, title) {
  if (td.textContent !== text) td.textContent = text;
  if (title !== undefined && td.title !== title) td.title = title;
}

/**
 * @param {Row} row
 * @param {ActorRow} a
 */
function updateRow(row, a) {
  COLUMNS.forEach((col, i) => {
    const td = row.tds[i];
    if ("spark" in col) {
      const key = a.recentSyncMs.join(",");
      if (row.sparkKey !== key) { td.replaceChildren(sparkline(a.recentSyncMs)); row.sparkKey = key; }
      return;
    }
    const value = a[col.key];
    const text = col.text ? col.text(a) : typeof value === "number" ? count(value) : value;
    setText(td, text);
    if (col.num) td.classList.toggle("zero", value === 0 || text === "—");
  });
  // Details an operator occasionally needs, kept out of the columns.
  setText(row.tds[0], a.docId,
    `${a.loaded ? "loaded" : "not loaded"} · ${count(a.blocks)} blocks · head seq ${a.headSeq} · ` +
    `durable seq ${a.durableSeq} · ${a.inflightWrites} writes in flight`);
  const idleCol = COLUMNS.findIndex((c) => c.key === "idleMs");
  setText(row.tds[idleCol], ago(a.idleMs), new Date(fetchedAt - a.idleMs).toLocaleString());
}

function render() {
  if (!actors.length) {
    rows.clear();
    const tr = document.createElement("tr");
    tr.className = "empty";
    tr.innerHTML = `<td colspan="${COLUMNS.length}">No open documents</td>`;
    tbody.replaceChildren(tr);
    return;
  }
  tbody.querySelector(".empty")?.remove();
  const sorted = [...actors].sort(compare);
  const live = new Set(sorted.map((a) => a.docId));
  for (const [id, row] of rows) if (!live.has(id)) { row.tr.remove(); rows.delete(id); }
  sorted.forEach((a, i) => {
    let row = rows.get(a.docId);
    if (!row) rows.set(a.docId, (row = makeRow()));
    updateRow(row, a);
    // Move a row only when it is out of place; moving detaches it and would drop a selection.
    if (tbody.children[i] !== row.tr) tbody.insertBefore(row.tr, tbody.children[i] ?? null);
  });
}

// ---------- views and status ----------

/** @param {View} view */
function show(view) {
  for (const [v, el] of Object.entries(views)) el.hidden = v !== view;
  pauseButton.hidden = view !== "table";
  if (view === "login") usernameInput.focus();
}

function paintStatus() {
  const n = actors.length;
  const time = new Date(fetchedAt).toLocaleTimeString();
  const strong = document.createElement("strong");
  strong.textContent = String(n);
  const t = document.createElement("time");
  t.dateTime = new Date(fetchedAt).toISOString();
  t.textContent = time;
  statusEl.replaceChildren(strong, ` open actor${n === 1 ? "" : "s"} · updated `, t);
  if (paused) statusEl.append(" · paused");
}

/** @param {string} text */
function banner(text) {
  if (bannerEl.textContent !== text) bannerEl.textContent = text;
}

/**
 * Why a request (or what followed it) failed, for the banner.
 * @param {unknown} err
 * @returns {string}
 */
function refreshFailure(err) {
  if (err instanceof ApiError && err.code === "timeout") return "the server did not answer in time";
  if (err instanceof ApiError && err.offline) return "could not reach the server";
  return err instanceof Error ? err.message : String(err);
}

// ---------- polling ----------

function schedule() {
  clearTimeout(timer);
  if (!paused) timer = setTimeout(refresh, REFRESH_MS);
}

async function refresh() {
  clearTimeout(timer);
  inflight = true;
  try {
    /** @type {ActorsResponse} */
    const body = await requestJson(globalThis.fetch.bind(globalThis), ACTORS_URL, { cache: "no-store", timeoutMs: FETCH_TIMEOUT_MS });
    actors = body.actors;
    fetchedAt = Date.now();
    banner("");
    show("table");
    render();
    paintStatus();
    schedule();
  } catch (err) {
    // Signed out or not allowed: stop polling; the login form restarts it.
    if (err instanceof ApiError && err.status === 401) { banner(""); statusEl.textContent = "Not signed in"; show("login"); return; }
    if (err instanceof ApiError && err.status === 403) { banner(""); statusEl.textContent = ""; show("forbidden"); return; }
    // Keep the last good table on screen; the next tick may well succeed.
    const why = refreshFailure(err);
    banner(`Refresh failed (${why}).` + (fetchedAt ? ` Showing data from ${new Date(fetchedAt).toLocaleTimeString()}.` : ""));
    schedule();
  } finally {
    inflight = false;
  }
}

pauseButton.addEventListener("click", () => {
  paused = !paused;
  pauseButton.textContent = paused ? "Resume" : "Pause";
  pauseButton.setAttribute("aria-pressed", String(paused));
  if (paused) clearTimeout(timer);
  else if (!inflight) refresh(); // an in-flight refresh schedules the next one itself
  if (fetchedAt) paintStatus();
});

switchUserButton.addEventListener("click", () => show("login"));

loginForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  submitButton.disabled = true;
  loginError.textContent = "";
  try {
    await requestJson(globalThis.fetch.bind(globalThis), LOGIN_URL, {
      method: "POST",
      body: { username: usernameInput.value, password: passwordInput.value },
    });
    loginForm.reset();
    statusEl.textContent = "Loading…";
    await refresh();
  } catch (err) {
    // 429 carries the wait time in its message; 401 says nothing worth showing verbatim.
    if (err instanceof ApiError && err.status === 401) loginError.textContent = "Wrong username or password.";
    else if (err instanceof ApiError && err.offline) loginError.textContent = `Could not reach the server (${err.message}).`;
    else loginError.textContent = err instanceof Error ? err.message : String(err);
  } finally {
    submitButton.disabled = false;
  }
});

refresh();
