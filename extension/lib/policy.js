// @ts-check
// The extension's own check of the policy Go pushes (ext.setPolicy): the
// second line of defence, for clients that skip the Go layer.

/**
 * @typedef {{sharedOnly: boolean, domains: string[], blockPrivate?: boolean, privateAllowed?: string[], tabs?: number[], guardsLoads?: boolean, transfer?: string}} Policy
 */

// One policy per relay client (its owner id): a policy binds only the
// program that set it, and ends with its connection.

/** @type {Policy} */
export const OPEN_POLICY = { sharedOnly: false, domains: [] };

// The rule of the Go policy (policy/match.go), checked against the same
// vectors: policy/testdata/domains.json. A host is read as a browser
// connects to it: the URL parser's own host parsing gives the canonical
// form (any IPv4 spelling a browser accepts, IPv6 compressed, percent
// escapes and full-width characters undone), with one trailing dot
// dropped and IPv4-mapped IPv6 addresses read as IPv4.

/**
 * A host as a browser connects to it: a name, or an address as a 32-bit
 * (IPv4) or 128-bit (IPv6) number. null when it is not a host a browser
 * would load, or would load somewhere other than it seems.
 * @typedef {{name: string, v4?: bigint, v6?: bigint}} Host
 */

/**
 * @param {string} raw
 * @returns {Host | null}
 */
