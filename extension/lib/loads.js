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
