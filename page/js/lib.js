// @ts-check
// The in-page half of package page. Go evaluates this file once per document
// and keeps the returned object alive by its RemoteObjectId, so page scripts
// never get a reference to it or to the element registry in its closure. The
// argument is the object that reader.js evaluates to.
//
// Every entry point is reached through call(name, args), which returns
// {ok: value} or {err: code, msg: text} by value, so the Go side never has to
// unwrap JavaScript exceptions.
(function (reader) {
  'use strict';

  const ATTR = 'data-livetab-ref';

  // Roles a person can act on. Structural roles (row, cell, list...) are left
  // out: they would flood the snapshot without giving the agent a target.
  const ROLES = new Set([
    'button', 'link', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio',
    'checkbox', 'radio', 'option', 'switch', 'textbox', 'searchbox', 'combobox',
    'slider', 'spinbutton', 'treeitem', 'listbox', 'scrollbar',
  ]);

  const SKIP = new Set([
    'script', 'style', 'noscript', 'template', 'head', 'meta', 'link', 'title',
    'datalist', 'base', 'param', 'source', 'track',
  ]);

  const TEXT_INPUTS = new Set([
    'text', 'search', 'email', 'url', 'tel', 'password', 'number', 'date',
    'datetime-local', 'month', 'time', 'week', '',
  ]);

  // Images smaller than this are icons and decoration, not content.
  const MIN_IMG = 48;

  // reg is the registry of the last snapshot: els[i] is the element with index
  // i, targets[i] the element to point at (a visible label for a hidden
  // checkbox), frames[k] the iframe element of frame k.
  // The elements of the last snapshot by index (0 is unused), what a click
  // on each aims at, and its iframes by frame index.
  /** @typedef {{gen: string, els: (Element | null)[], targets: (Element | null)[], frames: (Element | null)[]}} Registry */
  /** @type {Registry} */
  let reg = { gen: '', els: [null], targets: [null], frames: [null] };

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

  function clean(s) {
    return (s == null ? '' : String(s)).replace(/\s+/g, ' ').trim();
  }

  function cut(s, n) {
    s = clean(s);
    return s.length > n ? s.slice(0, n - 1) + '…' : s;
  }

  function winOf(el) {
    return el.ownerDocument.defaultView || window;
  }

  function styleOf(el) {
    return winOf(el).getComputedStyle(el);
  }

  // frameOffset is the position of win's viewport in the viewport of the
  // outermost window this script can reach (the top window, or in an
  // out-of-process iframe, that iframe's window).
  function frameOffset(win) {
    let x = 0;
    let y = 0;
    for (;;) {
      /** @type {Element | null} */
      let fe = null;
      try {
        fe = win.frameElement;
      } catch (e) {
        fe = null;
      }
      if (!fe) break;
      const r = fe.getBoundingClientRect();
      const cs = styleOf(fe);
      x += r.left + fe.clientLeft + parseFloat(cs.paddingLeft || '0');
      y += r.top + fe.clientTop + parseFloat(cs.paddingTop || '0');
      win = winOf(fe);
    }
    return { x, y };
  }

  function deepActive(doc) {
    let a = doc.activeElement;
    for (;;) {
      if (a && a.shadowRoot && a.shadowRoot.activeElement) {
        a = a.shadowRoot.activeElement;
      } else if (a && (a.localName === 'iframe' || a.localName === 'frame')) {
        /** @type {Document | null} */
        let d = null;
        try {
          d = a.contentDocument;
        } catch (e) {
          d = null;
        }
        if (!d || !d.activeElement) break;
        a = d.activeElement;
      } else {
        break;
      }
    }
    return a;
  }

  function isVisible(el, cs) {
    cs = cs || styleOf(el);
    if (cs.display === 'none' || cs.visibility !== 'visible') return false;
    if (parseFloat(cs.opacity) === 0) return false;
    if (el.checkVisibility && !el.checkVisibility({
      opacityProperty: true, visibilityProperty: true, contentVisibilityAuto: true,
    })) return false;
    const r = el.getBoundingClientRect();
    // Screen-reader-only text is clipped to 1×1 px: not for a person.
    return r.width >= 2 && r.height >= 2;
  }

  function inputType(el) {
    return (el.getAttribute('type') || 'text').toLowerCase();
  }

  function implicitRole(el, tag) {
    switch (tag) {
      case 'a':
      case 'area':
        return el.hasAttribute('href') ? 'link' : '';
      case 'button':
      case 'summary':
        return 'button';
      case 'select':
        return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
      case 'textarea':
        return 'textbox';
      case 'img':
        return 'img';
      case 'video':
      case 'audio':
        return tag;
      case 'option':
        return 'option';
      case 'input': {
        const t = inputType(el);
        switch (t) {
          case 'button':
          case 'submit':
          case 'reset':
          case 'image':
          case 'file':
            return 'button';
          case 'checkbox':
            return 'checkbox';
          case 'radio':
            return 'radio';
          case 'range':
            return 'slider';
          case 'number':
            return 'spinbutton';
          case 'search':
            return el.list ? 'combobox' : 'searchbox';
          case 'color':
          case 'date':
          case 'datetime-local':
          case 'month':
          case 'time':
          case 'week':
            return t;
          default:
            return el.list ? 'combobox' : 'textbox';
        }
      }
    }
    if (isEditingHost(el)) return 'textbox';
    return '';
  }

  function roleOf(el, tag) {
    const r = (el.getAttribute('role') || '').trim().split(/\s+/)[0].toLowerCase();
    return r || implicitRole(el, tag);
  }

  function isEditingHost(el) {
    if (!el.isContentEditable) return false;
    const p = el.parentElement;
    return !p || !p.isContentEditable;
  }

  function textOf(el) {
    const t = el.innerText;
    return clean(t == null ? el.textContent : t);
  }

  function byIdText(el, ids) {
    const root = el.getRootNode();
    const parts = [];
    for (const id of ids.split(/\s+/)) {
      if (!id) continue;
      const r = root.getElementById ? root.getElementById(id) : el.ownerDocument.getElementById(id);
      if (r) parts.push(textOf(r));
    }
    return clean(parts.join(' '));
  }

  // accName is a short approximation of the accessible name: good enough to
  // tell the agent what a control is, far cheaper than the full algorithm.
  function accName(el, tag, role) {
    let v = el.getAttribute('aria-labelledby');
    if (v) {
      const s = byIdText(el, v);
      if (s) return s;
    }
    v = el.getAttribute('aria-label');
    if (v && v.trim()) return clean(v);
    if (tag === 'input' || tag === 'select' || tag === 'textarea') {
      const t = inputType(el);
      if (tag === 'input' && (t === 'button' || t === 'submit' || t === 'reset')) {
        return clean(el.value) || (t === 'submit' ? 'Submit' : t === 'reset' ? 'Reset' : '');
      }
      if (tag === 'input' && t === 'image') return clean(el.alt) || clean(el.value) || 'Submit';
      if (el.labels && el.labels.length) {
        const s = clean(Array.from(el.labels).map(textOf).join(' '));
        if (s) return s;
      }
      if (el.title) return clean(el.title);
      if (el.placeholder) return clean(el.placeholder);
      return '';
    }
    if (tag === 'img') return clean(el.alt) || clean(el.title);
    if (tag === 'video' || tag === 'audio') return clean(el.title) || clean(el.getAttribute('aria-label'));
    if (isEditingHost(el)) {
      return clean(el.getAttribute('aria-placeholder') || el.getAttribute('data-placeholder') || el.title);
    }
    let s = textOf(el);
    if (!s) {
      const img = el.querySelector('img[alt]');
      if (img) s = clean(img.alt);
    }
    if (!s) {
      const t = el.querySelector('svg title');
      if (t) s = clean(t.textContent);
    }
    if (!s) s = clean(el.title);
    if (!s && el.shadowRoot) s = clean(el.shadowRoot.textContent);
    return s;
  }

  function valueOf(el, tag, role) {
    if (tag === 'input') {
      const t = inputType(el);
      if (t === 'checkbox' || t === 'radio' || t === 'button' || t === 'submit' ||
          t === 'reset' || t === 'image') return '';
      if (t === 'file') return el.files ? Array.from(el.files).map((f) => f.name).join(', ') : '';
      // A password never goes to a model; its length tells whether it is set.
      if (t === 'password') return el.value ? '•'.repeat(Math.min(el.value.length, 12)) : '';
      return el.value;
    }
    if (tag === 'textarea') return el.value;
    if (tag === 'select') {
      return Array.from(el.selectedOptions).map((o) => clean(o.label || o.text)).join(', ');
    }
    if (isEditingHost(el)) return textOf(el);
    if (role === 'slider' || role === 'spinbutton' || role === 'scrollbar') {
      return clean(el.getAttribute('aria-valuetext') || el.getAttribute('aria-valuenow'));
    }
    if (role === 'combobox' || role === 'textbox' || role === 'searchbox') {
      return clean(el.getAttribute('aria-valuetext') || '');
    }
    return '';
  }

  function checkedOf(el, tag, role) {
    if (tag === 'input') {
      const t = inputType(el);
      if (t === 'checkbox' || t === 'radio') {
        if (el.indeterminate) return 'mixed';
        return el.checked ? 'true' : 'false';
      }
    }
    if (role === 'checkbox' || role === 'radio' || role === 'switch' ||
        role === 'menuitemcheckbox' || role === 'menuitemradio') {
      const a = el.getAttribute('aria-checked');
      return a === 'true' || a === 'mixed' ? a : 'false';
    }
    return '';
  }

  function isDisabled(el) {
    try {
      if (el.matches(':disabled')) return true;
    } catch (e) {
      // not a form control
    }
    return el.getAttribute('aria-disabled') === 'true';
  }

  function statesOf(el, tag, role) {
    const s = [];
    if (isDisabled(el)) s.push('disabled');
    const ex = el.getAttribute('aria-expanded');
    if (ex === 'true') s.push('expanded');
    else if (ex === 'false') s.push('collapsed');
    if (tag === 'summary' && el.parentElement && el.parentElement.localName === 'details') {
      s.push(el.parentElement.open ? 'expanded' : 'collapsed');
    }
    if (el.getAttribute('aria-selected') === 'true' || (tag === 'option' && el.selected)) s.push('selected');
    const pr = el.getAttribute('aria-pressed');
    if (pr === 'true' || pr === 'mixed') s.push('pressed');
    if (el.required || el.getAttribute('aria-required') === 'true') s.push('required');
    if (el.readOnly && (tag === 'input' || tag === 'textarea')) s.push('readonly');
    if (el.getAttribute('aria-invalid') === 'true') s.push('invalid');
    if (deepActive(el.ownerDocument) === el) s.push('focused');
    return s;
  }

  // interactive tells whether a person could act on the element. pcur is the
  // computed cursor of the parent: cursor is inherited, so only the element
  // where "pointer" starts is the click target.
  function interactive(el, tag, cs, pcur, inInter) {
    const r = (el.getAttribute('role') || '').trim().split(/\s+/)[0].toLowerCase();
    if (r && ROLES.has(r)) return true;
    switch (tag) {
      case 'a':
      case 'area':
        if (el.hasAttribute('href')) return true;
        break;
      case 'button':
      case 'select':
      case 'textarea':
      case 'summary':
      case 'video':
      case 'audio':
        return true;
      case 'input':
        return inputType(el) !== 'hidden';
      case 'img':
        return !inInter;
      case 'html':
      case 'body':
        return false;
    }
    if (isEditingHost(el)) return true;
    const ti = el.getAttribute('tabindex');
    if (ti !== null && ti !== '' && Number(ti) >= 0) return true;
    if (el.hasAttribute('onclick')) return true;
    return cs.cursor === 'pointer' && pcur !== 'pointer' && !inInter;
  }

  function hitTarget(target, lx, ly) {
    const root = target.getRootNode();
    const src = root && root.elementFromPoint ? root : target.ownerDocument;
    const h = src.elementFromPoint(lx, ly);
    if (!h) return { ok: false, hit: null };
    if (h === target || target.contains(h)) return { ok: true, hit: h };
    // A target with pointer-events:none lets the click through to an
    // ancestor, which is what a person clicking there gets too.
    if (h.contains(target) && styleOf(target).pointerEvents === 'none') return { ok: true, hit: h };
    return { ok: false, hit: h };
  }

  // samplePoints are the points tried, in order, inside the visible part of a
  // box: the centre first, then the centres of its quarters, so a target half
  // hidden under a sticky header is still reachable.
  function samplePoints(x0, y0, x1, y1) {
    const w = x1 - x0;
    const h = y1 - y0;
    return [
      [x0 + w / 2, y0 + h / 2],
      [x0 + w / 4, y0 + h / 4],
      [x0 + (3 * w) / 4, y0 + h / 4],
      [x0 + w / 4, y0 + (3 * h) / 4],
      [x0 + (3 * w) / 4, y0 + (3 * h) / 4],
    ];
  }

  // reachable finds a point of target, in the coordinates of its own window,
  // where a click would land on it. clip is the visible area in those
  // coordinates.
  function reachable(target, clip) {
    const r = target.getBoundingClientRect();
    const x0 = Math.max(r.left, clip.x0);
    const y0 = Math.max(r.top, clip.y0);
    const x1 = Math.min(r.right, clip.x1);
    const y1 = Math.min(r.bottom, clip.y1);
    if (x1 - x0 < 1 || y1 - y0 < 1) return { offscreen: true };
    let first = null;
    for (const [x, y] of samplePoints(x0, y0, x1, y1)) {
      const res = hitTarget(target, x, y);
      if (res.ok) return { x, y };
      if (!first) first = res.hit;
    }
    return { covered: true, by: first };
  }

  function describe(el) {
    if (!el) return 'nothing';
    let s = '<' + el.localName;
    if (el.id) s += ' id="' + cut(el.id, 30) + '"';
    const cls = typeof el.className === 'string' ? clean(el.className) : '';
    if (cls) s += ' class="' + cut(cls, 40) + '"';
    s += '>';
    const t = cut(textOf(el), 40);
    if (t) s += ' "' + t + '"';
    return s;
  }

  function topModal(doc) {
    let m = null;
    try {
      const list = doc.querySelectorAll(':modal');
      if (list.length) m = list[list.length - 1];
    } catch (e) {
      m = null;
    }
    if (m) return m;
    for (const e of doc.querySelectorAll('[aria-modal="true"]')) {
      if (isVisible(e)) m = e;
    }
    return m;
  }

  function frameDoc(el) {
    try {
      return el.contentDocument;
    } catch (e) {
      return null;
    }
  }

  // clearMarks removes the data-livetab-ref marks of the registry's elements.
  function clearMarks() {
    for (const el of reg.els) {
      if (el && el.getAttribute(ATTR) && /** @type {string} */ (el.getAttribute(ATTR)).startsWith(reg.gen + '-')) {
        el.removeAttribute(ATTR);
      }
    }
  }

  // collect walks the document (open shadow roots, same-origin iframes) and
  // returns the elements a person could act on, in document order, with the
  // iframes it met. Each iframe keeps the frame index it has in the registry
  // (a search after a snapshot sees the frames the snapshot numbered); a new
  // one gets the next free index and joins the registry.
  function collect(o) {
    const vw = o.vw || window.innerWidth;
    const vh = o.vh || window.innerHeight;
    const cands = [];
    /** @type {any[]} */
    const frames = [];
    const seenTargets = new Set();
    const frameBase = o.frameBase || 0;
    let nextFrame = Math.max(reg.frames.length, frameBase + 1);

    function add(el, target, tag, fi, ox, oy, clip) {
      const r = target.getBoundingClientRect();
      const box = { x: r.left + ox, y: r.top + oy, w: r.width, h: r.height };
      const inView = box.x < clip.x1 && box.x + box.w > clip.x0 &&
        box.y < clip.y1 && box.y + box.h > clip.y0;
      if (inView) {
        const local = { x0: clip.x0 - ox, y0: clip.y0 - oy, x1: clip.x1 - ox, y1: clip.y1 - oy };
        const reach = reachable(target, local);
        if (reach.covered) return;
      }
      if (target !== el) seenTargets.add(target);
      cands.push({ el, target, tag, fi, box, inView, order: cands.length });
    }

    function visit(el, st) {
      const tag = el.localName;
      if (SKIP.has(tag)) return;
      const cs = styleOf(el);
      if (cs.display === 'none') {
        if (tag === 'input') proxy(el, st);
        return;
      }
      let cand = false;
      if (interactive(el, tag, cs, st.pcur, st.inInter)) {
        if (isVisible(el, cs)) {
          if (tag !== 'img' || (el.getBoundingClientRect().width >= MIN_IMG &&
              el.getBoundingClientRect().height >= MIN_IMG)) {
            add(el, el, tag, st.fi, st.ox, st.oy, st.clip);
            cand = tag !== 'img' && tag !== 'video' && tag !== 'audio';
          }
        } else if (tag === 'input') {
          proxy(el, st);
        }
      }
      if (tag === 'iframe' || tag === 'frame') {
        if (isVisible(el, cs)) visitFrame(el, cs, st);
        return;
      }
      if (tag === 'svg' || tag === 'select' || tag === 'video' || tag === 'audio') return;
      const next = {
        fi: st.fi, ox: st.ox, oy: st.oy, clip: st.clip,
        pcur: cs.cursor, inInter: st.inInter || cand,
      };
      if (el.shadowRoot) {
        for (const c of el.shadowRoot.children) visit(c, next);
      }
      for (const c of el.children) visit(c, next);
    }

    // proxy indexes a visually hidden checkbox or radio by its visible label,
    // the usual shape of a styled control.
    function proxy(el, st) {
      const t = inputType(el);
      if (t !== 'checkbox' && t !== 'radio') return;
      if (!el.labels) return;
      for (const l of el.labels) {
        if (isVisible(l)) {
          add(el, l, 'input', st.fi, st.ox, st.oy, st.clip);
          return;
        }
      }
    }

    function visitFrame(el, cs, st) {
      const r = el.getBoundingClientRect();
      const cx = st.ox + r.left + el.clientLeft + parseFloat(cs.paddingLeft || '0');
      const cy = st.oy + r.top + el.clientTop + parseFloat(cs.paddingTop || '0');
      const clip = {
        x0: Math.max(st.clip.x0, cx), y0: Math.max(st.clip.y0, cy),
        x1: Math.min(st.clip.x1, cx + el.clientWidth), y1: Math.min(st.clip.y1, cy + el.clientHeight),
      };
      let fi = reg.frames.indexOf(el);
      if (fi <= 0) {
        fi = nextFrame++;
        reg.frames[fi] = el;
      }
      const doc = frameDoc(el);
      const f = {
        index: fi, url: doc ? doc.location.href : (el.src || ''), name: el.name || el.title || '',
        cross: !doc, x: cx, y: cy, w: el.clientWidth, h: el.clientHeight,
        clip: { x0: clip.x0, y0: clip.y0, x1: clip.x1, y1: clip.y1 },
      };
      frames.push(f);
      if (doc && doc.documentElement) visitDoc(doc, fi, cx, cy, clip);
    }

    function visitDoc(doc, fi, ox, oy, clip) {
      const scope = topModal(doc) || doc.documentElement;
      if (!scope) return;
      const p = scope.parentElement;
      const st = {
        fi, ox, oy, clip, pcur: p ? styleOf(p).cursor : 'auto', inInter: false,
      };
      visit(scope, st);
    }

    const clip0 = o.clip || { x0: 0, y0: 0, x1: vw, y1: vh };
    visitDoc(document, o.frameIndex || 0, o.ox || 0, o.oy || 0, clip0);
    const chosen = cands.filter((c) => !(c.target === c.el && seenTargets.has(c.el)));
    return { chosen, frames, clip0, vw, vh };
  }

  // register gives candidate c index i in the registry and describes it.
  function register(c, i, gen, nameLen) {
    const el = c.el;
    reg.els[i] = el;
    reg.targets[i] = c.target;
    try {
      el.setAttribute(ATTR, gen + '-' + i);
    } catch (e) {
      // an element that refuses attributes is still in the registry
    }
    const role = roleOf(el, c.tag);
    /** @type {any} */
    const e = {
      index: i, tag: c.tag, role, name: cut(accName(el, c.tag, role), nameLen),
      x: round(c.box.x), y: round(c.box.y), w: round(c.box.w), h: round(c.box.h),
      inView: c.inView, frame: c.fi,
    };
    const v = valueOf(el, c.tag, role);
    if (v) e.value = cut(v, 120);
    if (c.tag === 'input') e.type = inputType(el);
    const ch = checkedOf(el, c.tag, role);
    if (ch) e.checked = ch;
    const s = statesOf(el, c.tag, role);
    if (s.length) e.states = s;
    if ((c.tag === 'a' || c.tag === 'area') && el.href) e.href = String(el.href);
    if (c.tag === 'img' || c.tag === 'video' || c.tag === 'audio') {
      e.src = String(el.currentSrc || el.src || '');
    }
    if (c.tag === 'input' && el.placeholder && e.name !== clean(el.placeholder)) {
      e.placeholder = cut(el.placeholder, 60);
    }
    if (c.tag === 'select') {
      e.options = Array.from(el.options).slice(0, 25).map((op) => cut(op.label || op.text, 40));
      if (el.options.length > 25) e.moreOptions = el.options.length - 25;
    }
    return e;
  }

  function pageInfo(o) {
    const de = document.documentElement;
    return {
      gen: o.gen, url: location.href, title: document.title,
      sx: round(window.scrollX), sy: round(window.scrollY),
      dw: de ? de.scrollWidth : 0, dh: de ? de.scrollHeight : 0,
    };
  }

  function snapshot(o) {
    const t0 = performance.now();
    if (!o.force && document.readyState === 'loading' && !document.body) return { notReady: true };
    clearMarks();
    reg = { gen: o.gen, els: [null], targets: [null], frames: [null] };
    const { chosen: all, frames, clip0, vw, vh } = collect(o);
    let chosen = all;
    const total = chosen.length;
    let above = 0;
    let below = 0;
    let side = 0;
    let inView = 0;
    for (const c of chosen) {
      if (c.inView) inView++;
      else if (c.box.y + c.box.h <= clip0.y0) above++;
      else if (c.box.y >= clip0.y1) below++;
      else side++;
    }
    if (o.viewportOnly) chosen = chosen.filter((c) => c.inView);
    const max = o.max > 0 ? o.max : 1e9;
    if (chosen.length > max) {
      const dist = (c) => {
        if (c.inView) return 0;
        if (c.box.y >= clip0.y1) return c.box.y - clip0.y1;
        if (c.box.y + c.box.h <= clip0.y0) return clip0.y0 - (c.box.y + c.box.h);
        return Math.abs(c.box.x);
      };
      chosen = chosen.slice().sort((a, b) => dist(a) - dist(b) || a.order - b.order)
        .slice(0, max).sort((a, b) => a.order - b.order);
    }

    const base = o.base || 0;
    const nameLen = o.nameLen || 80;
    const out = chosen.map((c, k) => register(c, base + k + 1, o.gen, nameLen));
    return Object.assign(pageInfo(o), {
      vw, vh, total, inView, above, below, side,
      elements: out, frames, ms: round(performance.now() - t0),
    });
  }

  function fold(s) {
    return clean(s).toLowerCase();
  }

  // find searches all the elements a snapshot would list, not only those it
  // would keep, for o.query: text (every word somewhere in the element's
  // name, value, placeholder, title, link or text), role (its role or tag)
  // and name (its whole accessible name), all ignoring case. The matches
  // join the registry of generation o.gen: one already there keeps its
  // index, a new one gets the next, from o.base + 1, so the indexes of the
  // last snapshot stay valid.
  function find(o) {
    const t0 = performance.now();
    if (!o.force && document.readyState === 'loading' && !document.body) return { notReady: true };
    if (reg.gen !== o.gen) {
      clearMarks();
      reg = { gen: o.gen, els: [null], targets: [null], frames: [null] };
    }
    const { chosen, frames, vw, vh } = collect(o);
    const q = o.query || {};
    const words = fold(q.text || '').split(' ').filter((w) => w);
    const role = fold(q.role || '');
    const name = fold(q.name || '');
    // A negative max lists nothing: the matches are only counted.
    const max = o.max > 0 ? o.max : o.max < 0 ? 0 : 1e9;
    const nameLen = o.nameLen || 80;
    /** @type {Map<Element, number>} */
    const known = new Map();
    reg.els.forEach((el, i) => {
      if (el) known.set(el, i);
    });
    let next = o.base || 0;
    let matched = 0;
    const out = [];
    for (const c of chosen) {
      const el = c.el;
      const r = roleOf(el, c.tag);
      if (role && fold(r) !== role && c.tag !== role) continue;
      /** @type {string | null} */
      let n = null;
      if (name) {
        n = fold(accName(el, c.tag, r));
        if (n !== name) continue;
      }
      if (words.length) {
        if (n == null) n = fold(accName(el, c.tag, r));
        let hay = n + ' ' + fold(valueOf(el, c.tag, r));
        if (c.tag === 'input' || c.tag === 'textarea') hay += ' ' + fold(el.placeholder);
        hay += ' ' + fold(el.getAttribute('title')) + ' ' + fold(el.getAttribute('aria-label'));
        if ((c.tag === 'a' || c.tag === 'area') && el.href) hay += ' ' + fold(el.getAttribute('href'));
        if (!words.every((w) => hay.includes(w))) {
          hay += ' ' + fold(textOf(el));
          if (!words.every((w) => hay.includes(w))) continue;
        }
      }
      matched++;
      if (out.length >= max) continue;
      let i = known.get(el);
      if (i == null) {
        i = ++next;
        known.set(el, i);
      }
      out.push(register(c, i, o.gen, nameLen));
    }
    return Object.assign(pageInfo(o), {
      vw, vh, total: chosen.length, matched, next,
      elements: out, frames, ms: round(performance.now() - t0),
    });
  }

  function round(v) {
    return Math.round(v * 10) / 10;
  }

  function queryDeep(css) {
    let list;
    try {
      list = document.querySelectorAll(css);
    } catch (e) {
      fail('badselector', 'invalid CSS selector ' + JSON.stringify(css) + ': ' + /** @type {Error} */ (e).message);
    }
    for (const el of list) {
      if (isVisible(el)) return el;
    }
    return list[0] || null;
  }

  // resolve turns a reference into the element it names. An index from
  // another snapshot, or an element that left the document, is refused: a
  // click on whatever now sits at that index would be a click on the wrong
  // element.
  function resolve(ref) {
    if (ref.css != null) {
      const el = queryDeep(ref.css);
      if (!el) fail('notfound', 'no element matches the CSS selector ' + JSON.stringify(ref.css));
      return { el, target: el };
    }
    if (ref.f != null && ref.f > 0 && ref.i == null) {
      const fe = reg.frames[ref.f];
      if (!fe || !fe.isConnected) fail('stale', 'frame ' + ref.f + ' is gone');
      return { el: fe, target: fe };
    }
    if (!reg.gen || ref.g !== reg.gen) {
      fail('stale', 'element index ' + ref.i + ' belongs to an older snapshot');
    }
    const el = reg.els[ref.i];
    if (!el) fail('stale', 'there is no element with index ' + ref.i + ' in the last snapshot');
    if (!el.isConnected) fail('detached', 'element ' + ref.i + ' was removed from the page');
    const target = reg.targets[ref.i] || el;
    if (!target.isConnected) fail('detached', 'element ' + ref.i + ' was removed from the page');
    return { el, target };
  }

  function label(el) {
    const tag = el.localName;
    const role = roleOf(el, tag) || tag;
    const n = cut(accName(el, tag, role), 60);
    // Quoted as JSON: a name that holds a quote cannot end its quotes and
    // go on as livetab's text where a result shows it unfenced.
    return n ? role + ' ' + JSON.stringify(n) : role;
  }

  function fullyInView(el) {
    const w = winOf(el);
    const r = el.getBoundingClientRect();
    return r.top >= 0 && r.left >= 0 && r.bottom <= w.innerHeight && r.right <= w.innerWidth;
  }

  function reveal0(el) {
    if (!fullyInView(el)) {
      el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    }
  }

  // point finds where to send a trusted mouse event for ref: in view, on
  // top, enabled if asked.
  function point(ref, o) {
    o = o || {};
    const { el, target } = resolve(ref);
    if (!isVisible(target)) {
      fail('hidden', 'element ' + (ref.i != null ? ref.i : JSON.stringify(ref.css)) +
        ' (' + label(el) + ') is not visible now');
    }
    if (o.enabled && isDisabled(el)) fail('disabled', label(el) + ' is disabled');
    if (o.scroll !== false) reveal0(target);
    const w = winOf(target);
    const off = frameOffset(w);
    const res = reachable(target, { x0: 0, y0: 0, x1: w.innerWidth, y1: w.innerHeight });
    if (res.offscreen) fail('offscreen', label(el) + ' could not be scrolled into view');
    if (res.covered) {
      fail('covered', label(el) + ' is covered by ' + describe(res.by) +
        '; close or dismiss that first, or pick another element');
    }
    const r = target.getBoundingClientRect();
    return {
      x: res.x + off.x, y: res.y + off.y,
      box: { x: r.left + off.x, y: r.top + off.y, w: r.width, h: r.height },
      label: label(el),
    };
  }

  function isEditable(el) {
    const tag = el.localName;
    if (tag === 'textarea') return true;
    if (tag === 'input') return TEXT_INPUTS.has(inputType(el)) || !el.hasAttribute('type');
    return el.isContentEditable;
  }

  // focus prepares ref for typing: focused, with the caret at the end or
  // all of its content selected so that the next key replaces it.
  function focus(ref, o) {
    const { el } = resolve(ref);
    if (!isEditable(el)) {
      fail('noteditable', label(el) + ' does not take typed text' +
        (el.localName === 'select' ? '; use select instead' : ''));
    }
    if (isDisabled(el)) fail('disabled', label(el) + ' is disabled');
    if (el.readOnly) fail('readonly', label(el) + ' is read-only');
    if (!isVisible(el) && !el.isContentEditable) fail('hidden', label(el) + ' is not visible now');
    reveal0(el);
    el.focus();
    const doc = el.ownerDocument;
    let hasText;
    if (el.localName === 'input' || el.localName === 'textarea') {
      hasText = el.value.length > 0;
      if (o.clear) {
        el.select();
      } else {
        try {
          el.setSelectionRange(el.value.length, el.value.length);
        } catch (e) {
          // email and number inputs have no selection API
        }
      }
    } else {
      hasText = (el.textContent || '').length > 0;
      const sel = winOf(el).getSelection();
      if (o.clear) {
        sel.selectAllChildren(el);
      } else {
        const range = doc.createRange();
        range.selectNodeContents(el);
        range.collapse(false);
        sel.removeAllRanges();
        sel.addRange(range);
      }
    }
    return { hasText, focused: deepActive(el.ownerDocument) === el, label: label(el) };
  }

  // hitsAt reports whether a press at x, y (as point gave them)
  // would still land on ref's element; else what it would land on. The
  // pointer's arrival runs the page's handlers, and a hostile page can hide
  // its element then, or uncover a frame of another site beneath it.
  function hitsAt(ref, x, y) {
    const { el, target } = resolve(ref);
    if (!isVisible(target)) return { ok: false, by: 'nothing: ' + label(el) + ' is not visible now' };
    const off = frameOffset(winOf(target));
    const res = hitTarget(target, x - off.x, y - off.y);
    return { ok: res.ok, by: res.ok ? '' : describe(res.hit) };
  }

  // holdsFocus reports whether ref's element still has the keyboard focus,
  // after the page's timers of the moment have run when flush is set: a
  // hostile page can move the focus to a frame of another site as soon as
  // its input takes it, and the keys typed next would go there.
  function holdsFocus(ref, flush) {
    const { el } = resolve(ref);
    const held = () => deepActive(el.ownerDocument) === el;
    if (!flush) return held();
    return new Promise((done) => setTimeout(() => done(held()), 0));
  }

  function value(ref) {
    const { el } = resolve(ref);
    if ('value' in el && el.localName !== 'button') return String(el.value);
    return textOf(el);
  }

  function selectOption(ref, values) {
    const { el } = resolve(ref);
    if (el.localName !== 'select') {
      fail('notselect', label(el) + ' is not a <select>; click it, take a new snapshot and click the option');
    }
    if (isDisabled(el)) fail('disabled', label(el) + ' is disabled');
    const opts = Array.from(el.options);
    const picked = [];
    for (const v of values) {
      const want = clean(v);
      let op = opts.find((o) => o.value === v) ||
        opts.find((o) => clean(o.label || o.text) === want) ||
        opts.find((o) => clean(o.label || o.text).toLowerCase() === want.toLowerCase());
      if (!op) {
        fail('nooption', label(el) + ' has no option with value or label ' + JSON.stringify(v) +
          '; options: ' + opts.slice(0, 20).map((o) => JSON.stringify(clean(o.label || o.text))).join(', '));
      }
      if (op.disabled) fail('disabled', 'option ' + JSON.stringify(v) + ' is disabled');
      picked.push(op);
      if (!el.multiple) break;
    }
    reveal0(el);
    el.focus();
    for (const op of opts) {
      const want = picked.includes(op);
      if (op.selected !== want && (el.multiple || want)) op.selected = want;
    }
    el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
    return { selected: Array.from(el.selectedOptions).map((o) => clean(o.label || o.text)), label: label(el) };
  }

  function checkState(ref) {
    const { el } = resolve(ref);
    const tag = el.localName;
    const c = checkedOf(el, tag, roleOf(el, tag));
    if (!c) fail('notcheckable', label(el) + ' is not a checkbox, radio button or switch');
    const role = roleOf(el, tag);
    return { checked: c, label: label(el), radio: role === 'radio' || role === 'menuitemradio' };
  }

  function scrollable(el) {
    for (let e = el; e; e = e.parentElement) {
      const cs = styleOf(e);
      const oy = cs.overflowY;
      const ox = cs.overflowX;
      if ((e.scrollHeight > e.clientHeight + 1 && (oy === 'auto' || oy === 'scroll')) ||
          (e.scrollWidth > e.clientWidth + 1 && (ox === 'auto' || ox === 'scroll'))) return e;
    }
    return null;
  }

  function scroll(ref, dx, dy) {
    if (!ref) {
      const x = window.scrollX;
      const y = window.scrollY;
      window.scrollBy({ left: dx, top: dy, behavior: 'instant' });
      const de = document.documentElement;
      return {
        x: round(window.scrollX), y: round(window.scrollY),
        moved: x !== window.scrollX || y !== window.scrollY,
        maxX: de.scrollWidth - window.innerWidth, maxY: de.scrollHeight - window.innerHeight,
      };
    }
    const { el } = resolve(ref);
    const s = scrollable(el);
    if (!s) fail('notscrollable', label(el) + ' is not inside a scrollable area; scroll the page instead');
    const x = s.scrollLeft;
    const y = s.scrollTop;
    s.scrollBy({ left: dx, top: dy, behavior: 'instant' });
    return {
      x: round(s.scrollLeft), y: round(s.scrollTop),
      moved: x !== s.scrollLeft || y !== s.scrollTop,
      maxX: s.scrollWidth - s.clientWidth, maxY: s.scrollHeight - s.clientHeight,
      label: label(el),
    };
  }

  function scrollTo(ref) {
    const { el, target } = resolve(ref);
    target.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    return { label: label(el), sx: round(window.scrollX), sy: round(window.scrollY) };
  }

  // rect is ref's box, scrolled into view, in the viewport of the outermost
  // reachable window.
  function rect(ref) {
    const { el, target } = resolve(ref);
    if (!isVisible(target)) fail('hidden', label(el) + ' is not visible now');
    reveal0(target);
    const off = frameOffset(winOf(target));
    const r = target.getBoundingClientRect();
    return { x: r.left + off.x, y: r.top + off.y, w: r.width, h: r.height, label: label(el) };
  }

  // frameBox is the content box of iframe f of the last snapshot, in the
  // viewport of the outermost reachable window; with reveal, the iframe is
  // scrolled into view first.
  function frameBox(f, reveal) {
    const { el } = resolve({ f });
    if (!isVisible(el)) fail('hidden', 'frame ' + f + ' is not visible now');
    if (reveal) reveal0(el);
    const cs = styleOf(el);
    const off = frameOffset(winOf(el));
    const r = el.getBoundingClientRect();
    return {
      x: off.x + r.left + el.clientLeft + parseFloat(cs.paddingLeft || '0'),
      y: off.y + r.top + el.clientTop + parseFloat(cs.paddingTop || '0'),
      w: el.clientWidth, h: el.clientHeight,
    };
  }

  function pageText() {
    const b = document.body || document.documentElement;
    return b ? b.innerText || '' : '';
  }

  // check evaluates the conditions of a wait; each field of the result is
  // true when its condition holds.
  function check(o) {
    const res = {};
    if (o.text != null) res.text = pageText().includes(o.text);
    if (o.selector != null) {
      const el = queryDeep(o.selector);
      res.selector = !!el && isVisible(el);
    }
    if (o.gone != null) {
      try {
        const { el, target } = resolve(o.gone);
        res.gone = !isVisible(target) && !isVisible(el);
      } catch (e) {
        if (!(e instanceof Fail) || e.code === 'badselector') throw e;
        res.gone = true;
      }
    }
    return res;
  }

  function read(o) {
    let root = document.body || document.documentElement;
    let lbl = '';
    if (o.ref) {
      root = resolve(o.ref).el;
      lbl = label(root);
    }
    const r = o.format === 'text' ? reader.text(root, o.max) : reader.markdown(root, o.max);
    r.label = lbl;
    // Where the content is from, in the same answer.
    r.url = location.href;
    r.title = document.title;
    return r;
  }

  function info() {
    return {
      url: location.href, title: document.title, readyState: document.readyState,
      sx: round(window.scrollX), sy: round(window.scrollY),
      vw: window.innerWidth, vh: window.innerHeight,
      ow: window.outerWidth, oh: window.outerHeight,
    };
  }

  // fieldState is what a form field holds now, for the report of a fill: its
  // label, its value (a password as dots) and whether it is checked.
  function fieldState(ref) {
    const { el } = resolve(ref);
    const tag = el.localName;
    const role = roleOf(el, tag);
    return { label: label(el), value: cut(valueOf(el, tag, role), 120), checked: checkedOf(el, tag, role) };
  }

  // labelOf checks a reference and names its element.
  function labelOf(ref) {
    return label(resolve(ref).el);
  }


  // A watch records what an action changes in the document, so that its
  // result can say so without another snapshot, and when the page went
  // quiet. Only the document's own tree is observed: shadow roots and
  // frames are not.
  /** @typedef {{mo: MutationObserver, last: number, start: number, added: Set<Element>, removed: Map<Element, string>, regions: Set<Element>, heads: Set<Element>, values: Map<Element, string>, imgs: Set<HTMLImageElement>, frames: number, ticking: boolean, changed: boolean, po: PerformanceObserver | null, fixed: boolean | null, frameAt: number[]}} Watch */
  /** @type {Watch | null} */
  let watcher = null;

  const REGION = '[aria-live]:not([aria-live="off"]),[role="alert"],[role="status"],[role="log"],[role="alertdialog"],output';
  const HEADING = 'h1,h2,h3,h4,h5,h6,[role="heading"]';
  const FIELDS = 'input,select,textarea';

  function notable(el) {
    const tag = el.localName;
    if (tag === 'img') return true;
    if (el.matches(HEADING) || el.matches(REGION)) return true;
    const r = (el.getAttribute('role') || '').trim().split(/\s+/)[0].toLowerCase();
    if (r === 'dialog' || (r && ROLES.has(r))) return true;
    switch (tag) {
      case 'a': return el.hasAttribute('href');
      case 'button': case 'select': case 'textarea': case 'video': case 'audio': case 'dialog':
        return true;
      case 'input': return inputType(el) !== 'hidden';
    }
    return false;
  }

  function fieldValue(el) {
    const tag = el.localName;
    const role = roleOf(el, tag);
    const c = checkedOf(el, tag, role);
    return c ? c : valueOf(el, tag, role);
  }

  // The watch observes and never wraps: a page's own objects (a canvas's
  // toBlob, fetch) stay native, as a site's bot checks expect in the
  // person's browser. Frames asked for at each poll let idle-time work
  // such as an encode run instead.
  function watch() {
    if (watcher) unwatch(watcher);
    const now = performance.now();
    /** @type {Watch} */
    const w = {
      mo: new MutationObserver((recs) => note(w, recs)), last: now, start: now,
      added: new Set(), removed: new Map(), regions: new Set(), heads: new Set(),
      values: new Map(), imgs: new Set(), frames: 0, ticking: false, changed: false, po: null, fixed: null, frameAt: [],
    };
    let n = 0;
    for (const el of document.querySelectorAll(FIELDS)) {
      if (++n > 500) break;
      w.values.set(el, fieldValue(el));
    }
    w.mo.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    // A response the page got starts what it does next: the frames to
    // wait count from there too.
    try {
      w.po = new PerformanceObserver(() => countFrames(w));
      w.po.observe({ type: 'resource' });
    } catch (e) {
      w.po = null;
    }
    watcher = w;
    countFrames(w);
    return true;
  }

  /** @param {Watch} w */
  function unwatch(w) {
    w.mo.disconnect();
    if (w.po) w.po.disconnect();
  }

  /** @param {Watch} w @param {MutationRecord[]} recs */
  function note(w, recs) {
    w.last = performance.now();
    w.changed = true;
    countFrames(w);
    for (const r of recs) {
      const t = r.target.nodeType === 1 ? /** @type {Element} */ (r.target) : r.target.parentElement;
      if (t) {
        const reg = t.closest(REGION);
        if (reg) w.regions.add(reg);
        const h = t.closest(HEADING);
        if (h) w.heads.add(h);
      }
      for (const nd of r.addedNodes) {
        if (nd.nodeType !== 1 || w.added.size > 200) continue;
        const el = /** @type {Element} */ (nd);
        const all = [el, ...el.querySelectorAll('*')].slice(0, 200);
        for (const e of all) {
          if (e.localName === 'img') w.imgs.add(/** @type {HTMLImageElement} */ (e));
          if (e.matches(REGION)) w.regions.add(e);
          if (notable(e)) w.added.add(e);
        }
      }
      for (const nd of r.removedNodes) {
        if (nd.nodeType !== 1 || w.removed.size > 200) continue;
        const el = /** @type {Element} */ (nd);
        for (const e of [el, ...el.querySelectorAll('*')].slice(0, 200)) {
          if (w.added.delete(e)) continue;
          if (notable(e)) w.removed.set(e, safeLabel(e));
        }
      }
    }
  }

  // countFrames counts the frames drawn since the last change, up to 3:
  // after two, what a change scheduled for its next frame (a render, the
  // idle-time encode of a canvas) has run. It stops there, so an idle
  // page is not kept drawing; a background tab draws none, and then the
  // quiet time alone says the page settled.
  /** @param {Watch} w */
  function countFrames(w) {
    w.frames = 0;
    if (w.ticking) return;
    w.ticking = true;
    const tick = () => {
      drawn(w);
      if (watcher !== w || ++w.frames >= 3) {
        w.ticking = false;
        return;
      }
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  }

  // drawn notes when a frame was drawn, the last few.
  /** @param {Watch} w */
  function drawn(w) {
    w.frameAt.push(performance.now());
    if (w.frameAt.length > 4) w.frameAt.shift();
  }

  function safeLabel(el) {
    try {
      return label(el);
    } catch (e) {
      return el.localName;
    }
  }

  // quietState says how long the document has been unchanged (ms), how
  // many images added since the watch are loading, how many frames were
  // drawn since the last change, and whether the document changed at all. Go polls it: a page's own timers run late, once a
  // second, in a background tab, and CDP calls do not. inputAgo, when not
  // negative, counts the action's input, that many ms ago, as a change.
  // netAgo, when not negative, is how long ago the page's last response
  // ended, as the browser said: netFrames counts the frames drawn since
  // (at most 4), whatever the page's own observer of responses has heard.
  /** @param {number} inputAgo @param {number} [netAgo] */
  function quietState(inputAgo, netAgo) {
    if (!watcher) watch();
    const w = /** @type {Watch} */ (watcher);
    const now = performance.now();
    if (inputAgo >= 0) {
      w.last = Math.max(w.last, now - inputAgo);
      countFrames(w);
    }
    let imgs = 0;
    for (const i of w.imgs) if (i.isConnected && !i.complete) imgs++;
    // Ask for a frame: Chromium runs idle-time work (a canvas's toBlob,
    // requestIdleCallback) after frames, and an idle page draws none.
    requestAnimationFrame(() => { if (watcher === w) drawn(w); });
    const netFrames = netAgo != null && netAgo >= 0 ? w.frameAt.filter((f) => f > now - netAgo).length : 4;
    if (w.fixed == null && document.readyState !== 'loading') w.fixed = fixedDoc();
    return {
      since: Math.round(now - w.last), imgs, frames: w.frames, changed: w.changed, fixed: !!w.fixed, netFrames,
      url: location.href, title: document.title,
    };
  }

  // fixedDoc says whether the parsed document can change by itself: it
  // cannot when nothing in it runs — no script (in the page or a shadow
  // root), no inline event handler, no frame or plugin (a same-origin
  // frame can reach it), no refresh. Such a page is quiet once its parse
  // ended a moment ago; frames drawn tell nothing more. A big page is not
  // looked through.
  function fixedDoc() {
    const d = document;
    if (d.querySelector('script,iframe,frame,object,embed,meta[http-equiv="refresh" i]')) return false;
    if (d.evaluate('count(//@*[starts-with(name(), "on")])', d, null, XPathResult.NUMBER_TYPE, null).numberValue) return false;
    const all = d.getElementsByTagName('*');
    if (all.length > 5000) return false;
    for (const el of all) if (el.shadowRoot) return false;
    return true;
  }

  // changes ends the watch and says what it saw, at most max lines.
  function changes(max) {
    const w = watcher;
    if (!w) return [];
    unwatch(w);
    watcher = null;
    const out = [];
    for (const e of w.added) {
      // A live region added says its text below, once.
      if (!e.isConnected || e.matches(REGION)) continue;
      const v = e.localName === 'img' || !isVisible(e) ? '' : cut(fieldValue(e), 60);
      // A blob: image says its URL: browser_capture takes it at once, with
      // no snapshot to learn the image's index.
      const src = e.localName === 'img' ? /** @type {HTMLImageElement} */ (e).currentSrc : '';
      const blob = src.startsWith('blob:') ? ' (blob: image) src=' + cut(src, 200) : '';
      out.push('+ ' + safeLabel(e) + blob + (v ? ' = "' + v + '"' : '') + (isVisible(e) ? '' : ' (hidden)'));
    }
    for (const [e, l] of w.removed) {
      if (!e.isConnected) out.push('- ' + l);
    }
    for (const [e, v] of w.values) {
      if (!e.isConnected) continue;
      const now = fieldValue(e);
      if (now !== v) out.push('~ ' + safeLabel(e) + ' = "' + cut(now, 60) + '"');
    }
    for (const e of w.regions) {
      if (!e.isConnected || !textOf(e)) continue;
      const role = e.getAttribute('role') || (e.localName === 'output' ? 'output' : 'live region');
      out.push('! ' + role + ' "' + cut(textOf(e), 160) + '"');
    }
    for (const e of w.heads) {
      if (!e.isConnected || w.added.has(e)) continue;
      out.push('# heading "' + cut(textOf(e), 80) + '"');
    }
    const n = out.length;
    if (n > max) {
      out.length = max;
      out.push('… and ' + (n - max) + ' more changes; take a snapshot');
    }
    return out;
  }

  // at names what a click at viewport point x, y of the main frame hits.
  function at(x, y) {
    /** @type {Element | null} */
    let el = document.elementFromPoint(x, y);
    while (el && el.shadowRoot) {
      const inner = el.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === el) break;
      el = inner;
    }
    if (!el) return { label: 'nothing', frame: false };
    return { label: label(el), frame: el.localName === 'iframe' || el.localName === 'frame' };
  }

  // storage lists the items of localStorage or sessionStorage, at most 100.
  function storage(kind) {
    /** @type {Storage | null} */
    let st = null;
    try {
      st = kind === 'session' ? window.sessionStorage : window.localStorage;
    } catch (e) {
      return [];
    }
    const out = [];
    for (let i = 0; st && i < st.length && i < 100; i++) {
      const k = st.key(i);
      if (k !== null) out.push([k, String(st.getItem(k))]);
    }
    return out;
  }

  // viewText is the visible text of the viewport, in document order, a
  // line per block, at most max characters.
  function viewText(max) {
    const vw = window.innerWidth, vh = window.innerHeight;
    const out = [];
    let n = 0;
    /** @type {Element | null} */
    let lastBlock = null;
    const walker = document.createTreeWalker(document.body || document.documentElement, NodeFilter.SHOW_TEXT);
    for (let nd = walker.nextNode(); nd && n < max; nd = walker.nextNode()) {
      const t = clean(nd.nodeValue);
      const el = nd.parentElement;
      if (!t || !el || SKIP.has(el.localName)) continue;
      const range = document.createRange();
      range.selectNodeContents(nd);
      const r = range.getBoundingClientRect();
      if (r.width < 1 || r.height < 1 || r.bottom <= 0 || r.top >= vh || r.right <= 0 || r.left >= vw) continue;
      const cs = styleOf(el);
      if (cs.visibility !== 'visible' || parseFloat(cs.opacity) === 0) continue;
      let block = el;
      while (block.parentElement && styleOf(block).display.startsWith('inline')) block = block.parentElement;
      if (out.length && block !== lastBlock) out.push('\n');
      else if (out.length) out.push(' ');
      lastBlock = block;
      out.push(t);
      n += t.length + 1;
    }
    const s = out.join('');
    return s.length > max ? s.slice(0, max - 1) + '…' : s;
  }

  const api = {
    snapshot, find, point, hitsAt, focus, holdsFocus, value, selectOption, checkState, scroll, scrollTo,
    rect, check, read, info, frameBox, labelOf, fieldState, watch, quietState, changes, at, storage, viewText,
  };

  return {
    // frameEl hands out iframe f of the last snapshot as an object, so that Go
    // can ask the DOM domain which frame it holds.
    frameEl(f) {
      return reg.frames[f] || null;
    },
    // elementOf hands out the element a reference names as an object, for
    // Page.Do; labelOf has checked the reference just before.
    elementOf(ref) {
      return resolve(ref).el;
    },
    call(name, args) {
      const fn = api[name];
      if (!fn) return { err: 'js', msg: 'unknown function ' + name };
      try {
        const v = fn.apply(null, args || []);
        if (v instanceof Promise) return v.then((ok) => ({ ok }));
        return { ok: v };
      } catch (e) {
        if (e instanceof Fail) return { err: e.code, msg: e.msg };
        return { err: 'js', msg: String((e && /** @type {Error} */ (e).stack) || e) };
      }
    },
  };
})
