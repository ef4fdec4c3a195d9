// @ts-check
// Page.navigate inputs that crash the whole browser when they go through
// chrome.debugger (measured on Chromium 156, see
// docs/decisions/2026-11-23-chrome-debugger-inputs-emulated-or-refused.md).
// The Go relay emulates or refuses them before they get here; this is the
// backstop for any other sender on the bridge. Keep it in step with
// extcdp/unsafe.go.

// The schemes a tab may be navigated to through the extension; about: is
// checked apart. Other schemes are pages an extension may not debug
// (chrome://, whose debug hosts crash the tab or the browser) or hand the
// URL to another program.
const SCHEMES = new Set(['http:', 'https:', 'file:', 'data:', 'blob:', 'javascript:']);

/**
 * Why a Page.navigate to url must not reach chrome.debugger, or '' when it
 * may. tabUrl is the tab's current URL, needed only when url has a
 * fragment (see needsTabUrl).
 * @param {string} url
 * @param {string | undefined} tabUrl
 * @returns {string}
 */
export function navigateRefusal(url, tabUrl) {
  /** @type {URL} */
  let u;
  try {
    u = new URL(url);
  } catch {
    return `livetab refuses Page.navigate to ${JSON.stringify(url)}: not a URL`;
  }
  if (u.protocol === 'about:') {
    // Chrome turns other about: pages into chrome:// ones; about:version
    // crashed the browser this way.
    if (u.pathname !== 'blank' && u.pathname !== 'srcdoc') {
      return `livetab refuses Page.navigate to ${JSON.stringify(url)}: Chrome turns it into a chrome:// page, which an extension may not debug`;
    }
    // about:srcdoc with a query or fragment, even an empty one, leaves a
    // frame no extension may debug: every later command on the tab fails.
    if (u.pathname === 'srcdoc' && !/^about:srcdoc$/i.test(url.trim())) {
      return `livetab refuses Page.navigate to ${JSON.stringify(url)}: about:srcdoc with a query or fragment leaves a frame an extension may not debug (every later command on the tab would fail)`;
    }
  } else if (!SCHEMES.has(u.protocol)) {
    return `livetab refuses Page.navigate to ${JSON.stringify(url)}: ${u.protocol} pages cannot be debugged by an extension or open another program; open it in the browser yourself`;
  }
  if (tabUrl === undefined || !needsTabUrl(url)) return '';
  /** @type {URL} */
  let cur;
  try {
    cur = new URL(tabUrl);
  } catch {
    return '';
  }
  if (cur.protocol === 'about:' && withoutFragment(cur) === withoutFragment(u)) {
    return `livetab refuses Page.navigate to ${JSON.stringify(url)}: a same-document navigation of ${cur.href} crashes the browser through chrome.debugger; set location.href with Runtime.evaluate instead`;
  }
  return '';
}

/**
 * Whether navigateRefusal needs the tab's URL: only a URL with a fragment
 * can navigate within the document.
 * @param {string} url
 */
export function needsTabUrl(url) {
  return url.includes('#');
}

/** @param {URL} u */
function withoutFragment(u) {
  const h = u.href;
  const i = h.indexOf('#');
  return i < 0 ? h : h.slice(0, i);
}

// Sizes past which Chrome crashed or stopped answering (measured on
// Chromium 156, docs/decisions/2026-11-27-sizes-and-scales-are-bounded.md);
// keep them in step with extcdp/sizes.go and extcdp/gestures.go.
const MAX_SHOT_PIXELS = 2 ** 27;
const MAX_VIEWPORT_SCALE = 10;
const MAX_INPUT_COORDINATE = 1e9;
const MAX_INPUT_TEXT = 2 ** 20;
const TYPED = new Set(['Input.insertText', 'Input.imeSetComposition', 'Input.dispatchKeyEvent']);
const POINTED = new Set(['Input.dispatchMouseEvent', 'Input.dispatchTouchEvent', 'Input.dispatchDragEvent', 'Input.emulateTouchFromMouseEvent']);

/**
 * Why a command other than Page.navigate must not reach chrome.debugger,
 * or '' when it may. Emulation.setDisplayFeaturesOverride with no features
 * made the whole browser exit (measured on Chromium 156); the relay sends
 * Emulation.clearDisplayFeaturesOverride instead. A screenshot's clip past
 * MAX_SHOT_PIXELS at a device pixel ratio of 1 made it exit too; the relay
 * also reads the page's ratio and viewport, which this cannot.
 * @param {string} method
 * @param {unknown} params
 * @returns {string}
 */
export function commandRefusal(method, params) {
  if (method === 'Emulation.setDisplayFeaturesOverride') {
    const features = /** @type {{features?: unknown} | undefined} */ (params)?.features;
    if (!Array.isArray(features) || features.length === 0) {
      return 'livetab refuses Emulation.setDisplayFeaturesOverride without features: it crashes the browser through chrome.debugger; send Emulation.clearDisplayFeaturesOverride instead';
    }
  }
  const p = /** @type {Record<string, any> | undefined} */ (params);
  if (method === 'Page.captureScreenshot' && p?.clip && typeof p.clip === 'object') {
    const { width, height } = p.clip;
    const scale = p.clip.scale ?? 1;
    const px = width * scale * height * scale;
    if (!(px <= MAX_SHOT_PIXELS)) {
      return `livetab refuses a screenshot of ${px} pixels: at most ${MAX_SHOT_PIXELS}, as larger ones made the browser exit; take it in parts with clip`;
    }
  }
  if (method === 'Emulation.setDeviceMetricsOverride' && p?.viewport && typeof p.viewport === 'object') {
    if (!(p.viewport.scale <= MAX_VIEWPORT_SCALE)) {
      return `livetab refuses a viewport scaled ${p.viewport.scale} times: at most ${MAX_VIEWPORT_SCALE}, as Chrome then answered no screenshot of the tab`;
    }
  }
  if (TYPED.has(method) && p) {
    for (const k of ['text', 'unmodifiedText', 'key', 'code', 'keyIdentifier']) {
      const v = p[k];
      if (typeof v === 'string' && v.length > MAX_INPUT_TEXT) {
        return `livetab refuses ${method} with a ${k} of ${v.length} characters: at most ${MAX_INPUT_TEXT}, as typing more kept the tab from answering for minutes; set a long value from script`;
      }
    }
  }
  if (POINTED.has(method) && p) {
    const points = [p, ...(Array.isArray(p.touchPoints) ? p.touchPoints : [])];
    for (const pt of points) {
      const far = (/** @type {unknown} */ v) => v !== undefined && !(Math.abs(Number(v)) <= MAX_INPUT_COORDINATE);
      if (pt && (far(pt.x) || far(pt.y))) {
        return `livetab refuses ${method} at (${pt.x}, ${pt.y}): at most ${MAX_INPUT_COORDINATE} px either way, as Chrome never answered an event that far and the tab then took no mouse input`;
      }
    }
  }
  return '';
}
