// @ts-check
// The relay's report of who drives what (ext.activity), as the popup shows
// it: internal/wire's ActivityParams.

/**
 * @typedef {{id: string, name: string, tabs: number[], since: number}} ClientActivity
 * @typedef {{client: string, name: string, tabId?: number, what: string, decision?: string, count: number, at: number}} Action
 * @typedef {{clients: ClientActivity[], actions: Action[]}} Activity
 */

/** wire.MaxActions */
export const MAX_ACTIONS = 50;
const MAX_CLIENTS = 64;
const MAX_TABS = 100;
const MAX_TEXT = 200;

/**
 * Keeps what the popup shows of a report: bounded, with the types it
 * expects. The relay is trusted, but its clients chose their names, and the
 * popup only ever puts them in textContent.
 * @param {any} p
 * @returns {Activity}
 */
export function readActivity(p) {
  const str = (/** @type {unknown} */ v) => (typeof v === 'string' ? v.slice(0, MAX_TEXT) : '');
  const num = (/** @type {unknown} */ v) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  const clients = Array.isArray(p?.clients) ? p.clients.slice(0, MAX_CLIENTS) : [];
  const actions = Array.isArray(p?.actions) ? p.actions.slice(-MAX_ACTIONS) : [];
  return {
    clients: clients.map((/** @type {any} */ c) => ({
      id: str(c?.id),
      name: str(c?.name),
      since: num(c?.since),
      tabs: Array.isArray(c?.tabs) ? c.tabs.filter((/** @type {unknown} */ t) => typeof t === 'number').slice(0, MAX_TABS) : [],
    })),
    actions: actions.map((/** @type {any} */ a) => ({
      client: str(a?.client),
      name: str(a?.name),
      what: str(a?.what),
      count: num(a?.count),
      at: num(a?.at),
      ...(typeof a?.tabId === 'number' ? { tabId: a.tabId } : {}),
      ...(typeof a?.decision === 'string' && a.decision ? { decision: str(a.decision) } : {}),
    })),
  };
}
