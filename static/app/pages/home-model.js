// DOM-free helpers of the home page: grouping documents into the folder tree, labels for
// roles and for how a document was shared, relative times. Unit-tested in Node.

/**
 * GET /docs item.
 * @typedef {{docId: string, title: string, icon: string|null, ownerId: string,
 *   folderId: string|null, headSeq: number, updatedAt: number,
 *   role: 'owner'|'editor'|'viewer', via: string}} DocSummary
 */

/**
 * A folder as the server describes it (POST /folders answer; GET /folders when available).
 * `known: false` marks a folder only seen as some document's folderId (no name known).
 * @typedef {{folderId: string, name: string, ownerId?: string|null, parentId: string|null,
 *   known?: boolean}} FolderInfo
 */

/**
 * @typedef {{folder: FolderInfo, depth: number, children: FolderNode[], docs: DocSummary[],
 *   total: number}} FolderNode
 */

/**
 * Groups documents by folder into a nested tree. Folders whose parent is not visible to
 * the user become top-level; folders only known from a document's folderId appear with the
 * name from `names` (or "Folder"). Cycles are cut. Folders and documents keep a stable
 * order: folders by name, documents as given (the server sends newest first).
 * @param {DocSummary[]} docs
 * @param {FolderInfo[]} folders
 * @returns {{roots: FolderNode[], loose: DocSummary[], byId: Map<string, FolderNode>}}
 */
export function buildTree(docs, folders) {
  /** @type {Map<string, FolderInfo>} */
  const info = new Map();
  for (const f of folders) if (f && f.folderId) info.set(f.folderId, { ...f, known: f.known ?? true });
  for (const d of docs) {
    if (d.folderId && !info.has(d.folderId)) {
      info.set(d.folderId, { folderId: d.folderId, name: 'Folder', parentId: null, known: false });
    }
  }
  /** @type {Map<string, FolderNode>} */
  const byId = new Map();
  for (const f of info.values()) byId.set(f.folderId, { folder: f, depth: 0, children: [], docs: [], total: 0 });

  /** @type {FolderNode[]} */
  const roots = [];
  for (const node of byId.values()) {
    const parentId = node.folder.parentId;
    const parent = parentId ? byId.get(parentId) : undefined;
    if (parent && !isAncestor(node.folder.folderId, parentId, info)) parent.children.push(node);
    else roots.push(node);
  }
  /** @type {DocSummary[]} */
  const loose = [];
  for (const d of docs) {
    const node = d.folderId ? byId.get(d.folderId) : undefined;
    if (node) node.docs.push(d);
    else loose.push(d);
  }
  const byName = (/** @type {FolderNode} */ a, /** @type {FolderNode} */ b) =>
    a.folder.name.localeCompare(b.folder.name, undefined, { sensitivity: 'base' }) || a.folder.folderId.localeCompare(b.folder.folderId);
  /** @param {FolderNode[]} nodes @param {number} depth */
  const finish = (nodes, depth) => {
    nodes.sort(byName);
    for (const n of nodes) {
      n.depth = depth;
      finish(n.children, depth + 1);
      n.total = n.docs.length + n.children.reduce((s, c) => s + c.total, 0);
    }
  };
  finish(roots, 0);
  return { roots, loose, byId };
}

/**
 * Whether `candidate` is `id` itself or one of its ancestors would make a cycle:
 * true when walking up from `parentId` reaches `id`.
 * @param {string} id
 * @param {string|null} parentId
 * @param {Map<string, FolderInfo>} info
 */
function isAncestor(id, parentId, info) {
  const seen = new Set();
  let cur = parentId;
  while (cur && !seen.has(cur)) {
    if (cur === id) return true;
    seen.add(cur);
    cur = info.get(cur)?.parentId ?? null;
  }
  return false;
}

/**
 * Every folder as a flat, indented list (for "Move to folder" and "New folder in …" pickers).
 * @param {FolderNode[]} roots
 * @returns {{folderId: string, label: string, depth: number, path: string}[]}
 */
