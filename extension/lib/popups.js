// @ts-check
// Popups of the tabs an agent drives. A page can open a tab (a link with
// target=_blank, window.open, a form with a target) that requests its URL
// before anything can attach to it: the page's Fetch interception is per
// tab, and chrome.debugger's auto-attach on the tab does not reach popups
// (both measured: the forbidden server saw the request). declarativeNetRequest
// session rules act before any request of any tab, so while a client has a
// domain policy, these rules block a new tab's document requests outside
// its domains. They leave alone every tab that was open before (excluded by
// id) and every navigation no page started (initiatorDomains), so the
// person's own tabs and the tabs a program opens are not touched.

import { hostMatches } from './policy.js';

/** @typedef {import('./policy.js').Policy} Policy */

/**
 * A rule as chrome.declarativeNetRequest.updateSessionRules takes it.
 * @typedef {{id: number, priority: number, action: {type: 'block' | 'allow'}, condition: Record<string, unknown>}} Rule
 */

/** Session rule ids of popup rules start here. */
export const FIRST_RULE_ID = 1000;

/**
 * The declarativeNetRequest domain a pattern names, or '' when such a
 * domain cannot say it (CIDR ranges, IPv6, "*"). A DNR domain also matches
 * its subdomains, so the rules add exceptions where the pattern does not.
 * @param {string} pattern
 */
