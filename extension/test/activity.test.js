// @ts-check
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_ACTIONS, readActivity } from '../lib/activity.js';

test('readActivity keeps a report as the relay sends it', () => {
  const p = {
    clients: [{ id: '3', name: 'livetab mcp', tabs: [7], since: 1000 }],
    actions: [
      { client: '3', name: 'livetab mcp', tabId: 7, what: 'browser_click', decision: 'denied', count: 1, at: 2000 },
      { client: '3', name: 'livetab mcp', what: 'Target.createTarget', count: 2, at: 3000 },
    ],
  };
  assert.deepEqual(readActivity(p), p);
});

test('readActivity bounds a report and drops what is not its shape', () => {
  const many = Array.from({ length: MAX_ACTIONS + 10 }, (_, i) => ({ client: '1', name: 'x', what: 'Runtime', count: 1, at: i }));
  const got = readActivity({
    clients: [{ id: 1, name: 'n'.repeat(1000), tabs: [1, 'two', 3], since: 'soon' }],
    actions: many,
  });
  assert.equal(got.actions.length, MAX_ACTIONS);
  assert.equal(got.actions[0].at, 10, 'the newest are kept');
  assert.deepEqual(got.clients, [{ id: '', name: 'n'.repeat(200), tabs: [1, 3], since: 0 }]);
  assert.deepEqual(readActivity(null), { clients: [], actions: [] });
  assert.deepEqual(readActivity({ clients: 'x', actions: {} }), { clients: [], actions: [] });
});
