// Shared types of the browser engine: the wire shapes of PROTOCOL.md (§1–§4) and the state
// the engine hands to a UI. Declarations only (for tsc; not served): the modules import them
// in one line, `/** @typedef {import('./types.js').Op} Op */`.

export type BlockType = 'bullet' | 'todo' | 'h1' | 'h2' | 'h3' | 'code' | 'quote';

/** A block as the server sends it (snapshot, log effects). `depth` only in snapshots. */
export interface Block {
  id: string;
  parentId: string | null;
  orderKey: string;
  content: string;
  type: BlockType;
  checked: boolean;
  collapsed: boolean;
  language: string | null;
  conflictOf: string | null;
  conflictAuthor: { userId: string; name: string } | null;
  conflictResolved: boolean;
  version: number;
  deleted: boolean;
  deletedAt: number | null;
  /** opId of the delete that made this tombstone (absent when live) */
  deletedBy?: string;
  updatedAt: number;
  updatedBy: string;
  depth?: number;
}

export interface BlockProps {
  type?: BlockType;
  checked?: boolean;
  collapsed?: boolean;
  language?: string | null;
  conflictResolved?: boolean;
}

/** An op (PROTOCOL §2), a union keyed on `kind`: each kind has exactly its fields. */
export type Op = InsertOp | SetContentOp | SetPropsOp | MoveOp | DeleteOp | RestoreOp | SetTitleOp;

export interface InsertOp {
  opId: string;
  kind: 'insert';
  blockId: string;
  parentId: string | null;
  orderKey: string;
  content?: string;
  type?: BlockType;
  checked?: boolean;
  language?: string | null;
}
export interface SetContentOp {
  opId: string;
  kind: 'set_content';
  blockId: string;
  content: string;
  baseVersion: number;
}
export interface SetPropsOp {
  opId: string;
  kind: 'set_props';
  blockId: string;
  props: BlockProps;
}
export interface MoveOp {
  opId: string;
  kind: 'move';
  blockId: string;
  parentId: string | null;
  orderKey: string;
}
export interface DeleteOp {
  opId: string;
  kind: 'delete';
  blockId: string;
}
export interface RestoreOp {
  opId: string;
  kind: 'restore';
  blockId: string;
}
export interface SetTitleOp {
  opId: string;
  kind: 'set_title';
  title: string;
  baseVersion: number;
}

export interface OpResult {
  opId: string;
  status: 'applied' | 'conflict' | 'rejected';
  seq: number | null;
  blockId?: string;
  conflictBlockId?: string;
  reason?: string;
}

export type Effect =
  | { e: 'block'; block: Block }
  | { e: 'title'; title: string; titleVersion: number }
  | { e: 'purge'; blockIds: string[] };

export interface LogEntry {
  seq: number;
  opId: string;
  kind: string;
  clientId: string;
  userId: string;
  at: number;
  effects: Effect[];
}

export interface LeaseOfOther {
  blockId: string;
  clientId: string;
  userId: string;
  name: string;
  expiresInMs: number;
}

/** GET /docs/{id}/snapshot */
export interface Snapshot {
  docId: string;
  title: string;
  titleVersion: number;
  icon: string | null;
  headSeq: number;
  logFloor: number;
  role: Role;
  /** Only bullets shared with the caller are in it (PROTOCOL §10). */
  bulletGuest?: boolean;
  shared: boolean;
  mode: Mode;
  sessions: number;
  /** One entry per person with the document open (added to PROTOCOL's shape). */
  people?: Person[];
  blocks: Block[];
  leases: { others: LeaseOfOther[] };
}

/** Someone with the document open; `sessions`: their tabs and devices. */
export interface Person {
  userId: string;
  name: string;
  sessions: number;
}

