// Shared JSDoc types of the browser engine: the wire shapes of PROTOCOL.md (§1–§4) and the
// state the engine hands to a UI. Types only; importing this file has no effect at run time.

/** @typedef {'bullet'|'todo'|'h1'|'h2'|'h3'|'code'|'quote'} BlockType */

/**
 * A block as the server sends it (snapshot, log effects). `depth` only in snapshots.
 * @typedef {{
 *   id: string, parentId: string|null, orderKey: string, content: string, type: BlockType,
 *   checked: boolean, collapsed: boolean, language: string|null,
 *   conflictOf: string|null, conflictAuthor: {userId: string, name: string}|null,
 *   conflictResolved: boolean, version: number, deleted: boolean, deletedAt: number|null,
 *   deletedBy?: string, // opId of the delete that made this tombstone (absent when live)
 *   updatedAt: number, updatedBy: string, depth?: number
 * }} Block
 */

/**
 * @typedef {{type?: BlockType, checked?: boolean, collapsed?: boolean,
 *   language?: string|null, conflictResolved?: boolean}} BlockProps
 */

/**
 * An op (PROTOCOL §2). Only the fields of its kind are set.
 * @typedef {{
 *   opId: string,
 *   kind: 'insert'|'set_content'|'set_props'|'move'|'delete'|'restore'|'set_title',
 *   blockId?: string, parentId?: string|null, orderKey?: string, content?: string,
 *   type?: BlockType, checked?: boolean, language?: string|null,
 *   baseVersion?: number, props?: BlockProps, title?: string
 * }} Op
 */

/**
 * @typedef {{opId: string, status: 'applied'|'conflict'|'rejected', seq: number|null,
 *   blockId?: string, conflictBlockId?: string, reason?: string}} OpResult
 */

/**
 * @typedef {{e: 'block', block: Block}
 *   | {e: 'title', title: string, titleVersion: number}
 *   | {e: 'purge', blockIds: string[]}} Effect
 */

/**
 * @typedef {{seq: number, opId: string, kind: string, clientId: string, userId: string,
 *   at: number, effects: Effect[]}} LogEntry
 */

/**
 * @typedef {{blockId: string, clientId: string, userId: string, name: string,
 *   expiresInMs: number}} LeaseOfOther
 */

/**
 * GET /docs/{id}/snapshot
 * @typedef {{docId: string, title: string, titleVersion: number, icon: string|null,
 *   headSeq: number, logFloor: number, role: Role, shared: boolean, mode: Mode,
 *   sessions: number, blocks: Block[], leases: {others: LeaseOfOther[]}}} Snapshot
 */

/**
 * POST /docs/{id}/sync reply
 * @typedef {{results: OpResult[], ops: LogEntry[], hasMore: boolean, headSeq: number,
 *   leaseSeq: number, leases: {granted: string[],
 *   denied: {blockId: string, heldBy: {userId: string, name: string}}[],
 *   others: LeaseOfOther[]}, role: Role, shared: boolean, sessions: number, mode: Mode,
 *   resync: boolean, icon?: string|null}} SyncReply
 */

/** @typedef {'owner'|'editor'|'viewer'} Role */
/** @typedef {'private'|'full'} Mode */

/**
 * Where the wake-up ladder stands (PROTOCOL §4). `offline`: the last request failed or the
 * browser says offline.
 * @typedef {'connecting'|'live'|'sse'|'longpoll'|'interval'|'offline'} Stage
 */

/**
 * One visible line of the outline: a live block in document order, with its depth.
 * @typedef {{id: string, parentId: string|null, depth: number, content: string,
 *   type: BlockType, checked: boolean, collapsed: boolean, language: string|null,
 *   conflictOf: string|null, conflictAuthor: {userId: string, name: string}|null,
 *   conflictResolved: boolean, version: number, hasChildren: boolean}} Row
 */

/**
 * What the editor may change about a row when it hands the engine a new flat list.
 * @typedef {{id: string, depth: number, content: string, type?: BlockType,
 *   checked?: boolean, collapsed?: boolean, language?: string|null,
 *   conflictResolved?: boolean}} FlatRow
 */

/**
 * @typedef {{blockId: string, userId: string, name: string}} Lock
 */

/**
 * The engine's state for a UI; a new object on every change (compare by reference).
 * `rows`: a Row object is the same object as in the previous state exactly when that row's
 * values did not change, and the array is the same when no row changed. `noticeSeq`: +1 with
 * every notice set (also a repeat of the same text), so a UI can show a repeat again.
 * @typedef {{
 *   docId: string, title: string, titleVersion: number, icon: string|null,
 *   role: Role|null, mode: Mode, shared: boolean, sessions: number,
 *   rows: Row[], locks: Map<string, Lock>, lastSeq: number,
 *   stage: Stage, stageLabel: string, pending: number, unsaved: number, loaded: boolean,
 *   error: {status: number, code: string, message: string}|null,
 *   notice: string|null, noticeSeq: number, storageError: string|null
 * }} EngineState
 */

/**
 * @typedef {{ok: true, ops: Op[]} | {ok: false, reason: 'locked'|'viewer'|'invalid',
 *   blockId?: string, heldBy?: string, message: string}} EditResult
 */

export {};
