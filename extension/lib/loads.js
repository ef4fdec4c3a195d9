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
 * @typedef {{tops: Map<string, number>, pages: Map<string, number>, current: Map<number, string>, spilled: Map<string, number>, closedAt?: number}} Tab
 * tops: each page the tab's top showed, and when it last did; pages: the
 * same of its frames, apart, so that a page of many frames does not push
 * the tab's own pages out (red team: a person's tab that had shown 80
 * frames forgot its page, and their download went by a program's tab);
 * current: what
 * each frame shows (webNavigation tells of no frame's removal, so at most
 * perTab frames, the oldest going to pages); spilled: the origins of the
 * pages forgotten past perTab (a page that changes its URL over and over
 * to push its own out), and when those were last shown, each of which
 * stands for any page of its origin.
 */

export class RecentPages {
  /**
   * @param {number} keepMs how long a page left, or a closed tab, counts
   * @param {number} perTab pages, frames and spilled origins kept per tab
   * @param {number} maxTabs tabs kept
   * @param {number} since when the record began (the service worker's
   * start): until keepMs after it, tabsOf knows too little to say
   */
  constructor(keepMs = 60_000, perTab = 32, maxTabs = 512, since = Date.now()) {
    this.keepMs = keepMs;
    this.perTab = perTab;
    this.maxTabs = maxTabs;
    this.since = since;
    /** @type {Map<number, Tab>} */
    this.tabs = new Map();
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
    t.closedAt = now;
    this.prune(now);
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
    const recent = (/** @type {number} */ at) => now - at <= this.keepMs;
    for (const [id, t] of this.tabs) {
      if (t.closedAt !== undefined && !recent(t.closedAt)) continue;
      const showed =
        [...t.current.values()].some((u) => shows(referrer, u)) ||
        [...t.tops, ...t.pages].some(([u, at]) => recent(at) && shows(referrer, u)) ||
        [...t.spilled].some(([o, at]) => recent(at) && sameOrigin(referrer, o));
      if (showed) found.push(id);
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
      let origin;
      try {
        origin = new URL(old).origin;
      } catch {
        continue; // not a URL: nothing to stand for
      }
      const was = t.spilled.get(origin) ?? 0;
      t.spilled.delete(origin);
      t.spilled.set(origin, Math.max(was, at));
      while (t.spilled.size > this.perTab) t.spilled.delete(t.spilled.keys().next().value ?? '');
    }
  }

  /**
   * The record as JSON values, for the session's storage.
   * @returns {[number, [string, number][], [string, number][], [number, string][], [string, number][], number | undefined][]}
   */
  save() {
    return [...this.tabs].map(([id, t]) => [id, [...t.tops], [...t.pages], [...t.current], [...t.spilled], t.closedAt]);
  }

  /**
   * Takes back a record save made, before anything newer.
   * @param {unknown} saved
   */
  restore(saved) {
    if (!Array.isArray(saved)) return;
    for (const [id, tops, pages, current, spilled, closedAt] of saved) {
      if (typeof id !== 'number' || this.tabs.has(id)) continue;
      this.tabs.set(id, {
        tops: new Map(tops), pages: new Map(pages), current: new Map(current), spilled: new Map(spilled),
        ...(typeof closedAt === 'number' ? { closedAt } : {}),
      });
    }
    this.prune(Date.now());
  }

  /**
   * Forgets tabs closed long ago, and past maxTabs the longest closed,
   * then the oldest.
   * @param {number} now
   */
  prune(now) {
    for (const [id, t] of this.tabs) {
      if (t.closedAt !== undefined && now - t.closedAt > this.keepMs) this.tabs.delete(id);
    }
    if (this.tabs.size <= this.maxTabs) return;
    const closed = [...this.tabs].filter(([, t]) => t.closedAt !== undefined).sort(([, a], [, b]) => (a.closedAt ?? 0) - (b.closedAt ?? 0));
    for (const [id] of closed) {
      if (this.tabs.size <= this.maxTabs) return;
      this.tabs.delete(id);
    }
    for (const id of this.tabs.keys()) {
      if (this.tabs.size <= this.maxTabs) return;
      this.tabs.delete(id);
    }
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
