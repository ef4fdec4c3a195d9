// @ts-check
// The transfer page: a sandboxed extension page (no extension API, an
// opaque origin) that a livetab program's in-page script frames into a tab
// to move one file's bytes past CDP. Its URL's fragment names a transfer of
// the relay on 127.0.0.1; the parent then asks once, by postMessage:
//   {op: 'get'}        -> it fetches the bytes and answers {blob}
//   {op: 'post', blob} -> it posts the Blob there and answers {done: true}
// or {err} when that fails. A Blob crosses postMessage by reference, so the
// bytes never become a JavaScript string.
//
// Any page may frame this page with any fragment: it talks only to a
// transfer URL on 127.0.0.1 (and its CSP to nothing else), whose token the
// relay serves once; without a valid one there is nothing to get.
'use strict';

(function () {
  const TRANSFER = /^http:\/\/127\.0\.0\.1:[0-9]{1,5}\/livetab\/transfer\/[A-Za-z0-9_-]{43}$/;
  const target = decodeURIComponent(location.hash.slice(1));
  if (!TRANSFER.test(target) || window.parent === window) return;
  let used = false;

  /** @param {object} msg */
  function answer(msg) {
    window.parent.postMessage(Object.assign({ livetabTransfer: true }, msg), '*');
  }

  window.addEventListener('message', async (ev) => {
    if (ev.source !== window.parent || used) return;
    const d = ev.data;
    if (!d || (d.op !== 'get' && d.op !== 'post')) return;
    used = true;
    try {
      if (d.op === 'get') {
        const r = await fetch(target, { cache: 'no-store', credentials: 'omit' });
        if (!r.ok) throw new Error('status ' + r.status);
        answer({ blob: await r.blob() });
      } else {
        if (!(d.blob instanceof Blob)) throw new Error('no blob');
        // A Blob without a type makes a request without a preflight.
        const r = await fetch(target, { method: 'POST', body: d.blob.slice(), cache: 'no-store', credentials: 'omit' });
        if (!r.ok) throw new Error('status ' + r.status);
        answer({ done: true });
      }
    } catch (e) {
      answer({ err: String(e && /** @type {Error} */ (e).message || e) });
    }
  });
  answer({ ready: true });
})();
