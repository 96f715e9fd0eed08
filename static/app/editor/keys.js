// The editor's key map: a keydown (as plain fields, so Node tests can call it) → a command
// name. Ctrl and Cmd are the same modifier ("Mod"). The page decides what each command does
// in context (code blocks, locked bullets, caret position).

/**
 * @typedef {'split'|'newline'|'toggleTodo'|'indent'|'outdent'|'moveUp'|'moveDown'|'collapse'
 *   |'expand'|'undo'|'redo'|'up'|'down'|'left'|'right'|'backspace'|'delete'|'escape'
 *   |'selectUp'|'selectDown'|'selectAll'|'zoomIn'|'zoomOut'|'find'|'expandAll'|'collapseAll'} Command
 */

/**
 * @param {{key: string, ctrlKey?: boolean, metaKey?: boolean, altKey?: boolean, shiftKey?: boolean}} e
 * @returns {Command|null}
 */
export function commandFor(e) {
  const mod = !!(e.ctrlKey || e.metaKey);
  const alt = !!e.altKey;
  const shift = !!e.shiftKey;
  const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
  if (mod && !alt && key === 'z') return shift ? 'redo' : 'undo';
  if (mod && !alt && !shift && key === 'y') return 'redo';
  if (mod && !alt && !shift && key === 'f') return 'find';
  if (mod && !alt && !shift && key === 'a') return 'selectAll';
  switch (key) {
    case 'Enter':
      if (mod && !alt) return 'toggleTodo';
      if (alt) return null;
      return shift ? 'newline' : 'split';
    case 'Tab':
      if (mod || alt) return null;
      return shift ? 'outdent' : 'indent';
    case 'ArrowUp':
    case 'ArrowDown': {
      const up = key === 'ArrowUp';
      if (alt && shift && !mod) return up ? 'moveUp' : 'moveDown';
      if (mod && !alt && !shift) return up ? 'collapse' : 'expand';
      if (mod && shift && !alt) return up ? 'collapseAll' : 'expandAll';
      if (shift && !mod && !alt) return up ? 'selectUp' : 'selectDown';
      if (!mod && !alt && !shift) return up ? 'up' : 'down';
      return null;
    }
    case 'ArrowLeft':
    case 'ArrowRight':
      if (alt && !mod && !shift) return key === 'ArrowLeft' ? 'zoomOut' : 'zoomIn';
      if (mod || alt || shift) return null;
      return key === 'ArrowLeft' ? 'left' : 'right';
    case 'Backspace':
      return mod || alt || shift ? null : 'backspace';
    case 'Delete':
      return mod || alt || shift ? null : 'delete';
    case 'Escape':
      return 'escape';
    default:
      return null;
  }
}
