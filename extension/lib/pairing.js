// @ts-check
// Pairing by mutual proof (internal/wire/pairing.go): the worker never sends
// its token. It sends a fresh nonce, obeys nothing until the bridge has
// proved it knows the token, and only then proves it knows it too. Both
// proofs cover the port the worker dialed, so a real bridge on another port
// cannot serve a squatter as an oracle.

export const BRIDGE_LABEL = 'livetab-bridge';
export const EXTENSION_LABEL = 'livetab-extension';
export const NONCE_BYTES = 32;

const NONCE_RE = /^[0-9a-f]{64}$/;
const PROOF_RE = /^[0-9a-f]{64}$/;
const utf8 = new TextEncoder();

/** @returns {string} 32 random bytes as lowercase hex */
export function newNonce() {
  const b = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
}

/**
 * @param {unknown} s
 * @returns {s is string}
 */
export function validNonce(s) {
  return typeof s === 'string' && NONCE_RE.test(s);
}

/**
 * @param {string} hex 64 lowercase hex digits
 * @returns {Uint8Array<ArrayBuffer>}
 */
function unhex(hex) {
  const out = new Uint8Array(new ArrayBuffer(hex.length / 2));
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/**
 * @param {string} token
 * @param {KeyUsage[]} usage
 */
function key(token, usage) {
  return crypto.subtle.importKey('raw', utf8.encode(token), { name: 'HMAC', hash: 'SHA-256' }, false, usage);
}

/**
 * The port a WebSocket to url connects to.
 * @param {string} url
 * @returns {number}
 */
export function urlPort(url) {
  const u = new URL(url);
  if (u.port) return Number(u.port);
  return u.protocol === 'wss:' || u.protocol === 'https:' ? 443 : 80;
}

/**
 * @param {string} label
 * @param {number} port
 * @param {string} extNonce
 * @param {string} bridgeNonce
 */
function message(label, port, extNonce, bridgeNonce) {
  return utf8.encode(`${label}|${port}|${extNonce}|${bridgeNonce}`);
}

/**
 * HMAC-SHA256(token, label|port|NE|NB) as lowercase hex.
 * @param {string} token
 * @param {string} label
 * @param {number} port
 * @param {string} extNonce
 * @param {string} bridgeNonce
 * @returns {Promise<string>}
 */
export async function proof(token, label, port, extNonce, bridgeNonce) {
  const sig = await crypto.subtle.sign('HMAC', await key(token, ['sign']), message(label, port, extNonce, bridgeNonce));
  return [...new Uint8Array(sig)].map((x) => x.toString(16).padStart(2, '0')).join('');
}

/**
 * What the worker does with the bridge's answer to its hello: either the
 * proof to send back, or why it refuses the bridge (the popup's text).
 * crypto.subtle.verify compares the bridge's proof without an early exit.
 * @param {string} token
 * @param {string} extNonce the nonce of our hello
 * @param {any} f the first frame the bridge sent
 * @param {string} url the bridge URL the worker dialed
 * @returns {Promise<{proof: string} | {refuse: string}>}
 */
export async function answerChallenge(token, extNonce, f, url) {
  const notProved = `the program at ${url} could not prove it has the pairing token: it is not your livetab, or the token changed — pair again`;
  if (f?.method === 'ext.welcome') {
    return { refuse: `the program at ${url} welcomed this extension without proving it has the pairing token: if it is livetab, it is older than this extension — update livetab; if not, it is not your livetab` };
  }
  if (f?.method !== 'ext.challenge' || f.id !== undefined) {
    return { refuse: `${notProved} (it sent ${typeof f?.method === 'string' ? f.method : 'a frame'} before proving it)` };
  }
  const nonce = f.params?.nonce;
  const got = f.params?.proof;
  if (!validNonce(nonce) || typeof got !== 'string' || !PROOF_RE.test(got)) return { refuse: notProved };
  const port = urlPort(url);
  const ok = await crypto.subtle.verify('HMAC', await key(token, ['verify']), unhex(got), message(BRIDGE_LABEL, port, extNonce, nonce));
  if (!ok) return { refuse: notProved };
  return { proof: await proof(token, EXTENSION_LABEL, port, extNonce, nonce) };
}
