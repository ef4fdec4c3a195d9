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
  // Pairing is what a person without a working token needs first.
  if (!s.tokenSet || refused) /** @type {HTMLDetailsElement} */ (el('pairing')).open = true;
  // By title, as the person knows their tabs; the id only for a tab the
  // list does not have (yet).
  show(el('attached'), s.attached.length
    ? s.attached.map((t) => titles.get(t) ?? `tab ${t}`).join(', ')
    : 'no tabs');
  show(el('files'), s.fileAccess
    ? 'allowed: uploads go by file path, at disk speed; drops are trusted'
    : 'not allowed: uploads send the bytes, slower, and drops are synthetic. To allow: chrome://extensions → livetab → Details → Allow access to file URLs');
  el('reason').textContent = s.lastClose && !s.connected ? s.lastClose.text : '';
  if (lastActivity) void renderActivity(lastActivity);
  if (!urlInput.value && document.activeElement !== urlInput) urlInput.value = s.url;
}

/**
 * @typedef {{tabId: number, title: string, url: string, shared: boolean, current: boolean, driven?: boolean}} ShareItem
 * @typedef {{id: string, name: string, tabs: number[], since: number}} ClientActivity
 * @typedef {{client: string, name: string, tabId?: number, what: string, decision?: string, count: number, at: number}} Action
 * @typedef {{clients: ClientActivity[], actions: Action[]}} Activity
 */

/**
 * The site of a URL, as the person reads it in the address bar.
 * @param {string} url
 */
function siteOf(url) {
  try {
    const u = new URL(url);
    return u.host || u.protocol.replace(/:$/, '');
  } catch {
    return '';
  }
}

/**
 * The tab's icon, from Chrome's favicon cache: the popup fetches nothing
 * from the site itself.
 * @param {string} url
 */
function favicon(url) {
  const img = document.createElement('img');
  img.alt = '';
  img.src = chrome.runtime.getURL('/_favicon/') + '?pageUrl=' + encodeURIComponent(url) + '&size=16';
  return img;
}

/**
 * A row naming a tab by icon, title and site; a tab Chrome no longer has
 * by its number.
 * @param {number} tabId
 */
function tabRow(tabId) {
  const t = allTabs.get(tabId);
  const url = t?.url || t?.pendingUrl || '';
  const row = document.createElement('div');
  row.className = 'tab';
  const name = document.createElement('span');
  name.className = 'name';
  name.textContent = t ? (t.title || url || `tab ${tabId}`) : `tab ${tabId} (closed)`;
  name.title = url;
  const site = document.createElement('span');
  site.className = 'site';
  site.textContent = siteOf(url);
  if (t) row.append(favicon(url));
  row.append(name, site);
  return row;
}

/**
 * A small button that asks the service worker to stop something.
 * @param {string} text
 * @param {string} title
 * @param {any} msg
 */
function stopButton(text, title, msg) {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'stop';
  b.textContent = text;
  b.title = title;
  b.addEventListener('click', () => {
    b.disabled = true;
    void chrome.runtime.sendMessage(msg).then((a) => { if (a) void renderActivity(a); });
  });
  return b;
}

/**
 * @param {number} ms
 * @param {boolean} [seconds]
 */
function clock(ms, seconds = true) {
  return new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hour12: false, ...(seconds ? { second: '2-digit' } : {}) });
}

/**
 * Shows who drives which tab now, with a stop button for each, and the
 * last actions, newest first.
 * @param {Activity} a
 */
