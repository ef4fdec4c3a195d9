// @ts-check
// Merging chrome.tabs with chrome.debugger targets into wire TabInfo.

/**
 * @typedef {import('./frame.js').TabInfo} TabInfo
 * @typedef {{id: string, tabId?: number, attached: boolean, type?: string}} Target
 * @typedef {{id?: number, windowId: number, openerTabId?: number, url?: string,
 *   pendingUrl?: string, title?: string, active: boolean}} Tab
 */

/**
 * Indexes the page targets by their tab.
 * @param {Target[]} targets
 * @returns {Map<number, Target>}
 */
export function targetsByTab(targets) {
  /** @type {Map<number, Target>} */
  const m = new Map();
  for (const t of targets) {
    if (t.tabId !== undefined && (t.type === undefined || t.type === 'page')) m.set(t.tabId, t);
  }
  return m;
}

/**
 * Builds the TabInfo of a tab. A tab without a target yet (nothing
 * committed) gets an empty targetId. A tab whose first navigation is still
 * pending reports the URL it is going to.
 * @param {Tab} tab
 * @param {Target | undefined} target
 * @param {boolean} [attached] whether this extension holds the debugger;
 *   defaults to the target's flag, which is also true when another client
 *   (DevTools) is attached
 * @param {{shared?: boolean, created?: boolean, popup?: boolean}} [marks]
 *   whether the person shared the tab, whether livetab opened it, and
 *   whether a page of livetab's tabs opened it
 * @returns {TabInfo}
 */
export function tabInfo(tab, target, attached, marks) {
  // Keys in wire.TabInfo's order, openerTabId only when there is one.
  return {
    tabId: tab.id ?? -1,
    targetId: target ? target.id : '',
    windowId: tab.windowId,
    ...(tab.openerTabId === undefined ? {} : { openerTabId: tab.openerTabId }),
    url: tab.url || tab.pendingUrl || '',
    title: tab.title ?? '',
    active: tab.active,
    attached: attached ?? (target ? target.attached : false),
    ...(marks?.shared ? { shared: true } : {}),
    ...(marks?.created ? { created: true } : {}),
    ...(marks?.popup ? { popup: true } : {}),
  };
}

/**
 * Lists every tab with its target.
 * @param {Tab[]} tabs
 * @param {Target[]} targets
 * @param {Set<number>} [ours] tabs this extension holds, when known
 * @param {Set<number>} [shared] tabs the person shared
 * @param {Set<number>} [created] tabs livetab opened
 * @param {Set<number>} [popups] tabs pages of livetab's tabs opened
 * @returns {TabInfo[]}
 */
export function mergeTabs(tabs, targets, ours, shared, created, popups) {
  const byTab = targetsByTab(targets);
  const out = [];
  for (const tab of tabs) {
    if (tab.id === undefined) continue;
    out.push(tabInfo(tab, byTab.get(tab.id), ours ? ours.has(tab.id) : undefined,
      { shared: shared?.has(tab.id), created: created?.has(tab.id), popup: popups?.has(tab.id) }));
  }
  return out;
}

/**
 * Tabs some debugger client is attached to. After a service-worker restart
 * the extension's own attachments survive and show up here.
 * @param {Target[]} targets
 * @returns {number[]}
 */
export function attachedTabs(targets) {
  const out = [];
  for (const t of targets) if (t.attached && t.tabId !== undefined) out.push(t.tabId);
  return out;
}
