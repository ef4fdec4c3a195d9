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
 * @typedef {{id: number, priority: number, action: {type: 'block'}, condition: Record<string, unknown>}} Rule
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
  if (p.startsWith('*.')) p = p.slice(2);
  p = p.replace(/\.$/, '');
  return /^[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(p) ? p : '';
}

/**
 * @param {string} s
 */
function escapeRE(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;
const SCHEME = '^[a-z][a-z0-9+.-]*://([^/?#]*@)?';
const PORT_END = '(:[0-9]+)?([/?#]|$)';

/**
 * The rules that keep the new tabs pages open within one owner's domains:
 * a block of every document request outside them, and blocks for the
 * hosts a DNR domain lets through but the patterns do not (example.com
 * allows only that host; *.example.com only its subdomains).
 * @param {Policy} pol
 * @param {number[]} excludedTabIds the tabs the rules leave alone
 * @param {number} firstId
 * @returns {Rule[]}
 */
export function popupRules(pol, excludedTabIds, firstId) {
  if (!pol.domains.length || pol.domains.some((d) => d.trim() === '*')) return [];
  const domains = [...new Set(pol.domains.map(dnrDomain).filter((d) => d !== ''))];
  // initiatorDomains keeps the rules off navigations no page started (the
  // address bar, chrome.tabs.create). Without a domain to name, no rule:
  // an allowlist of only CIDR ranges or IPv6 addresses gets none.
  if (!domains.length) return [];
  /** @type {Record<string, unknown>} */
  const base = { resourceTypes: ['main_frame', 'sub_frame'], initiatorDomains: domains };
  if (excludedTabIds.length) base.excludedTabIds = excludedTabIds;
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
    if (IPV4.test(d) || wild.some((w) => d === w || d.endsWith('.' + w))) continue;
    const inner = domains.filter((x) => x !== d && x.endsWith('.' + d));
    block({
      requestDomains: [d],
      regexFilter: `${SCHEME}[^/?#@]*\\.${escapeRE(d)}${PORT_END}`,
      ...(inner.length ? { excludedRequestDomains: inner } : {}),
    });
  }
  return rules;
}
