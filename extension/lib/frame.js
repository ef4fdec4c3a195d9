// @ts-check
// Texts of the frames the extension sends. Keys are written in the order of
// wire.Frame's fields so the Go side's Encode gives the same bytes, which is
// what the shared test vectors check.

/**
 * @typedef {{code: number, message: string, data?: unknown}} WireError
 * @typedef {{tabId: number, targetId: string, windowId: number, openerTabId?: number,
 *   url: string, title: string, active: boolean, attached: boolean,
 *   shared?: boolean, created?: boolean, popup?: boolean}} TabInfo
 * @typedef {{nonce: string, version: string, userAgent: string, extensionId: string,
 *   attached: number[], fileAccess: boolean, paused?: boolean, fullVersion?: string}} HelloParams
 * @typedef {{id?: number, method?: string, params?: any, result?: any,
 *   error?: WireError, tabId?: number, sessionId?: string}} Frame
 */

/** The code Chrome's DevTools protocol uses for a generic server error. */
export const SERVER_ERROR = -32000;
/**
 * The error of every command refused while the person has livetab paused;
 * the relay says the same (wire.PausedMessage).
 */
export const PAUSED_MESSAGE = 'livetab: paused by the person in the livetab popup; ask them to resume';
/** The code of an unknown method. */
export const METHOD_NOT_FOUND = -32601;

/**
 * @param {number} id
 * @param {unknown} result
 * @returns {string}
 */
export function replyText(id, result) {
  return '{"id":' + id + ',"result":' + JSON.stringify(result ?? {}) + '}';
}

/**
 * @param {number} id
 * @param {WireError} error
 * @returns {string}
 */
export function errorText(id, error) {
  return '{"id":' + id + ',"error":' + JSON.stringify(error) + '}';
}

/**
 * A CDP event of a tab, or of a flat child session of it.
 * @param {string} method
 * @param {unknown} params
 * @param {number} tabId
 * @param {string | undefined} sessionId
 * @returns {string}
 */
export function eventText(method, params, tabId, sessionId) {
  return JSON.stringify(sessionId === undefined
    ? { method, params: params ?? {}, tabId }
    : { method, params: params ?? {}, tabId, sessionId });
}

/**
 * An ext.* event or a frame without id.
 * @param {string} method
 * @param {unknown} [params]
 * @returns {string}
 */
export function notifyText(method, params) {
  return JSON.stringify(params === undefined ? { method } : { method, params });
}

/**
 * @param {HelloParams} p
 * @returns {string}
 */
export function helloText(p) {
  return notifyText('ext.hello', {
    nonce: p.nonce,
    version: p.version,
    userAgent: p.userAgent,
    extensionId: p.extensionId,
    attached: p.attached,
    fileAccess: p.fileAccess,
    // Said only when true, so the hello of a running livetab is unchanged.
    ...(p.paused ? { paused: true } : {}),
    ...(p.fullVersion ? { fullVersion: p.fullVersion } : {}),
  });
}

/**
 * The extension's answer to the bridge's challenge.
 * @param {string} proof
 * @returns {string}
 */
export function proofText(proof) {
  return notifyText('ext.proof', { proof });
}

/**
 * Turns a rejection of a chrome.* call into a wire error. chrome.debugger
 * reports the browser's own CDP error as JSON text in lastError's message,
 * e.g. {"code":-32000,"message":"Not allowed"}; anything else is the
 * extension API's plain text.
 * @param {unknown} err
 * @returns {WireError}
 */
export function parseError(err) {
  const text = typeof err === 'string' ? err
    : err instanceof Error ? err.message
    : err && typeof err === 'object' && 'message' in err ? String(err.message)
    : String(err);
  const t = text.trim();
  if (t.startsWith('{')) {
    try {
      const v = JSON.parse(t);
      if (v && typeof v.code === 'number' && typeof v.message === 'string') {
        /** @type {WireError} */
        const e = { code: v.code, message: v.message };
        if (v.data !== undefined) e.data = v.data;
        return e;
      }
    } catch {
      // Not JSON after all: keep the text.
    }
  }
  return { code: SERVER_ERROR, message: text };
}
