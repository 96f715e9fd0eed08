// The operator page (/admin): every open document actor, refreshed every 2 s. In its own
// file: the strict Content-Security-Policy allows no inline script. Loaded as a module
// (deferred), so the DOM is complete when this runs.
const ACTORS_URL = "/api/v1/admin/actors";
const LOGIN_URL = "/api/v1/auth/login";
const REFRESH_MS = 2000;
// A hung request would otherwise freeze the page silently; time out and say so instead.
const FETCH_TIMEOUT_MS = 8000;
const SPARK_W = 120, SPARK_H = 24;
const SVG_NS = "http://www.w3.org/2000/svg";

const $ = (id) => document.getElementById(id);
const tbody = $("rows");

// Seconds/minutes/hours/days, at most two units: operators want magnitude, not precision.
function duration(ms) {
  const s = Math.floor(Math.max(0, ms) / 1000), m = Math.floor(s / 60), h = Math.floor(m / 60), d = Math.floor(h / 24);
  const two = (a, ua, b, ub) => (b ? `${a} ${ua} ${b} ${ub}` : `${a} ${ua}`);
  if (d) return two(d, "d", h % 24, "h");
  if (h) return two(h, "h", m % 60, "min");
  if (m) return two(m, "min", s % 60, "s");
  return `${s} s`;
}

function ago(ms) {
  if (ms < 1000) return "just now";
  return `${duration(ms).split(" ").slice(0, 2).join(" ")} ago`;
}

const hasSamples = (a) => a.recentSyncMs.length > 0;
// The server reports 0 when nothing was measured; "—" keeps that apart from a fast 0.0 ms.
const latency = (a, v) => (hasSamples(a) ? v.toFixed(1) : "—");
const count = (v) => v.toLocaleString("en-US");

// One entry per <td>, in header order. `sort` is the value the column sorts by.
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

let actors = [];
let fetchedAt = 0;
let sortKey = "docId";
let sortDir = 1; // 1 ascending, -1 descending
let paused = false;
let inflight = false;
let timer = 0;
const rows = new Map(); // docId -> { tr, tds, sparkKey }

// ---------- sorting ----------

const sortValue = (col, a) => (col.sort ? col.sort(a) : a[col.key]);

function compare(a, b) {
  const col = COLUMNS.find((c) => c.key === sortKey);
  const x = sortValue(col, a), y = sortValue(col, b);
  const primary = typeof x === "string" ? x.localeCompare(y) : x - y;
  // Tie-break on the document so equal rows don't swap places between refreshes.
  return sortDir * primary || a.docId.localeCompare(b.docId);
}

function paintSortHeaders() {
  for (const th of document.querySelectorAll("th[data-key]")) {
    const on = th.dataset.key === sortKey;
    th.setAttribute("aria-sort", on ? (sortDir > 0 ? "ascending" : "descending") : "none");
    th.querySelector(".arrow").textContent = on ? (sortDir > 0 ? "▲" : "▼") : "";
  }
}

// Turn each sortable header's text into a button so it is reachable and operable by keyboard.
for (const th of document.querySelectorAll("th[data-key]")) {
  const button = document.createElement("button");
  button.type = "button";
  button.innerHTML = `<span></span><span class="arrow" aria-hidden="true"></span>`;
  button.firstChild.textContent = th.textContent;
  th.replaceChildren(button);
  button.addEventListener("click", () => {
    if (sortKey === th.dataset.key) {
      sortDir = -sortDir;
    } else {
      sortKey = th.dataset.key;
      // Numbers start biggest-first: the busy or troubled actors are the ones worth seeing.
      sortDir = th.dataset.key === "docId" ? 1 : -1;
    }
    paintSortHeaders();
    render();
  });
}
paintSortHeaders();

// ---------- rendering ----------

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
  svg.setAttribute("width", SPARK_W);
  svg.setAttribute("height", SPARK_H);
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
  const y = (v) => (SPARK_H - 2 - (max ? (v / max) * (SPARK_H - 4) : 0)).toFixed(1);
  const line = pts.map((v, i) => `${(1 + i * step).toFixed(1)},${y(v)}`).join(" ");
  const area = document.createElementNS(SVG_NS, "polygon");
  area.setAttribute("points", `1,${SPARK_H - 2} ${line} ${SPARK_W - 1},${SPARK_H - 2}`);
  const poly = document.createElementNS(SVG_NS, "polyline");
  poly.setAttribute("points", line);
  svg.append(area, poly);
  return svg;
}

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

