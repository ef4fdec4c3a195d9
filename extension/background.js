// @ts-check
// The livetab service worker: a thin, allow-listed proxy between the livetab
// bridge (a WebSocket server of the Go program) and chrome.debugger. All CDP
// emulation lives in Go; this file forwards commands, events and a handful of
// tab operations, and keeps the socket alive. Frames are those of
// internal/wire/wire.go.

import { Backoff, CLOSE_BAD_TOKEN, REFUSED_DELAY, describeClose, isRefusal } from './lib/backoff.js';
import { Reassembler, encodeFrame } from './lib/chunk.js';
import {
  METHOD_NOT_FOUND, PAUSED_MESSAGE, SERVER_ERROR, errorText, eventText, helloText, notifyText, parseError, proofText, replyText,
} from './lib/frame.js';
import { answerChallenge, newNonce } from './lib/pairing.js';
import { attachedTabs, mergeTabs, tabInfo, targetsByTab } from './lib/tabs.js';
import { parsePolicy, policyOwner } from './lib/policy.js';
import { FIRST_RULE_ID, aheadHoldsAll, aheadRules, closedRules, dnrDomain, drivenRules, lingerRules, mergedPrivateRules, popupRules, workerRules } from './lib/popups.js';
import { commandRefusal, navigateRefusal, needsTabUrl } from './lib/unsafe.js';
import { NewTabLoads, RecentNavigations, RecentPages, originReferrer, referrerTab } from './lib/loads.js';
import { readActivity } from './lib/activity.js';

/**
 * @typedef {import('./lib/frame.js').Frame} Frame
 * @typedef {import('./lib/frame.js').TabInfo} TabInfo
 * @typedef {{url: string, token: string, urlSource: string, tokenSource: string}} Settings
 * @typedef {{code: number, reason: string, text: string, at: number}} CloseInfo
 * @typedef {'idle' | 'connecting' | 'hello' | 'ready'} State
 * @typedef {'challenge' | 'checking' | 'welcome'} Step where the pairing of a socket in state 'hello' is
 */

const VERSION = chrome.runtime.getManifest().version;
const ALARM = 'livetab-redial';
// A JSON message at most every 20 s keeps an MV3 worker alive; protocol-level
// ping frames do not (platform-facts.md).
const PING_MS = 20_000;
// Three missed pongs: the bridge or the network is gone without a close.
// Only a bridge that has answered a ping once is held to it.
const DEAD_MS = 65_000;
const WELCOME_MS = 10_000;
const CREATE_POLL_MS = 5;
const CREATE_WAIT_MS = 2000;
const OPEN = 1; // WebSocket.OPEN, spelled out to avoid a property lookup per send

/** @type {WebSocket | null} */
let ws = null;
/** @type {State} */
let state = 'idle';
/** @type {Step} */
let step = 'challenge';
/** The nonce of the current socket's hello. */
let nonce = '';
let dialing = false;
let stream = 0;
let lastRecv = 0;
let pongs = false;
let nextDialAt = 0;
let fileAccess = false;
let settingsGen = 0;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let redialTimer;
/** @type {ReturnType<typeof setInterval> | undefined} */
let pingTimer;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let welcomeTimer;
/** @type {Settings} */
let settings = { url: '', token: '', urlSource: '', tokenSource: '' };
/** @type {CloseInfo | null} */
let lastClose = null;
const backoff = new Backoff(100, 5000);
const reassembler = new Reassembler();
/** @type {Set<number>} Tabs whose debugger this extension holds. */
const ours = new Set();
// A new tab with an opener waits this long for webNavigation to say which
// page opened it, so that its first report names its real opener: Go never
// announces another client's popup to everyone, and Puppeteer, which looks
// at a target's openerId only when it appears or changes URL, sees whose
// popup it is. Under load the link came later than 500 ms.
/** @type {Map<number, () => void>} */
const sourceWaiters = new Map();
const SOURCE_WAIT_MS = 1500;

// ---- sharing and policy ----------------------------------------------------

// The person shares tabs in the popup; livetab may also use the tabs it
// opened. The shared and created sets live in chrome.storage.session, so a
// worker restart keeps them. Stopping sharing lets go of a tab for every
// client.
//
// A client's policy (ext.setPolicy {owner, sharedOnly, domains}) is the
// relay's to enforce, per client; the extension keeps one per owner only
// for what the relay cannot see: the tabs pages open (lib/popups.js). The
// policies belong to the connection: they are dropped when it ends, and the
// relay pushes those of its live clients after a reconnect.

/** @type {Set<number>} */
const shared = new Set();
/** @type {Set<number>} */
const created = new Set();
/** @type {Map<string, import('./lib/policy.js').Policy>} */
const owners = new Map();

/**
 * The policies off private addresses of owners that left, whose worker
 * rules stay a while: a service worker their pages started runs on after
 * them, and one of a hostile page (an install event kept open) reached a
 * private address every 100 ms once the agent had gone (red team, 3 of 3).
 * Chrome ends a worker's event within five minutes; the rules are those
 * of their domains' workers and of the sites framed in their tabs
 * (lingerRules), all owners' in one set of one size. None is let go before
 * its five minutes: four short-lived programs pushed the agent's out when
 * only four stayed (red team). Past MAX_LINGERING owners they fold into
 * one (FOLDED) that holds every worker. Kept in chrome.storage.session: a
 * restart of the worker dropped them (red team).
 * @type {Map<string, { pol: import('./lib/policy.js').Policy, sites: string[], all: boolean, until: number }>}
 */
const lingering = new Map();
const WORKER_LINGER_MS = 5 * 60_000;
const MAX_LINGERING = 64;
/** The key of the owners folded into one: no owner the relay names. */
const FOLDED = '\u0000folded';
/** @type {Set<string>} The owners whose policy listed tabs they drove. */
const drove = new Set();
/**
 * The sites of the frames committed in each owner's tabs and their
 * popups, for its lingering rules: a frame of another site can start a
 * worker that runs on after the owner (red team). At most MAX_FRAME_SITES;
 * past them, or a site with no DNR domain, all.
 * @type {Map<string, { sites: Set<string>, all: boolean }>}
 */
const frameSites = new Map();
const MAX_FRAME_SITES = 32;

/**
 * Records the site of a frame committed in tab tabId for the owners off
 * private addresses whose tabs it is of, or whose tabs' pages opened it.
 * @param {number} tabId
 * @param {string} url
 */
