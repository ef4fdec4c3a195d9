// @ts-check
// The first loads of the new tabs that pages of livetab's tabs open. A
// page can open a tab on a file to download (a link with target=_blank,
// window.open): Chrome turns the tab's load into a download and closes the
// tab, before anything attaches to it, so no session tells of that
// download and chrome.downloads does not say which tab began it. These
// records let the extension tell: the download of a URL such a tab began
// to load a moment before is that tab's, and the relay treats it as a
// download of the tab whose page opened it (a program that denies its
// tabs' downloads denies it too).

/** How long a load waits for its download. */
export const LOAD_MS = 10_000;
/** How many loads are kept at most. */
export const MAX_LOADS = 64;
/** How much earlier than the load a download may have begun by Chrome's clock: none, but for rounding. */
const SKEW_MS = 50;

/**
 * @typedef {{tabId: number, url: string, at: number, source: number}} Load
 */

export class NewTabLoads {
  constructor() {
    /** @type {Load[]} */
    this.loads = [];
  }

  /**
   * Notes that tab tabId, opened by a page of tab source, begins to load url.
   * @param {number} tabId
   * @param {string} url
   * @param {number} source
   * @param {number} now
   */
  add(tabId, url, source, now) {
    this.loads = this.loads.filter((l) => now - l.at <= LOAD_MS && !(l.tabId === tabId && l.url === url));
    this.loads.push({ tabId, url, at: now, source });
    if (this.loads.length > MAX_LOADS) this.loads.shift();
  }

  /**
   * Forgets the loads of tab tabId: its load committed a document, so it
   * turned into no download, and a later download of its URL (the
   * person's, in a tab of their own) is not the tab's.
   * @param {number} tabId
   */
  committed(tabId) {
    this.loads = this.loads.filter((l) => l.tabId !== tabId);
  }

  /**
   * The load a download of one of urls, begun at started, came from, if
   * any: the latest such load begun before the download, within LOAD_MS.
   * It is taken: one load turns into one download, and a second download
   * of the URL (the person's, say) is nobody's here.
   * @param {string[]} urls the item's URL and final URL
   * @param {number} started the item's start time (0: unknown)
   * @param {number} now
   * @returns {Load | undefined}
   */
  take(urls, started, now) {
    for (let i = this.loads.length - 1; i >= 0; i--) {
      const l = this.loads[i];
      if (now - l.at > LOAD_MS || !urls.includes(l.url)) continue;
      if (started && started < l.at - SKEW_MS) continue;
      this.loads.splice(i, 1);
      return l;
    }
    return undefined;
  }
}

/**
 * The one tab showing the page a download was begun from: chrome.downloads
 * names the page (its referrer) but not the tab. Pages can begin downloads
 * that no debugger session tells of: a popup's page before the relay's
 * watch of the popup attached, a frame of another site (in a process of
 * its own, a target no client turned Page on in, nested in another such
 * frame). The relay joins such a download to the tab named here when a
 * program that drives it denies or moves downloads. A referrer that is an
 * origin alone (what a request to another origin sends) names the tab of a
 * page of that origin. Pages are tabs' top documents and their frames; two
 * tabs showing the page, or none: undefined, and the download stays
 * unjoined.
 * @param {string} referrer
 * @param {{tabId?: number, url?: string}[]} pages
 * @returns {number | undefined}
 */
export function referrerTab(referrer, pages) {
  /** @type {number | undefined} */
  let found;
  for (const page of pages) {
    if (page.tabId === undefined || !shows(referrer, page.url)) continue;
    if (found !== undefined && found !== page.tabId) return undefined;
    found = page.tabId;
  }
  return found;
}

/**
 * Whether a page at url is the one referrer names (or of its origin, for
 * a referrer that is an origin alone).
 * @param {string} referrer
 * @param {string | undefined} url
 */