/** POST /docs/{id}/sync reply */
export interface SyncReply {
  results: OpResult[];
  ops: LogEntry[];
  hasMore: boolean;
  headSeq: number;
  leaseSeq: number;
  leases: {
    granted: string[];
    denied: { blockId: string; heldBy: { userId: string; name: string } }[];
    others: LeaseOfOther[];
  };
  role: Role;
  bulletGuest?: boolean;
  shared: boolean;
  sessions: number;
  people?: Person[];
  mode: Mode;
  resync: boolean;
  icon?: string | null;
}

export type Role = 'owner' | 'editor' | 'viewer';
export type Mode = 'private' | 'full';

/**
 * Where the wake-up ladder stands (PROTOCOL §4). `connecting`: no channel has delivered yet;
 * `offline`: the last request failed or the browser says offline.
 */
export type Stage = 'connecting' | 'live' | 'sse' | 'longpoll' | 'interval' | 'offline';

/** One visible line of the outline: a live block in document order, with its depth. */
export interface Row {
  id: string;
  parentId: string | null;
  depth: number;
  content: string;
  type: BlockType;
  checked: boolean;
  collapsed: boolean;
  language: string | null;
  conflictOf: string | null;
  conflictAuthor: { userId: string; name: string } | null;
  conflictResolved: boolean;
  version: number;
  hasChildren: boolean;
}

/** What the editor may change about a row when it hands the engine a new flat list. */
export interface FlatRow {
  id: string;
  depth: number;
  content: string;
  type?: BlockType;
  checked?: boolean;
  collapsed?: boolean;
  language?: string | null;
  conflictResolved?: boolean;
}

export interface Lock {
  blockId: string;
  userId: string;
  name: string;
}

/**
 * The engine's state for a UI; a new object on every change (compare by reference).
 * `rows`: a Row object is the same object as in the previous state exactly when that row's
 * values did not change, and the array is the same when no row changed. `noticeSeq`: +1 with
 * every notice set (also a repeat of the same text), so a UI can show a repeat again.
 */
export interface EngineState {
  docId: string;
  title: string;
  titleVersion: number;
  icon: string | null;
  role: Role | null;
  mode: Mode;
  shared: boolean;
  sessions: number;
  /** The user sees only the bullets shared with them (PROTOCOL §10): the title is not theirs. */
  bulletGuest: boolean;
  /** Who has it open, one per person (us included when the server has seen us). */
  people: Person[];
  rows: Row[];
  locks: Map<string, Lock>;
  lastSeq: number;
  stage: Stage;
  stageLabel: string;
  pending: number;
  unsaved: number;
  loaded: boolean;
  /** An exchange with the server has succeeded since opening (the rows are the server's, not only this device's). */
  synced: boolean;
  error: { status: number; code: string; message: string } | null;
  notice: string | null;
  noticeSeq: number;
  storageError: string | null;
}

export type EditResult =
  | { ok: true; ops: Op[] }
  | { ok: false; reason: 'locked' | 'viewer' | 'invalid'; blockId?: string; heldBy?: string; message: string };

/**
 * A snapshot the app fetched as it started (a document this device has no copy of), for the
 * engine's first snapshot load instead of a request of its own — used only for the same
 * clientId, and only once; if it failed, the engine asks again.
 */
export interface EarlySnapshot {
  clientId: string;
  promise: Promise<Snapshot>;
}

/** What `new DocSyncEngine(…)` takes. */
export interface EngineOptions {
  docId: string;
  clientId: string;
  user: { userId: string; name: string };
  store: import('./store.js').DocStore;
  baseUrl?: string;
  fetch?: typeof fetch;
  WebSocket?: any;
  EventSource?: any;
  locks?: import('./store.js').LockManagerLike | null;
  headers?: Record<string, string>;
  now?: () => number;
  /** null: no wake-up channel (the interval only). */
  transport?: ((o: import('./transport.js').LadderOptions) => import('./link.js').LadderLike) | null;
  storage?: import('./journal.js').StorageLike | null;
  snapshot?: EarlySnapshot | null;
  /** This device's copy, read by the app as it started. */
  stored?: Promise<{ meta: import('./store.js').DocMeta; blocks: Block[] } | null> | null;
}