function sawFrame(tabId, url) {
  let u;
  try {
    u = new URL(url.startsWith('blob:') ? url.slice(5) : url);
  } catch {
    return;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return;
  const site = dnrDomain(u.hostname);
  let changed = false;
  for (const [owner, pol] of owners) {
    if (!pol.blockPrivate) continue;
    const mine = ownersTabs(owner, pol);
    if (!mine.has(tabId) && !descendsFrom(tabId, (x) => mine.has(x))) continue;
    let f = frameSites.get(owner);
    if (!f) frameSites.set(owner, f = { sites: new Set(), all: false });
    if (f.all || f.sites.has(site)) continue;
    if (site === '' || f.sites.size >= MAX_FRAME_SITES) f.all = true; else f.sites.add(site);
    changed = true;
  }
  if (changed) persistLingering();
}

/** Keeps the lingering rules and the frames' sites in the session's storage. */
function persistLingering() {
  void chrome.storage.session.set({
    lingering: {
      gone: [...lingering],
      sites: [...frameSites].map(([o, f]) => [o, { sites: [...f.sites], all: f.all }]),
    },
  }).catch(() => {});
}

/**
 * Lets go of an owner's lingering rules at their time.
 * @param {string} owner
 * @param {number} until
 */
function expireLinger(owner, until) {
  setTimeout(() => {
    const l = lingering.get(owner);
    if (l && l.until <= Date.now()) {
      lingering.delete(owner);
      persistLingering();
      void refreshRules().catch(() => {});
    }
  }, Math.max(0, until - Date.now()) + 100);
}

/**
 * Takes the lingering rules a stopped worker kept.
 * @param {any} v
 */
function restoreLingering(v) {
  const strings = (/** @type {unknown} */ a) => Array.isArray(a) ? a.filter((x) => typeof x === 'string') : [];
  for (const [owner, l] of Array.isArray(v?.gone) ? v.gone : []) {
    if (typeof owner !== 'string' || typeof l?.until !== 'number' || l.until <= Date.now()) continue;
    const until = Math.min(l.until, Date.now() + WORKER_LINGER_MS);
    lingering.set(owner, { pol: parsePolicy(l.pol), sites: strings(l.sites), all: l.all === true, until });
    expireLinger(owner, until);
  }
  for (const [owner, f] of Array.isArray(v?.sites) ? v.sites : []) {
    if (typeof owner === 'string' && owners.has(owner)) frameSites.set(owner, { sites: new Set(strings(f?.sites).slice(0, MAX_FRAME_SITES)), all: f?.all === true });
  }
}

/**
 * Forgets an owner's policy, keeping its worker rules a while if it held
 * private addresses.
 * @param {string} owner
 */
function dropOwner(owner) {
  const pol = owners.get(owner);
  owners.delete(owner);
  const didDrive = drove.delete(owner);
  const f = frameSites.get(owner);
  frameSites.delete(owner);
  // Only an owner whose tabs ran pages may have started workers; a policy
  // set and dropped at once would hold the person's own workers of its
  // domains for five minutes (red team, 3 of 3).
  if (!pol?.blockPrivate || !didDrive) {
    if (f) persistLingering();
    return;
  }
  const until = Date.now() + WORKER_LINGER_MS;
  /** @type {{ pol: import('./lib/policy.js').Policy, sites: string[], all: boolean, until: number }} */
  let l = { pol, sites: [...(f?.sites ?? [])], all: f?.all ?? false, until };
  if (lingering.size >= MAX_LINGERING && !lingering.has(owner)) {
    // Folded into one that holds every worker off the private addresses
    // every folded owner named, until the last of them is due: none is
    // let go early, and the map stays bounded.
    const folded = [...lingering.values(), l];
    const named = folded.map((x) => new Set(x.pol.privateAllowed ?? []));
    const common = [...named[0]].filter((d) => named.every((n) => n.has(d)));
    lingering.clear();
    l = { pol: { sharedOnly: false, domains: [], blockPrivate: true, privateAllowed: common }, sites: [], all: true, until: Math.max(...folded.map((x) => x.until)) };
    owner = FOLDED;
  }
  lingering.set(owner, l);
  persistLingering();
  expireLinger(owner, l.until);
}

/**
 * The worker rules: the owners', and those of the owners that left a
 * while ago, which yield to none: adding blocks frees nothing.
 * @param {number} firstId
 * @param {any[]} [pols] the owners' policies
 */
function allWorkerRules(firstId, pols = [...owners.values()]) {
  const rules = workerRules(pols, firstId, chrome.runtime.id);
  // A domain whose workers an owner holds off private addresses now goes by
  // that owner's rules: a later agent of the same site reached none of the
  // hosts its own policy named while one that left lingered (CI, the MCP
  // tests of cmd/livetab). An owner that holds no worker takes no hold away
  // (TestRedTeamOtherPolicyLiftsTheLingerHold).
  const held = new Set(pols.filter((p) => p.blockPrivate).flatMap((p) => p.domains.map(dnrDomain)));
  const gone = [...lingering.values()].map((l) => ({
    ...l,
    pol: { ...l.pol, domains: l.pol.domains.filter((d) => !held.has(dnrDomain(d))) },
    sites: (l.sites ?? []).filter((s) => !held.has(dnrDomain(s))),
  }));
  return rules.concat(lingerRules(gone, firstId + rules.length, chrome.runtime.id, [...held].filter((d) => d !== '')));
}
/**
 * Tabs opened for an owner whose policy holds its tabs, by owner, until
 * the owner's policy lists them (ext.createTab's holdFor): a tab loads as
 * Chrome creates it, before the relay can tell which client's it is.
 * @type {Map<number, string>}
 */
const holding = new Map();
/** @type {Set<number>} Tabs opened by pages of livetab's tabs, and by their popups. */
const born = new Set();
/**
 * New tabs whose opener is livetab's, until webNavigation says whether a
 * page opened them (Chrome also names the active tab as the opener of a
 * tab made with Ctrl+T or Target.createTarget).
 * @type {Set<number>}
 */
const maybe = new Set();
const MAYBE_MS = 1000;
/**
 * The tab whose page opened each tab (webNavigation). Chrome's openerTabId
 * is the tab strip's: the active tab, also for Ctrl+T, and the previous
 * popup when popups come one after another.
 * @type {Map<number, number>}
 */
const sourceOf = new Map();
/** @type {Set<number>} Popups the relay said no client with a policy drives the opener of. */
const unguarded = new Set();
/**
 * Popups the relay said only some owners' clients drive the opener of: only
 * those owners' rules hold them. Not kept across a restart of the worker:
 * every owner's rules hold them again, as before the relay told.
 * @type {Map<number, Set<string>>}
 */
const keptFor = new Map();
/** @type {Map<number, string>} New tabs whose first load the rules blocked, by URL. */
const blockedLoads = new Map();
/** @type {Set<number>} Tabs loaded again after the rules let go of them. */
const retried = new Set();
/** @type {Map<number, number>} When each tab of the last moments was made. */
const createdAt = new Map();
const NEW_TAB_MS = 10_000;

/**
 * The tab with the opener a page made, or none.
 * @param {chrome.tabs.Tab} tab
 * @returns {chrome.tabs.Tab}
 */
function withSource(tab) {
  const src = tab.id === undefined ? undefined : sourceOf.get(tab.id);
  return { ...tab, openerTabId: src };
}
const restored = chrome.storage.session.get(['shared', 'created', 'born', 'sourceOf', 'policies', 'lingering']).then((v) => {
  for (const id of /** @type {number[]} */ (v.shared ?? [])) shared.add(id);
  for (const id of /** @type {number[]} */ (v.created ?? [])) created.add(id);
  for (const id of /** @type {number[]} */ (v.born ?? [])) born.add(id);
  for (const [id, src] of /** @type {[number, number][]} */ (v.sourceOf ?? [])) sourceOf.set(id, src);
  restorePolicies(v.policies);
  restoreLingering(v.lingering);
}).catch(() => {});

function persist() {
  void chrome.storage.session.set({
    shared: [...shared], created: [...created], born: [...born], sourceOf: [...sourceOf],
  }).catch(() => {});
}

// Rule updates run one at a time, each from the state of its moment.
/** @type {Promise<void>} */
let rulesChain = Promise.resolve();
/**
 * Whether the rules in force are every owner's own, not the fallback of one
 * size (refreshRules), which holds no load the extension makes.
 */
let eachOwnersRules = true;

/**
 * Whether a page of a tab that test holds opened tab id, or of a tab such a
 * page opened, and so on (webNavigation's sources, a few steps up).
 * @param {number} id
 * @param {(id: number) => boolean} test
 */
function descendsFrom(id, test) {
  let x = id;
  for (let i = 0; i < 16 && born.has(x); i++) {
    const src = sourceOf.get(x);
    if (src === undefined) return false;
    if (test(src)) return true;
    x = src;
  }
  return false;
}

/**
 * The tabs an owner's policy lists, and those opened for it and not listed
 * yet.
 * @param {string} owner
 * @param {import('./lib/policy.js').Policy} pol
 */
function ownersTabs(owner, pol) {
  const mine = new Set(pol.tabs ?? []);
  for (const [tabId, o] of holding) if (o === owner) mine.add(tabId);
  return mine;
}

/**
 * Whether a tab of the owner's (mine) is one livetab opened for it, not
 * one a person shared.
 * @param {Set<number>} mine
 * @param {number} x
 */
function openedBy(mine, x) {
  return mine.has(x) && (created.has(x) || holding.has(x)) && !shared.has(x);
}

/** Rewrites the popup rules from the owners' policies and the open tabs. */
/** @type {Map<string, string>} Chrome's word on each regex asked, "" when supported. */
const regexVerdicts = new Map();

/**
 * Why Chrome would refuse a rule of pol's, or "": a regex of its domains
 * past declarativeNetRequest's memory limit.
 * @param {import('./lib/policy.js').Policy} pol
 */
async function refusedRegex(pol) {
  const rules = [...popupRules(pol, [], FIRST_RULE_ID), ...drivenRules(pol, [], FIRST_RULE_ID), ...aheadRules(pol, [], FIRST_RULE_ID, []), ...workerRules([pol], FIRST_RULE_ID, chrome.runtime.id)];
  for (const r of rules) {
    const cond = /** @type {{ regexFilter?: string, isUrlFilterCaseSensitive?: boolean }} */ (r.condition);
    const regex = cond.regexFilter;
    if (!regex) continue;
    let why = regexVerdicts.get(regex);
    if (why === undefined) {
      const v = await chrome.declarativeNetRequest.isRegexSupported({ regex, isCaseSensitive: cond.isUrlFilterCaseSensitive ?? false });
      why = v.isSupported ? '' : String(v.reason ?? 'unsupported');
      if (regexVerdicts.size > 1024) regexVerdicts.clear();
      regexVerdicts.set(regex, why);
    }
    if (why) return `${why}: ${regex.length > 120 ? regex.slice(0, 120) + '…' : regex}`;
  }
  return '';
}

function refreshRules() {
  const next = rulesChain.then(async () => {
    await restored;
    const old = (await chrome.declarativeNetRequest.getSessionRules()).map((r) => r.id);
    /** @type {any[]} */
    let rules = [];
    /** @type {number[]} */
    let excluded = [];
    /** @type {number[]} The tabs no owner off private addresses drives. */
    let unheld = [];
    if (owners.size) {
      const tabs = await chrome.tabs.query({});
      const ids = /** @type {number[]} */ (tabs.map((t) => t.id).filter((id) => id !== undefined));
      excluded = ids.filter((id) => !born.has(id) && !maybe.has(id));
      const held = new Set();
      let id = FIRST_RULE_ID;
      for (const [owner, pol] of owners) {
        // Popups of other owners' tabs alone are theirs to hold.
        const others = ids.filter((x) => keptFor.has(x) && !keptFor.get(x)?.has(owner));
        const more = popupRules(pol, excluded.concat(others), id);
        id += more.length;
        rules = rules.concat(more);
        const mine = ownersTabs(owner, pol);
        if (pol.blockPrivate) for (const x of mine) held.add(x);
        // The new tabs pages of the owner's tabs opened are the owner's
        // before the relay lists them: a rule made in between left such a
        // popup's frame of a private address free (TestRedTeamOpaqueInitiatorPopups).
        const its = (/** @type {number} */ x) => mine.has(x) && !shared.has(x);
        const notMine = ids.filter((x) => !mine.has(x) && !descendsFrom(x, its));
        const driven = drivenRules(mine.size ? { ...pol, tabs: [...mine] } : pol, notMine, id);
        id += driven.length;
        rules = rules.concat(driven);
        // Pages fetched ahead, in the owner's tabs and the new tabs pages
        // open; not in the tabs a person shared.
        // A tab the person shared is theirs, whoever opened it.
        const opened = (/** @type {number} */ x) => openedBy(mine, x);
        const notAhead = ids.filter((x) => !born.has(x) && !maybe.has(x) && !opened(x) || others.includes(x));
        if (notAhead.length < ids.length) {
          // And the new tabs the pages of those opened, and theirs: a load
          // there that no page of the domains started, a page that made its
          // origin opaque (a CSP sandbox) sending its popup away, went out
          // (red team: popupRules name the domains as initiators, and an
          // opaque one is none of them).
          const own = ids.filter((x) => opened(x) || (!shared.has(x) && descendsFrom(x, opened)));
          const ahead = aheadRules(pol, notAhead, id, own);
          id += ahead.length;
          rules = rules.concat(ahead);
        }
      }
      unheld = excluded.filter((x) => !held.has(x));
    }
    rules = rules.concat(allWorkerRules(FIRST_RULE_ID + rules.length));
    if (!old.length && !rules.length) return;
    try {
      await chrome.declarativeNetRequest.updateSessionRules({ removeRuleIds: old, addRules: rules });
      eachOwnersRules = true;
      return;
    } catch (e) {
      if (!rules.length) throw e;
    }
    eachOwnersRules = false;
    // Over Chrome's limits (many clients' policies together): an update
    // fails whole, and every owner's tabs would go unheld. Hold popups
    // closed instead, and keep every request of the tabs owners drive, of
    // their popups and of workers off private addresses, in rules of one
    // size whatever the number of owners: other programs' policies must
    // not take an agent's hold away (TestRedTeamPolicyFloodKeepsOthersPrivateRules).
    const pols = [...owners.values()];
    const closed = closedRules(pols, excluded, FIRST_RULE_ID);
    const priv = mergedPrivateRules(pols, unheld, FIRST_RULE_ID + closed.length);
    // The worker rules, those of the owners that left too: of one size
    // whatever the number of owners (lingerRules), and other programs'
    // policies must not take them away either.
    const workers = allWorkerRules(FIRST_RULE_ID + closed.length + priv.length, pols);
    try {
      await chrome.declarativeNetRequest.updateSessionRules({ removeRuleIds: old, addRules: closed.concat(priv, workers) });
    } catch {
      await chrome.declarativeNetRequest.updateSessionRules({ removeRuleIds: old, addRules: closed });
    }
  });
  rulesChain = next.catch(() => {});
  return next;
}

// The owners' policies outlive their connection for a while. The bridge
// comes back by itself when the worker stops (Chrome stops an idle one)
// or the socket drops, and the relay then says its clients' policies
// again; until it has, the tabs they drive must stay held: a hostile page
// of an agent's tab reached a private address 6 times while the worker
// stopped and started (TestRedTeamWorkerStopKeepsTheHold). So the policies
// are kept in the session's storage, and those of a connection that went
// are stale: each one the relay says again is live, the others go once the
// new connection has had PUSH_MS to say them, or STALE_MS after the old
// one went when no other comes (the relay waits 10 s for the bridge).
const STALE_MS = 15_000;
const PUSH_MS = 3_000;
/** @type {Set<string>} Owners of a connection that went, until said again. */
const stale = new Set();
/** When the owners became stale (ms), or 0. */
let staleSince = 0;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let staleTimer;
/**
 * Owners whose connection went for good, kept, off private addresses
 * only, for the tabs livetab opened for them while those are open: a
 * killed program's hostile tab must not run free (TestRedTeamRelayGoneKeepsItsTabsHeld).
 * @type {Set<string>}
 */
const orphaned = new Set();

// The debugger leaves the person's tabs once the bridge has been gone
// STALE_MS. The relay's clients went with it, and what they set on a tab
// the person opened (a pause in the debugger, requests held by Fetch,
// emulation) lasts as long as the debugger stays: a relay killed mid-work
// left the person's tab frozen until some relay came back
// (TestRedTeamRelayGoneFreesThePersonsTab). A relay that comes back
// later starts with no client anyway. The tabs livetab opened stay as
// they are (held off private addresses when their owner asked).
// The moment is kept in the session's storage: a worker stopped in
// between lost its timer, and the tab stayed held until it woke again
// (TestRedTeamRelayGoneWorkerStopped).
/** @type {ReturnType<typeof setTimeout> | undefined} */
let releaseTimer;
/** When no bridge was ready any more (ms), or 0 while one is. */
let goneSince = 0;

/** Counts STALE_MS from the first moment no bridge is ready, once. */
function releaseLater() {
  if (!goneSince) {
    goneSince = Date.now();
    void chrome.storage.session.set({ goneSince }).catch(() => {});
  }
  if (releaseTimer === undefined) {
    releaseTimer = setTimeout(releasePersons, Math.max(0, STALE_MS - (Date.now() - goneSince)));
  }
}

function keepPersons() {
  clearTimeout(releaseTimer);
  releaseTimer = undefined;
  goneSince = 0;
  void chrome.storage.session.remove('goneSince').catch(() => {});
}

// A worker that starts goes on counting from the moment its predecessor
// saw the bridge go.
void chrome.storage.session.get('goneSince').then((v) => {
  if (typeof v.goneSince === 'number' && v.goneSince > 0 && state !== 'ready' && !goneSince) {
    goneSince = v.goneSince;
    clearTimeout(releaseTimer);
    releaseTimer = undefined;
    releaseLater();
  }
}).catch(() => {});

/** The release under way, which a hello waits for. @type {Promise<void>} */
let releasing = Promise.resolve();

function releasePersons() {
  releaseTimer = undefined;
  releasing = releasing.then(releaseNow, releaseNow);
}

async function releaseNow() {
  // A bridge that is answering the hello is a relay come back: it is told
  // which tabs are attached, and must find them so (the hello waits for
  // a release under way).
  if (state !== 'idle' && state !== 'connecting') return;
  /** @type {chrome.debugger.TargetInfo[]} */
  let targets = [];
  try {
    targets = await chrome.debugger.getTargets();
  } catch {
    return;
  }
  if (state !== 'idle' && state !== 'connecting') return;
  // attached also covers DevTools and other extensions; detach lets go of
  // this extension's hold only, and fails on the others.
  const persons = targets.filter((t) => t.attached && t.tabId !== undefined && !created.has(t.tabId) && !born.has(t.tabId));
  await Promise.all(persons.map(async (t) => {
    const tabId = /** @type {number} */ (t.tabId);
    ours.delete(tabId);
    await detachTab(tabId).catch(() => {});
  }));
  if (persons.length) publish();
}

/** Keeps the owners' policies in the session's storage, for a worker that starts again. */
function persistPolicies() {
  void chrome.storage.session.set({
    policies: { owners: [...owners], holding: [...holding], staleSince, orphaned: [...orphaned] },
  }).catch(() => {});
}

/** Marks the owners of the connection that went stale (all but orphans). */
function markStale() {
  for (const owner of owners.keys()) if (!orphaned.has(owner)) stale.add(owner);
  if (stale.size && !staleSince) staleSince = Date.now();
}

/**
 * The policy an owner keeps once its connection went for good: the tabs
 * livetab opened for it that are still open, off private addresses; or
 * none.
 * @param {string} owner
 * @returns {import('./lib/policy.js').Policy | undefined}
 */
function orphanPolicy(owner) {
  const pol = owners.get(owner);
  if (!pol?.blockPrivate) return undefined;
  const mine = new Set(pol.tabs ?? []);
  for (const [tabId, o] of holding) if (o === owner) mine.add(tabId);
  const left = [...mine].filter((id) => created.has(id) || born.has(id));
  if (!left.length) return undefined;
  return { sharedOnly: false, domains: [], blockPrivate: true, privateAllowed: pol.privateAllowed ?? [], tabs: left };
}

/**
 * Takes the policies a stopped worker kept, all stale.
 * @param {any} v
 */
function restorePolicies(v) {
  if (!v || !Array.isArray(v.owners)) return;
  const since = typeof v.staleSince === 'number' && v.staleSince > 0 ? v.staleSince : Date.now();
  const fresh = Date.now() - since < STALE_MS;
  const orphans = new Set(Array.isArray(v.orphaned) ? v.orphaned : []);
  for (const [owner, params] of v.owners) {
    if (typeof owner !== 'string' || !(fresh || orphans.has(owner))) continue;
    owners.set(owner, parsePolicy(params));
    if (orphans.has(owner)) orphaned.add(owner);
  }
  for (const [tabId, owner] of Array.isArray(v.holding) ? v.holding : []) {
    if (Number.isSafeInteger(tabId) && owners.has(owner)) holding.set(tabId, owner);
  }
  markStale();
  if (stale.size) staleSince = since;
  dropStaleIn(STALE_MS - (Date.now() - since));
}

/**
 * Drops the stale owners' policies in ms, unless the relay says them again.
 * @param {number} ms
 */
function dropStaleIn(ms) {
  clearTimeout(staleTimer);
  if (!stale.size) {
    staleSince = 0;
    return;
  }
  staleTimer = setTimeout(() => {
    for (const owner of stale) {
      const kept = orphanPolicy(owner);
      if (kept) {
        owners.set(owner, kept);
        orphaned.add(owner);
      } else {
        dropOwner(owner);
      }
    }
    for (const [tabId, owner] of holding) if (!owners.has(owner)) holding.delete(tabId);
    stale.clear();
    staleSince = 0;
    persistPolicies();
    void refreshRules().catch(() => {});
  }, Math.max(0, ms));
}

/** The connection that set the owners' policies is gone: they go stale. */
function dropPolicies() {
  if (!owners.size) return;
  markStale();
  persistPolicies();
  // Each failed dial comes here again: the bound runs from the first.
  dropStaleIn(STALE_MS - (Date.now() - (staleSince || Date.now())));
}

// A worker that starts writes the rules of the policies it kept (none, or
// stale ones): rules a stopped worker left in the session (they outlive
// it) must not hold the person's tabs for good.
void restored.then(() => refreshRules()).catch(() => {});

/** @type {Map<number, Promise<void>>} The tabs ext.detach is letting go of. */
const detaching = new Map();

// How long a tab closed quietly waits for its page to stop its scripts.
const QUIET_MS = 500;

/**
 * Stops the scripts of a tab about to close. Chrome runs a closing tab's
 * unload in the background, out of the tab strip: its requests then
 * belong to no tab (tabId -1), out of the reach of every rule that names
 * tabs, and its timers and pagehide handlers kept reaching private
 * addresses after the agent closed it (TestRedTeamHostileRequestsOfANewTab).
 * Bounded: a page that loops answers nothing, and is closed anyway; so
 * is a tab another debugger holds.
 * @param {number} tabId
 */
async function quieten(tabId) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const stop = async () => {
    // A client detaches before it closes (chromedp does): attached again
    // for the one command once that detach is done (it would undo the
    // command), and never let go (the tab goes).
    await detaching.get(tabId);
    if (!ours.has(tabId)) await chrome.debugger.attach({ tabId }, '1.3');
    await chrome.debugger.sendCommand({ tabId }, 'Emulation.setScriptExecutionDisabled', { value: true });
    // Disabled scripts still ran a timer's callback: a frozen page runs
    // no task at all.
    await chrome.debugger.sendCommand({ tabId }, 'Page.setWebLifecycleState', { state: 'frozen' });
  };
  await Promise.race([
    stop().catch(() => {}),
    new Promise((resolve) => { timer = setTimeout(resolve, QUIET_MS); }),
  ]);
  clearTimeout(timer);
}

