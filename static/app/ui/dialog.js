// Modal dialogs on the native <dialog> element: showModal() gives focus trapping, Escape and
// the inert background for free. Focus returns to whatever opened the dialog.

import { h, uid } from './dom.js';
import { icon } from './icons.js';
import { describeError } from '../api.js';

/**
 * A bare modal with a heading and a close button; `content` fills the body.
 * @param {{id?: string, title: string, description?: string, wide?: boolean,
 *   content: (Node|string|null)[], onClose?: () => void}} opts
 * @returns {{dialog: HTMLDialogElement, close: () => void}}
 */
export function openModal(opts) {
  const titleId = uid('dlg-title');
  const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  const closeBtn = h('button', { type: 'button', class: 'icon-btn dialog-close', 'aria-label': 'Close' }, icon('close'));
  const dialog = h(
    'dialog',
    { id: opts.id, class: `dialog${opts.wide ? ' dialog-wide' : ''}`, 'aria-labelledby': titleId },
    h('div', { class: 'dialog-head' }, h('h2', { id: titleId, class: 'dialog-title' }, opts.title), closeBtn),
    opts.description ? h('p', { class: 'dialog-desc' }, opts.description) : null,
    h('div', { class: 'dialog-body' }, ...opts.content),
  );
  const close = () => {
    if (dialog.open) dialog.close();
  };
  closeBtn.addEventListener('click', close);
  // A click on the backdrop (the dialog element itself, outside its box) closes it.
  dialog.addEventListener('mousedown', (ev) => {
    if (ev.target !== dialog) return;
    const r = dialog.getBoundingClientRect();
    const inside = ev.clientX >= r.left && ev.clientX <= r.right && ev.clientY >= r.top && ev.clientY <= r.bottom;
    if (!inside) close();
  });
  dialog.addEventListener('close', () => {
    dialog.remove();
    opts.onClose?.();
    if (opener && opener.isConnected) opener.focus();
  });
  document.body.append(dialog);
  dialog.showModal();
  return { dialog, close };
}

/**
 * Ask a yes/no question. Resolves true when confirmed.
 * @param {{title: string, message: string, confirmLabel?: string, danger?: boolean}} opts
 * @returns {Promise<boolean>}
 */
export function confirmDialog(opts) {
  return new Promise((resolve) => {
    let result = false;
    const ok = h('button', { type: 'submit', class: `btn ${opts.danger ? 'btn-danger' : 'btn-primary'}` }, opts.confirmLabel ?? 'OK');
    const cancel = h('button', { type: 'button', class: 'btn' }, 'Cancel');
    const form = h('form', { method: 'dialog', class: 'dialog-form' },
      h('p', { class: 'dialog-message' }, opts.message),
      h('div', { class: 'dialog-actions' }, cancel, ok));
    const { close } = openModal({ title: opts.title, content: [form], onClose: () => resolve(result) });
    cancel.addEventListener('click', close);
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      result = true;
      close();
    });
    cancel.focus();
  });
}

/**
 * @typedef {{name: string, label: string, value?: string, placeholder?: string, maxLength?: number,
 *   required?: boolean}
 *  | {name: string, label: string, value?: string, options: {value: string, label: string}[]}} Field
 */

/**
 * A small form in a dialog. `onSubmit` gets the values; when it throws, the error is shown in
 * the dialog and it stays open. Resolves with its result, or null when cancelled.
 * @template T
 * @param {{id?: string, title: string, description?: string, fields: Field[], submitLabel: string,
 *   onSubmit: (values: Record<string, string>) => Promise<T>}} opts
 * @returns {Promise<T|null>}
 */
export function formDialog(opts) {
  return new Promise((resolve) => {
    /** @type {T|null} */
    let result = null;
    const errorId = uid('dlg-error');
    const error = h('p', { id: errorId, class: 'form-error', role: 'alert', hidden: true });
    const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, opts.submitLabel);
    const cancel = h('button', { type: 'button', class: 'btn' }, 'Cancel');
    /** @type {(HTMLInputElement|HTMLSelectElement)[]} */
    const inputs = [];
    const rows = opts.fields.map((f) => {
      const id = uid(`dlg-${f.name}`);
      /** @type {HTMLInputElement|HTMLSelectElement} */
      let input;
      if ('options' in f) {
        input = h('select', { id, name: f.name, class: 'input', 'aria-describedby': errorId },
          f.options.map((o) => h('option', { value: o.value, selected: o.value === (f.value ?? '') }, o.label)));
      } else {
        input = h('input', {
          id, name: f.name, class: 'input', type: 'text', value: f.value ?? '', placeholder: f.placeholder,
          maxlength: f.maxLength, required: f.required, autocomplete: 'off', 'aria-describedby': errorId,
        });
      }
      inputs.push(input);
      return h('div', { class: 'field' }, h('label', { for: id, class: 'label' }, f.label), input);
    });
    const form = h('form', { class: 'dialog-form', novalidate: true }, ...rows, error, h('div', { class: 'dialog-actions' }, cancel, submit));
    const { close } = openModal({ id: opts.id, title: opts.title, description: opts.description, content: [form], onClose: () => resolve(result) });
    cancel.addEventListener('click', close);
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      /** @type {Record<string, string>} */
      const values = {};
      for (const i of inputs) values[i.name] = i.value;
      const missing = inputs.find((i) => i instanceof HTMLInputElement && i.required && !i.value.trim());
      if (missing) {
        error.textContent = 'Please fill this in.';
        error.hidden = false;
        missing.setAttribute('aria-invalid', 'true');
        missing.focus();
        return;
      }
      submit.disabled = true;
      submit.setAttribute('aria-busy', 'true');
      try {
        result = await opts.onSubmit(values);
        close();
      } catch (e) {
        error.textContent = describeError(e);
        error.hidden = false;
      } finally {
        submit.disabled = false;
        submit.removeAttribute('aria-busy');
      }
    });
    const first = inputs[0];
    if (first) {
      first.focus();
      if (first instanceof HTMLInputElement) first.select();
    }
  });
}