function canonicalHost(raw) {
  let h = raw;
  if (h.includes('%')) {
    try {
      h = decodeURIComponent(h);
    } catch {
      return null;
    }
  }
  h = foldWidth(h.toLowerCase());
  if (h.startsWith('[')) {
    if (!h.endsWith(']')) return null;
    return ipv6Host(h.slice(1, -1));
  }
  if (h.includes(':')) return ipv6Host(h); // a bare IPv6 address, as a pattern may give it
  if (h.endsWith('.')) h = h.slice(0, -1);
  // The URL parser would read these as the end of the host, a port or
  // user info, and so name another host.
  if (h === '' || h.startsWith('.') || h.endsWith('.') || h.includes('..') || /[\x00-\x20/\\?#@[\]<>^|%\x7f]/.test(h)) return null;
  // Go has no IDNA: a name in other scripts is compared as written, on
  // both sides (a browser reports it as xn--, which is what to allow).
  if (/[^\x00-\x7f]/.test(h)) {
    const last = h.slice(h.lastIndexOf('.') + 1);
    return /^(\d+|0x[0-9a-f]*)$/.test(last) ? null : { name: h }; // not an IPv4 address either
  }
  let name;
  try {
    name = new URL(`http://${h}/`).hostname;
  } catch {
    return null;
  }
  if (name.startsWith('[')) return ipv6Host(name.slice(1, -1));
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (name === '' || name.includes('..') || name.startsWith('.')) return null;
  const v4 = dotted(name);
  return v4 === null ? { name } : { name, v4 };
}

/**
 * Full-width ASCII and the ideographic full stops as ASCII, as a browser's
 * IDNA mapping reads them.
 * @param {string} s
 */
function foldWidth(s) {
  return s.replace(/[\uff01-\uff5e\u3002\uff61]/g, (c) =>
    c === '\u3002' || c === '\uff61' ? '.' : String.fromCharCode(c.charCodeAt(0) - 0xfee0)).toLowerCase();
}

/**
 * @param {string} s an IPv6 address without brackets
 * @returns {Host | null}
 */
function ipv6Host(s) {
  if (!/^[0-9a-f:.]+$/.test(s)) return null; // a zone, or more than an address
  let name;
  try {
    name = new URL(`http://[${s}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  const v6 = parse6(name);
  if (v6 === null) return null;
  if (v6 >> 32n === 0xffffn) return { name, v4: v6 & 0xffffffffn }; // IPv4-mapped
  return { name, v6 };
}

/**
 * The value of a strictly dotted IPv4 address (as the URL parser writes
 * one), or null.
 * @param {string} s
 */
function dotted(s) {
  const m = /^(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})$/.exec(s);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return null;
  return parts.reduce((v, p) => (v << 8n) | BigInt(p), 0n);
}

/**
 * The value of a compressed IPv6 address as the URL parser writes one
 * (hex groups, at most one "::"), or null.
 * @param {string} s
 */
function parse6(s) {
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const groups = halves.map((x) => (x === '' ? [] : x.split(':')));
  const n = groups.reduce((k, g) => k + g.length, 0);
  if (halves.length === 1 ? n !== 8 : n > 7) return null;
  const all = halves.length === 1 ? groups[0] : [...groups[0], ...Array(8 - n).fill('0'), ...groups[1]];
  let v = 0n;
  for (const g of all) {
    if (!/^[0-9a-f]{1,4}$/.test(g)) return null;
    v = (v << 16n) | BigInt(parseInt(g, 16));
  }
  return v;
}

/**
 * A CIDR range "10.0.0.0/8" or "fd00::/8" as bits over an address, or
 * null when pattern is none. A range of IPv4-mapped addresses is an IPv4
 * range.
 * @param {string} p
 * @returns {{v4: boolean, base: bigint, bits: number} | null}
 */
function cidr(p) {
  const m = /^([^/]+)\/(0|[1-9]\d{0,2})$/.exec(p);
  if (!m) return null;
  const bits = Number(m[2]);
  const v4 = dotted(m[1]);
  if (v4 !== null) return bits <= 32 ? { v4: true, base: v4, bits } : null;
  if (!m[1].includes(':')) return null;
  const h = ipv6Host(m[1]);
  if (h === null || bits > 128) return null;
  const shift = BigInt(128 - bits);
  const base = ((h.v6 ?? ((0xffffn << 32n) | (h.v4 ?? 0n))) >> shift) << shift;
  if (base >> 32n === 0xffffn) return { v4: true, base: base & 0xffffffffn, bits: bits - 96 };
  return { v4: false, base, bits };
}

/**
 * Whether the address in bits of a range, as the range says.
 * @param {{v4: boolean, base: bigint, bits: number}} r
 * @param {Host} h
 */
function inRange(r, h) {
  const addr = r.v4 ? h.v4 : h.v6;
  if (addr === undefined) return false;
  const shift = BigInt((r.v4 ? 32 : 128) - r.bits);
  return addr >> shift === r.base >> shift;
}

/**
 * Whether a host matches one pattern: "*" matches every host,
 * "*.example.com" matches the names under example.com but not
 * example.com itself nor an address, a CIDR range such as "10.0.0.0/8"
 * or "fd00::/8" matches the addresses in it, and anything else names one
 * host or address. Case does not matter; a malformed pattern or host
 * matches nothing.
 * @param {string} host
 * @param {string} pattern
 */
export function hostMatches(host, pattern) {
  const h = canonicalHost(host);
  if (h === null) return false;
  const p = pattern.toLowerCase().trim();
  if (p === '*') return true;
  if (p === '' || p === '*.' || p.includes('://')) return false;
  const range = cidr(p);
  if (range) return inRange(range, h);
  if (p.startsWith('*.')) {
    const rest = p.slice(2);
    const c = canonicalHost(rest); // a * spelled %2A is a * too
    if (rest.includes('*') || c === null || c.name.includes('*')) return false;
    return h.v4 === undefined && h.v6 === undefined && h.name.endsWith('.' + rest.replace(/\.$/, ''));
  }
  if (p.includes('*')) return false;
  const want = canonicalHost(p.replace(/^\[/, '').replace(/\]$/, ''));
  if (want === null || want.name.includes('*')) return false;
  if (want.v4 !== undefined || want.v6 !== undefined) return want.v4 === h.v4 && want.v6 === h.v6;
  return h.v4 === undefined && h.v6 === undefined && want.name === h.name;
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
    // The relay's transfer channel, which the rules let the extension's
    // transfer frame reach: only its own form on 127.0.0.1.
    if (typeof params?.transfer === 'string' && /^http:\/\/127\.0\.0\.1:[0-9]{1,5}\/livetab\/transfer\/$/.test(params.transfer)) {
      pol.transfer = params.transfer;
    }
  }
  if (params?.guardsLoads === true) pol.guardsLoads = true;
  const tabs = Array.isArray(params?.tabs) ? params.tabs.filter((/** @type {unknown} */ t) => Number.isSafeInteger(t)) : [];
  if (tabs.length) pol.tabs = tabs;
  return pol;
}

/**
 * The owner an ext.setPolicy is for; '' when it names none.
 * @param {any} params
 */
export function policyOwner(params) {
  return typeof params?.owner === 'string' ? params.owner : '';
}