export function shows(referrer, url) {
  if (!referrer || !url) return false;
  let ref, u;
  try {
    ref = new URL(referrer);
    u = new URL(url);
  } catch {
    return false;
  }
  u.hash = '';
  // Chrome sends no user name or password in a referrer.
  u.username = '';
  u.password = '';
  return u.href === ref.href || (ref.pathname === '/' && !ref.search && u.origin === ref.origin);
}

/**
 * The pages (top documents and frames) each tab showed of late (keepMs),
 * closed tabs included. A download whose server is slow to answer begins
 * after its page is gone: the page changed its URL (history.replaceState),
 * the click came from one of its frames, or its tab closed. Such a
 * download names a page no open tab shows, and a hostile page in a
 * program's tab that denies downloads got its file into the person's
 * Downloads folder that way (TestRedTeamDiesMidDownload). These are the
 * tabs that showed its page of late; the relay takes the download for a
 * program's closed tab only when each of them is a program's.
 */

/** The longest URL kept whole; a longer one stands as its origin (Chrome sends no longer referrer). */
const MAX_URL = 4096;

/**
 * @typedef {{tops: Map<string, number>, pages: Map<string, number>, current: Map<number, string>, spilled: Map<string, number>}} Tab
 * An open tab. tops: each page the tab's top showed, and when it last did;
 * pages: the same of its frames, apart, so that a page of many frames does
 * not push the tab's own pages out (red team: a person's tab that had
 * shown 80 frames forgot its page, and their download went by a program's
 * tab); current: what each frame shows (webNavigation tells of no frame's
 * removal, so at most perTab frames, the oldest going to pages); spilled:
 * the origins of the pages forgotten past perTab (a page that changes its
 * URL over and over to push its own out), and when those were last shown,
 * each of which stands for any page of its origin.
 */

/**
 * @typedef {{at: number, pages: Map<number, number>, origins: Map<number, number>, spilled: Map<number, number>}} Closed
 * A closed tab, in few bytes, so that many can be kept: a tab closed at
 * `at`, and the hashes (hash53) of the pages it showed (top and frames),
 * of their origins (for a referrer that is an origin alone) and of its
 * spilled origins, each with when it was last shown. 512 tabs kept whole
 * were too few: 530 tabs closed by another program within the ten minutes
 * made the extension forget the person's closed tab, and their slow
 * download went by a denying program's tab alone (red team, 2026-12-01).
 */

export class RecentPages {
  /**
   * @param {number} keepMs how long a page left, or a closed tab, counts
   * @param {number} perTab pages, frames and spilled origins kept per tab
   * @param {number} maxTabs open tabs kept
   * @param {number} since when the record began (the service worker's
   * start): until keepMs after it, tabsOf knows too little to say
   * @param {number} maxClosed closed tabs kept
   * @param {number} maxClosedEntries pages and origins kept of all the
   * closed tabs together (each about 40 bytes saved)
   */
  constructor(keepMs = 60_000, perTab = 32, maxTabs = 512, since = Date.now(), maxClosed = 8192, maxClosedEntries = 65_536) {
    this.keepMs = keepMs;
    this.perTab = perTab;
    this.maxTabs = maxTabs;
    this.since = since;
    this.maxClosed = maxClosed;
    this.maxClosedEntries = maxClosedEntries;
    /** @type {Map<number, Tab>} */
    this.tabs = new Map();
    /** @type {Map<number, Closed>} in the order they closed */
    this.closedTabs = new Map();
    this.closedEntries = 0;
  }

