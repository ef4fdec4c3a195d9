// @ts-check
// The in-page half of package capture. This file is a function declaration:
// Go calls it (Runtime.callFunctionOn on the element to capture, so that it
// runs in the element's frame, or evaluated in the main world for a URL) and
// keeps the returned object only by its RemoteObjectId in a per-capture
// object group. Page scripts never get a reference to it or to the blobs in
// its registry, and releasing the group frees them.
//
// Entry points are reached through call.js. They return {ok: value} or
// {err: code, msg: text} by value, so Go never has to unwrap JavaScript
// exceptions. Go reads a registered blob with IO.read on its handle, which
// Chrome encodes natively; read() is the fallback, and returns its base64
// string bare because it is then the hot path of the transfer.
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

  // Blobs being transferred, by id. A blob stays here until Go releases it
  // (or the object group), so Go can read it slice by slice.
  const blobs = new Map();
  let nextID = 1;
  // Object URLs made by save, by blob id: an object URL keeps its blob
  // alive until revoked, past the object group, so release revokes it.
  const saved = new Map();

  // postFrame frames the extension's transfer page at url (a transfer of
  // livetab's relay), waits up to readyMs for it, and has it post blob to
  // the relay over loopback: the Blob crosses postMessage by reference, so
  // no byte becomes a string. The frame goes when it answers or the wait
  // fails, and with it anything it held.
  function postFrame(url, blob, readyMs) {
    return new Promise((resolve, reject) => {
      const frame = document.createElement('iframe');
      frame.setAttribute('aria-hidden', 'true');
      frame.style.cssText = 'position:fixed;width:1px;height:1px;left:-10px;top:-10px;border:0;opacity:0;pointer-events:none';
      let timer = 0;
      let watch = 0;
      let asked = false;
      const end = () => {
        clearTimeout(timer);
        clearInterval(watch);
        window.removeEventListener('message', on, true);
        frame.remove();
      };
      const on = (/** @type {MessageEvent} */ e) => {
        if (e.source !== frame.contentWindow || !e.data || !e.data.livetabTransfer) return;
        e.stopImmediatePropagation();
        if (e.data.ready && !asked) {
          asked = true;
          clearTimeout(timer);
          /** @type {Window} */ (frame.contentWindow).postMessage({ op: 'post', blob }, '*');
          return;
        }
        end();
        if (e.data.done) resolve(true);
        else reject(new Fail('channel', 'the transfer frame failed: ' + e.data.err));
      };
      window.addEventListener('message', on, true);
      timer = setTimeout(() => {
        end();
        reject(new Fail('channel', 'the transfer frame did not load within ' + readyMs + ' ms'));
      }, readyMs);
      // A page may remove the frame: no need to wait it out.
      watch = setInterval(() => {
        if (frame.isConnected) return;
        end();
        reject(new Fail('channel', 'the page removed the transfer frame'));
      }, 50);
      frame.src = url;
      (document.body || document.documentElement).append(frame);
    });
  }

  const MEDIA_TAGS = new Set(['img', 'video', 'audio', 'canvas', 'picture', 'source', 'image', 'object', 'embed']);
  const CLICKABLE = new Set(['button', 'a', 'summary']);

  function abs(url, el) {
    try {
      return new URL(url, (el && el.baseURI) || document.baseURI).href;
    } catch (e) {
      return url;
    }
  }

  // ownOrigin says whether url is of the document's origin: the only
  // http(s) URLs saved as downloads (a link to another origin would be
  // followed, not downloaded).
  function ownOrigin(url) {
    try {
      return new URL(url, location.href).origin === location.origin;
    } catch {
      return false;
    }
  }

  function short(url) {
    return url.length > 200 ? url.slice(0, 197) + '...' : url;
  }

  // forGo shortens data: URLs, which can be megabytes, in what goes back
  // to Go; other URLs stay whole, as Go matches them against responses.
  function forGo(url) {
    return url.startsWith('data:') ? short(url) : url;
  }

  // bgURL is the first url(...) of an element's CSS background image.
  function bgURL(el) {
    const bg = el.ownerDocument.defaultView.getComputedStyle(el).backgroundImage || '';
    const m = /url\((['"]?)(.*?)\1\)/.exec(bg);
    return m ? abs(m[2], el) : '';
  }

  function srcOfMedia(el) {
    let url = el.currentSrc || el.src || '';
    if (!url) {
      const s = el.querySelector('source[src]');
      if (s) url = s.src;
    }
    return url;
  }

  // hintOf is words that say what an element shows, for a file name when
  // its media has none (a blob: or a canvas): its alt, title or label, its
  // figure's caption, else the page's title.
  function hintOf(el) {
    const fig = el.closest('figure');
    const cap = fig && fig.querySelector('figcaption');
    const h = el.getAttribute('alt') || el.getAttribute('title') || el.getAttribute('aria-label') ||
      (cap && cap.textContent) || document.title || location.hostname;
    return (h || '').trim().slice(0, 80);
  }

  // describe says what media an element stands for. kind is one of img,
  // video, audio, canvas, background, link, object, or button (no media of
  // its own, but clicking it may start a download).
  function describe(el) {
    if (!el || el.nodeType !== 1) fail('nomedia', 'not an element');
    const tag = el.localName;
    const d = { kind: '', url: '', name: '', width: 0, height: 0, tag, hint: hintOf(el) };
    switch (tag) {
      case 'img':
        d.kind = 'img';
        d.url = el.currentSrc || el.src || '';
        d.width = el.naturalWidth;
        d.height = el.naturalHeight;
        d.name = el.getAttribute('download') || '';
        break;
      case 'picture': {
        const img = el.querySelector('img');
        if (img) return describe(img);
        break;
      }
      case 'video':
      case 'audio':
        d.kind = tag;
        d.url = srcOfMedia(el);
        if (!d.url && el.srcObject) {
          fail('gone', 'the <' + tag + '> plays a live MediaStream, which has no file to capture; record it in the page instead');
        }
        if (tag === 'video') {
          d.width = el.videoWidth;
          d.height = el.videoHeight;
        }
        break;
      case 'source': {
        const p = el.parentElement;
        d.kind = p && p.localName === 'audio' ? 'audio' : p && p.localName === 'picture' ? 'img' : 'video';
        d.url = el.src || abs(el.getAttribute('srcset') || '', el).split(/\s+/)[0];
        break;
      }
      case 'canvas':
        d.kind = 'canvas';
        d.width = el.width;
        d.height = el.height;
        break;
      case 'image': // SVG <image>
        d.kind = 'img';
        d.url = abs(el.href && el.href.baseVal || el.getAttribute('href') || el.getAttribute('xlink:href') || '', el);
        break;
      case 'object':
        d.kind = 'object';
        d.url = el.data || '';
        break;
      case 'embed':
        d.kind = 'object';
        d.url = el.src || '';
        break;
      case 'a':
      case 'area':
        if (el.href) {
          d.kind = 'link';
          d.url = el.href;
          d.name = el.getAttribute('download') || '';
        }
        break;
    }
    if (d.kind && (d.url || d.kind === 'canvas')) return d;
    if (d.kind && d.kind !== 'link') fail('nomedia', 'the <' + tag + '> has no source yet');
    const bg = bgURL(el);
    if (bg) {
      d.kind = 'background';
      d.url = bg;
      return d;
    }
    // A wrapper around one piece of media (a card, a figure) stands for it:
    // pick the largest rendered one.
    let best = null;
    let bestArea = 0;
    for (const m of el.querySelectorAll('img,video,audio,canvas')) {
      const r = m.getBoundingClientRect();
      const area = Math.max(r.width * r.height, 1);
      if (area > bestArea) {
        best = m;
        bestArea = area;
      }
    }
    if (best) {
      try {
        return describe(best);
      } catch (e) {
        // fall through to the clickable check
      }
    }
    const role = el.getAttribute('role');
    if (CLICKABLE.has(tag) || role === 'button' || role === 'link' || role === 'menuitem' ||
        (tag === 'input' && /^(button|submit|image)$/.test(el.type))) {
      d.kind = 'button';
      return d;
    }
    fail('nomedia', 'the <' + tag + '> shows no image, video, audio or canvas and has no background image');
  }

  function dispositionName(cd) {
    if (!cd) return '';
    let m = /filename\*\s*=\s*[^']*'[^']*'([^;]+)/i.exec(cd);
    if (m) {
      try {
        return decodeURIComponent(m[1].trim());
      } catch (e) {
        // fall back to the plain filename
      }
    }
    m = /filename\s*=\s*("([^"]*)"|[^;]+)/i.exec(cd);
    return m ? (m[2] !== undefined ? m[2] : m[1]).trim() : '';
  }

  async function fetchBlob(url) {
    const local = url.startsWith('blob:') || url.startsWith('data:');
    // include sends cookies cross-origin too, but then needs a CORS answer
    // that names the origin; same-origin is what an <img> without
    // crossorigin would have been allowed to read.
    /** @type {RequestInit[]} */
    const tries = local ? [{}] : [{ credentials: 'include', cache: 'force-cache' }, { credentials: 'same-origin', cache: 'force-cache' }];
    /** @type {Response | null} */
    let res = null;
    /** @type {unknown} */
    let last = null;
    for (const init of tries) {
      try {
        res = await fetch(url, init);
        break;
      } catch (e) {
        last = e;
      }
    }
    if (!res) {
      if (url.startsWith('blob:')) {
        fail('gone', 'the page cannot read ' + short(url) + ': the blob URL was revoked, or it is a MediaSource stream, which has no file to capture (' + last + ')');
      }
      if (local) fail('gone', 'the page cannot read ' + short(url) + ': ' + last);
      let cross = true;
      try {
        cross = new URL(url).origin !== location.origin;
      } catch (e) {
        // keep cross
      }
      // Same-origin, a fetch fails as a whole when the server does not
      // answer, or when a redirect leads to another site: one with no CORS
      // read, or one a rule of the browser blocks (an agent's domains).
      fail(cross ? 'cors' : 'http', 'the page cannot read ' + short(url) + (cross
        ? ': it is cross-origin and its server allows no CORS read'
        : ': its server did not answer, or it redirected to another site, which allows no CORS read or which a rule of the browser blocks (such as an agent\'s allowed domains)') + ' (' + last + ')');
    }
    if (!res.ok) fail('http', 'HTTP ' + res.status + ' for ' + short(url));
    const blob = await res.blob();
    return {
      blob,
      type: res.headers.get('content-type') || blob.type,
      name: dispositionName(res.headers.get('content-disposition')),
    };
  }

  function canvasBlob(el, type, quality) {
    if (!el.width || !el.height) fail('nomedia', 'the canvas is empty (0×0)');
    return new Promise((resolve, reject) => {
      try {
        el.toBlob((b) => {
          if (b) resolve(b);
          else reject(new Fail('nomedia', 'the canvas produced no image'));
        }, type || 'image/png', quality || undefined);
      } catch (e) {
        if (e && /** @type {Error} */ (e).name === 'SecurityError') {
          reject(new Fail('cors', 'the canvas is tainted by cross-origin images, so the page may not read it'));
        } else {
          reject(e);
        }
      }
    });
  }

  function keep(blob, type, name, url) {
    const id = nextID++;
    blobs.set(id, blob);
    return { id, size: blob.size, type: type || blob.type || '', name: name || '', url: forGo(url || '') };
  }

  // matches says whether a described element passes a WaitNew filter.
  function matches(el, d, f) {
    if (f.kinds && f.kinds.length && !f.kinds.includes(d.kind)) return false;
    if (f.minWidth && d.width < f.minWidth) return false;
    if (f.minHeight && d.height < f.minHeight) return false;
    if (f.within && !(f.withinEl && f.withinEl.contains(el))) return false;
    if (f.rect) {
      const r = el.getBoundingClientRect();
      const cx = r.left + r.width / 2;
      const cy = r.top + r.height / 2;
      if (cx < f.rect.x || cy < f.rect.y || cx > f.rect.x + f.rect.width || cy > f.rect.y + f.rect.height) return false;
    }
    if (f.urlContains && !d.url.includes(f.urlContains)) return false;
    return true;
  }

  // ready says whether an element's media is there to be read: a loaded
  // image, a media element with a source, a canvas with a size.
  function ready(el, d) {
    switch (d.kind) {
      case 'img':
        return el.localName !== 'img' || (el.complete && el.naturalWidth > 0);
      case 'video':
      case 'audio':
        return !!d.url;
      case 'canvas':
        return d.width > 0 && d.height > 0;
      default:
        return !!d.url;
    }
  }

  function mediaElements(doc) {
    return doc.querySelectorAll('img,video,audio,canvas');
  }

  // seen maps each media element present at mark() to its source then, so
  // an element whose source changes later counts as new.
  let seen = new WeakMap();

  function sourceKey(el) {
    if (el.localName === 'canvas') return 'canvas';
    return el.currentSrc || el.src || srcOfMedia(el) || '';
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

  function findNew(f) {
    const withinEl = f.within ? deepQuery(document, f.within) : null;
    const g = Object.assign({}, f, { withinEl });
    if (f.within && !withinEl) return null;
    for (const el of mediaElements(document)) {
      const key = sourceKey(el);
      if (seen.has(el) && seen.get(el) === key) continue;
      let d;
      try {
        d = describe(el);
      } catch (e) {
        continue;
      }
      if (!ready(el, d) || !matches(el, d, g)) continue;
      seen.set(el, key);
      return el;
    }
    return null;
  }

  const api = {
    // find returns the first element matching a CSS selector, looking into
    // open shadow roots too, or null.
    find(sel) {
      return deepQuery(document, sel);
    },

    // describe is describe() for Go, with data: URLs (which can be
    // megabytes) shortened.
    describe(el) {
      const d = describe(el);
      d.url = forGo(d.url);
      return d;
    },

    // click clicks an element the way a script would, for elements that
    // have no box to aim a real click at.
    click(el) {
      el.click();
    },

    // open puts the bytes behind an element or a URL into the registry and
    // returns {id, size, type, name, url}.
    async open(target, opts) {
      opts = opts || {};
      if (typeof target === 'string') {
        const r = await fetchBlob(target);
        return keep(r.blob, r.type, r.name, target);
      }
      const d = describe(target);
      if (d.kind === 'canvas') {
        const b = await canvasBlob(target, opts.canvasType, opts.canvasQuality);
        return keep(b, b.type, '', '');
      }
      if (!d.url) fail('nomedia', 'the <' + d.tag + '> has no source to read');
      const r = await fetchBlob(d.url);
      return keep(r.blob, r.type, r.name || d.name, d.url);
    },

    async read(id, off, len) {
      const b = blobs.get(id);
      if (!b) fail('gone', 'capture ' + id + ' was released');
      const part = b.slice(off, off + len);
      // A Chrome without toBase64 takes the way below.
      if (/** @type {{toBase64?: unknown}} */ (Uint8Array.prototype).toBase64) {
        return new Uint8Array(await part.arrayBuffer()).toBase64();
      }
      const url = await new Promise((resolve, reject) => {
        const r = new FileReader();
        r.onload = () => resolve(r.result);
        r.onerror = () => reject(r.error);
        r.readAsDataURL(part);
      });
      return url.slice(url.indexOf(',') + 1);
    },

    // blob returns a registered blob by reference, for IO.resolveBlob.
    blob(id) {
      return blobs.get(id) || null;
    },

    // slice returns bytes [off, off+len) of a registered blob as a Blob of
    // its own (no copy), so each IO.read has its own stream.
    slice(id, off, len) {
      const b = blobs.get(id);
      if (!b) throw new Error('capture ' + id + ' was released');
      return b.slice(off, off + len);
    },

    // objectURL gives a registered blob a blob: URL, for the browser to
    // download it: Chrome writes it to disk at disk speed, where a read
    // through CDP moves every byte as base64.
    objectURL(id) {
      const b = blobs.get(id);
      if (!b) fail('gone', 'capture ' + id + ' was released');
      let url = saved.get(id);
      if (!url) {
        url = URL.createObjectURL(b);
        saved.set(id, url);
      }
      return url;
    },

    // post has the extension's transfer page post a registered blob to
    // livetab's relay (Livetab.openTransfer), past CDP.
    async post(id, url, readyMs) {
      const b = blobs.get(id);
      if (!b) fail('gone', 'capture ' + id + ' was released');
      return postFrame(url, b, readyMs);
    },

    // probe says the size and type behind a blob: URL, or an http(s) URL
    // of the page's own origin, without reading it, so that saveURL need
    // not copy it into a blob first. An http(s) URL is asked for its first
    // byte only (a range-served file says its size in Content-Range); one
    // the browser cannot download as the page reads it (redirected,
    // content-encoded, not 200/206) gets size -1: read it in the page.
    async probe(url) {
      const http = url.startsWith('http:') || url.startsWith('https:');
      if (!url.startsWith('blob:') && !http) fail('nomedia', 'only blob: and http(s) URLs are probed');
      if (http && !ownOrigin(url)) return { size: -1, type: '' };
      /** @type {Response} */
      let res;
      try {
        res = await fetch(url, http ? { headers: { Range: 'bytes=0-0' }, cache: 'no-store' } : undefined);
      } catch (e) {
        if (http) return { size: -1, type: '' };
        fail('gone', 'the page cannot read ' + short(url) + ': the blob URL was revoked, or it is a MediaSource stream, which has no file to capture (' + e + ')');
      }
      if (res.body) res.body.cancel().catch(() => {});
      const type = res.headers.get('content-type') || '';
      let size = -1;
      if (!http) {
        const n = Number(res.headers.get('content-length'));
        if (Number.isFinite(n) && res.headers.has('content-length')) size = n;
      } else if (!res.redirected && ['', 'identity'].includes(res.headers.get('content-encoding') || '')) {
        const m = /^bytes 0-0\/(\d+)$/.exec(res.headers.get('content-range') || '');
        const n = Number(res.headers.get('content-length'));
        if (res.status === 206 && m) size = Number(m[1]);
        else if (res.status === 200 && res.headers.has('content-length') && Number.isFinite(n)) size = n;
      }
      return { size, type };
    },

    // saveURL has the browser download a blob: URL, or an http(s) URL of
    // the page's own origin, as the page's own "save" link would. The
    // anchor stays out of the document, so the page's listeners never see
    // its click.
    saveURL(url, name) {
      const http = url.startsWith('http:') || url.startsWith('https:');
      if (!url.startsWith('blob:') && !(http && ownOrigin(url))) {
        fail('nomedia', 'only blob: URLs and http(s) URLs of the page\'s origin are saved directly');
      }
      const a = document.createElement('a');
      a.href = url;
      a.download = name || 'capture';
      a.rel = 'noopener';
      a.click();
      return url;
    },

    release(id) {
      blobs.delete(id);
      const url = saved.get(id);
      if (url) {
        saved.delete(id);
        URL.revokeObjectURL(url);
      }
    },

    // mark remembers the media the page shows now, so that findNew reports
    // only what appears later.
    mark() {
      seen = new WeakMap();
      let n = 0;
      for (const el of mediaElements(document)) {
        seen.set(el, sourceKey(el));
        n++;
      }
      return n;
    },

    // findNew waits up to f.waitMs for a media element that was not there
    // (or had another source) at mark() and passes the filter; it returns
    // the element or null.
    async findNew(f) {
      const end = Date.now() + (f.waitMs || 0);
      for (;;) {
        const el = findNew(f);
        if (el || Date.now() >= end) return el;
        await new Promise((r) => setTimeout(r, 50));
      }
    },

    // forget makes findNew skip an element whose media failed the filter
    // once its bytes were known (too small, wrong type).
    forget(el) {
      seen.set(el, sourceKey(el));
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