/** @type {Set<number>} The program's tabs removeTab is closing. */
const leaving = new Set();

/**
 * Closes a tab. A page's beforeunload handler turns chrome.tabs.remove
 * into Chrome's "Leave site?" question, and the tab stays until someone
 * answers: no one does for a program's tab, which then outlived its
 * client, and the close never returned (TestRedTeamBeforeUnloadLeftTab).
 * On a tab livetab opened, or one the relay says is a program's own (leave:
 * a popup of its tabs), the question is answered "leave" as it opens (Page
 * on, through the debugger, as a DevTools client closes a target); a tab
 * the person opened keeps it: it guards their unsaved work. Either way the
 * close fails after CLOSE_ASK_MS saying why the tab may still be there. A
 * tab quietened first runs no handler.
 * @param {number} tabId
 * @param {boolean} quiet
 * @param {boolean} leave
 */
async function removeTab(tabId, quiet, leave) {
  let removed = false;
  let attachedHere = false;
  await restored;
  const programs = leave || created.has(tabId);
  if (!quiet && programs) {
    const answer = async () => {
      await detaching.get(tabId);
      if (removed) return;
      // Before Page.enable: its reply may come after the question.
      leaving.add(tabId);
      if (!ours.has(tabId)) {
        await chrome.debugger.attach({ tabId }, '1.3');
        attachedHere = true;
      }
      await chrome.debugger.sendCommand({ tabId }, 'Page.enable');
    };
    // Bounded, as quieten: a page that loops answers no Page.enable, and
    // is closed anyway; so is a tab another debugger holds.
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    await Promise.race([
      answer().catch(() => { leaving.delete(tabId); }),
      new Promise((resolve) => { timer = setTimeout(resolve, QUIET_MS); }),
    ]);
    clearTimeout(timer);
  }
  const removing = chrome.tabs.remove(tabId);
  removing.catch(() => {}).finally(() => {
    removed = true;
    leaving.delete(tabId);
  });
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let asked;
  try {
    await Promise.race([
      removing,
      new Promise((_, fail) => {
        asked = setTimeout(() => fail(new Error(`livetab: Chrome has not closed tab ${tabId} within ${CLOSE_ASK_MS / 1000} s: its page may be asking the person "Leave site?" (unsaved changes), and it closes once they answer in Chrome; or its page runs a script that does not end`)), CLOSE_ASK_MS);
      }),
    ]);
  } catch (e) {
    if (programs && (attachedHere || ours.has(tabId))) {
      // A program's tab whose page never ends its beforeunload handler (a
      // loop) held the close, and stayed running after the program left
      // (TestRedTeamOwnTabWithALoopingUnloadCloses): its script is ended.
      // Ended, the handler leaves the close undone; closed again with its
      // scripts off, as a quiet close, it runs no handler. Through the
      // attachment already there (quieten would attach again), bounded.
      /** @type {ReturnType<typeof setTimeout> | undefined} */
      let stopTimer;
      await Promise.race([
        (async () => {
          await chrome.debugger.sendCommand({ tabId }, 'Runtime.terminateExecution').catch(() => {});
          await chrome.debugger.sendCommand({ tabId }, 'Emulation.setScriptExecutionDisabled', { value: true }).catch(() => {});
          await chrome.debugger.sendCommand({ tabId }, 'Page.setWebLifecycleState', { state: 'frozen' }).catch(() => {});
        })(),
        new Promise((resolve) => { stopTimer = setTimeout(resolve, QUIET_MS); }),
      ]);
      clearTimeout(stopTimer);
      const again = chrome.tabs.remove(tabId);
      again.catch(() => {});
      /** @type {ReturnType<typeof setTimeout> | undefined} */
      let late;
      const gone = await Promise.race([
        Promise.any([removing, again]).then(() => true, () => false),
        new Promise((resolve) => { late = setTimeout(() => resolve(false), END_UNLOAD_MS); }),
      ]);
      clearTimeout(late);
      if (gone) return;
    }
    // The tab stays (someone answered "Stay", or no one answered): no
    // later question of its is answered for anyone, and the debugger
    // attached here for the close lets go.
    leaving.delete(tabId);
    if (attachedHere && !ours.has(tabId)) await detachTab(tabId).catch(() => {});
    throw e;
  } finally {
    clearTimeout(asked);
  }
}

// How long a close waits for Chrome before it says why it may not be done,
// and how long more for a program's tab whose unload script was ended.
const CLOSE_ASK_MS = 5000;
const END_UNLOAD_MS = 2000;

/**
 * Tabs whose detach Chrome refused because a frame of the page shows a URL
 * no extension may debug (a page's srcdoc frame at about:srcdoc#x):
 * chrome.debugger checks every frame before a detach too. The client's
 * Fetch interception, emulation and overrides then stayed on the person's
 * tab after the client left, its page's requests paused for good (red
 * team, TestRedTeamLeaveWhileWedged). Tried again on each change of the
 * tab's frames and every second, until Chrome lets go, the tab is gone, or
 * a client attaches again; for ten minutes at most.
 * @type {Set<number>}
 */
const stuckDetach = new Set();
const STUCK_DETACH_MS = 600_000;

/**
 * chrome.debugger.detach, tried again while Chrome refuses it for a frame's
 * URL (stuckDetach).
 * @param {number} tabId
 */
async function detachTab(tabId) {
  try {
    await chrome.debugger.detach({ tabId });
  } catch (e) {
    if (/Cannot access/i.test(parseError(e).message)) retryDetach(tabId);
    throw e;
  }
}

/**
 * @param {number} tabId
 */
function retryDetach(tabId) {
  if (stuckDetach.has(tabId)) return;
  stuckDetach.add(tabId);
  const until = Date.now() + STUCK_DETACH_MS;
  const timer = setInterval(() => void retryStuck(tabId, until, timer), 1000);
}

/**
 * @param {number} tabId
 * @param {number} until
 * @param {ReturnType<typeof setInterval> | undefined} timer
 */
async function retryStuck(tabId, until, timer) {
  if (!stuckDetach.has(tabId) || Date.now() > until) {
    stuckDetach.delete(tabId);
    if (timer !== undefined) clearInterval(timer);
    return;
  }
  try {
    await chrome.debugger.detach({ tabId });
  } catch (e) {
    if (/Cannot access/i.test(parseError(e).message)) return;
  }
  stuckDetach.delete(tabId);
  if (timer !== undefined) clearInterval(timer);
}

/**
 * Detaches from a tab the policy no longer allows, and tells the bridge.
 * @param {number} tabId
 */
async function letGo(tabId) {
  if (!ours.has(tabId)) return;
  ours.delete(tabId);
  await detachTab(tabId).catch(() => {});
  emit(notifyText('ext.detached', { tabId, reason: 'policy' }));
  publish();
}

/**
 * Shows on the tab itself whether it is shared.
 * @param {number} tabId
 */
function badge(tabId) {
  const on = shared.has(tabId);
  if (paused) {
    // A tab's own badge hides the global one: a shared tab says paused too.
    void chrome.action.setBadgeText({ tabId, text: on ? 'OFF' : '' }).catch(() => {});
    if (on) void chrome.action.setBadgeBackgroundColor({ tabId, color: PAUSED_COLOR }).catch(() => {});
    void chrome.action.setTitle({ tabId, title: PAUSED_TITLE }).catch(() => {});
    return;
  }
  void chrome.action.setBadgeText({ tabId, text: on ? 'ON' : '' }).catch(() => {});
  if (on) void chrome.action.setBadgeBackgroundColor({ tabId, color: '#1a73e8' }).catch(() => {});
  void chrome.action.setTitle({ tabId, title: on ? 'livetab: this tab is shared' : 'livetab' }).catch(() => {});
}

// ---- pause: the person's kill switch ---------------------------------------

// Paused, livetab lets go of every tab and refuses every attach and command
// until the person resumes in the popup. The state lives in
// chrome.storage.local, so it holds across worker and browser restarts;
// the hello tells a bridge that connects, and ext.paused a connected one.
let paused = false;
/** How many times the person paused: an attach on its way can tell one came. */
let pauses = 0;
const PAUSED_COLOR = '#b3261e';
const PAUSED_TITLE = 'livetab is paused: no program can use your tabs until you resume';
const pauseLoaded = chrome.storage.local.get('paused')
  .then((v) => { paused = v.paused === true; paintPause(); })
  .catch(() => {});

/** What works while paused: nothing here touches a page. */
const PAUSE_ALLOWED = new Set(['ext.targets', 'ext.detach', 'ext.closeTab', 'ext.keepTab', 'ext.setPolicy', 'ext.unguard', 'ext.fileAccess', 'ext.activity']);

/** Shows the pause on the toolbar button of every tab. */
function paintPause() {
  void chrome.action.setBadgeText({ text: paused ? 'OFF' : '' }).catch(() => {});
  if (paused) void chrome.action.setBadgeBackgroundColor({ color: PAUSED_COLOR }).catch(() => {});
  void chrome.action.setTitle({ title: paused ? PAUSED_TITLE : 'livetab' }).catch(() => {});
  for (const id of shared) badge(id);
}

/**
 * Pauses or resumes; called from the popup only.
 * @param {boolean} on
 */
async function setPaused(on) {
  await pauseLoaded;
  // Set before anything awaits: from here on, request() refuses.
  paused = on;
  if (on) pauses += 1;
  emit(notifyText('ext.paused', { paused: on }));
  paintPause();
  const tabs = on ? [...ours] : [];
  if (on) ours.clear();
  await Promise.all([
    chrome.storage.local.set({ paused: on }),
    ...tabs.map((tabId) => detachTab(tabId).catch(() => {})),
  ]);
  // No ext.detached: ext.paused told the relay, which keeps its sessions
  // to answer them with the pause error.
  publish();
}

/**
 * Shares or stops sharing a tab; called from the popup only.
 * @param {number} tabId
 * @param {boolean} on
 */