  /**
   * A frame of a tab shows url from now on (frame 0: the tab's page, whose
   * frames go with it).
   * @param {number} tabId
   * @param {number} frameId
   * @param {string} url
   * @param {number} now
   */
  saw(tabId, frameId, url, now) {
    if (tabId < 0 || !url) return;
    url = pageKey(url);
    let t = this.tabs.get(tabId);
    if (!t) {
      t = { tops: new Map(), pages: new Map(), current: new Map(), spilled: new Map() };
      this.tabs.set(tabId, t);
      this.prune(now);
    }
    if (frameId === 0) {
      this.left(t, now);
    } else {
      const old = t.current.get(frameId);
      if (old !== undefined) this.note(t, old, now, false);
      t.current.delete(frameId);
      for (const [id, u] of t.current) {
        if (t.current.size < this.perTab) break;
        if (id === 0) continue;
        t.current.delete(id);
        this.note(t, u, now, false);
      }
    }
    t.current.set(frameId, url);
    this.note(t, url, now, frameId === 0);
  }

  /**
   * @param {number} tabId
   * @param {number} now
   */
  closed(tabId, now) {
    const t = this.tabs.get(tabId);
    if (!t) return;
    this.left(t, now);
    this.tabs.delete(tabId);
    this.bury(tabId, compact(t, now, now - this.keepMs));
    this.prune(now);
  }

  /**
   * @param {number} tabId
   * @param {Closed} c
   */
  bury(tabId, c) {
    this.forget(tabId);
    this.closedTabs.set(tabId, c);
    this.closedEntries += weight(c);
  }

  /** @param {number} tabId */
  forget(tabId) {
    const c = this.closedTabs.get(tabId);
    if (!c) return;
    this.closedTabs.delete(tabId);
    this.closedEntries -= weight(c);
  }

  /**
   * The tabs, open or closed, that showed the page referrer names (or of
   * its origin, for a referrer that is an origin alone) in the last
   * keepMs; undefined while the record is younger than that.
   * @param {string} referrer
   * @param {number} now
   * @returns {number[] | undefined}
   */
  tabsOf(referrer, now) {
    if (now - this.since < this.keepMs) return undefined;
    /** @type {number[]} */
    const found = [];
    if (!referrer) return found;
    const recent = (/** @type {number | undefined} */ at) => at !== undefined && now - at <= this.keepMs;
    for (const [id, t] of this.tabs) {
      const showed =
        [...t.current.values()].some((u) => shows(referrer, u)) ||
        [...t.tops, ...t.pages].some(([u, at]) => recent(at) && shows(referrer, u)) ||
        [...t.spilled].some(([o, at]) => recent(at) && sameOrigin(referrer, o));
      if (showed) found.push(id);
    }
    let ref;
    try {
      ref = new URL(referrer);
    } catch {
      return found;
    }
    const page = hash53(ref.href), origin = hash53(ref.origin);
    const originOnly = ref.pathname === '/' && !ref.search;
    for (const [id, c] of this.closedTabs) {
      if (!recent(c.at)) continue;
      if (recent(c.pages.get(page)) || recent(c.spilled.get(origin)) || (originOnly && recent(c.origins.get(origin)))) found.push(id);
    }
    return found;
  }

  /**
   * @param {Tab} t
   * @param {number} now
   */
  left(t, now) {
    for (const [id, u] of t.current) this.note(t, u, now, id === 0);
    t.current.clear();
  }

  /**
   * @param {Tab} t
   * @param {string} url
   * @param {number} now
   * @param {boolean} top a page of the tab's top, not of a frame
   */
  note(t, url, now, top) {
    const pages = top ? t.tops : t.pages;
    pages.delete(url);
    pages.set(url, now);
    while (pages.size > this.perTab) {
      const [old, at] = pages.entries().next().value ?? ['', 0];
      pages.delete(old);
      const origin = originOf(old);
      if (origin === undefined) continue; // not a URL: nothing to stand for
      const was = t.spilled.get(origin) ?? 0;
      t.spilled.delete(origin);
      t.spilled.set(origin, Math.max(was, at));
      while (t.spilled.size > this.perTab) t.spilled.delete(t.spilled.keys().next().value ?? '');
    }
  }