// Writes only what changed, so text selection and hover survive the 2 s refresh.
function setText(td, text, title) {
  if (td.textContent !== text) td.textContent = text;
  if (title !== undefined && td.title !== title) td.title = title;
}

function updateRow(row, a) {
  COLUMNS.forEach((col, i) => {
    const td = row.tds[i];
    if (col.spark) {
      const key = a.recentSyncMs.join(",");
      if (row.sparkKey !== key) { td.replaceChildren(sparkline(a.recentSyncMs)); row.sparkKey = key; }
      return;
    }
    const text = col.text ? col.text(a) : count(a[col.key]);
    setText(td, text);
    if (col.num) td.classList.toggle("zero", a[col.key] === 0 || text === "—");
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

function show(view) {
  for (const v of ["login", "forbidden", "table"]) $(`${v}-view`).hidden = v !== view;
  $("pause").hidden = view !== "table";
  if (view === "login") $("login-form").username.focus();
}

function paintStatus() {
  const n = actors.length;
  const time = new Date(fetchedAt).toLocaleTimeString();
  $("status").innerHTML =
    `<strong>${n}</strong> open actor${n === 1 ? "" : "s"} · updated <time></time>` +
    (paused ? " · paused" : "");
  const t = $("status").querySelector("time");
  t.dateTime = new Date(fetchedAt).toISOString();
  t.textContent = time;
}

function banner(text) {
  if ($("banner").textContent !== text) $("banner").textContent = text;
}

async function errorMessage(res) {
  try {
    return (await res.json()).error.message;
  } catch {
    return `HTTP ${res.status} ${res.statusText}`.trim();
  }
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
    const res = await fetch(ACTORS_URL, {
      credentials: "same-origin",
      headers: { Accept: "application/json" },
      cache: "no-store",
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
    // Signed out or not allowed: stop polling; the login form restarts it.
    if (res.status === 401) { banner(""); $("status").textContent = "Not signed in"; show("login"); return; }
    if (res.status === 403) { banner(""); $("status").textContent = ""; show("forbidden"); return; }
    if (!res.ok) throw new Error(await errorMessage(res));
    const body = await res.json();
    actors = body.actors;
    fetchedAt = Date.now();
    banner("");
    show("table");
    render();
    paintStatus();
    schedule();
  } catch (err) {
    // Keep the last good table on screen; the next tick may well succeed.
    const why = err.name === "TimeoutError" ? "the server did not answer in time"
      : err instanceof TypeError ? "could not reach the server" // fetch's network failure
      : err.message;
    banner(`Refresh failed (${why}).` + (fetchedAt ? ` Showing data from ${new Date(fetchedAt).toLocaleTimeString()}.` : ""));
    schedule();
  } finally {
    inflight = false;
  }
}

$("pause").addEventListener("click", () => {
  paused = !paused;
  $("pause").textContent = paused ? "Resume" : "Pause";
  $("pause").setAttribute("aria-pressed", String(paused));
  if (paused) clearTimeout(timer);
  else if (!inflight) refresh(); // an in-flight refresh schedules the next one itself
  if (fetchedAt) paintStatus();
});

$("switch-user").addEventListener("click", () => show("login"));

$("login-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const submit = form.querySelector("button[type=submit]");
  const error = $("login-error");
  submit.disabled = true;
  error.textContent = "";
  try {
    const res = await fetch(LOGIN_URL, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ username: form.username.value, password: form.password.value }),
    });
    if (res.ok) {
      form.reset();
      $("status").textContent = "Loading…";
      await refresh();
    } else {
      // 429 carries the wait time in its message; 401 says nothing worth showing verbatim.
      error.textContent = res.status === 401 ? "Wrong username or password." : await errorMessage(res);
    }
  } catch (err) {
    error.textContent = `Could not reach the server (${err.message}).`;
  } finally {
    submit.disabled = false;
  }
});

refresh();