async function share(tabId, on) {
  await restored;
  if (on) shared.add(tabId); else shared.delete(tabId);
  persist();
  badge(tabId);
  if (!on && !created.has(tabId)) await letGo(tabId);
  const tab = await chrome.tabs.get(tabId).catch(() => undefined);
  if (tab) tabEvent('ext.tabUpdated', tab);
}

// ---- now and recently: who drives what --------------------------------------

// The relay reports its clients, the tabs each drives and the last actions
// (ext.activity); the popup shows them, and the person stops a client or a
// tab there. No client hears of it. The report lives in
// chrome.storage.session, so a popup opened after a worker restart still
// shows the last actions.

/** @typedef {import('./lib/activity.js').Activity} Activity */

/** @type {Activity} */
let activity = { clients: [], actions: [] };
const activityLoaded = chrome.storage.session.get('activity').then((v) => {
  if (v.activity) activity = readActivity(v.activity);
}).catch(() => {});

/**
 * @param {Activity} next
 */
function setActivity(next) {
  activity = next;
  void chrome.storage.session.set({ activity }).catch(() => {});
  chrome.runtime.sendMessage({ type: 'livetab.activity', activity }).catch(() => {});
}

/**
 * Stops one client; called from the popup only. The relay fails its
 * commands from now on and lets go of its tabs.
 * @param {string} client
 */
function stopClient(client) {
  emit(notifyText('ext.stopClient', { client }));
  setActivity({ clients: activity.clients.filter((c) => c.id !== client), actions: activity.actions });
}

/**
 * Stops livetab driving a tab; called from the popup only. The debugger
 * leaves at once, whatever the relay does; the relay keeps the clients
 * that drove it off it.
 * @param {number} tabId
 */
async function stopTab(tabId) {
  ours.delete(tabId);
  await detachTab(tabId).catch(() => {});
  emit(notifyText('ext.detached', { tabId, reason: 'stopped' }));
  setActivity({
    clients: activity.clients.map((c) => ({ ...c, tabs: c.tabs.filter((t) => t !== tabId) })),
    actions: activity.actions,
  });
  publish();
}

/**
 * Chromium's full version ("156.0.8078.108"), which the reduced user agent
 * hides ("156.0.0.0"): Browser.getVersion's product has it on Chrome, and
 * Playwright's and Puppeteer's browser.version() read it there. "" when the
 * browser does not say.
 * @returns {Promise<string>}
 */
async function fullVersion() {
  try {
    const data = /** @type {{getHighEntropyValues?: (hints: string[]) => Promise<{fullVersionList?: {brand: string, version: string}[]}>} | undefined} */ (
      /** @type {any} */ (navigator).userAgentData);
    const values = await data?.getHighEntropyValues?.(['fullVersionList']);
    const v = values?.fullVersionList?.find((b) => b.brand === 'Chromium')?.version;
    return typeof v === 'string' && /^\d+(\.\d+){3}$/.test(v) ? v : '';
  } catch {
    return '';
  }
}

// ---- sending ---------------------------------------------------------------

/**
 * @param {WebSocket} sock
 * @param {string} text
 */
function send(sock, text) {
  if (sock.readyState !== OPEN) return;
  const out = encodeFrame(text, stream);
  if (typeof out === 'string') {
    sock.send(out);
    return;
  }
  stream = (stream + 1) >>> 0;
  for (const chunk of out) sock.send(chunk);
}

/**
 * Sends an event if the bridge has welcomed us; events before that have no
 * one to go to.
 * @param {string} text
 */
function emit(text) {
  if (state === 'ready' && ws) send(ws, text);
}

// What Chrome told of downloads while no bridge listened (the service
// worker stopped and started, the bridge reconnects): a popup of a program
// that denies downloads began one then, and the relay, never told, let it
// land in the person's Downloads folder (red team, 2026-12-01). Told once
// the bridge welcomes us, within AWAY_MS; a download done by then stays.
/** @type {{text: string, at: number}[]} */
const awayDownloads = [];
const AWAY_MS = 60_000;
const AWAY_MAX = 256;

/**
 * Sends a download's event now, or once the bridge is back. Only while
 * livetab has tabs of programs: the person's downloads of a time no
 * program was there are nobody's business.
 * @param {string} text
 */
async function emitDownload(text) {
  if (state === 'ready' && ws) {
    send(ws, text);
    return;
  }
  await restored;
  if (!ours.size && !created.size && !born.size) return;
  awayDownloads.push({ text, at: Date.now() });
  if (awayDownloads.length > AWAY_MAX) awayDownloads.shift();
}

/** @param {WebSocket} sock */
function tellAwayDownloads(sock) {
  const now = Date.now();
  for (const d of awayDownloads.splice(0)) if (now - d.at <= AWAY_MS) send(sock, d.text);
}

// ---- connection ------------------------------------------------------------

/** @returns {Promise<Settings>} */
async function loadSettings() {
  /** @type {{url?: unknown, token?: unknown}} */
  let file = {};
  try {
    const r = await fetch(chrome.runtime.getURL('config.json'));
    if (r.ok) file = await r.json();
  } catch {
    // No config.json: the popup's values, or idle.
  }
  const stored = await chrome.storage.local.get(['url', 'token']);
  const pick = (/** @type {unknown} */ a, /** @type {unknown} */ b) =>
    typeof a === 'string' && a ? [a, 'popup'] : typeof b === 'string' && b ? [b, 'config.json'] : ['', ''];
  const [url, urlSource] = pick(stored.url, file.url);
  const [token, tokenSource] = pick(stored.token, file.token);
  return { url, token, urlSource, tokenSource };
}

/** Dials the bridge unless a socket exists or a dial is under way. */
async function dial() {
  if (ws || dialing) return;
  clearTimeout(redialTimer);
  dialing = true;
  try {
    // Settings saved while they were being read win: read them again.
    for (let gen = -1; gen !== settingsGen;) {
      gen = settingsGen;
      settings = await loadSettings();
    }
  } catch (e) {
    settings = { url: '', token: '', urlSource: '', tokenSource: '' };
    setLastClose(closeInfo(0, '', `cannot read the settings: ${parseError(e).message}`));
  } finally {
    dialing = false;
  }
  if (ws) return;
  if (!settings.url || !settings.token) {
    state = 'idle';
    publish();
    return;
  }
  /** @type {WebSocket} */
  let sock;
  try {
    sock = new WebSocket(settings.url);
  } catch (e) {
    setLastClose(closeInfo(0, '', `the bridge URL ${settings.url} is not a WebSocket URL: ${parseError(e).message}`));
    state = 'idle';
    publish();
    return;
  }
  ws = sock;
  state = 'connecting';
  sock.binaryType = 'arraybuffer';
  sock.onopen = () => { void sayHello(sock); };
  sock.onmessage = (ev) => onMessage(sock, ev);
  sock.onclose = (ev) => onClose(sock, ev.code, ev.reason);
  sock.onerror = () => {}; // onclose follows with the code
  publish();
}

/**
 * @param {number} delay
 */
function scheduleDial(delay) {
  clearTimeout(redialTimer);
  nextDialAt = Date.now() + delay;
  redialTimer = setTimeout(() => { void dial(); }, delay);
}

/**
 * Drops the current socket at once (a close handshake over a dead
 * connection can take long) and dials again after delay, unless delay < 0.
 * @param {WebSocket} sock
 * @param {string} why the close reason, and the popup's text when given
 * @param {number} delay
 * @param {string} [text] what the popup shows; nothing when empty
 */
function abandon(sock, why, delay, text) {
  if (sock !== ws) return;
  try {
    sock.close(1000, why);
  } catch {
    // Already closing.
  }
  closeDown();
  if (text) setLastClose(closeInfo(1000, why, text));
  if (delay >= 0) scheduleDial(delay);
  publish();
}

/** Forgets the current socket and everything that belongs to it. */
function closeDown() {
  dropPolicies();
  releaseLater();
  // The relay's clients went with the connection; their actions stay.
  if (activity.clients.length) setActivity({ clients: [], actions: activity.actions });
  ws = null;
  state = 'idle';
  step = 'challenge';
  nonce = '';
  clearInterval(pingTimer);
  clearTimeout(welcomeTimer);
  reassembler.reset();
}

/**
 * @param {CloseInfo | null} info
 */
function setLastClose(info) {
  lastClose = info;
  void (info ? chrome.storage.session.set({ lastClose: info }) : chrome.storage.session.remove('lastClose'))
    .catch(() => {});
}

/**
 * @param {number} code
 * @param {string} reason
 * @param {string} [text]
 * @returns {CloseInfo}
 */
function closeInfo(code, reason, text) {
  return { code, reason, text: text ?? describeClose(code, reason), at: Date.now() };
}

/**
 * @param {WebSocket} sock
 */
async function sayHello(sock) {
  if (sock !== ws) return;
  /** @type {string} */
  let text;
  try {
    await releasing;
    const [targets, files] = await Promise.all([
      chrome.debugger.getTargets(),
      chrome.extension.isAllowedFileSchemeAccess(),
      pauseLoaded,
    ]);
    fileAccess = files;
    // attached:true also covers DevTools and other extensions; a command
    // tells which of those tabs are really ours (held across a restart).
    const candidates = attachedTabs(targets);
    const held = await Promise.all(candidates.map(holds));
    // A new connection starts with no policy of its own: the relay says
    // its clients' again once it is welcome. Until then the policies of
    // the last connection (a stopped worker's, kept in the session) hold,
    // stale: clearing them here let an agent's hostile tab out for a
    // moment (TestRedTeamWorkerStopKeepsTheHold).
    await restored;
    markStale();
    persistPolicies();
    dropStaleIn(STALE_MS - (Date.now() - (staleSince || Date.now())));
    ours.clear();
    candidates.forEach((tabId, i) => { if (held[i]) ours.add(tabId); });
    // The hello carries a fresh nonce and never the token: whoever listens
    // on the URL must prove it knows the token before we prove we do.
    nonce = newNonce();
    step = 'challenge';
    text = helloText({
      nonce,
      version: VERSION,
      userAgent: navigator.userAgent,
      fullVersion: await fullVersion(),
      extensionId: chrome.runtime.id,
      attached: [...ours],
      fileAccess: files,
      paused,
    });
  } catch (e) {
    abandon(sock, 'hello failed', backoff.next(), `preparing the hello failed: ${parseError(e).message}`);
    return;
  }
  if (sock !== ws || sock.readyState !== OPEN) return;
  lastRecv = Date.now();
  send(sock, text);
  state = 'hello';
  welcomeTimer = setTimeout(() => abandon(sock, 'no welcome', backoff.next(),
    `the bridge at ${settings.url} did not answer the hello: is it a livetab bridge?`), WELCOME_MS);
  publish();
}

/**
 * @param {WebSocket} sock
 * @param {MessageEvent} ev
 */
function onMessage(sock, ev) {
  if (sock !== ws) return;
  lastRecv = Date.now();
  /** @type {string | null} */
  let text = ev.data;
  if (typeof text !== 'string') {
    try {
      text = reassembler.push(ev.data);
    } catch {
      abandon(sock, 'bad chunk', backoff.next(), 'the bridge sent a malformed chunk');
      return;
    }
    if (text === null) return;
  }
  /** @type {Frame} */
  let f;
  try {
    f = JSON.parse(text);
  } catch {
    return; // Nothing to answer: without a parsed id there is no reply.
  }
  if (state !== 'ready') {
    void pair(sock, f);
    return;
  }
  if (f.id !== undefined) {
    request(sock, f);
    return;
  }
  if (f.method === 'ext.pong') {
    pongs = true;
  }
  // Unknown notifications: lastRecv is all they are good for.
}

/**
 * One frame of the pairing (internal/wire/pairing.go): the bridge's
 * challenge, which must prove it holds the token, then its welcome. Any
 * other frame, a request above all, ends the socket unanswered.
 * @param {WebSocket} sock
 * @param {Frame} f
 */
async function pair(sock, f) {
  if (state !== 'hello' || step === 'checking') {
    const what = typeof f.method === 'string' ? f.method : 'a frame';
    abandon(sock, 'not paired', backoff.next(),
      `the program at ${settings.url} could not prove it has the pairing token: it is not your livetab, or the token changed — pair again (it sent ${what} before proving it)`);
    return;
  }
  if (step === 'challenge') {
    step = 'checking';
    /** @type {{proof: string} | {refuse: string}} */
    let r;
    try {
      r = await answerChallenge(settings.token, nonce, f, settings.url);
    } catch (e) {
      r = { refuse: `checking the bridge's proof failed: ${parseError(e).message}` };
    }
    if (sock !== ws) return;
    if ('refuse' in r) {
      abandon(sock, 'no proof', backoff.next(), r.refuse);
      return;
    }
    step = 'welcome';
    send(sock, proofText(r.proof));
    return;
  }
  if (f.method !== 'ext.welcome' || f.id !== undefined) {
    abandon(sock, 'no welcome', backoff.next(),
      `the bridge at ${settings.url} answered the proof with ${f.method ?? 'a frame'} instead of a welcome: update livetab or the extension`);
    return;
  }
  clearTimeout(welcomeTimer);
  state = 'ready';
  keepPersons();
  // The relay says its clients' policies now; those it does not say are
  // of clients that went with the old connection.
  if (stale.size) dropStaleIn(PUSH_MS);
  // A click on Pause or Resume between the hello and now reached no relay:
  // say the state again (the relay ignores a state it already has).
  send(sock, notifyText('ext.paused', { paused }));
  tellHeldAway(sock);
  tellAwayDownloads(sock);
  backoff.reset();
  setLastClose(null);
  pongs = false;
  clearInterval(pingTimer);
  pingTimer = setInterval(() => heartbeat(sock), PING_MS);
  publish();
}