  /**
   * The record as JSON values, for the session's storage: the open tabs
   * whole, the closed ones as their hashes.
   * @returns {{open: [number, [string, number][], [string, number][], [number, string][], [string, number][]][], closed: [number, number, number[], number[], number[]][]}}
   */
  save() {
    return {
      open: [...this.tabs].map(([id, t]) => [id, [...t.tops], [...t.pages], [...t.current], [...t.spilled]]),
      // Each map flat, [hash, at, hash, at, …]: half the bytes of pairs.
      closed: [...this.closedTabs].map(([id, c]) => [id, c.at, flat(c.pages), flat(c.origins), flat(c.spilled)]),
    };
  }

  /**
   * Takes back a record save made, before anything newer.
   * @param {unknown} saved
   */
  restore(saved) {
    if (!saved || typeof saved !== 'object' || Array.isArray(saved)) return; // none, or of an older extension
    const { open, closed } = /** @type {{open?: unknown, closed?: unknown}} */ (saved);
    if (Array.isArray(closed)) {
      /** @type {Map<number, Closed>} */
      const newer = new Map(this.closedTabs);
      this.closedTabs = new Map();
      this.closedEntries = 0;
      for (const [id, at, pages, origins, spilled] of closed) {
        if (typeof id !== 'number' || typeof at !== 'number' || newer.has(id) || this.tabs.has(id)) continue;
        this.bury(id, { at, pages: unflat(pages), origins: unflat(origins), spilled: unflat(spilled) });
      }
      for (const [id, c] of newer) this.bury(id, c);
    }
    if (Array.isArray(open)) {
      for (const [id, tops, pages, current, spilled] of open) {
        if (typeof id !== 'number' || this.tabs.has(id) || this.closedTabs.has(id)) continue;
        this.tabs.set(id, { tops: new Map(tops), pages: new Map(pages), current: new Map(current), spilled: new Map(spilled) });
      }
    }
    this.prune(Date.now());
  }

  /**
   * Forgets tabs closed long ago and, past maxClosed or maxClosedEntries,
   * the longest closed; past maxTabs open tabs, the oldest open.
   * @param {number} now
   */
  prune(now) {
    for (const [id, c] of this.closedTabs) {
      const expired = now - c.at > this.keepMs;
      if (!expired && this.closedTabs.size <= this.maxClosed && this.closedEntries <= this.maxClosedEntries) break;
      this.forget(id);
    }
    for (const id of this.tabs.keys()) {
      if (this.tabs.size <= this.maxTabs) return;
      this.tabs.delete(id);
    }
  }
}

/**
 * A closed tab's record: what it showed since `since`, hashed.
 * @param {Tab} t
 * @param {number} at when it closed
 * @param {number} since
 * @returns {Closed}
 */
function compact(t, at, since) {
  /** @type {Closed} */
  const c = { at, pages: new Map(), origins: new Map(), spilled: new Map() };
  const later = (/** @type {Map<number, number>} */ m, /** @type {number} */ k, /** @type {number} */ when) => {
    if (when >= since && when > (m.get(k) ?? -Infinity)) m.set(k, when);
  };
  for (const [u, when] of [...t.tops, ...t.pages]) {
    later(c.pages, hash53(u), when);
    const o = originOf(u);
    if (o !== undefined) later(c.origins, hash53(o), when);
  }
  for (const [o, when] of t.spilled) later(c.spilled, hash53(o), when);
  return c;
}

/** @param {Closed} c */
function weight(c) {
  return 1 + c.pages.size + c.origins.size + c.spilled.size;
}

/** @param {Map<number, number>} m */
function flat(m) {
  return [...m].flat();
}

/** @param {unknown} a */
function unflat(a) {
  /** @type {Map<number, number>} */
  const m = new Map();
  if (!Array.isArray(a)) return m;
  for (let i = 0; i + 1 < a.length; i += 2) {
    if (typeof a[i] === 'number' && typeof a[i + 1] === 'number') m.set(a[i], a[i + 1]);
  }
  return m;
}

