// The editor page's contract with the app shell (main.js imports these types statically, so
// tsc checks both sides of the seam; the module itself is loaded on demand).

import type { DocSyncEngine } from '../../engine/engine.js';
import type { EarlySnapshot } from '../../engine/types.js';
import type { Api } from '../api.js';

/** The signed-in user as the shell knows them. */
export interface Me {
  userId?: string;
  id?: string;
  name?: string;
  displayName?: string;
}

/** Where in the document the URL points: a zoomed bullet and/or a bullet to reveal. */
export interface EditorRoute {
  /** `/d/{doc}/b/{block}`: show only this bullet and what is under it. */
  zoomId: string | null;
  /** `#blk_…`: scroll to this bullet and highlight it. */
  blockId: string | null;
}

export interface MountOptions extends EditorRoute {
  docId: string;
  me: Me;
  clientId: string;
  api: Api;
  openShareDialog: (docId: string, opts?: { title?: string; blockId?: string; onChanged?: () => void }) => void;
  /** Goes to a URL of the app (the router's navigate): used for zooming, so Back zooms out. */
  navigate: (url: string) => void;
  /** A snapshot fetched while the editor's modules loaded (used once, then dropped). */
  snapshot?: EarlySnapshot | null;
  /** This device's copy, read while the editor's modules loaded. */
  stored?: Promise<any> | null;
  /** The server's first rows of a document this device has no copy of (`GET /docs/{id}/first-rows`), drawn read-only until the snapshot is in. */
  firstRows?: Promise<unknown> | null;
}

/** What the shell holds while the editor is shown. */
export interface EditorMount {
  engine: DocSyncEngine;
  /** The URL changed within the same document (zoom in/out, another #bullet). */
  route(r: EditorRoute): void;
  destroy(): void;
}

export interface EditorModule {
  mountEditor(root: HTMLElement, opts: MountOptions): Promise<EditorMount>;
}