/**
 * @param {WebSocket} sock
 */
function heartbeat(sock) {
  if (sock !== ws) return;
  if (pongs && Date.now() - lastRecv > DEAD_MS) {
    abandon(sock, 'bridge silent', 0, `the bridge at ${settings.url} stopped answering`);
    return;
  }
  send(sock, '{"method":"ext.ping"}');
}

/**
 * @param {WebSocket} sock
 * @param {number} code
 * @param {string} reason
 */
function onClose(sock, code, reason) {
  if (sock !== ws) return;
  const wasOpen = state !== 'connecting';
  // A bridge older than the pairing by proof refuses a hello without a
  // token before it says anything.
  const oldBridge = state === 'hello' && step !== 'welcome' && code === CLOSE_BAD_TOKEN;
  closeDown();
  setLastClose(oldBridge
    ? closeInfo(code, reason, `the bridge at ${settings.url} is an older livetab that asks for the token itself, which this extension never sends: update livetab`)
    : wasOpen
    ? closeInfo(code, reason)
    : closeInfo(code, reason, `cannot reach the bridge at ${settings.url}: is the livetab program running?`));
  scheduleDial(isRefusal(code) ? REFUSED_DELAY : backoff.next());
  publish();
}

/** Re-reads the settings and dials again now. */
function redial() {
  settingsGen++;
  backoff.reset();
  if (ws) abandon(ws, 'settings changed', -1);
  void dial();
}

// ---- requests --------------------------------------------------------------

/**
 * Answers one request. Nothing here awaits on the socket's path: each
 * command settles on its own, so replies may leave out of order.
 * @param {WebSocket} sock
 * @param {Frame} f
 */
function request(sock, f) {
  const id = /** @type {number} */ (f.id);
  const method = f.method;
  /** @type {Promise<unknown>} */
  let p;
  // A frame with an id and no method is a reply; the extension asks the
  // bridge nothing, so there is nothing to match it with.
  if (typeof method !== 'string') return;
  if (paused && !PAUSE_ALLOWED.has(method)) {
    send(sock, errorText(id, { code: SERVER_ERROR, message: PAUSED_MESSAGE }));
    return;
  }
  if (method.startsWith('ext.')) {
    // The bridge sends the extension's operations without a tab; a frame
    // for a tab carries a CDP command of a client, which must never run as
    // one of these (it closed any tab and rewrote the rules). The relay
    // refuses them first; this holds should another door pass one on.
    if (f.tabId !== undefined || f.sessionId !== undefined) {
      send(sock, errorText(id, { code: METHOD_NOT_FOUND, message: `'${method}' wasn't found: livetab's extension runs its own operations for livetab alone` }));
      return;
    }
    const op = ops[method];
    if (!op) {
      send(sock, errorText(id, {
        code: METHOD_NOT_FOUND,
        message: `livetab extension ${VERSION} has no operation ${method}: update the extension`,
      }));
      return;
    }
    p = op(f.params ?? {});
  } else if (typeof f.tabId !== 'number') {
    send(sock, errorText(id, { code: SERVER_ERROR, message: `livetab: CDP command ${method} needs a tabId` }));
    return;
  } else if (atOwnPage.has(f.tabId)) {
    send(sock, errorText(id, { code: SERVER_ERROR, message: `livetab: tab ${f.tabId} went to a page of the livetab extension itself, which no program may drive; open a tab of your own` }));
    return;
  } else if (commandRefusal(method, f.params)) {
    // A backstop, as for Page.navigate: the relay never sends these.
    send(sock, errorText(id, { code: SERVER_ERROR, message: commandRefusal(method, f.params) }));
    return;
  } else if (method === 'Page.navigate') {
    p = navigate(f.tabId, f.sessionId, f.params);
  } else if (f.sessionId === undefined) {
    p = tabCommand(f.tabId, method, f.params);
  } else {
    p = chrome.debugger.sendCommand({ tabId: f.tabId, sessionId: f.sessionId }, method, f.params);
  }
  p.then(
    (r) => send(sock, replyText(id, r)),
    (e) => send(sock, errorText(id, parseError(e))));
}

/**
 * Sends a command to a tab's own attachment, across a reattach (see
 * reattach): a command sent while the extension attaches again waits for
 * it; one Chrome refused because the session had ended runs again on the
 * new one; one the session ended while Chrome handled it is answered for
 * Input.* (the input went in: the navigation it started is what ended the
 * session) and failed with a clear error otherwise, as its result is lost.
 * @param {number} tabId
 * @param {string} method
 * @param {unknown} params
 * @returns {Promise<unknown>}
 */
async function tabCommand(tabId, method, params) {
  const pending = reattaching.get(tabId);
  if (pending) await pending;
  try {
    return await chrome.debugger.sendCommand({ tabId }, method, /** @type {any} */ (params));
  } catch (e) {
    const msg = parseError(e).message;
    const during = /Detached while handling command/i.test(msg);
    if (!during && !/not attached/i.test(msg)) throw e;
    // Chrome may fail the command before it reports the detach.
    await new Promise((r) => setTimeout(r, REATTACH_NOTICE_MS));
    const again = reattaching.get(tabId) ?? reattached.get(tabId);
    if (!again || !(await again)) throw e;
    if (!during) return chrome.debugger.sendCommand({ tabId }, method, /** @type {any} */ (params));
    if (method.startsWith('Input.')) return {};
    throw new Error(`livetab: ${method} on tab ${tabId}: a frame of the tab went to a URL extensions may not debug while Chrome handled it, which ended the debugger's session; livetab attached again, but this command's result is lost: send it again if it had no effect`);
  }
}

/**
 * Sends Page.navigate unless it is one of the inputs that crash the browser
 * through chrome.debugger (lib/unsafe.js); the relay never sends those, so
 * this is a backstop, and it asks Chrome for the tab only for a URL with a
 * fragment.
 * @param {number} tabId
 * @param {string | undefined} sessionId
 * @param {any} params
 * @returns {Promise<unknown>}
 */
async function navigate(tabId, sessionId, params) {
  const url = String(params?.url ?? '');
  /** @type {string | undefined} */
  let tabUrl;
  if (sessionId === undefined && needsTabUrl(url)) {
    const tab = await chrome.tabs.get(tabId).catch(() => undefined);
    // A new tab may not show its URL yet: it is still on its first
    // about:blank, the very document this guards.
    tabUrl = tab?.url || tab?.pendingUrl || 'about:blank';
  }
  const why = navigateRefusal(url, tabUrl);
  if (why) throw new Error(why);
  if (sessionId === undefined) return tabCommand(tabId, 'Page.navigate', params);
  return chrome.debugger.sendCommand({ tabId, sessionId }, 'Page.navigate', params);
}

/**
 * Whether this extension holds the debugger of a tab: a command succeeds
 * only on our own attachment.
 * @param {number} tabId
 * @returns {Promise<boolean>}
 */
async function holds(tabId) {
  try {
    await chrome.debugger.sendCommand({ tabId }, 'Target.getTargetInfo');
    return true;
  } catch {
    return false;
  }
}

/**
 * @param {unknown} v
 * @param {string} op
 * @returns {number}
 */
function tabIdOf(v, op) {
  const tabId = /** @type {{tabId?: unknown}} */ (v).tabId;
  if (typeof tabId !== 'number') throw new Error(`livetab: ${op} needs a numeric tabId`);
  return tabId;
}

/**
 * Sizes a window so that its tab's page is cw×ch (0: as it is). A tab's
 * size follows its window's a moment later, so each step waits for it
 * before measuring the frame around the page again.
 * @param {number} tabId
 * @param {number} windowId
 * @param {number} cw
 * @param {number} ch
 */