/**
 * The tabs that navigated to each URL of late (webNavigation's
 * onBeforeNavigate, every frame): a download that sends no referrer at all
 * is joined to the tab that asked for its URL (the person's, typed in the
 * address bar; a page's frame), before the origin it came from stands for
 * its page (TestRedTeamDiesMidDownload).
 */
export class RecentNavigations {
  /**
   * @param {number} keepMs how long a navigation counts
   * @param {number} max URLs kept, the oldest going first
   */
  constructor(keepMs = 10 * 60_000, max = 1024) {
    this.keepMs = keepMs;
    this.max = max;
    /** @type {Map<string, Map<number, number>>} by URL (no fragment), each tab and when */
    this.byURL = new Map();
  }

  /**
   * @param {number} tabId
   * @param {string} url
   * @param {number} now
   */
  add(tabId, url, now) {
    const key = navKey(url);
    if (key === undefined) return;
    const tabs = this.byURL.get(key) ?? new Map();
    this.byURL.delete(key);
    tabs.delete(tabId);
    tabs.set(tabId, now);
    while (tabs.size > 16) tabs.delete(tabs.keys().next().value ?? -1);
    this.byURL.set(key, tabs);
    while (this.byURL.size > this.max) this.byURL.delete(this.byURL.keys().next().value ?? '');
  }

  /**
   * The tabs that navigated to url in the last keepMs.
   * @param {string | undefined} url
   * @param {number} now
   * @returns {number[]}
   */
  tabsOf(url, now) {
    const key = url ? navKey(url) : undefined;
    const tabs = key === undefined ? undefined : this.byURL.get(key);
    return tabs ? [...tabs].filter(([, at]) => now - at <= this.keepMs).map(([id]) => id) : [];
  }
}

/**
 * A URL without its fragment, or undefined for one too long to keep or
 * not a URL.
 * @param {string} url
 */
function navKey(url) {
  if (url.length > MAX_URL) return undefined;
  try {
    const u = new URL(url);
    u.hash = '';
    return u.href;
  } catch {
    return undefined;
  }
}

/**
 * The origin a download with no referrer stands for, as a referrer of the
 * origin alone ("https://host/"), or undefined (data:, an opaque origin).
 * @param {string | undefined} url
 */
export function originReferrer(url) {
  const origin = url ? originOf(url) : undefined;
  return origin && origin !== 'null' ? origin + '/' : undefined;
}

/**
 * A 53-bit hash of s (two 32-bit FNV-1a over its UTF-16 units, of two
 * starting values), a number JSON keeps exactly. Not a cryptographic
 * hash: a collision counts a closed tab as having shown a page it did not
 * (at 65,536 entries, about one lookup in 10^11), and a page cannot
 * choose what the person's tabs showed.
 * @param {string} s
 */
export function hash53(s) {
  let a = 0x811c9dc5, b = 0x050c5d1f;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193);
    b ^= b >>> 15;
  }
  return (a >>> 0) * 0x200000 + ((b >>> 0) & 0x1fffff);
}

/**
 * @param {string} url
 * @returns {string | undefined}
 */
function originOf(url) {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/**
 * The page a URL names: no fragment (a page changing its hash over and
 * over must not push its pages out), and a URL too long to be sent as a
 * referrer stands as its origin.
 * @param {string} url
 */
function pageKey(url) {
  let u;
  try {
    u = new URL(url);
  } catch {
    return url.split('#')[0].slice(0, MAX_URL);
  }
  u.hash = '';
  u.username = '';
  u.password = '';
  return u.href.length <= MAX_URL ? u.href : u.origin + '/';
}

/**
 * @param {string} url
 * @param {string} origin
 */
function sameOrigin(url, origin) {
  try {
    return new URL(url).origin === origin;
  } catch {
    return false;
  }
}
