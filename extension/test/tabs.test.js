// @ts-check
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { attachedTabs, mergeTabs, tabInfo, targetsByTab } from '../lib/tabs.js';

const targets = [
  { id: 'T1', tabId: 1, type: 'page', attached: true },
  { id: 'T2', tabId: 2, type: 'page', attached: false },
  { id: 'W', type: 'worker', attached: false },
  { id: 'E', type: 'background_page', attached: true },
];

test('targetsByTab keeps page targets with a tab', () => {
  assert.deepEqual([...targetsByTab(targets).keys()], [1, 2]);
});

test('attachedTabs lists tabs with any debugger', () => {
  assert.deepEqual(attachedTabs(targets), [1]);
});

test('mergeTabs lists every tab, also those without a target', () => {
  const tabs = [
    { id: 1, windowId: 1, url: 'http://a/', title: 'A', active: true },
    { id: 2, windowId: 1, url: 'chrome://newtab/', title: 'New Tab', active: false, openerTabId: 1 },
    { id: 3, windowId: 2, pendingUrl: 'http://c/', active: true },
    { windowId: 2, active: false }, // a devtools window's tab has no id
  ];
  assert.deepEqual(mergeTabs(tabs, targets, new Set([1])), [
    { tabId: 1, targetId: 'T1', windowId: 1, url: 'http://a/', title: 'A', active: true, attached: true },
    {
      tabId: 2, targetId: 'T2', windowId: 1, openerTabId: 1, url: 'chrome://newtab/', title: 'New Tab',
      active: false, attached: false,
    },
    { tabId: 3, targetId: '', windowId: 2, url: 'http://c/', title: '', active: true, attached: false },
  ]);
});

test('tabInfo without our set falls back to the target flag', () => {
  assert.equal(tabInfo({ id: 1, windowId: 1, active: true }, targets[0]).attached, true);
  assert.equal(tabInfo({ id: 1, windowId: 1, active: true }, targets[0], false).attached, false);
});
