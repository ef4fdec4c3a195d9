// @ts-check
// The extension's own check of the policy Go pushes (ext.setPolicy): the
// second line of defence, for clients that skip the Go layer.

/**
 * @typedef {{sharedOnly: boolean, domains: string[], blockPrivate?: boolean, privateAllowed?: string[]}} Policy
 */

// One policy per relay client (its owner id): a policy binds only the
// program that set it, and ends with its connection.

/** @type {Policy} */
export const OPEN_POLICY = { sharedOnly: false, domains: [] };

/**
 * The 32-bit value of a dotted IPv4 address, or -1.
 * @param {string} s
 */
function ipv4(s) {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return -1;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return -1;
  return ((parts[0] << 24) >>> 0) + (parts[1] << 16) + (parts[2] << 8) + parts[3];
}

/**
 * Whether a host matches one pattern: "*" matches every host,
 * "*.example.com" matches the subdomains of example.com but not
 * example.com itself (the rule of the Go policy, checked against the same
 * vectors: policy/testdata/domains.json), an IPv4 CIDR
 * such as "10.0.0.0/8" matches the addresses in it, anything else matches
 * that host exactly. Case does not matter.
 * @param {string} host
 * @param {string} pattern
 */
export function hostMatches(host, pattern) {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  const p = pattern.toLowerCase().trim().replace(/^\[|\]$/g, '');
  if (p === '*') return true;
  const cidr = /^([\d.]+)\/(\d{1,2})$/.exec(p);
  if (cidr) {
    const base = ipv4(cidr[1]);
    const bits = Number(cidr[2]);
    const addr = ipv4(h);
    if (base < 0 || addr < 0 || bits > 32) return false;
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    return ((addr & mask) >>> 0) === ((base & mask) >>> 0);
  }
  if (p.startsWith('*.')) {
    return h.endsWith(p.slice(1));
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
  /** @param {unknown} v */
  const strings = (v) => Array.isArray(v) ? v.filter((/** @type {unknown} */ d) => typeof d === 'string' && d !== '') : [];
  /** @type {Policy} */
  const pol = { sharedOnly: params?.sharedOnly === true, domains: strings(params?.domains) };
  if (params?.blockPrivate === true) {
    pol.blockPrivate = true;
    pol.privateAllowed = strings(params?.privateAllowed);
  }
  return pol;
}

/**
 * The owner an ext.setPolicy is for; '' when it names none.
 * @param {any} params
 */
export function policyOwner(params) {
  return typeof params?.owner === 'string' ? params.owner : '';
}
