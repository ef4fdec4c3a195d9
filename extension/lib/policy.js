// @ts-check
// The extension's own check of the policy Go pushes (ext.setPolicy): the
// second line of defence, for clients that skip the Go layer.

/**
 * @typedef {{sharedOnly: boolean, domains: string[]}} Policy
 */

/** @type {Policy} */
export const OPEN_POLICY = { sharedOnly: false, domains: [] };

/**
 * Whether a host matches one pattern: "*" matches every host,
 * "*.example.com" matches example.com and its subdomains, anything else
 * matches that host exactly. Case does not matter.
 * @param {string} host
 * @param {string} pattern
 */
export function hostMatches(host, pattern) {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  const p = pattern.toLowerCase().trim().replace(/^\[|\]$/g, '');
  if (p === '*') return true;
  if (p.startsWith('*.')) {
    const base = p.slice(2);
    return h === base || h.endsWith('.' + base);
  }
  return h === p;
}

/**
 * Whether the policy lets a tab be at url. No domain list allows every
 * URL; about:blank is always allowed; with a list, only http(s) URLs whose
 * host matches one of its patterns are.
 * @param {string} url
 * @param {string[]} domains
 */
export function urlAllowed(url, domains) {
  if (!domains.length || url === '' || url === 'about:blank') return true;
  let u;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return false;
  return domains.some((d) => hostMatches(u.hostname, d));
}

/**
 * Reads a policy from ext.setPolicy's params, dropping what is malformed.
 * @param {any} params
 * @returns {Policy}
 */
export function parsePolicy(params) {
  const domains = Array.isArray(params?.domains) ? params.domains.filter((/** @type {unknown} */ d) => typeof d === 'string' && d !== '') : [];
  return { sharedOnly: params?.sharedOnly === true, domains };
}
