// @ts-check
// The boot guard: a classic script that runs before the app's module (/app/main.js). When
// that module or one of its imports fails to load — Chromium aborts a request now and then
// while it restarts a service worker whose renderer just crashed; a connection drops
// mid-start — nothing of the app runs and the page would stay blank. The guard reloads the
// page once (a page never fetches a failed module again); when that load fails too it says
// so, with a Reload button, instead of reloading in a loop: the flag of the one reload stays
// in sessionStorage until the module runs. Nothing typed is at stake: without the app's
// module this page has not taken a key.
(function () {
  /** Set before the one reload; the app's module removes it once it runs (main.js). */
  const KEY = 'docsync.bootReload';
  const APP = '/app/main.js';

  /** @param {Event} event */
  function onLoadError(event) {
    const el = event.target;
    if (!(el instanceof HTMLScriptElement) || el.type !== 'module') return;
    if (new URL(el.src, location.href).pathname !== APP) return;
    try {
      if (!sessionStorage.getItem(KEY)) {
        sessionStorage.setItem(KEY, '1');
        location.reload();
        return;
      }
    } catch {
      // No session storage (blocked): no way to tell a first failure from a loop; say it.
    }
    showFailure();
  }

  function showFailure() {
    const main = document.getElementById('app');
    if (!main) return;
    const box = document.createElement('div');
    box.className = 'empty boot-failed';
    box.setAttribute('role', 'alert');
    const title = document.createElement('p');
    title.className = 'empty-title';
    title.textContent = 'docsync could not start';
    const text = document.createElement('p');
    text.className = 'muted';
    text.textContent = 'Its app files did not load. Check the connection and reload; what you typed before is kept on this device.';
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'btn btn-primary';
    button.textContent = 'Reload';
    button.addEventListener('click', function () {
      location.reload();
    });
    box.append(title, text, button);
    main.replaceChildren(box);
    button.focus();
  }

  // A failed script load does not bubble: listen in the capture phase.
  document.addEventListener('error', onLoadError, true);
})();
