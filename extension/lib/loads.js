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
  return u.href === ref.href || (ref.pathname === '/' && !ref.search && u.origin === ref.origin);
}

/**
 * The pages (top documents and frames) each tab showed in the last minute,
 * closed tabs included. A download whose server is slow to answer begins
 * after its page is gone: the page changed its URL (history.replaceState),
 * the click came from one of its frames, or its tab closed. Such a
 * download names a page no open tab shows, and a hostile page in a
 * program's tab that denies downloads got its file into the person's
 * Downloads folder that way (TestRedTeamDiesMidDownload). These are the
 * tabs that showed its page of late; the relay takes the download for a
 * program's closed tab only when that tab is the one.
 */
/**
 * @typedef {{pages: Map<string, number>, current: Map<number, string>, spilled: Set<string>, closedAt?: number}} Tab
 * pages: each page the tab showed, and when it last did; current: what
 * each frame shows; spilled: the origins of pages forgotten past perTab (a
 * page that changes its URL over and over to push its own out), each of
 * which stands for any page of its origin.
 */

export class RecentPages {
  /**
   * @param {number} keepMs how long a page left, or a closed tab, counts
   * @param {number} perTab pages kept per tab
   * @param {number} maxTabs tabs kept
   */
  constructor(keepMs = 60_000, perTab = 32, maxTabs = 512) {
    this.keepMs = keepMs;
    this.perTab = perTab;
    this.maxTabs = maxTabs;
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
    let t = this.tabs.get(tabId);
    if (!t) {
      t = { pages: new Map(), current: new Map(), spilled: new Set() };
      this.tabs.set(tabId, t);
      this.prune(now);
    }
    if (frameId === 0) {
      this.left(t, now);
    } else {
      const old = t.current.get(frameId);
      if (old !== undefined) this.note(t, old, now);
    }
    t.current.set(frameId, url);
    this.note(t, url, now);
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
   * its origin, for a referrer that is an origin alone) in the last keepMs.
   * @param {string} referrer
   * @param {number} now
   * @returns {number[]}
   */
  tabsOf(referrer, now) {
    /** @type {number[]} */
    const found = [];
    if (!referrer) return found;
    for (const [id, t] of this.tabs) {
      if (t.closedAt !== undefined && now - t.closedAt > this.keepMs) continue;
      const showing = [...t.current.values()].some((u) => shows(referrer, u));
      const showed =
        showing ||
        [...t.pages].some(([u, at]) => now - at <= this.keepMs && shows(referrer, u)) ||
        [...t.spilled].some((o) => sameOrigin(referrer, o));
      if (showed) found.push(id);
    }
    return found;
  }

  /**
   * @param {Tab} t
   * @param {number} now
   */
  left(t, now) {
    for (const u of t.current.values()) this.note(t, u, now);
    t.current.clear();
  }

  /**
   * @param {Tab} t
   * @param {string} url
   * @param {number} now
   */
  note(t, url, now) {
    t.pages.delete(url);
    t.pages.set(url, now);
    while (t.pages.size > this.perTab) {
      const old = t.pages.keys().next().value ?? '';
      t.pages.delete(old);
      try {
        if (t.spilled.size < this.perTab) t.spilled.add(new URL(old).origin);
      } catch {
        // not a URL: nothing to stand for
      }
    }
  }

  /**
   * Forgets tabs closed long ago, and the oldest past maxTabs.
   * @param {number} now
   */
  prune(now) {
    for (const [id, t] of this.tabs) {
      if (t.closedAt !== undefined && now - t.closedAt > this.keepMs) this.tabs.delete(id);
    }
    for (const id of this.tabs.keys()) {
      if (this.tabs.size <= this.maxTabs) break;
      this.tabs.delete(id);
    }
  }
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
