// Types of @docsync/client's entry point (index.js). The engine's own types are in types.d.ts.

import type { EngineState, EngineOptions, Row, Op, EditResult } from './types.js';

export type { EngineState, EngineOptions, Row, Op, EditResult, Block, Snapshot, SyncReply, LogEntry } from './types.js';

/** The whole engine: one open document, as the browser's editor uses it. */
export declare class DocSyncEngine {
  constructor(o: EngineOptions);
  readonly docId: string;
  readonly clientId: string;
  open(): Promise<void>;
  close(): Promise<void>;
  subscribe(fn: (s: EngineState) => void): void;
  unsubscribe(fn: (s: EngineState) => void): void;
  submitOps(ops: Op[], opts: { step: string }): EditResult;
  setTitle(text: string): EditResult;
  setOnline(online: boolean): void;
  setVisible(visible: boolean): void;
  syncNow(): Promise<void>;
  undo(): EditResult | null;
  redo(): EditResult | null;
}

export declare function openStore(opts?: { indexedDB?: IDBFactory; IDBKeyRange?: typeof IDBKeyRange; name?: string }): Promise<import('./store.js').DocStore>;
export declare function createMemoryLocks(): import('./store.js').LockManagerLike;
export declare function newBlockId(): string;
export declare function newClientId(): string;
export declare function newOpId(): string;
/** An order key strictly between `a` and `b` (null: open end). */
export declare function keyBetween(a: string | null, b: string | null): string;

export interface OpenOptions {
  /** Where docsync is, e.g. "https://notes.example.com". */
  baseUrl: string;
  /** An API token (Settings › API tokens); a `dsr_` token may read, a `dsw_` one may edit. */
  token: string;
  docId: string;
  /** This program's client ID (a new one when absent; keep it to go on with its queue). */
  clientId?: string;
  /** An IndexedDB (in Node: `fake-indexeddb`); the global one when absent. */
  indexedDB?: IDBFactory;
  IDBKeyRange?: typeof IDBKeyRange;
  /** The IndexedDB database's name ("docsync"). */
  storeName?: string;
  fetch?: typeof fetch;
}

/** Opens a document and resolves once it shows the server's state. */
export declare function openDocument(o: OpenOptions): Promise<DocumentClient>;

export declare class DocumentClient {
  readonly engine: DocSyncEngine;
  /** The latest state (rows, title, pending ops, the wake-up stage, errors). */
  readonly state: EngineState;
  /** The bullets in document order. */
  readonly rows: Row[];
  /** Adds a bullet as the last child of `parentId` (top level when absent); its ID. */
  addBullet(content: string, where?: { parentId?: string | null }): string;
  setText(blockId: string, content: string): void;
  remove(blockId: string): void;
  submit(ops: Op[], step: string): void;
  setOnline(online: boolean): void;
  /** The state once `pred` holds (checked now and at every change). */
  until(pred: (s: EngineState) => boolean, timeoutMs?: number): Promise<EngineState>;
  /** Resolves once everything this client did is on the server. */
  saved(timeoutMs?: number): Promise<EngineState>;
  close(): Promise<void>;
}
