// @ts-check
// When to dial the bridge again.

/** Close codes after which dialing again soon cannot help (wire.go). */
export const CLOSE_BAD_TOKEN = 4001;
export const CLOSE_BAD_HELLO = 4002;
export const CLOSE_ALREADY_PAIRED = 4009;
export const CLOSE_TOO_BIG = 4013;
export const CLOSE_BRIDGE_SHUTDOWN = 4000;

/** Delay after a refusal: long, so a wrong token does not hammer the bridge. */
export const REFUSED_DELAY = 30_000;

/** Exponential backoff: start, start·2, … up to cap; reset after a welcome. */
export class Backoff {
  /**
   * @param {number} [start]
   * @param {number} [cap]
   */
  constructor(start = 100, cap = 5000) {
    this.start = start;
    this.cap = cap;
    this.current = start;
  }

  /** @returns {number} milliseconds to wait before the next dial */
  next() {
    const d = this.current;
    this.current = Math.min(this.cap, this.current * 2);
    return d;
  }

  reset() {
    this.current = this.start;
  }
}

/**
 * Whether a close code means the bridge refused this extension, so that
 * dialing again only after REFUSED_DELAY (or new settings) makes sense.
 * @param {number} code
 * @returns {boolean}
 */
export function isRefusal(code) {
  return code === CLOSE_BAD_TOKEN || code === CLOSE_ALREADY_PAIRED || code === CLOSE_BAD_HELLO;
}

/**
 * A sentence for the popup about why the bridge closed the socket.
 * @param {number} code
 * @param {string} reason the bridge's own text, which says what to do
 * @returns {string}
 */
export function describeClose(code, reason) {
  const what = {
    [CLOSE_BAD_TOKEN]: 'the bridge refused the token: paste the token the livetab program printed',
    [CLOSE_BAD_HELLO]: 'the bridge did not understand this extension: update livetab or the extension',
    [CLOSE_ALREADY_PAIRED]: 'another browser is already connected to this bridge',
    [CLOSE_TOO_BIG]: 'a message was larger than the bridge accepts',
    [CLOSE_BRIDGE_SHUTDOWN]: 'the bridge stopped',
  }[code] ?? `connection closed (code ${code})`;
  return reason ? `${what} (${reason})` : what;
}
