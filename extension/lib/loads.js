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
 * names the page (its referrer) but not the tab. A popup's page can begin
 * a download before the relay's watch of the popup has attached, so that
 * no session tells of it; the relay then joins it to the tab named here
 * when it watches that tab. A referrer that is an origin alone (what a
 * request to another origin sends) names the tab of that origin. Two
 * tabs showing the page, or none: undefined, the download stays unjoined.
 * @param {string} referrer
 * @param {{id?: number, url?: string, pendingUrl?: string}[]} tabs
 * @returns {number | undefined}
 */
export function referrerTab(referrer, tabs) {
  if (!referrer) return undefined;
  let ref;
  try {
    ref = new URL(referrer);
  } catch {
    return undefined;
  }
  const originOnly = ref.pathname === '/' && !ref.search;
  /** @type {number | undefined} */
  let found;
  for (const tab of tabs) {
    const raw = tab.url || tab.pendingUrl;
    if (tab.id === undefined || !raw) continue;
    let u;
    try {
      u = new URL(raw);
    } catch {
      continue;
    }
    u.hash = '';
    if (u.href !== ref.href && !(originOnly && u.origin === ref.origin)) continue;
    if (found !== undefined) return undefined;
    found = tab.id;
  }
  return found;
}
