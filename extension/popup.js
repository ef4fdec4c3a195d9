// @ts-check
// The popup shows the bridge connection and lets the user paste the bridge
// URL and token. It never reads the token back: the service worker only
// says whether one is set.

/**
 * @typedef {{state: string, connected: boolean, url: string, urlSource: string,
 *   tokenSet: boolean, tokenSource: string,
 *   lastClose: {code: number, reason: string, text: string, at: number} | null,
 *   attached: number[], fileAccess: boolean, paused: boolean, version: string, extensionId: string}} Status
 */

/**
 * @param {string} id
 * @returns {HTMLElement}
 */
function el(id) {
  const e = document.getElementById(id);
  if (!e) throw new Error(`popup.html lacks #${id}`);
  return e;
}

const urlInput = /** @type {HTMLInputElement} */ (el('in-url'));
const tokenInput = /** @type {HTMLInputElement} */ (el('in-token'));

/**
 * @param {HTMLElement} e
 * @param {string} text
 * @param {'ok' | 'bad' | ''} [cls]
 */
function show(e, text, cls = '') {
  e.textContent = text;
  e.className = cls;
}

/**
 * @param {Status} s
 */
function render(s) {
  const stateText = {
    ready: 'connected',
    hello: 'pairing…',
    connecting: 'connecting…',
    idle: s.url && s.tokenSet ? 'not connected' : 'not paired',
  }[s.state] ?? s.state;
  show(el('state'), stateText, s.connected ? 'ok' : 'bad');
  paused = s.paused;
  el('pause').textContent = s.paused ? 'Resume' : 'Pause';
  el('pausetext').textContent = s.paused
    ? 'Paused: no program can use your tabs until you resume.'
    : 'Stops every program at once: lets go of all tabs, refuses new commands.';
  el('pausebox').className = s.paused ? 'paused' : '';
  show(el('url'), s.url ? `${s.url}${s.urlSource === 'popup' ? ' (saved here)' : ''}` : 'none');
  const refused = s.lastClose?.code === 4001;
  show(el('paired'),
    !s.tokenSet ? 'no — paste a token'
      : refused ? 'no — token refused'
      : s.connected ? `yes (token from ${s.tokenSource})` : `token set (${s.tokenSource})`,
    !s.tokenSet || refused ? 'bad' : s.connected ? 'ok' : '');
  lastStatus = s;
  // By title, as the person knows their tabs; the id only for a tab the
  // list does not have (yet).
  show(el('attached'), s.attached.length
    ? s.attached.map((t) => titles.get(t) ?? `tab ${t}`).join(', ')
    : 'no tabs');
  show(el('files'), s.fileAccess
    ? 'allowed: uploads go by file path, at disk speed; drops are trusted'
    : 'not allowed: uploads send the bytes, slower, and drops are synthetic. To allow: chrome://extensions → livetab → Details → Allow access to file URLs');
  el('reason').textContent = s.lastClose && !s.connected ? s.lastClose.text : '';
  if (!urlInput.value && document.activeElement !== urlInput) urlInput.value = s.url;
}

/**
 * @typedef {{tabId: number, title: string, url: string, shared: boolean, current: boolean}} ShareItem
 */

/**
 * Lists the tabs with a share switch each; the tab the popup was opened on
 * comes first.
 * @param {ShareItem[]} items
 */
function renderTabs(items) {
  for (const t of items) titles.set(t.tabId, t.title ? `“${t.title}”` : t.url);
  if (lastStatus) render(lastStatus);
  const list = el('tabs');
  list.replaceChildren(...items.map((t) => {
    const li = document.createElement('li');
    const label = document.createElement('label');
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.checked = t.shared;
    box.dataset.tabId = String(t.tabId);
    box.addEventListener('change', () => {
      void chrome.runtime.sendMessage({ type: 'livetab.share', tabId: t.tabId, shared: box.checked })
        .then((next) => { if (next) renderTabs(next); });
    });
    const name = document.createElement('span');
    name.textContent = (t.current ? 'This tab: ' : '') + t.title;
    name.title = t.url;
    label.append(box, name);
    li.append(label);
    return li;
  }));
}

chrome.runtime.onMessage.addListener((msg) => {
  if (msg?.type === 'livetab.statusChanged') render(msg.status);
});

let paused = false;
/** @type {Map<number, string>} tab titles, for the tabs being debugged */
const titles = new Map();
/** @type {Status | null} */
let lastStatus = null;
el('pause').addEventListener('click', () => {
  void chrome.runtime.sendMessage({ type: 'livetab.pause', paused: !paused })
    .then((s) => { if (s) render(s); });
});

el('form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  /** @type {{url?: string, token?: string}} */
  const values = {};
  const url = urlInput.value.trim();
  const token = tokenInput.value.trim();
  if (url) values.url = url;
  // An empty token field keeps the saved token: it is never shown to edit.
  if (token) values.token = token;
  void chrome.storage.local.set(values).then(() => {
    tokenInput.value = '';
    el('saved').textContent = 'saved';
    return chrome.runtime.sendMessage({ type: 'livetab.reconnect' });
  }).then((s) => { if (s) render(s); });
});

el('clear').addEventListener('click', () => {
  void chrome.storage.local.remove(['url', 'token']).then(() => {
    urlInput.value = '';
    tokenInput.value = '';
    el('saved').textContent = 'reset';
    return chrome.runtime.sendMessage({ type: 'livetab.reconnect' });
  }).then((s) => { if (s) render(s); });
});

void chrome.runtime.sendMessage({ type: 'livetab.status' }).then((s) => { if (s) render(s); });
void chrome.runtime.sendMessage({ type: 'livetab.tabs' }).then((t) => { if (t) renderTabs(t); });