async function sizeContents(tabId, windowId, cw, ch) {
  for (let i = 0; i < 3; i++) {
    const [win, tab] = await Promise.all([chrome.windows.get(windowId), chrome.tabs.get(tabId)]);
    const dw = cw ? cw - (tab.width ?? 0) : 0;
    const dh = ch ? ch - (tab.height ?? 0) : 0;
    if (!dw && !dh) return;
    await chrome.windows.update(windowId, { width: (win.width ?? 0) + dw, height: (win.height ?? 0) + dh });
    for (let until = Date.now() + 1000; Date.now() < until;) {
      const now = await chrome.tabs.get(tabId);
      if (now.width !== tab.width || now.height !== tab.height) break;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

/**
 * The target of a tab, polling while Chrome has not created it yet.
 * @param {number} tabId
 * @param {number} waitMs
 */
async function targetOf(tabId, waitMs) {
  const until = Date.now() + waitMs;
  for (;;) {
    const t = targetsByTab(await chrome.debugger.getTargets()).get(tabId);
    if (t || Date.now() >= until) return t;
    await new Promise((r) => setTimeout(r, CREATE_POLL_MS));
  }
}

/** @type {Record<string, (params: any) => Promise<unknown>>} */
const ops = {
  async 'ext.attach'(params) {
    const tabId = tabIdOf(params, 'ext.attach');
    if (atOwnPage.has(tabId)) throw new Error(`tab ${tabId} shows a page of the livetab extension itself, which no program may drive`);
    const before = pauses;
    if (stuckDetach.has(tabId)) {
      // Still held for a client that left while the page's frame refused
      // every command: taken over now, that hold would stay once the
      // attach failed (red team, 2 of 2).
      await retryStuck(tabId, Infinity, undefined);
      if (stuckDetach.has(tabId)) {
        throw new Error(`attaching to tab ${tabId}: a frame of its page shows a URL no extension may debug, and Chrome refuses every command of the tab until the frame navigates or is removed, or the tab reloads`);
      }
    }
    try {
      await chrome.debugger.attach({ tabId }, '1.3');
    } catch (e) {
      const msg = parseError(e).message;
      if (!/already attached/i.test(msg)) throw new Error(`attaching to tab ${tabId}: ${msg}`);
      if (!(await holds(tabId))) {
        throw new Error(`tab ${tabId} is debugged by another client: close DevTools on tab ${tabId} and try again`);
      }
    }
    if (pauses !== before && !ours.has(tabId)) {
      // The person paused while Chrome attached: setPaused let go of the
      // tabs in ours, and this one was not there yet.
      await detachTab(tabId).catch(() => {});
      throw new Error(PAUSED_MESSAGE);
    }
    if (!ours.has(tabId)) {
      ours.add(tabId);
      publish();
    }
    await hearCrashes(tabId);
    try {
      const r = /** @type {{targetInfo: {targetId: string}}} */ (
        await chrome.debugger.sendCommand({ tabId }, 'Target.getTargetInfo'));
      return { targetId: r.targetInfo.targetId };
    } catch {
      const t = await targetOf(tabId, 0);
      return { targetId: t ? t.id : '' };
    }
  },

  async 'ext.detach'(params) {
    const tabId = tabIdOf(params, 'ext.detach');
    const done = detachTab(tabId);
    detaching.set(tabId, done.catch(() => {}));
    try {
      await done;
    } catch (e) {
      // Detaching what is not attached is what the caller wanted anyway;
      // one Chrome refused for a frame's URL goes through later (stuckDetach).
      if (!/not attached|Cannot access/i.test(parseError(e).message)) throw e;
    } finally {
      detaching.delete(tabId);
    }
    if (ours.delete(tabId)) publish();
    return {};
  },

  async 'ext.targets'() {
    const [tabs, targets] = await Promise.all([chrome.tabs.query({}), chrome.debugger.getTargets()]);
    await restored;
    return { targets: mergeTabs(tabs.map(withSource), targets, ours, shared, created, born) };
  },

  async 'ext.createTab'(params) {
    const url = typeof params.url === 'string' && params.url ? params.url : 'about:blank';
    await restored;
    const active = params.active === true;
    // For a client whose policy holds its tabs, the tab opens blank, joins
    // the policy's rules, and only then loads: opened on its URL, a
    // hostile page's first requests went out before the relay could list
    // the tab as the client's (TestRedTeamFirstMomentOfANewTab).
    const holdFor = typeof params.holdFor === 'string' && owners.has(params.holdFor) ? params.holdFor : '';
    // Any other tab opens blank too while a policy holds tabs, and loads
    // once the rules leave it out: they were made before it was, and held
    // the first load of another client's tab at a private address as a
    // popup's (TestRedTeamUnheldClientsNewTabLoadsAtOnce).
    const first = holdFor || (owners.size && /^https?:/i.test(url)) ? 'about:blank' : url;
    /** @type {chrome.tabs.Tab | undefined} */
    let tab;
    if (params.newWindow === true) {
      const win = await chrome.windows.create({ url: first, focused: active });
      tab = win?.tabs?.[0];
    } else if (typeof params.windowId === 'number') {
      tab = await chrome.tabs.create({ url: first, active, windowId: params.windowId });
    } else {
      tab = await chrome.tabs.create({ url: first, active });
    }
    if (!tab || tab.id === undefined) throw new Error(`livetab: Chrome created no tab for ${url}`);
    const id = tab.id;
    created.add(id);
    persist();
    if (holdFor) {
      holding.set(id, holdFor);
      drove.add(holdFor);
      persistPolicies();
    }
    if (url !== first) {
      await refreshRules();
      try {
        tab = await chrome.tabs.update(id, { url }) ?? tab;
      } catch (e) {
        // A URL Chrome does not load from an extension (javascript:):
        // the command fails, as chrome.tabs.create would have, and the
        // blank tab does not stay behind.
        await chrome.tabs.remove(id).catch(() => {});
        throw e;
      }
    } else if (holdFor) {
      await refreshRules();
    }
    const target = await targetOf(id, CREATE_WAIT_MS);
    return tabInfo(tab, target, ours.has(id), { created: true });
  },

  async 'ext.setPolicy'(params) {
    await restored;
    const owner = policyOwner(params);
    const pol = parsePolicy(params);
    const refused = await refusedRegex(pol);
    if (refused) {
      // Every owner's rules go in one update, which fails whole: one
      // program's host name of 249 bytes took the agents' holds away
      // (red team, 3 of 3).
      throw new Error(`Chrome refuses the rule this policy's domains make (${refused}): name shorter domains, or a wildcard (*.example.com)`);
    }
    if (lingering.delete(owner)) persistLingering();
    if (pol.tabs?.length) drove.add(owner);
    if (pol.sharedOnly || pol.domains.length || pol.blockPrivate) owners.set(owner, pol); else dropOwner(owner);
    if (stale.delete(owner) && !stale.size) staleSince = 0;
    orphaned.delete(owner);
    // A tab held for the owner is the policy's own once it lists it.
    for (const [tabId, o] of holding) {
      if (o === owner && (!owners.has(owner) || pol.tabs?.includes(tabId))) holding.delete(tabId);
    }
    persistPolicies();
    await refreshRules();
    return {};
  },

  async 'ext.unguard'(params) {
    // A popup whose opener no client with a policy drives: the rules let go
    // of it, and a first load they blocked is made again.
    const tabId = tabIdOf(params, 'ext.unguard');
    const keep = Array.isArray(params.keepFor) ? params.keepFor.filter((/** @type {unknown} */ o) => typeof o === 'string') : [];
    if (keep.length) {
      // Driven by those owners' clients alone: their rules alone hold it.
      keptFor.set(tabId, new Set(keep));
      if (keptFor.size > 256) keptFor.delete(keptFor.keys().next().value ?? -1);
      await refreshRules();
      retryKept(tabId);
      return {};
    }
    unguarded.add(tabId);
    if (born.delete(tabId)) persist();
    maybe.delete(tabId);
    await refreshRules();
    retryBlocked(tabId);
    return {};
  },

  async 'ext.closeTab'(params) {
    const tabId = tabIdOf(params, 'ext.closeTab');
    if (params.quiet === true) await quieten(tabId);
    await removeTab(tabId, params.quiet === true, params.leave === true);
    return {};
  },

  // A program handed its tab to the person (Livetab.keepTab): the tab is
  // reported as created by livetab no more, so that a relay that starts
  // later takes it (and the windows it opens) for the person's as well.
  async 'ext.keepTab'(params) {
    const tabId = tabIdOf(params, 'ext.keepTab');
    leaving.delete(tabId);
    await restored;
    if (created.delete(tabId)) persist();
    if (holding.delete(tabId)) persistPolicies();
    // The rules that hold the loads no page started in the tabs an owner
    // opened would block the person's address bar in it from now on
    // (red team: ERR_BLOCKED_BY_CLIENT, 2 of 3).
    await refreshRules();
    const tab = await chrome.tabs.get(tabId).catch(() => undefined);
    if (tab) tabEvent('ext.tabUpdated', tab);
    return {};
  },

  async 'ext.activateTab'(params) {
    const tab = await chrome.tabs.update(tabIdOf(params, 'ext.activateTab'), { active: true });
    if (tab) await chrome.windows.update(tab.windowId, { focused: true });
    return {};
  },

  async 'ext.activity'(params) {
    await activityLoaded;
    setActivity(readActivity(params));
    return {};
  },

  // Downloads a blob: URL, or an http(s) URL, of the tab's own origin with
  // chrome.downloads: the bytes go to disk at disk speed, and Chrome does
  // not hold it to one automatic download per page (after which it asks the
  // person), as it does a download the page starts. Only the tab's own
  // origin: a client reaches no other page's blobs and no other site with
  // the person's cookies (Go cancels an http download redirected away).
  async 'ext.downloadBlob'(params) {
    const tabId = tabIdOf(params, 'ext.downloadBlob');
    const p = /** @type {{url?: unknown, filename?: unknown}} */ (params);
    if (typeof p.url !== 'string' || !/^(blob:|https?:)/.test(p.url)) {
      throw new Error('livetab: ext.downloadBlob needs a blob: or http(s) URL');
    }
    const tab = await chrome.tabs.get(tabId);
    let same = false;
    try {
      const inner = p.url.startsWith('blob:') ? p.url.slice('blob:'.length) : p.url;
      const origin = new URL(inner).origin;
      same = origin !== 'null' && origin === new URL(tab.url || '').origin;
    } catch {
      // not comparable: refused below
    }
    if (!same) throw new Error("livetab: the URL is not of the tab's origin");
    /** @type {chrome.downloads.DownloadOptions} */
    const opts = { url: p.url, saveAs: false, conflictAction: 'uniquify' };
    if (typeof p.filename === 'string' && /^[A-Za-z0-9_-][A-Za-z0-9._ -]{0,99}$/.test(p.filename)) opts.filename = p.filename;
    const id = await chrome.downloads.download(opts);
    return { id };
  },

  // The window of a tab: its bounds and state, and the size of the tab's
  // page in it (Browser.getWindowForTarget, and what setContentsSize needs).
  async 'ext.window'(params) {
    const tab = await chrome.tabs.get(tabIdOf(params, 'ext.window'));
    const win = await chrome.windows.get(tab.windowId);
    return {
      windowId: tab.windowId, left: win.left ?? 0, top: win.top ?? 0, width: win.width ?? 0, height: win.height ?? 0,
      state: win.state ?? 'normal', contentWidth: tab.width ?? 0, contentHeight: tab.height ?? 0,
    };
  },

  // Moves, sizes or (un)maximizes the window of a tab, only when every tab
  // in it is one of `only`: the relay passes the tabs its client opened, and
  // the person's windows are never changed (a tab the person dragged into
  // the window since counts as theirs).
  async 'ext.setWindow'(params) {
    const tab = await chrome.tabs.get(tabIdOf(params, 'ext.setWindow'));
    const p = /** @type {{only?: unknown, left?: unknown, top?: unknown, width?: unknown, height?: unknown, state?: unknown, contentWidth?: unknown, contentHeight?: unknown}} */ (params);
    const only = new Set(Array.isArray(p.only) ? p.only.filter((x) => typeof x === 'number') : []);
    const inWindow = await chrome.tabs.query({ windowId: tab.windowId });
    if (inWindow.some((t) => t.id === undefined || !only.has(t.id))) {
      throw new Error('livetab: the window holds tabs that are not this client\'s');
    }
    /** @type {chrome.windows.UpdateInfo} */
    const info = {};
    for (const k of /** @type {const} */ (['left', 'top', 'width', 'height'])) {
      const v = p[k];
      if (typeof v === 'number' && Number.isFinite(v)) info[k] = Math.round(v);
    }
    const states = ['normal', 'minimized', 'maximized', 'fullscreen'];
    if (typeof p.state === 'string' && states.includes(p.state)) {
      info.state = /** @type {`${chrome.windows.WindowState}`} */ (p.state);
    }
    await chrome.windows.update(tab.windowId, info);
    const cw = typeof p.contentWidth === 'number' && p.contentWidth > 0 ? Math.round(p.contentWidth) : 0;
    const ch = typeof p.contentHeight === 'number' && p.contentHeight > 0 ? Math.round(p.contentHeight) : 0;
    if (cw || ch) await sizeContents(tab.id ?? 0, tab.windowId, cw, ch);
    return {};
  },

  // Cancels a download a client's tab started (Browser.cancelDownload);
  // Chrome removes its partial file. One already done is left as it is.
  async 'ext.cancelDownload'(params) {
    const id = /** @type {{id?: unknown}} */ (params).id;
    if (typeof id !== 'number') throw new Error('livetab: ext.cancelDownload needs a numeric id');
    const [item] = await chrome.downloads.search({ id });
    if (item && item.state === 'in_progress') await chrome.downloads.cancel(id);
    return {};
  },

  // Ends the script that holds a tab's page (the relay's guard): a pause,
  // and its resume with terminateOnResume sent from the event's listener,
  // so that the page stays paused for as short a time as can be (a paused
  // page drops the person's clicks).
  async 'ext.endScript'(params) {
    const tabId = tabIdOf(params, 'ext.endScript');
    // A frame or worker of the tab in a renderer of its own is reached
    // by its child session.
    const sessionId = typeof params.sessionId === 'string' && params.sessionId !== '' ? params.sessionId : undefined;
    const key = endingKey(tabId, sessionId);
    /** @type {Promise<boolean>} */
    const ended = new Promise((resolve) => { ending.set(key, resolve); });
    const late = new Promise((resolve) => { setTimeout(() => resolve(false), END_SCRIPT_WAIT_MS); });
    try {
      await chrome.debugger.sendCommand({ tabId, sessionId }, 'Debugger.pause');
      return { ended: await Promise.race([ended, late]) };
    } finally {
      ending.delete(key);
    }
  },

  async 'ext.fileAccess'() {
    fileAccess = await chrome.extension.isAllowedFileSchemeAccess();
    return { allowed: fileAccess };
  },
};

// ---- events ----------------------------------------------------------------

// Tab events resolve their target first, and a new tab's first report may
// wait up to SOURCE_WAIT_MS for the page that opened it. One chain per tab
// keeps each tab's events in the order Chrome fired them, and one more the
// downloads': with a single chain, each new tab that waited held every
// report behind it, and a popup's download reached the relay seconds late,
// after the file had landed where its program's deny should have kept it.
/** @type {Map<number | string, Promise<void>>} */
const chains = new Map();

/**
 * @param {number | string} key a tab id, or 'downloads'
 * @param {() => Promise<void>} fn
 */
function queueTabEvent(key, fn) {
  const next = (chains.get(key) ?? Promise.resolve()).then(fn).catch(() => {});
  chains.set(key, next);
  void next.then(() => { if (chains.get(key) === next) chains.delete(key); });
}

/**
 * @param {string} method
 * @param {chrome.tabs.Tab} tab
 */
function tabEvent(method, tab) {
  if (state !== 'ready' || tab.id === undefined) return;
  const tabId = tab.id;
  queueTabEvent(tabId, async () => {
    if (method === 'ext.tabCreated' && tab.openerTabId !== undefined && !sourceOf.has(tabId)) {
      await new Promise((/** @type {(v?: unknown) => void} */ done) => {
        const timer = setTimeout(done, SOURCE_WAIT_MS);
        sourceWaiters.set(tabId, () => { clearTimeout(timer); done(); });
      });
      sourceWaiters.delete(tabId);
    }
    const target = await targetOf(tabId, 200);
    emit(notifyText(method, tabInfo(withSource(tab), target, ours.has(tabId), { shared: shared.has(tabId), created: created.has(tabId), popup: born.has(tabId) })));
  });
}

// Listeners are registered synchronously at top level so that each of these
// events can wake a stopped worker.

/** Tabs (and child sessions) whose script ext.endScript ends at the next Debugger.paused. */
/** @type {Map<string, (ended: boolean) => void>} */
const ending = new Map();

/**
 * @param {number} tabId
 * @param {string | undefined} sessionId
 */
function endingKey(tabId, sessionId) {
  return `${tabId}/${sessionId ?? ''}`;
}
const END_SCRIPT_WAIT_MS = 5000;

chrome.debugger.onEvent.addListener((source, method, params) => {
  if (method === 'Debugger.paused' && source.tabId !== undefined) {
    const key = endingKey(source.tabId, source.sessionId);
    const done = ending.get(key);
    if (done) {
      ending.delete(key);
      chrome.debugger.sendCommand({ tabId: source.tabId, sessionId: source.sessionId }, 'Debugger.resume', { terminateOnResume: true })
        .then(() => done(true), () => done(false));
    }
  }
  if (method === 'Page.javascriptDialogOpening' && source.tabId !== undefined && !source.sessionId &&
      leaving.has(source.tabId) && /** @type {{type?: unknown}} */ (params ?? {}).type === 'beforeunload') {
    leaving.delete(source.tabId); // once: the close it was for
    chrome.debugger.sendCommand({ tabId: source.tabId }, 'Page.handleJavaScriptDialog', { accept: true }).catch(() => {});
  }
  // Sent at once, with no await in between, to keep CDP event order.
  if (state === 'ready' && ws && source.tabId !== undefined) {
    send(ws, eventText(method, params, source.tabId, source.sessionId));
  } else if (method === 'Fetch.requestPaused' || method === 'Fetch.authRequired') {
    holdAway(source, method, params);
  } else if ((method === 'Page.downloadWillBegin' || method === 'Page.downloadProgress') && source.tabId !== undefined) {
    void emitDownload(eventText(method, params, source.tabId, source.sessionId));
  }
});

// Requests Chrome held (Fetch) while no bridge listened. The debugger
// outlives a stopped worker, so Chrome goes on holding the page's requests
// for a client that cannot hear of them: dropped, each left the page
// waiting for good (TestRedTeamRequestPausedWhileWorkerAway). They are told
// once the bridge welcomes us, or go on should it not within HELD_AWAY_MS.
/** @type {Map<string, {text: string, timer: ReturnType<typeof setTimeout>}>} */
const heldAway = new Map();
const HELD_AWAY_MS = 10_000;
const HELD_AWAY_MAX = 256;

/**
 * @param {chrome.debugger.DebuggerSession} source
 * @param {string} method
 * @param {unknown} params
 */
function holdAway(source, method, params) {
  const requestId = /** @type {{requestId?: unknown}} */ (params ?? {}).requestId;
  const tabId = source.tabId;
  if (typeof requestId !== 'string' || tabId === undefined) return;
  const key = `${tabId}/${source.sessionId ?? ''}/${requestId}`;
  const go = () => {
    heldAway.delete(key);
    const target = { tabId, sessionId: source.sessionId };
    const answer = method === 'Fetch.authRequired'
      ? chrome.debugger.sendCommand(target, 'Fetch.continueWithAuth', { requestId, authChallengeResponse: { response: 'Default' } })
      : chrome.debugger.sendCommand(target, 'Fetch.continueRequest', { requestId });
    answer.catch(() => {}); // the request or its tab is gone: nothing waits
  };
  if (heldAway.size >= HELD_AWAY_MAX) {
    go();
    return;
  }
  heldAway.set(key, { text: eventText(method, params, tabId, source.sessionId), timer: setTimeout(go, HELD_AWAY_MS) });
}

/**
 * Tells the bridge of the requests held while it was away.
 * @param {WebSocket} sock
 */
function tellHeldAway(sock) {
  for (const h of heldAway.values()) {
    clearTimeout(h.timer);
    send(sock, h.text);
  }
  heldAway.clear();
}

chrome.debugger.onDetach.addListener((source, reason) => {
  if (source.tabId === undefined) return;
  if (reason === 'target_closed' && ours.has(source.tabId) && !paused && mayReattach(source.tabId)) {
    void reattach(source.tabId);
    return;
  }
  lost(source.tabId, reason);
});

/**
 * @param {number} tabId
 * @param {string} reason
 */
function lost(tabId, reason) {
  ours.delete(tabId);
  emit(notifyText('ext.detached', { tabId, reason }));
  publish();
}

// Chrome ends an extension's debugger session when a frame of the tab
// starts a navigation to a URL extensions may not access, such as a scheme
// Chrome does not know (an iframe at badurl://, a link to mailto:), with
// the reason a closed tab gives. The tab lives on, and once that navigation
// is over (such ones are aborted) the debugger may attach again. Reattached
// at once, the relay keeps its sessions and brings the new attachment back
// to the state of the old (ext.reattached); a tab that is really closed, or
// now at a page extensions may not debug, is lost as before.
/** Reattaches of one tab within REATTACH_WINDOW_MS, past which it is lost. */
const REATTACH_MAX = 10;
const REATTACH_WINDOW_MS = 10_000;
/** @type {Map<number, number[]>} */
const reattaches = new Map();

/** @param {number} tabId */
function mayReattach(tabId) {
  const now = Date.now();
  const recent = (reattaches.get(tabId) ?? []).filter((t) => now - t < REATTACH_WINDOW_MS);
  recent.push(now);
  reattaches.set(tabId, recent);
  return recent.length <= REATTACH_MAX;
}

/** Reattaches under way, and those just done (for REATTACH_KEEP_MS): whether each held. */
/** @type {Map<number, Promise<boolean>>} */
const reattaching = new Map();
/** @type {Map<number, Promise<boolean>>} */
const reattached = new Map();
const REATTACH_KEEP_MS = 2000;
/** How long a command Chrome failed for a lost session waits to hear of the detach. */
const REATTACH_NOTICE_MS = 50;

/** @param {number} tabId */
function reattach(tabId) {
  const p = reattachNow(tabId);
  reattaching.set(tabId, p);
  void p.then(() => {
    reattaching.delete(tabId);
    reattached.set(tabId, p);
    setTimeout(() => { if (reattached.get(tabId) === p) reattached.delete(tabId); }, REATTACH_KEEP_MS);
  });
}

/**
 * @param {number} tabId
 * @returns {Promise<boolean>}
 */
async function reattachNow(tabId) {
  const before = pauses;
  try {
    await chrome.tabs.get(tabId);
    await chrome.debugger.attach({ tabId }, '1.3');
  } catch {
    if (ours.has(tabId)) lost(tabId, 'target_closed');
    return false;
  }
  if (paused || pauses !== before || !ours.has(tabId)) {
    // A pause, or the relay's ext.detach, came in between: they let go of
    // the tab, so this attachment must not hold it.
    await detachTab(tabId).catch(() => {});
    if (ours.has(tabId)) lost(tabId, 'paused');
    return false;
  }
  await hearCrashes(tabId);
  emit(notifyText('ext.reattached', { tabId }));
  return true;
}

/**
 * Enables the Inspector domain on a tab's attachment: once its renderer
 * dies, Chrome answers none of the page's commands until it is loaded
 * again, and Inspector.targetCrashed is how the relay hears it (and fails
 * them at once) rather than let each wait out its bound.
 * @param {number} tabId
 */
async function hearCrashes(tabId) {
  await chrome.debugger.sendCommand({ tabId }, 'Inspector.enable').catch(() => {});
}

/**
 * Loads again a popup's first load that other owners' rules blocked, once
 * only its own owners' rules hold it. A load the extension makes has no
 * initiator, which the rules of page-started loads never match: only a
 * popup of tabs each owner opened, whose rules hold every load there
 * whoever starts it (aheadRules), is loaded again.
 * @param {number} tabId
 */
function retryKept(tabId) {
  const url = blockedLoads.get(tabId);
  const keep = keptFor.get(tabId);
  // The fallback rules, over Chrome's limits, hold only loads a page
  // started: a popup's load made again left the domains (TestRedTeamPolicyFloodKeepsOthersRules).
  if (url === undefined || !keep || retried.has(tabId) || !eachOwnersRules) return;
  for (const owner of keep) {
    const pol = owners.get(owner);
    if (!pol || !aheadHoldsAll(pol)) return;
    const mine = ownersTabs(owner, pol);
    if (!descendsFrom(tabId, (x) => openedBy(mine, x))) return;
  }
  retried.add(tabId);
  blockedLoads.delete(tabId);
  void chrome.tabs.get(tabId).then(async (tab) => {
    if (tab.url === url && !tab.pendingUrl) await chrome.tabs.update(tabId, { url });
  }).catch(() => {});
}

/**
 * Loads again, once, a new tab's first load that the popup rules blocked
 * while they did not know the tab was not theirs.
 * @param {number} tabId
 */
function retryBlocked(tabId) {
  const url = blockedLoads.get(tabId);
  if (url === undefined || retried.has(tabId) || born.has(tabId) || maybe.has(tabId)) return;
  retried.add(tabId);
  blockedLoads.delete(tabId);
  // Only a tab still on that load's error page: one the person sent
  // elsewhere meanwhile went back to the old URL (red team, 3 of 3).
  void chrome.tabs.get(tabId).then(async (tab) => {
    if (tab.url === url && !tab.pendingUrl) await chrome.tabs.update(tabId, { url });
  }).catch(() => {});
}

// A Page.navigate through chrome.debugger is one the extension starts, and
// about:blank takes the origin of who starts it: a client's about:blank
// (and the relay's stand-in for a data: URL) is of the extension's origin,
// so its script may send the tab on to one of the extension's own pages,
// where chrome.debugger is, and Chrome keeps the debugger attached there.
// No program drives such a page: the extension lets go of the tab before
// the page commits, and refuses its commands until the tab goes elsewhere.
// (Frames and windows of the extension's pages are kept out by the
// manifest: frame-ancestors 'none', and a cross-origin opener policy.)
const OWN_PAGES = chrome.runtime.getURL('');
/** Tabs at, or on their way to, a page of the extension. @type {Set<number>} */
const atOwnPage = new Set();

/**
 * @param {{tabId: number, frameId: number, url: string}} d
 * @param {boolean} committed
 */
function ownPageNavigation(d, committed) {
  if (d.frameId !== 0) return;
  if (!d.url.startsWith(OWN_PAGES)) {
    if (committed) atOwnPage.delete(d.tabId);
    return;
  }
  atOwnPage.add(d.tabId);
  if (ours.has(d.tabId)) {
    void detachTab(d.tabId).catch(() => {});
    lost(d.tabId, 'extension_page');
  }
}
chrome.webNavigation.onBeforeNavigate.addListener((d) => {
  ownPageNavigation(d, false);
  // The person went elsewhere: a load held earlier is not made again, or
  // the tab went back to it against their word (red team, 3 of 3).
  if (d.frameId === 0 && blockedLoads.has(d.tabId) && blockedLoads.get(d.tabId) !== d.url) blockedLoads.delete(d.tabId);
  // A tab livetab debugs that loads a file: URL, however the load began:
  // the relay frees it if the file is a FIFO, which held the tab
  // answering no debugger (extcdp/fileload.go).
  if (ours.has(d.tabId) && /^\s*file:/i.test(d.url)) emit(notifyText('ext.fileLoad', { tabId: d.tabId, url: d.url }));
  recentNavigations.add(d.tabId, d.url, Date.now());
  // A later load of a popup (window.open('') and then a location).
  const source = sourceOf.get(d.tabId);
  if (d.frameId === 0 && born.has(d.tabId) && source !== undefined) newTabLoads.add(d.tabId, d.url, source, Date.now());
});
chrome.webNavigation.onCommitted.addListener((d) => {
  ownPageNavigation(d, true);
  if (d.frameId === 0) newTabLoads.committed(d.tabId);
  else sawFrame(d.tabId, d.url);
  sawPage(d.tabId, d.frameId, d.url);
});
chrome.webNavigation.onHistoryStateUpdated.addListener((d) => sawPage(d.tabId, d.frameId, d.url));
chrome.webNavigation.onReferenceFragmentUpdated.addListener((d) => sawPage(d.tabId, d.frameId, d.url));
// A frame's change may be what lets a refused detach through.
for (const ev of [chrome.webNavigation.onCommitted, chrome.webNavigation.onHistoryStateUpdated, chrome.webNavigation.onReferenceFragmentUpdated]) {
  ev.addListener((d) => {
    if (stuckDetach.has(d.tabId)) void retryStuck(d.tabId, Infinity, undefined);
  });
}

chrome.webNavigation.onErrorOccurred.addListener((d) => {
  if (d.frameId !== 0 || !owners.size || !/ERR_BLOCKED_BY_CLIENT/.test(d.error) || retried.has(d.tabId)) return;
  // A tab an owner drives was held on purpose (drivenRules): never loaded again.
  if ([...owners.values()].some((p) => p.tabs?.includes(d.tabId))) return;
  // Only a new tab's first loads: the rules leave every older tab alone.
  if (Date.now() - (createdAt.get(d.tabId) ?? 0) > NEW_TAB_MS) return;
  blockedLoads.set(d.tabId, d.url);
  if (keptFor.has(d.tabId)) {
    void refreshRules().then(() => retryKept(d.tabId)).catch(() => {});
    return;
  }
  if (born.has(d.tabId) || maybe.has(d.tabId)) return; // the relay may still unguard it
  // Not a popup of livetab's: the rules held it only while it was new.
  void refreshRules().then(() => retryBlocked(d.tabId)).catch(() => {});
});

/**
 * @param {number | undefined} tabId
 */
function livetabs(tabId) {
  return tabId !== undefined && (ours.has(tabId) || created.has(tabId) || born.has(tabId));
}

chrome.tabs.onCreated.addListener((tab) => {
  const id = tab.id;
  if (id !== undefined) {
    createdAt.set(id, Date.now());
    setTimeout(() => createdAt.delete(id), NEW_TAB_MS);
  }
  if (id !== undefined && livetabs(tab.openerTabId) && !born.has(id)) {
    // Perhaps a popup of livetab's: the rules keep holding it until
    // webNavigation tells.
    maybe.add(id);
    setTimeout(() => {
      // Not a popup: the person's Ctrl+T tab, or a program's new one, whose
      // first load the rules held meanwhile as a popup's (a private address
      // the person opened stayed an error page: red team, 6 of 6).
      if (maybe.delete(id) && !born.has(id) && owners.size) void refreshRules().then(() => retryBlocked(id)).catch(() => {});
    }, MAYBE_MS);
  } else if (owners.size && !born.has(id ?? -1)) {
    // Anyone else's new tab leaves the popup rules' reach.
    void refreshRules().catch(() => {});
  }
  tabEvent('ext.tabCreated', tab);
});

// A page opened a tab (a link with a target, window.open, a form): when
// the page is one of livetab's tabs, the new tab is its popup. The popup
// rules keep holding it, and a shared-only client may drive it.
chrome.webNavigation.onCreatedNavigationTarget.addListener((d) => {
  sourceOf.set(d.tabId, d.sourceTabId);
  if (livetabs(d.sourceTabId) && !born.has(d.tabId) && !unguarded.has(d.tabId)) {
    born.add(d.tabId);
    maybe.delete(d.tabId);
    // Its loads no page of the domains starts are held from now on.
    if (owners.size) void refreshRules().catch(() => {});
  }
  if (livetabs(d.sourceTabId)) newTabLoads.add(d.tabId, d.url, d.sourceTabId, Date.now());
  persist();
  const waiter = sourceWaiters.get(d.tabId);
  if (waiter) {
    waiter(); // its first report is still to go, and now names the opener
    return;
  }
  void chrome.tabs.get(d.tabId).then((tab) => tabEvent('ext.tabUpdated', tab)).catch(() => {});
});

chrome.tabs.onUpdated.addListener((tabId, change, tab) => {
  // A navigation resets the tab's badge.
  if (change.status === 'loading' && shared.has(tabId)) badge(tabId);
  if (change.url !== undefined || change.title !== undefined) tabEvent('ext.tabUpdated', tab);
});

chrome.tabs.onRemoved.addListener((tabId) => {
  stuckDetach.delete(tabId);
  recentPages.closed(tabId, Date.now());
  saveRecentPages(true);
  ours.delete(tabId);
  if (holding.delete(tabId)) persistPolicies();
  for (const owner of orphaned) {
    const pol = owners.get(owner);
    if (!pol?.tabs?.includes(tabId)) continue;
    pol.tabs = pol.tabs.filter((id) => id !== tabId);
    if (!pol.tabs.length) {
      dropOwner(owner);
      orphaned.delete(owner);
    }
    persistPolicies();
    void refreshRules().catch(() => {});
  }
  maybe.delete(tabId);
  unguarded.delete(tabId);
  blockedLoads.delete(tabId);
  reattaches.delete(tabId);
  retried.delete(tabId);
  const a = shared.delete(tabId), b = created.delete(tabId), c = born.delete(tabId), d = sourceOf.delete(tabId);
  if (a || b || c || d) persist();
  if (state !== 'ready') return;
  queueTabEvent(tabId, async () => emit(notifyText('ext.tabRemoved', { tabId })));
});

// Downloads: extensions may not choose where files go, but chrome.downloads
// sees each one; Go joins these reports with the tab's Page.download* events
// and gives clients Browser.download* events with the file's path.

/**
 * The new tabs' loads that may turn into downloads (lib/loads.js), and the
 * downloads joined to one: by chrome.downloads id, the tab whose page
 * opened the tab.
 */
const newTabLoads = new NewTabLoads();
/** @type {Map<number, number>} */
const downloadSource = new Map();

/**
 * What each tab showed of late, closed tabs too (lib/loads.js), kept in
 * the session's storage across the worker's stops. A worker that starts
 * with none (the browser's start) takes what the open tabs show now.
 * Ten minutes, as the relay keeps a closed program's tab (extcdp
 * buriedWindow): a server may hold a download's headers that long, and
 * with a minute a hostile page's download that began 70 s after its tab
 * closed escaped the deny, and a person's slow download begun on a page
 * they had left a minute before was taken by a program's tab that
 * visited it since (red team, 2026-12-01). Closed tabs are kept as hashes,
 * 8192 of them (lib/loads.js): another program's crawl of 530 tabs made
 * the whole record of 512 tabs forget the person's.
 */
const recentPages = new RecentPages(10 * 60_000, 32, 512, -Infinity);
/** The tabs that navigated to each URL of late: a download with no referrer goes by them. */
const recentNavigations = new RecentNavigations(10 * 60_000);
/** @type {ReturnType<typeof setTimeout> | undefined} */
let recentSaving;
let recentDue = 0;
/** How long the last save took, in ms. */
let recentCost = 0;
/**
 * Saves the record: within 50 ms for a tab's page or close (the worker may
 * stop any moment), within half a second for frames; never more often
 * (a page that changes its URL in a loop), nor more than a tenth of the
 * time (a crawl's thousands of closed tabs make a save of 2 MB, which
 * takes tens of ms).
 * @param {boolean} soon
 */
function saveRecentPages(soon) {
  const due = Date.now() + Math.max(soon ? 50 : 500, Math.min(10 * recentCost, 2000));
  if (recentSaving !== undefined && recentDue <= due) return;
  clearTimeout(recentSaving);
  recentDue = due;
  recentSaving = setTimeout(() => {
    recentSaving = undefined;
    const began = performance.now();
    void chrome.storage.session.set({ recentPages: recentPages.save() })
      .then(() => { recentCost = performance.now() - began; })
      .catch(() => {});
  }, due - Date.now());
}
/**
 * @param {number} tabId
 * @param {number} frameId
 * @param {string} url
 */
function sawPage(tabId, frameId, url) {
  recentPages.saw(tabId, frameId, url, Date.now());
  saveRecentPages(frameId === 0);
}
void chrome.storage.session.get('recentPages').then(async (v) => {
  if (v.recentPages) recentPages.restore(v.recentPages);
  // And what the open tabs show now: the last save may not have been made
  // before the worker stopped (CI, TestRedTeamWorkerRestartForgetsPersonsTab).
  const tabs = await chrome.tabs.query({});
  for (const t of tabs) {
    if (t.id === undefined) continue;
    const frames = (await chrome.webNavigation.getAllFrames({ tabId: t.id }).catch(() => null)) ?? [];
    for (const f of frames) {
      if (recentPages.tabs.get(t.id)?.current.get(f.frameId) !== f.url.split('#')[0]) recentPages.saw(t.id, f.frameId, f.url, Date.now());
    }
  }
}).catch(() => {});

/**
 * The tabs that showed the page each download was begun from in the last
 * ten minutes, when no open tab shows it, by chrome.downloads id.
 * @type {Map<number, number[]>}
 */
const downloadRecentTabs = new Map();

/**
 * The tab each download was begun from, by its referrer (lib/loads.js), by
 * chrome.downloads id.
 * @type {Map<number, number>}
 */
const downloadReferrerTab = new Map();

/**
 * @param {chrome.downloads.DownloadItem} item
 */
function downloadInfo(item) {
  const source = downloadSource.get(item.id);
  const from = downloadReferrerTab.get(item.id);
  const recent = downloadRecentTabs.get(item.id);
  return {
    id: item.id,
    url: item.url,
    finalUrl: item.finalUrl,
    filename: item.filename,
    mime: item.mime,
    state: item.state,
    bytesReceived: item.bytesReceived,
    totalBytes: item.totalBytes,
    // When and from which page Chrome began it: Go tells a tab's download
    // from the person's of the same URL by them.
    startTime: Date.parse(item.startTime) || 0,
    referrer: item.referrer ?? '',
    ...(item.error ? { error: item.error } : {}),
    ...(source !== undefined ? { sourceTabId: source } : {}),
    ...(from !== undefined ? { referrerTabId: from } : {}),
    ...(recent?.length ? { recentTabIds: recent } : {}),
  };
}

/**
 * The one tab whose page or one of whose frames shows referrer
 * (lib/loads.js): a page the person's tab frames may be the top page of a
 * program's tab, and only the frame began the download
 * (TestRedTeamPersonsFrameDownloadStaysThePersons).
 * @param {string} referrer
 * @returns {Promise<number | undefined>}
 */
async function downloadTab(referrer) {
  const tabs = await chrome.tabs.query({}).catch(() => []);
  const pages = await Promise.all(
    tabs.map(async (t) => {
      if (t.id === undefined) return [];
      const frames = (await chrome.webNavigation.getAllFrames({ tabId: t.id }).catch(() => null)) ?? [];
      return [{ tabId: t.id, url: t.url || t.pendingUrl }, ...frames.map((f) => ({ tabId: t.id, url: f.url }))];
    }),
  );
  return referrerTab(referrer, pages.flat());
}

chrome.downloads.onCreated.addListener((item) => {
  const load = newTabLoads.take([item.url, item.finalUrl], Date.parse(item.startTime) || 0, Date.now());
  if (load) {
    downloadSource.set(item.id, load.source);
    if (downloadSource.size > 256) downloadSource.delete(downloadSource.keys().next().value ?? -1);
  }
  queueTabEvent('downloads', async () => {
    if (!load && item.referrer) {
      let tab = await downloadTab(item.referrer);
      const recent = recentPages.tabsOf(item.referrer, Date.now());
      // One open tab shows the page, but another showed it a moment ago:
      // the person's tab, left just after their click, whose download the
      // open tab (a program's that denies) would have taken (red team).
      if (recent && recent.some((id) => id !== tab)) tab = undefined;
      if (tab !== undefined) {
        downloadReferrerTab.set(item.id, tab);
        if (downloadReferrerTab.size > 256) downloadReferrerTab.delete(downloadReferrerTab.keys().next().value ?? -1);
      } else {
        if (recent) downloadRecentTabs.set(item.id, recent);
        if (downloadRecentTabs.size > 256) downloadRecentTabs.delete(downloadRecentTabs.keys().next().value ?? -1);
      }
    } else if (!load) {
      // No referrer at all: the tabs that navigated to its URL (the
      // person's address bar, a frame), else those that showed a page of
      // its origin, whose <a download> with referrerPolicy no-referrer
      // escaped a program's deny once its tab had closed (TestRedTeamDiesMidDownload).
      const now = Date.now();
      let recent = [...new Set([item.url, item.finalUrl].flatMap((u) => recentNavigations.tabsOf(u, now)))];
      if (!recent.length) {
        const origin = originReferrer(item.finalUrl || item.url);
        recent = (origin && recentPages.tabsOf(origin, now)) || [];
      }
      if (recent.length) downloadRecentTabs.set(item.id, recent);
      if (downloadRecentTabs.size > 256) downloadRecentTabs.delete(downloadRecentTabs.keys().next().value ?? -1);
    }
    await emitDownload(notifyText('ext.download', downloadInfo(item)));
  });
});

chrome.downloads.onChanged.addListener((delta) => {
  // Only the changes that matter to a waiting client: the end, and the
  // final file name.
  if (!(delta.state || delta.filename || delta.error)) return;
  queueTabEvent('downloads', async () => {
    const [item] = await chrome.downloads.search({ id: delta.id });
    if (item) await emitDownload(notifyText('ext.download', downloadInfo(item)));
  });
});

chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === ALARM && !ws && !dialing && Date.now() >= nextDialAt) void dial();
});

