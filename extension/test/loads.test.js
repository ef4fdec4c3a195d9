// @ts-check
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LOAD_MS, MAX_LOADS, NewTabLoads } from '../lib/loads.js';

test('a download is joined to the new tab that began to load its URL, once', () => {
  const loads = new NewTabLoads();
  loads.add(7, 'http://a.test/f.exe', 3, 1000);
  assert.equal(loads.take(['http://b.test/other'], 1100, 1100), undefined);
  assert.deepEqual(loads.take(['http://a.test/f.exe', 'http://a.test/final'], 1100, 1100), { tabId: 7, url: 'http://a.test/f.exe', at: 1000, source: 3 });
  // A second download of the URL (the person's) is nobody's.
  assert.equal(loads.take(['http://a.test/f.exe'], 1200, 1200), undefined);
});

test('a download begun before the load, or long after, is not the tab\'s', () => {
  const loads = new NewTabLoads();
  loads.add(7, 'http://a.test/f.exe', 3, 1000);
  assert.equal(loads.take(['http://a.test/f.exe'], 500, 1100), undefined, 'begun before the load');
  assert.equal(loads.take(['http://a.test/f.exe'], 0, 1000 + LOAD_MS + 1), undefined, 'too late');
});

test('the final URL joins too, and the records stay bounded', () => {
  const loads = new NewTabLoads();
  for (let i = 0; i < MAX_LOADS + 10; i++) loads.add(i, `http://a.test/${i}`, 1, 1000);
  assert.equal(loads.loads.length, MAX_LOADS);
  assert.equal(loads.take(['http://x.test/', `http://a.test/${MAX_LOADS + 9}`], 0, 1001)?.tabId, MAX_LOADS + 9);
  assert.equal(loads.take(['http://a.test/0'], 0, 1001), undefined, 'the oldest went');
});

test('a load that committed a page turned into no download', () => {
  const loads = new NewTabLoads();
  loads.add(7, 'http://a.test/page', 3, 1000);
  loads.committed(7);
  assert.equal(loads.take(['http://a.test/page'], 1100, 1100), undefined);
});