async function renderActivity(a) {
  lastActivity = a;
  allTabs = new Map((await chrome.tabs.query({})).map((t) => [t.id ?? -1, t]));
  const now = el('now');
  if (!a.clients.length) {
    const li = document.createElement('li');
    li.className = 'empty';
    li.textContent = 'No program is connected.';
    now.replaceChildren(li);
  } else {
    now.replaceChildren(...a.clients.map((c) => {
      const li = document.createElement('li');
      li.dataset.client = c.id;
      const head = document.createElement('div');
      head.className = 'client';
      const name = document.createElement('span');
      name.textContent = c.name;
      name.title = `connected at ${clock(c.since)}`;
      // A program chooses its name, and two may choose one: the number
      // tells the connections apart.
      const id = document.createElement('small');
      id.className = 'site';
      id.textContent = `#${c.id}`;
      head.append(name, id, stopButton('Stop this client', 'End this program\'s connection: it lets go of every tab and its next command fails', { type: 'livetab.stopClient', client: c.id }));
      const tabs = document.createElement('ul');
      if (!c.tabs.length) {
        const none = document.createElement('li');
        none.className = 'empty';
        none.textContent = 'drives no tab';
        tabs.append(none);
      }
      for (const id of c.tabs) {
        const item = document.createElement('li');
        const row = tabRow(id);
        row.dataset.tabId = String(id);
        if (lastStatus?.paused) {
          // The pause let go of every tab; the program only holds its
          // place, to hear the pause error.
          const note = document.createElement('span');
          note.className = 'site';
          note.textContent = 'let go (paused)';
          row.append(note);
        } else {
          row.append(stopButton('Stop', 'Stop driving this tab: livetab lets go of it, and this program may not take it again', { type: 'livetab.stopTab', tabId: id }));
        }
        item.append(row);
        tabs.append(item);
      }
      li.append(head, tabs);
      return li;
    }));
  }
  const recent = el('recent');
  if (!a.actions.length) {
    const li = document.createElement('li');
    li.className = 'empty';
    li.textContent = 'Nothing yet.';
    recent.replaceChildren(li);
    return;
  }
  recent.replaceChildren(...a.actions.slice().reverse().map((x) => {
    const li = document.createElement('li');
    const at = document.createElement('time');
    at.textContent = clock(x.at);
    const what = document.createElement('span');
    const t = x.tabId ? allTabs.get(x.tabId) : undefined;
    const where = !x.tabId ? '' : t ? ` on “${t.title || siteOf(t.url ?? '')}”` : ` on tab ${x.tabId}`;
    what.textContent = `${x.name}: ${x.what}${x.count > 1 ? ` ×${x.count}` : ''}${where}${x.decision ? ` — ${x.decision}` : ''}`;
    if (x.decision === 'denied') what.className = 'denied';
    li.append(at, what);
    return li;
  }));
}

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
    label.append(box, favicon(t.url), name);
    if (t.driven) {
      const mark = document.createElement('span');
      mark.className = 'driven';
      mark.textContent = 'driven';
      mark.title = 'a program drives this tab now';
      label.append(mark);
    }
    li.append(label);
    return li;
  }));
  const cur = items.find((t) => t.current);
  const btn = /** @type {HTMLButtonElement} */ (el('sharecurrent'));
  btn.textContent = !cur ? '' : cur.shared ? `This tab is shared: “${cur.title}”` : `Share this tab: “${cur.title}”`;
  btn.disabled = !cur || cur.shared;
  btn.dataset.tabId = cur ? String(cur.tabId) : '';
}

chrome.runtime.onMessage.addListener((msg) => {
  if (msg?.type === 'livetab.statusChanged') {
    render(msg.status);
    void refreshTabs();
  } else if (msg?.type === 'livetab.activity') {
    void renderActivity(msg.activity);
  }
});

function refreshTabs() {
  return chrome.runtime.sendMessage({ type: 'livetab.tabs' }).then((t) => { if (t) renderTabs(t); });
}

el('sharecurrent').addEventListener('click', () => {
  const id = Number(el('sharecurrent').dataset.tabId);
  if (!id) return;
  void chrome.runtime.sendMessage({ type: 'livetab.share', tabId: id, shared: true })
    .then((next) => { if (next) renderTabs(next); });
});

let paused = false;
/** @type {Map<number, string>} tab titles, for the tabs being debugged */
const titles = new Map();
/** @type {Status | null} */
let lastStatus = null;
/** @type {Map<number, chrome.tabs.Tab>} every tab, to name the driven ones */
let allTabs = new Map();
/** @type {Activity | null} */
let lastActivity = null;
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
void refreshTabs();
void chrome.runtime.sendMessage({ type: 'livetab.activity' }).then((a) => { if (a) void renderActivity(a); });