export function dnrDomain(pattern) {
  let p = pattern.toLowerCase().trim();
  const wild = p.startsWith('*.');
  if (wild) p = p.slice(2);
  p = p.replace(/\.$/, '');
  if (!/^[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(p)) return '';
  if (wild) return p;
  // As the browser writes the host it requests: 127.1 is 127.0.0.1.
  try {
    return new URL(`http://${p}/`).hostname;
  } catch {
    return '';
  }
}

/**
 * @param {string} s
 */
function escapeRE(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/**
 * The conditions that hold the subdomains of the private hosts named
 * (a.localhost, not *.a.localhost), which a rule that leaves out a named
 * host by excludedRequestDomains lets through with it: a hostile page of
 * a.localhost reached x.a.localhost by 13 kinds of request (red team, 4
 * of 4). Only names the rules see as private by themselves (localhost and
 * its subdomains): a subdomain of another name may be any address.
 * @param {string[]} patterns the private hosts named, as given
 * @returns {Record<string, unknown>[]}
 */
function namedSubdomains(patterns) {
  const named = [...new Set(patterns.map(dnrDomain).filter((d) => d !== ''))];
  const wild = patterns.filter((p) => p.trim().startsWith('*.')).map(dnrDomain);
  /** @type {Record<string, unknown>[]} */
  const conds = [];
  for (const d of named) {
    if (d !== 'localhost' && !d.endsWith('.localhost')) continue;
    if (wild.some((w) => d === w || d.endsWith('.' + w))) continue;
    const inner = named.filter((x) => x !== d && x.endsWith('.' + d));
    conds.push({ requestDomains: [d], regexFilter: `${SCHEME}[^/?#@]*\\.${escapeRE(d)}${PORT_END}`, ...(inner.length ? { excludedRequestDomains: inner } : {}) });
  }
  return conds;
}
const SCHEME = '^[a-z][a-z0-9+.-]*://([^/?#]*@)?';
const PORT_END = '(:[0-9]+)?([/?#]|$)';

// Loopback, private, link-local, CGNAT and unspecified addresses as IP
// literals (Chrome has turned 0x7f000001, 127.1 and 127.0.0.1. into dotted
// form by then), localhost with or without the trailing dot of a fully
// qualified name (Chrome keeps that dot and resolves the name the same),
// and the IPv6 loopback, unique-local and link-local ranges. A name that
// resolves to such an address is not seen: no DNS here.
// Each its own rule: one regexFilter of them all compiles beyond
// declarativeNetRequest's 2 KB limit.
const PRIVATE_HOSTS = [
  '127\\.[0-9.]+', '10\\.[0-9.]+', '192\\.168\\.[0-9.]+', '172\\.(1[6-9]|2[0-9]|3[01])\\.[0-9.]+',
  '169\\.254\\.[0-9.]+', '100\\.(6[4-9]|[7-9][0-9]|1[01][0-9]|12[0-7])\\.[0-9.]+', '0\\.[0-9.]+',
  '([^/?#@:]*\\.)?localhost\\.?', '\\[(::1?|::ffff:[0-9a-f:.]+)\\]', '\\[f[c-d][0-9a-f]*:[0-9a-f:]*\\]', '\\[fe[89ab][0-9a-f]*:[0-9a-f:]*\\]',
];

/**
 * The rules that keep the new tabs pages open within one owner's domains:
 * a block of every document request outside them, and blocks for the
 * hosts a DNR domain lets through but the patterns do not (example.com
 * allows only that host; *.example.com only its subdomains); with
 * blockPrivate, a block of private addresses but those the owner named.
 * @param {Policy} pol
 * @param {number[]} excludedTabIds the tabs the rules leave alone
 * @param {number} firstId
 * @returns {Rule[]}
 */
export function popupRules(pol, excludedTabIds, firstId) {
  return holdRules(pol, excludedTabIds, firstId, ['main_frame', 'sub_frame']);
}

/**
 * The rules when the owners' rules do not fit in Chrome's (1000 regex
 * rules in all, and the clients of one relay together may ask for more):
 * one rule that blocks every document request of the tabs the rules hold
 * that a page of the owners' domains started, whatever its host. The new
 * tabs pages of livetab's tabs open then load nothing until the relay lets
 * go of them: an agent's popups are refused rather than let out of its
 * domains. When an owner names no domain, no initiator can be named, and
 * the rule also holds a new tab's first load no page started.
 * @param {Policy[]} pols the owners' policies
 * @param {number[]} excludedTabIds the tabs the rules leave alone
 * @param {number} firstId
 * @returns {Rule[]}
 */
export function closedRules(pols, excludedTabIds, firstId) {
  /** @type {Record<string, unknown>} */
  const cond = { resourceTypes: ['main_frame', 'sub_frame'] };
  const named = pols.map((p) => p.domains.map(dnrDomain).filter((d) => d !== ''));
  if (named.every((d) => d.length)) cond.initiatorDomains = [...new Set(named.flat())];
  if (excludedTabIds.length) cond.excludedTabIds = excludedTabIds;
  return [{ id: firstId, priority: 1, action: { type: 'block' }, condition: cond }];
}

/**
 * The rules that keep the tabs an owner drives within its domains: a
 * page-started load of their main frame outside them is blocked, so that
 * a script's location change never shows the owner a page there. Frames
 * are left to the page: an allowed site's embeds keep working.
 * @param {Policy} pol
 * @param {number[]} otherTabIds every open tab but the owner's
 * @param {number} firstId
 * @returns {Rule[]}
 */
export function drivenRules(pol, otherTabIds, firstId) {
  if (!pol.tabs?.length) return [];
  // An owner that guards its tabs' loads itself (page's guard) has them
  // aborted rather than blocked: the rules leave its documents alone.
  const documents = !pol.guardsLoads && pol.domains.length > 0;
  return holdRules(pol, otherTabIds, firstId, ['main_frame'], documents);
}

/**
 * The rules that hold the loads no page of the owner's domains started:
 * in the tabs the owner opened, every main-frame load outside its domains
 * (below), and in its tabs, the pages Chrome fetches ahead off private
 * addresses. A page's speculation rules (in the page or in a
 * Speculation-Rules header) have Chrome prefetch or prerender a URL from
 * the browser: a main-frame request of the tab that no page of the
 * owner's domains started, which the page's Fetch interception never sees
 * and the rules of page-started loads (initiatorDomains) never match. So
 * these block every main-frame request of the tabs to a private address
 * that the owner did not name, unless a page of its domains started it:
 * those stay the guard's, which aborts them rather than have Chrome show
 * its error page. The owner's own navigations have no initiator either;
 * the guard refuses those before they leave, redirects included, and the
 * tabs a person shared are left out by the caller (their address bar is
 * theirs). Without blockPrivate, none of the latter.
 * @param {Policy} pol
 * @param {number[]} excludedTabIds the tabs the rules leave alone
 * @param {number} firstId
 * @param {number[]} [ownTabIds] the tabs the owner opened
 * @returns {Rule[]}
 */
export function aheadRules(pol, excludedTabIds, firstId, ownTabIds = []) {
  // Outside the domains too: Chrome serves a guarding owner's later
  // navigation from what it fetched ahead, which the guard's Fetch never
  // sees (TestRedTeamPrerenderActivationOutsideTheDomains); and the
  // owner's own navigation (Page.navigate, Target.createTarget's URL), which
  // no page started, went out to the place its allowed URL redirected to,
  // and once a client read that page before the relay heard of the commit
  // (TestRedTeamNavigateRedirectsOutside).
  // Only in the tabs the owner opened, named: rules that leave out the
  // tabs listed at the last refresh held every new tab's first load,
  // the person's too, outside the owner's domains.
  // A domain named as a CIDR range or an IPv6 literal has no DNR domain to
  // leave out: the rules would block the owner's own loads of it, which
  // have no initiator (TestRedTeamAllowedIPv6AndCIDRNavigate), so there
  // are none.
  const unnamed = pol.domains.some((d) => d.trim() !== '*' && dnrDomain(d) === '');
  const outside = ownTabIds.length && !unnamed
    ? domainRules(pol, [], firstId, ['main_frame'], true, ownTabIds) : [];
  return outside.concat(privateAheadRules(pol, excludedTabIds, firstId + outside.length));
}

/**
 * Whether aheadRules hold every load outside the policy in the tabs the
 * owner opened, whoever starts it: none do for a domain or a private
 * address named as a CIDR range or an IPv6 literal, which has no DNR
 * domain.
 * @param {Policy} pol
 * @returns {boolean}
 */
export function aheadHoldsAll(pol) {
  const any = !pol.domains.length || pol.domains.some((d) => d.trim() === '*');
  if (!any && pol.domains.some((d) => dnrDomain(d) === '')) return false;
  return !pol.blockPrivate || !(pol.privateAllowed ?? []).some((p) => dnrDomain(p) === '');
}

/**
 * aheadRules' blocks of private addresses; without blockPrivate, none.
 * @param {Policy} pol
 * @param {number[]} excludedTabIds
 * @param {number} firstId
 * @returns {Rule[]}
 */
function privateAheadRules(pol, excludedTabIds, firstId) {
  if (!pol.blockPrivate) return [];
  const allowed = pol.privateAllowed ?? [];
  // A private address named as a CIDR range or an IPv6 literal has no DNR
  // domain to leave out: the rules would block the owner's own loads of
  // it, so there are none (pages fetched ahead are then not held).
  if (allowed.some((p) => dnrDomain(p) === '')) return [];
  const domains = [...new Set(pol.domains.map(dnrDomain).filter((d) => d !== ''))];
  const named = [...new Set(allowed.map(dnrDomain))];
  /** @type {Record<string, unknown>} */
  const base = { resourceTypes: ['main_frame'], isUrlFilterCaseSensitive: true };
  if (domains.length) base.excludedInitiatorDomains = domains;
  if (excludedTabIds.length) base.excludedTabIds = excludedTabIds;
  /** @type {Rule[]} */
  const rules = PRIVATE_HOSTS.map((host, i) => {
    /** @type {Record<string, unknown>} */
    const cond = { ...base, regexFilter: `${SCHEME}${host}${PORT_END}` };
    if (named.length) cond.excludedRequestDomains = named;
    return { id: firstId + i, priority: 1, action: { type: /** @type {const} */ ('block') }, condition: cond };
  });
  // A DNR domain also leaves out its subdomains: those of a host named
  // alone (a.localhost, not *.a.localhost) are held again.
  const wild = allowed.filter((p) => p.trim().startsWith('*.')).map(dnrDomain);
  for (const d of named) {
    const numeric = /(^|\.)(\d+|0x[0-9a-f]*)$/.test(d);
    if (numeric || wild.some((w) => d === w || d.endsWith('.' + w))) continue;
    const inner = named.filter((x) => x !== d && x.endsWith('.' + d));
    /** @type {Record<string, unknown>} */
    const cond = { ...base, requestDomains: [d], regexFilter: `${SCHEME}[^/?#@]*\\.${escapeRE(d)}${PORT_END}` };
    if (inner.length) cond.excludedRequestDomains = inner;
    rules.push({ id: firstId + rules.length, priority: 1, action: { type: 'block' }, condition: cond });
  }
  return rules;
}

/**
 * The private hosts every one of the owners named (as DNR domains): rules
 * that cannot tell which owner a request is for let only those through.
 * @param {Policy[]} holders owners with blockPrivate, at least one
 */
function namedByAll(holders) {
  const nameds = holders.map((p) => new Set((p.privateAllowed ?? []).map(dnrDomain).filter((d) => d !== '')));
  return [...nameds[0]].filter((d) => nameds.every((n) => n.has(d)));
}

/**
 * The rules, of one size whatever the number of owners, that keep every
 * request but documents of the tabs owners off private addresses drive,
 * and of the new tabs their pages open, off private addresses but the
 * hosts every such owner named: what closedRules leave out when the
 * owners' own rules do not fit in Chrome's limits.
 * @param {Policy[]} pols the owners' policies
 * @param {number[]} unheldTabIds the open tabs none of them holds
 * @param {number} firstId
 * @returns {Rule[]}
 */
export function mergedPrivateRules(pols, unheldTabIds, firstId) {
  const holders = pols.filter((p) => p.blockPrivate);
  if (!holders.length) return [];
  const named = namedByAll(holders);
  /** @type {Policy} */
  const pol = { sharedOnly: false, domains: [], blockPrivate: true, privateAllowed: named };
  const transfer = holders.find((p) => p.transfer)?.transfer;
  if (transfer) pol.transfer = transfer;
  return holdRules(pol, unheldTabIds, firstId, ['main_frame'], false);
}

/**
 * The rules that keep workers of no tab off private addresses while an
 * owner holds its tabs off them: a page of an agent's tab can register a
 * service worker or start a shared worker, whose requests belong to no tab
 * (declarativeNetRequest sees them, like a closing tab's last ones, with
 * tab id -1) and so escape the rules of the agent's tabs. The rules cannot
 * tell which site's workers the agent's pages started (a frame of any site
 * can start one), so they hold every worker's request to a private address
 * of another site than its own while such an owner is connected, but the
 * hosts every such owner named. The person's workers keep their own
 * site's addresses (localhost to localhost: first-party), and lose, for
 * the time an agent runs, the private addresses of other hosts. The
 * extension's own requests (its downloads, its worker's fetches) are left
 * alone: Chrome applies an extension's rules to them too.
 * @param {Policy[]} pols the owners' policies
 * @param {number} firstId
 * @param {string} [self] the extension's id
 * @returns {Rule[]}
 */
export function workerRules(pols, firstId, self) {
  const holders = pols.filter((p) => p.blockPrivate);
  if (!holders.length) return [];
  const named = namedByAll(holders);
  const rules = PRIVATE_HOSTS.map((host, i) => {
    /** @type {Record<string, unknown>} */
    const cond = {
      regexFilter: `${SCHEME}${host}${PORT_END}`, isUrlFilterCaseSensitive: true,
      tabIds: [-1], domainType: 'thirdParty',
    };
    if (named.length) cond.excludedRequestDomains = named;
    if (self) cond.excludedInitiatorDomains = [self];
    return { id: firstId + i, priority: 1, action: { type: /** @type {const} */ ('block') }, condition: cond };
  });
  const patterns = (holders[0].privateAllowed ?? []).filter((p) => named.includes(dnrDomain(p)));
  for (const sub of namedSubdomains(patterns)) {
    /** @type {Record<string, unknown>} */
    const cond = { isUrlFilterCaseSensitive: true, tabIds: [-1], domainType: 'thirdParty', ...sub };
    if (self) cond.excludedInitiatorDomains = [self];
    rules.push({ id: firstId + rules.length, priority: 1, action: { type: 'block' }, condition: cond });
  }
  return rules;
}

/** The most initiators lingerRules name; past it they name none. */
export const MAX_LINGER_INITIATORS = 512;

/**
 * The worker rules of the owners off private addresses that have left, for
 * a while: the requests of no tab that a page of their domains started
 * (their service workers, which run on after them), or a frame of another
 * site in their tabs (sites), stay off private addresses but the hosts
 * every one of them named. One set of rules, of one size whatever the
 * number of owners (120 owners' rules each their own put Chrome past its
 * limit on regex rules): their domains and sites together name the
 * initiators. They never yield to an owner that holds a domain now:
 * another program that named the same site, without blockPrivate, lifted
 * the hold off the first agent's worker (red team, 2 of 2). Past
 * MAX_LINGER_INITIATORS initiators, or when an owner's sites could not all
 * be named (all), they name none: every worker's request of another site
 * to a private address is held, but the extension's own (self). An owner
 * that named no domain leaves none of its own.
 * @param {{ pol: Policy, sites?: string[], all?: boolean }[]} gone
 * @param {number} firstId
 * @param {string} [self] the extension's id
 * @param {string[]} [yielded] DNR domains whose workers go by a current
 *   owner's rules, left out also when the rules name no initiator
 * @returns {Rule[]}
 */
export function lingerRules(gone, firstId, self, yielded = []) {
  const holders = gone.filter((g) => g.pol.blockPrivate && (g.all || g.pol.domains.some((d) => dnrDomain(d) !== '')));
  if (!holders.length) return [];
  const initiators = [...new Set(holders.flatMap((g) => [...g.pol.domains, ...(g.sites ?? [])].map(dnrDomain)).filter((d) => d !== ''))];
  const all = holders.some((g) => g.all) || initiators.length > MAX_LINGER_INITIATORS;
  const named = namedByAll(holders.map((g) => g.pol));
  /** @type {Record<string, unknown>} */
  const base = { isUrlFilterCaseSensitive: true, tabIds: [-1], domainType: 'thirdParty' };
  if (!all) base.initiatorDomains = initiators;
  else if (self || yielded.length) base.excludedInitiatorDomains = [...(self ? [self] : []), ...yielded];
  const rules = PRIVATE_HOSTS.map((host, i) => {
    /** @type {Record<string, unknown>} */
    const cond = { ...base, regexFilter: `${SCHEME}${host}${PORT_END}` };
    if (named.length) cond.excludedRequestDomains = named;
    return { id: firstId + i, priority: 1, action: { type: /** @type {const} */ ('block') }, condition: cond };
  });
  const patterns = (holders[0].pol.privateAllowed ?? []).filter((p) => named.includes(dnrDomain(p)));
  for (const sub of namedSubdomains(patterns)) {
    rules.push({ id: firstId + rules.length, priority: 1, action: { type: 'block' }, condition: { ...base, ...sub } });
  }
  return rules;
}

/**
 * @param {Policy} pol
 * @param {number[]} excludedTabIds
 * @param {number} firstId
 * @param {string[]} types the document types
 * @param {boolean} [documents] false: only the rules of the other requests
 * @returns {Rule[]}
 */
function holdRules(pol, excludedTabIds, firstId, types, documents = true) {
  const rules = documents ? domainRules(pol, excludedTabIds, firstId, types) : [];
  if (pol.blockPrivate) {
    const domains = [...new Set(pol.domains.map(dnrDomain).filter((d) => d !== ''))];
    const named = [...new Set((pol.privateAllowed ?? []).map(dnrDomain).filter((d) => d !== ''))];
    const subs = namedSubdomains(pol.privateAllowed ?? []);
    for (const host of documents ? PRIVATE_HOSTS : []) {
      /** @type {Record<string, unknown>} */
      const cond = {
        resourceTypes: types, regexFilter: `${SCHEME}${host}${PORT_END}`, isUrlFilterCaseSensitive: true,
      };
      // Without domains (any domain allowed) no initiator can be named:
      // the rule then also holds a new tab's first load the person started.
      if (domains.length) cond.initiatorDomains = domains;
      if (excludedTabIds.length) cond.excludedTabIds = excludedTabIds;
      if (named.length) cond.excludedRequestDomains = named;
      rules.push({ id: firstId + rules.length, priority: 1, action: { type: 'block' }, condition: cond });
    }
    for (const sub of documents ? subs : []) {
      /** @type {Record<string, unknown>} */
      const cond = { resourceTypes: types, isUrlFilterCaseSensitive: true, ...sub };
      if (domains.length) cond.initiatorDomains = domains;
      if (excludedTabIds.length) cond.excludedTabIds = excludedTabIds;
      rules.push({ id: firstId + rules.length, priority: 1, action: { type: 'block' }, condition: cond });
    }
    // Every other request of these tabs, whoever started it: the page's
    // fetches, images, sockets and beacons, its workers', and those of its
    // frames of other sites (which Chrome runs in processes of their own,
    // out of the reach of the page's Fetch interception). Requests of no
    // tab (service workers) are left alone: they belong to every tab of
    // their site, the person's too.
    for (const host of PRIVATE_HOSTS) {
      /** @type {Record<string, unknown>} */
      const cond = {
        excludedResourceTypes: types, regexFilter: `${SCHEME}${host}${PORT_END}`, isUrlFilterCaseSensitive: true,
        excludedTabIds: [...excludedTabIds, -1],
      };
      if (named.length) cond.excludedRequestDomains = named;
      rules.push({ id: firstId + rules.length, priority: 1, action: { type: 'block' }, condition: cond });
    }
    for (const sub of subs) {
      const cond = { excludedResourceTypes: types, isUrlFilterCaseSensitive: true, excludedTabIds: [...excludedTabIds, -1], ...sub };
      rules.push({ id: firstId + rules.length, priority: 1, action: { type: 'block' }, condition: cond });
    }
    // livetab's own transfer channel: the extension's transfer frame in
    // these tabs fetches from the relay on 127.0.0.1. Only the relay's
    // port and the form of its URLs; the relay refuses every request but
    // the one of a transfer's token. (A token's length, {43}, makes a
    // regex Chrome refuses as too large, and then no rule at all.)
    if (pol.transfer) {
      /** @type {Record<string, unknown>} */
      const cond = {
        resourceTypes: ['xmlhttprequest'], isUrlFilterCaseSensitive: true,
        regexFilter: `^${escapeRE(pol.transfer)}[A-Za-z0-9_-]+$`,
      };
      if (excludedTabIds.length) cond.excludedTabIds = excludedTabIds;
      rules.push({ id: firstId + rules.length, priority: 2, action: { type: 'allow' }, condition: cond });
    }
  }
  return rules;
}

/**
 * @param {Policy} pol
 * @param {number[]} excludedTabIds
 * @param {number} firstId
 * @param {string[]} types
 * @returns {Rule[]}
 */
function domainRules(pol, excludedTabIds, firstId, types, ahead = false, tabIds = /** @type {number[]} */ ([])) {
  if (!pol.domains.length || pol.domains.some((d) => d.trim() === '*')) return [];
  const domains = [...new Set(pol.domains.map(dnrDomain).filter((d) => d !== ''))];
  // initiatorDomains keeps the rules off navigations no page started (the
  // address bar, chrome.tabs.create). Without a domain to name, no rule:
  // an allowlist of only CIDR ranges or IPv6 addresses gets none.
  if (!domains.length) return [];
  /** @type {Record<string, unknown>} */
  // Ahead (aheadRules): the loads no page of the domains started instead;
  // those a page started stay the guard's, which aborts them.
  const base = { resourceTypes: types, [ahead ? 'excludedInitiatorDomains' : 'initiatorDomains']: domains };
  if (tabIds.length) base.tabIds = tabIds;
  else if (excludedTabIds.length) base.excludedTabIds = excludedTabIds;
  /** @type {Rule[]} */
  const rules = [];
  let id = firstId;
  /** @param {Record<string, unknown>} cond */
  const block = (cond) => rules.push({ id: id++, priority: 1, action: { type: 'block' }, condition: { ...base, ...cond } });
  block({ excludedRequestDomains: domains });
  const wild = pol.domains.filter((p) => p.trim().startsWith('*.')).map(dnrDomain).filter((d) => d !== '');
  for (const d of domains) {
    if (!pol.domains.some((p) => hostMatches(d, p))) {
      block({ requestDomains: [d], regexFilter: `${SCHEME}${escapeRE(d)}${PORT_END}` });
    }
    // A host that ends in a number is an address, which "*.d" never
    // matches: only a name under a wildcard is let through.
    const numeric = /(^|\.)(\d+|0x[0-9a-f]*)$/.test(d);
    if (IPV4.test(d) || (!numeric && wild.some((w) => d === w || d.endsWith('.' + w)))) continue;
    const inner = domains.filter((x) => x !== d && x.endsWith('.' + d));
    block({
      requestDomains: [d],
      regexFilter: `${SCHEME}[^/?#@]*\\.${escapeRE(d)}${PORT_END}`,
      ...(inner.length ? { excludedRequestDomains: inner } : {}),
    });
  }
  return rules;
}