chrome.runtime.onStartup.addListener(() => { void dial(); });
chrome.runtime.onInstalled.addListener(() => { void dial(); });

chrome.storage.onChanged.addListener((changes, area) => {
  if (area === 'local' && ('url' in changes || 'token' in changes)) {
    setLastClose(null);
    redial();
  }
});

chrome.runtime.onMessage.addListener((msg, _sender, reply) => {
  if (msg?.type === 'livetab.status') {
    reply(status());
  } else if (msg?.type === 'livetab.reconnect') {
    redial();
    reply(status());
  } else if (msg?.type === 'livetab.tabs') {
    void sharingList().then(reply);
    return true;
  } else if (msg?.type === 'livetab.pause') {
    void setPaused(msg.paused === true).then(() => reply(status()));
    return true;
  } else if (msg?.type === 'livetab.share' && typeof msg.tabId === 'number') {
    void share(msg.tabId, msg.shared === true).then(() => sharingList()).then(reply);
    return true;
  } else if (msg?.type === 'livetab.activity') {
    void activityLoaded.then(() => reply(activity));
    return true;
  } else if (msg?.type === 'livetab.stopClient' && typeof msg.client === 'string') {
    stopClient(msg.client);
    reply(activity);
  } else if (msg?.type === 'livetab.stopTab' && typeof msg.tabId === 'number') {
    void stopTab(msg.tabId).then(() => reply(activity));
    return true;
  }
  return false;
});

