// @ts-check
// The in-page half of package upload. This file is a function declaration:
// Go calls it on the target element (Runtime.callFunctionOn, so it runs in
// that element's frame) or evaluates it in the main world, and keeps the
// returned object only by its RemoteObjectId in a per-upload object group.
// Page scripts never see it or the bytes it collects; releasing the group
// frees them.
//
// Go pushes each file's bytes as base64 slices (put), the library turns
// them into Blob parts, builds File objects (finish) and hands them to the
// page the way a person would: assigned to a file input with input/change
// events, dropped on a drop zone, or pasted.
//
// Entry points are reached through call.js and return {ok: value} or
// {err: code, msg: text} by value.
function () {
  'use strict';

  class Fail {
    constructor(code, msg) {
      this.code = code;
      this.msg = msg;
    }
  }

  /**
   * @param {string} code
   * @param {string} msg
   * @returns {never}
   */
  function fail(code, msg) {
    throw new Fail(code, msg);
  }

  // Files being built, by id: their parts in order, then the File.
  const files = new Map();
  let nextID = 1;

  function fromBase64(b64) {
    if (Uint8Array.fromBase64) return Uint8Array.fromBase64(b64);
    const s = atob(b64);
    const u = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) u[i] = s.charCodeAt(i);
    return u;
  }

  function tagOf(el) {
    return '<' + el.localName + (el.id ? '#' + el.id : '') + '>';
  }

  function deepQuery(root, sel) {
    const hit = root.querySelector(sel);
    if (hit) return hit;
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) {
        const h = deepQuery(el.shadowRoot, sel);
        if (h) return h;
      }
    }
    return null;
  }

  // fileInput finds the file input an element stands for: itself, the
  // control of a label, or the one file input inside it.
  function fileInput(el) {
    if (!el || el.nodeType !== 1) fail('notinput', 'not an element');
    if (el.localName === 'input') {
      if (el.type !== 'file') fail('notinput', 'the ' + tagOf(el) + ' is an input of type ' + el.type + ', not a file input');
      return el;
    }
    if (el.localName === 'label' && el.control) return fileInput(el.control);
    const inner = el.querySelectorAll('input[type=file]');
    if (inner.length === 1) return inner[0];
    if (el.shadowRoot) {
      const s = el.shadowRoot.querySelectorAll('input[type=file]');
      if (s.length === 1) return s[0];
    }
    fail('notinput', 'the ' + tagOf(el) + ' is not a file input and holds ' +
      (inner.length ? inner.length + ' of them: point at one' : 'none: use Drop for a drop zone'));
  }

  // accepts says whether a file of name and type passes an accept list.
  function accepts(accept, name, type) {
    if (!accept) return true;
    name = name.toLowerCase();
    type = (type || '').toLowerCase();
    return accept.split(',').some((tok) => {
      tok = tok.trim().toLowerCase();
      if (!tok) return false;
      if (tok.startsWith('.')) return name.endsWith(tok);
      if (tok.endsWith('/*')) return type.startsWith(tok.slice(0, -1));
      return type === tok;
    });
  }

  function describe(list) {
    return Array.from(list || [], (f) => ({ name: f.name, type: f.type, size: f.size, lastModified: f.lastModified }));
  }

  /** @typedef {{over: Event | null, drop: Event | null, inside: boolean, files: object[]}} DragWatch */
  /** @type {{w: DragWatch, stop: () => void} | null} */
  let drag = null;

  function stopDrag() {
    if (drag) drag.stop();
    drag = null;
  }

  function sleep(ms) {
    return new Promise((r) => setTimeout(r, ms));
  }

  function center(el) {
    const r = el.getBoundingClientRect();
    return { clientX: r.left + r.width / 2, clientY: r.top + r.height / 2 };
  }

  // openFrame frames the extension's transfer page at url and waits (up to
  // readyMs) for it to say it is ready. ask then sends it one message and
  // waits for its answer; close removes the frame, and with it anything it
  // held.
  function openFrame(url, readyMs) {
    return new Promise((resolve, reject) => {
      const frame = document.createElement('iframe');
      frame.setAttribute('aria-hidden', 'true');
      frame.style.cssText = 'position:fixed;width:1px;height:1px;left:-10px;top:-10px;border:0;opacity:0;pointer-events:none';
      /** @type {((d: any) => void) | null} */
      let waiter = null;
      let timer = 0;
      let watch = 0;
      const close = () => {
        clearTimeout(timer);
        clearInterval(watch);
        window.removeEventListener('message', on, true);
        frame.remove();
        if (waiter) waiter({ err: 'the transfer frame was closed' });
      };
      const on = (/** @type {MessageEvent} */ e) => {
        if (e.source !== frame.contentWindow || !e.data || !e.data.livetabTransfer) return;
        e.stopImmediatePropagation();
        if (e.data.ready) {
          clearTimeout(timer);
          resolve(handle);
          return;
        }
        const w = waiter;
        waiter = null;
        if (w) w(e.data);
      };
      const handle = {
        close,
        ask(msg) {
          return new Promise((res, rej) => {
            if (!frame.isConnected || !frame.contentWindow) rej(new Fail('channel', 'the page removed the transfer frame'));
            waiter = (d) => (d.err ? rej(new Fail('channel', 'the transfer frame failed: ' + d.err)) : res(d));
            /** @type {Window} */ (frame.contentWindow).postMessage(msg, '*');
          });
        },
      };
      window.addEventListener('message', on, true);
      timer = setTimeout(() => {
        close();
        reject(new Fail('channel', 'the transfer frame did not load within ' + readyMs + ' ms'));
      }, readyMs);
      // A page may remove the frame, before it loads or while it fetches:
      // no need to wait it out.
      watch = setInterval(() => {
        if (frame.isConnected) return;
        const w = waiter;
        waiter = null;
        close();
        if (w) w({ err: 'the page removed the transfer frame' });
        reject(new Fail('channel', 'the page removed the transfer frame'));
      }, 50);
      frame.src = url;
      (document.body || document.documentElement).append(frame);
    });
  }

  const frames = new Map();

  function transfer(ids) {
    const dt = new DataTransfer();
    for (const id of ids) {
      const f = files.get(id);
      if (!f || !f.file) fail('gone', 'file ' + id + ' was not finished');
      dt.items.add(f.file);
    }
    return dt;
  }

  const api = {
    find(sel) {
      return deepQuery(document, sel);
    },

    // probe says by value whether el stands for a file input; input then
    // returns that input by reference.
    probe(el) {
      fileInput(el);
      return true;
    },

    input(el) {
      return fileInput(el);
    },

    // check refuses what the page would refuse before any byte moves: a
    // disabled input, several files for a single one, a type outside
    // accept. metas are [{name, type}].
    check(el, metas) {
      const input = fileInput(el);
      if (input.disabled) fail('disabled', 'the file input ' + tagOf(input) + ' is disabled');
      if (metas.length > 1 && !input.multiple) {
        fail('multiple', 'the file input ' + tagOf(input) + ' takes one file, not ' + metas.length);
      }
      const accept = input.getAttribute('accept') || '';
      for (const m of metas) {
        if (!accepts(accept, m.name, m.type)) {
          fail('accept', 'the file input ' + tagOf(input) + ' accepts "' + accept + '", not ' + m.name + ' (' + (m.type || 'unknown type') + ')');
        }
      }
      return true;
    },

    create() {
      const id = nextID++;
      files.set(id, { parts: [], file: null });
      return id;
    },

    put(id, index, b64) {
      const f = files.get(id);
      if (!f) fail('gone', 'file ' + id + ' is gone');
      f.parts[index] = new Blob([fromBase64(b64)]);
      return true;
    },

    finish(id, name, type, lastModified, size) {
      const f = files.get(id);
      if (!f) fail('gone', 'file ' + id + ' is gone');
      for (let i = 0; i < f.parts.length; i++) {
        if (!f.parts[i]) fail('js', 'slice ' + i + ' of ' + name + ' never arrived');
      }
      f.file = new File(f.parts, name, { type, lastModified });
      f.parts = null;
      if (f.file.size !== size) fail('js', name + ' has ' + f.file.size + ' bytes in the page, not ' + size);
      return f.file.size;
    },

    // frameOpen frames the extension's transfer page for one transfer of
    // the relay (Livetab.openTransfer); frameGet then builds a file from
    // the bytes it fetches from there, past CDP.
    async frameOpen(url, readyMs) {
      const h = await openFrame(url, readyMs);
      const id = nextID++;
      frames.set(id, h);
      return id;
    },

    async frameGet(frameID, name, type, lastModified, size) {
      const h = frames.get(frameID);
      if (!h) fail('gone', 'transfer frame ' + frameID + ' is gone');
      try {
        const got = await h.ask({ op: 'get' });
        if (!(got.blob instanceof Blob)) fail('channel', 'the transfer frame gave no Blob');
        const file = new File([got.blob], name, { type, lastModified });
        if (file.size !== size) fail('channel', name + ' has ' + file.size + ' bytes in the page, not ' + size);
        const id = nextID++;
        files.set(id, { parts: null, file });
        return id;
      } finally {
        h.close();
        frames.delete(frameID);
      }
    },

    frameClose(frameID) {
      const h = frames.get(frameID);
      if (h) h.close();
      frames.delete(frameID);
      return true;
    },

    // assign puts finished files into a file input and fires the events a
    // person's choice would fire.
    assign(el, ids) {
      const input = fileInput(el);
      const dt = transfer(ids);
      input.files = dt.files;
      input.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
      input.dispatchEvent(new Event('change', { bubbles: true }));
      return describe(dt.files);
    },

    // verify waits settleMs for the page to react to new files, then looks
    // for a rejection: a custom validity message (how pages report a size
    // limit or a bad type) on the input.
    async verify(el, settleMs) {
      const input = fileInput(el);
      await sleep(settleMs);
      if (input.validity && input.validity.customError) {
        fail('rejected', 'the page rejected the file: ' + input.validationMessage);
      }
      return describe(input.files);
    },

    // drop drags the files over el and drops them: dragenter, dragover and
    // drop with a DataTransfer holding them. A target whose dragover is not
    // cancelled does not take drops, as in a real drag.
    async drop(el, ids, settleMs) {
      const dt = transfer(ids);
      dt.effectAllowed = 'all';
      const at = center(el);
      const init = Object.assign({ bubbles: true, cancelable: true, composed: true, dataTransfer: dt }, at);
      el.dispatchEvent(new DragEvent('dragenter', init));
      const over = new DragEvent('dragover', init);
      el.dispatchEvent(over);
      if (!over.defaultPrevented) {
        el.dispatchEvent(new DragEvent('dragleave', init));
        fail('nodrop', 'the ' + tagOf(el) + ' does not take drops: nothing cancelled its dragover event; point at the drop zone itself');
      }
      const drop = new DragEvent('drop', init);
      el.dispatchEvent(drop);
      await sleep(settleMs);
      return { accepted: drop.defaultPrevented, files: describe(dt.files) };
    },

    // dragWatch follows a drag the browser itself delivers
    // (Input.dispatchDragEvent, trusted events as from a person's mouse)
    // over el, and returns el's center in the viewport, where the drag
    // goes. The listeners are the capture-phase ones of window, so the
    // page's own handling is what dragState reads afterwards.
    dragWatch(el) {
      if (window.top !== window) fail('nodrop', 'the drop zone is in a frame, whose coordinates the drag does not reach');
      el.scrollIntoView({ block: 'center', inline: 'center' });
      stopDrag();
      /** @type {DragWatch} */
      const w = { over: null, drop: null, inside: true, files: [] };
      const on = (/** @type {Event} */ e) => {
        if (!(e.target instanceof Node) || !el.contains(e.target)) w.inside = false;
        if (e.type === 'dragover') w.over = e;
        if (e.type === 'drop') {
          w.drop = e;
          w.files = describe(/** @type {DragEvent} */ (e).dataTransfer ? /** @type {DataTransfer} */ (/** @type {DragEvent} */ (e).dataTransfer).files : null);
        }
      };
      window.addEventListener('dragover', on, true);
      window.addEventListener('drop', on, true);
      drag = {
        w,
        stop: () => {
          window.removeEventListener('dragover', on, true);
          window.removeEventListener('drop', on, true);
        },
      };
      return center(el);
    },

    // dragState says how the page took the watched drag so far.
    async dragState(settleMs) {
      if (!drag) fail('gone', 'no drag is watched');
      await sleep(settleMs);
      const w = drag.w;
      return {
        over: !!w.over,
        accepted: !!(w.over && w.over.defaultPrevented),
        inside: w.inside,
        dropped: !!w.drop,
        dropAccepted: !!(w.drop && w.drop.defaultPrevented),
        files: w.files,
      };
    },

    dragStop() {
      stopDrag();
    },

    // paste pastes the files into el as a clipboard paste would.
    async paste(el, ids, settleMs) {
      const dt = transfer(ids);
      if (el.focus) el.focus();
      let ev = new ClipboardEvent('paste', { bubbles: true, cancelable: true, composed: true, clipboardData: dt });
      if (!ev.clipboardData) Object.defineProperty(ev, 'clipboardData', { value: dt });
      el.dispatchEvent(ev);
      await sleep(settleMs);
      return { accepted: ev.defaultPrevented, files: describe(dt.files) };
    },

    release(id) {
      files.delete(id);
    },

    async call(name, args) {
      try {
        return { ok: await this[name](...args) };
      } catch (e) {
        if (e instanceof Fail) return { err: e.code, msg: e.msg };
        return { err: 'js', msg: String(e && /** @type {Error} */ (e).stack || e) };
      }
    },
  };
  return api;
}