export function flattenFolders(roots) {
  /** @type {{folderId: string, label: string, depth: number, path: string}[]} */
  const out = [];
  /** @param {FolderNode[]} nodes @param {string} prefix */
  const walk = (nodes, prefix) => {
    for (const n of nodes) {
      const path = prefix ? `${prefix} / ${n.folder.name}` : n.folder.name;
      out.push({ folderId: n.folder.folderId, label: n.folder.name, depth: n.depth, path });
      walk(n.children, path);
    }
  };
  walk(roots, '');
  return out;
}

/** @param {string} role */
export function roleLabel(role) {
  if (role === 'owner') return 'Owner';
  if (role === 'editor') return 'Can edit';
  if (role === 'viewer') return 'Can view';
  return role;
}

/**
 * How the user got the document, for a short caption.
 * @param {string} via `owner`, `direct`, `team:<name>`, `folder:<name>`
 */
export function viaLabel(via) {
  if (!via || via === 'owner') return 'Yours';
  if (via === 'direct') return 'Shared with you';
  if (via.startsWith('team:')) return `Shared with team ${via.slice(5)}`;
  if (via.startsWith('folder:')) return `Shared via folder ${via.slice(7)}`;
  return via;
}

/**
 * "just now", "5 min ago", "3 h ago", "yesterday", "4 days ago", else a date.
 * @param {number} at ms since epoch
 * @param {number} [now]
 */
export function relativeTime(at, now = Date.now()) {
  if (!Number.isFinite(at) || at <= 0) return '';
  const s = Math.round((now - at) / 1000);
  if (s < 45) return 'just now';
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const hrs = Math.round(m / 60);
  if (hrs < 24) return `${hrs} h ago`;
  const days = Math.round(hrs / 24);
  if (days === 1) return 'yesterday';
  if (days < 7) return `${days} days ago`;
  const d = new Date(at);
  const sameYear = d.getFullYear() === new Date(now).getFullYear();
  return d.toLocaleDateString('en', sameYear ? { month: 'short', day: 'numeric' } : { year: 'numeric', month: 'short', day: 'numeric' });
}

/** The title to show (empty titles read "Untitled"). @param {string|null|undefined} title */
export function displayTitle(title) {
  const t = (title ?? '').trim();
  return t || 'Untitled';
}

/**
 * A search hit's text trimmed around the first match, for a one-line preview.
 * @param {string} content
 * @param {string} query
 * @param {number} [width]
 */
export function snippet(content, query, width = 120) {
  const text = content.replace(/\s+/g, ' ').trim();
  if (text.length <= width) return text;
  const word = query.trim().split(/\s+/)[0]?.toLowerCase() ?? '';
  const at = word ? text.toLowerCase().indexOf(word) : -1;
  if (at < 0) return `${text.slice(0, width - 1)}…`;
  const start = Math.max(0, at - Math.floor(width / 3));
  const end = Math.min(text.length, start + width);
  return `${start > 0 ? '…' : ''}${text.slice(start, end)}${end < text.length ? '…' : ''}`;
}

/** `/d/<docId>#<blockId>` (the editor scrolls to the bullet). @param {string} docId @param {string} [blockId] */
export function docHref(docId, blockId) {
  return `/d/${encodeURIComponent(docId)}${blockId ? `#${encodeURIComponent(blockId)}` : ''}`;
}

/**
 * Where a folder may be moved: the top level and every folder the user owns except the
 * folder itself and the folders inside it (the server refuses those as cycles too).
 * @param {FolderNode[]} roots @param {string} folderId @param {string} myId
 * @returns {{value: string, label: string}[]}
 */
export function folderMoveTargets(roots, folderId, myId) {
  /** @type {{value: string, label: string}[]} */
  const out = [{ value: '', label: 'Top level' }];
  /** @param {FolderNode[]} nodes @param {string} prefix */
  const walk = (nodes, prefix) => {
    for (const n of nodes) {
      if (n.folder.folderId === folderId) continue; // itself, and everything below it
      const path = prefix ? `${prefix} / ${n.folder.name}` : n.folder.name;
      if (!n.folder.ownerId || n.folder.ownerId === myId) out.push({ value: n.folder.folderId, label: path });
      walk(n.children, path);
    }
  };
  walk(roots, '');
  return out;
}