// ---- status for the popup --------------------------------------------------

/**
 * Whether the popup offers a tab to share: pages, not Chrome's own.
 * @param {chrome.tabs.Tab} t
 */
function shareable(t) {
  return t.id !== undefined && /^(https?:|about:blank)/.test(t.url || t.pendingUrl || '');
}

/**
 * The tabs the popup offers to share, the current tab first: the focused
 * window's active tab, or, when that is the popup page opened as a tab of
 * its own, the page the person looked at before it. A Chrome page is no
 * current tab: "Share this tab" must never name another.
 */
async function sharingList() {
  await restored;
  const tabs = await chrome.tabs.query({});
  /** @type {chrome.tabs.Tab | undefined} */
  let current = (await chrome.tabs.query({ active: true, lastFocusedWindow: true }))[0];
  if (current && (current.url || '').startsWith(chrome.runtime.getURL('popup.html'))) {
    const last = (/** @type {chrome.tabs.Tab} */ t) => /** @type {{lastAccessed?: number}} */ (t).lastAccessed ?? 0;
    current = tabs.filter(shareable).sort((a, b) => last(b) - last(a))[0];
  } else if (current && !shareable(current)) {
    current = undefined;
  }
  return tabs
    .filter(shareable)
    .map((t) => ({
      tabId: /** @type {number} */ (t.id),
      title: t.title || t.url || '',
      url: t.url || t.pendingUrl || '',
      shared: shared.has(/** @type {number} */ (t.id)),
      current: t.id === current?.id,
      driven: ours.has(/** @type {number} */ (t.id)),
    }))
    .sort((a, b) => Number(b.current) - Number(a.current));
}

function status() {
  return {
    state,
    connected: state === 'ready',
    url: settings.url,
    urlSource: settings.urlSource,
    tokenSet: settings.token !== '',
    tokenSource: settings.tokenSource,
    lastClose,
    attached: [...ours],
    fileAccess,
    paused,
    version: VERSION,
    extensionId: chrome.runtime.id,
  };
}

/** Tells an open popup; with none open the message has no receiver. */
function publish() {
  chrome.runtime.sendMessage({ type: 'livetab.statusChanged', status: status() }).catch(() => {});
}

// ---- start -----------------------------------------------------------------

void chrome.alarms.get(ALARM).then((a) => {
  if (!a) void chrome.alarms.create(ALARM, { periodInMinutes: 0.5 });
});
void chrome.storage.session.get('lastClose').then((v) => {
  if (!lastClose && v.lastClose) lastClose = /** @type {CloseInfo} */ (v.lastClose);
}).catch(() => {});
void restored.then(() => { for (const id of shared) badge(id); });
void dial();
