// @ts-check
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LOAD_MS, MAX_LOADS, NewTabLoads, RecentNavigations, RecentPages, originReferrer, referrerTab } from '../lib/loads.js';

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

test('referrerTab names the one tab showing the referrer', () => {
  const pages = [
    { tabId: 1, url: 'http://127.0.0.1:8000/page' },
    { tabId: 2, url: 'http://127.0.0.1:8000/popup?x=1#top' },
    { tabId: 3, url: 'http://localhost:9000/other' },
    { tabId: 4, url: 'http://127.0.0.1:8000/loading' },
    { tabId: 3, url: 'http://localhost:9000/other' }, // a frame of the same page, in the same tab
    { url: 'http://127.0.0.1:8000/nobody' },
  ];
  assert.equal(referrerTab('http://127.0.0.1:8000/popup?x=1', pages), 2);
  assert.equal(referrerTab('http://127.0.0.1:8000/loading', pages), 4);
  assert.equal(referrerTab('http://localhost:9000/', pages), 3);
  assert.equal(referrerTab('http://localhost:9000/other', pages), 3, 'twice in one tab is one tab');
  assert.equal(referrerTab('http://127.0.0.1:8000/', pages), undefined, 'an origin of three tabs');
  assert.equal(referrerTab('http://127.0.0.1:8000/gone', pages), undefined);
  assert.equal(referrerTab('http://127.0.0.1:8000/nobody', pages), undefined, 'no tab');
  assert.equal(referrerTab('', pages), undefined);
  assert.equal(referrerTab('not a url', pages), undefined);
  assert.equal(referrerTab('http://127.0.0.1:8000/page', [...pages, { tabId: 5, url: 'http://127.0.0.1:8000/page' }]), undefined, 'two tabs show it');
});

test('RecentPages: the tabs that showed a page of late, closed ones too', () => {
  const r = new RecentPages(60_000, 4, 8, -1e12);
  r.saw(1, 0, 'http://a.test/page', 0);
  r.saw(1, 0, 'http://a.test/elsewhere?x', 100); // replaceState after the click
  r.saw(2, 0, 'http://b.test/', 0);
  r.saw(2, 5, 'http://a.test/inner', 0); // a frame of tab 2
  assert.deepEqual(r.tabsOf('http://a.test/page', 200), [1]);
  assert.deepEqual(r.tabsOf('http://a.test/inner', 200), [2]);
  assert.deepEqual(r.tabsOf('http://a.test/', 200), [1, 2], 'an origin alone names every tab of the origin');
  r.closed(1, 1000);
  assert.deepEqual(r.tabsOf('http://a.test/page', 30_000), [1], 'a closed tab counts');
  assert.deepEqual(r.tabsOf('http://a.test/page', 61_001), [], 'for a minute');
  // A page left long ago no longer counts; one still shown does.
  r.saw(3, 0, 'http://c.test/old', 0);
  r.saw(3, 0, 'http://c.test/new', 1000);
  assert.deepEqual(r.tabsOf('http://c.test/old', 62_000), []);
  assert.deepEqual(r.tabsOf('http://c.test/new', 500_000), [3]);
  // A frame's page is left when its top navigates.
  r.saw(2, 0, 'http://b.test/next', 70_000);
  assert.deepEqual(r.tabsOf('http://a.test/inner', 80_000), [2]);
  assert.deepEqual(r.tabsOf('http://a.test/inner', 131_000), []);
  assert.deepEqual(r.tabsOf('', 0), []);
});

test('RecentPages: a page that pushes its own out still names its tab, and the tabs stay bounded', () => {
  const r = new RecentPages(60_000, 4, 8, -1e12);
  r.saw(1, 0, 'http://a.test/page', 0);
  for (let i = 0; i < 40; i++) r.saw(1, 0, `http://a.test/spam${i}`, 10);
  assert.ok(r.tabs.get(1)?.tops.size === 4);
  assert.deepEqual(r.tabsOf('http://a.test/page', 20), [1]);
  assert.deepEqual(r.tabsOf('http://b.test/page', 20), []);
  r.saw(2, 0, 'http://c.test/page', 0);
  for (let i = 0; i < 40; i++) r.saw(2, 0, `http://c.test/page#${i}`, 10);
  assert.equal(r.tabs.get(2)?.tops.size, 1, 'a fragment is no other page');
  for (let i = 10; i < 40; i++) r.saw(i, 0, 'http://x.test/', 0);
  assert.ok(r.tabs.size <= 8);
});

test('RecentPages: says nothing until it has watched for keepMs, and keeps frames bounded', () => {
  const r = new RecentPages(60_000, 4, 8, 1000);
  r.saw(1, 0, 'http://a.test/page', 1000);
  assert.equal(r.tabsOf('http://a.test/page', 30_000), undefined, 'too young to know who else showed it');
  assert.deepEqual(r.tabsOf('http://a.test/page', 61_000), [1]);
  for (let f = 1; f < 100; f++) r.saw(1, f, `http://a.test/frame${f}`, 61_000);
  assert.ok((r.tabs.get(1)?.current.size ?? 0) <= 4);
  assert.deepEqual(r.tabsOf('http://a.test/frame1', 61_001), [1], 'a frame pushed out still counts by its origin');
  const long = 'http://a.test/' + 'x'.repeat(5000);
  r.saw(2, 0, long, 61_000);
  assert.deepEqual(r.tabsOf('http://a.test/', 61_001), [1, 2], 'a URL too long to be a referrer stands as its origin');
});

test('RecentPages: past maxTabs the oldest open go, past maxClosed the longest closed', () => {
  const r = new RecentPages(60_000, 4, 3, -1e12, 2);
  r.saw(1, 0, 'http://person.test/', 0);
  r.saw(2, 0, 'http://a.test/', 0);
  r.closed(2, 10);
  r.saw(3, 0, 'http://b.test/', 20);
  r.saw(4, 0, 'http://c.test/', 30);
  assert.deepEqual([...r.tabs.keys()], [1, 3, 4]);
  assert.deepEqual([...r.closedTabs.keys()], [2]);
  r.saw(5, 0, 'http://d.test/', 40);
  assert.deepEqual([...r.tabs.keys()], [3, 4, 5], 'open tabs past maxTabs: the oldest goes');
  r.closed(3, 50);
  r.closed(4, 60);
  assert.deepEqual([...r.closedTabs.keys()], [3, 4], 'closed tabs past maxClosed: the longest closed goes');
  assert.deepEqual(r.tabsOf('http://c.test/', 70), [4]);
  assert.deepEqual(r.tabsOf('http://a.test/', 70), []);
});

test('RecentPages: a crawl of thousands of tabs does not push out the person\'s closed tab', () => {
  // 530 closes within the ten minutes made the extension forget the
  // person's closed tab when it kept 512 tabs whole (red team, 2026-12-01).
  const r = new RecentPages(600_000, 32, 512, -1e12);
  r.saw(1, 0, 'http://person.test/slow', 0);
  r.closed(1, 1000);
  r.saw(2, 0, 'http://hostile.test/page', 1000);
  for (let f = 1; f <= 40; f++) r.saw(2, f, `http://f${f}.hostile.test/frame`, 1000);
  r.closed(2, 2000);
  for (let i = 0; i < 5000; i++) {
    const id = 100 + i, at = 3000 + i * 100;
    r.saw(id, 0, `http://crawl.test/${i}`, at);
    r.saw(id, 1, `http://crawl.test/${i}/frame`, at);
    r.closed(id, at + 50);
  }
  const now = 540_000;
  assert.deepEqual(r.tabsOf('http://person.test/slow', now), [1]);
  assert.deepEqual(r.tabsOf('http://person.test/', now), [1], 'an origin alone names it too');
  assert.deepEqual(r.tabsOf('http://hostile.test/page', now), [2]);
  assert.deepEqual(r.tabsOf('http://f3.hostile.test/frame', now), [2], 'a spilled frame by its origin');
  assert.deepEqual(r.tabsOf('http://crawl.test/4999', now), [5099]);
  assert.deepEqual(r.tabsOf('http://person.test/other', now), [], 'no other page of the origin');
  assert.deepEqual(r.tabsOf('http://person.test/slow', 1000 + 600_001), [], 'ten minutes, no more');
  assert.ok(r.closedEntries <= r.maxClosedEntries);
});

test('RecentPages: the closed tabs stay bounded by their entries, and the record survives a save', () => {
  const T = Date.now(); // restore forgets what closed over keepMs before now
  const r = new RecentPages(600_000, 32, 512, -1e12, 8192, 1000);
  for (let i = 0; i < 200; i++) {
    for (let f = 0; f < 32; f++) r.saw(i, f, `http://o${f}.test/${i}`, T + i);
    r.closed(i, T + i);
  }
  assert.ok(r.closedEntries <= 1000, `${r.closedEntries} entries`);
  assert.ok(r.closedTabs.size < 200 && r.closedTabs.has(199));
  r.saw(500, 0, 'http://open.test/page', T + 300);
  const saved = JSON.parse(JSON.stringify(r.save()));
  assert.ok(JSON.stringify(saved).length < 40 * 1000 + 4096, 'about 40 bytes an entry');
  const back = new RecentPages(600_000, 32, 512, -1e12, 8192, 1000);
  back.saw(501, 0, 'http://newer.test/', T + 400);
  back.closed(501, T + 400);
  back.restore(saved);
  assert.deepEqual(back.tabsOf('http://o3.test/199', T + 500), [199]);
  assert.deepEqual(back.tabsOf('http://open.test/page', T + 500), [500]);
  assert.deepEqual(back.tabsOf('http://newer.test/', T + 500), [501]);
  assert.deepEqual([...back.closedTabs.keys()].at(-1), 501, 'what is newer than the save stays the newest');
  assert.equal(back.closedEntries, [...back.closedTabs.values()].reduce((n, c) => n + 1 + c.pages.size + c.origins.size + c.spilled.size, 0));
  back.restore([[1, [], [], [], [], 0]]); // an older extension's record: nothing
  back.restore('junk');
  assert.deepEqual(back.tabsOf('http://o3.test/199', T + 500), [199]);
});

test('RecentPages: many frames do not push the tab\'s own page out; credentials are no part of a page', () => {
  const r = new RecentPages(60_000, 4, 8, -1e12);
  r.saw(1, 0, 'http://shop.test/page', 0);
  for (let f = 1; f < 100; f++) r.saw(1, f, `http://o${f}.test/frame`, 10);
  r.saw(1, 0, 'http://other.test/', 20);
  for (let f = 1; f < 100; f++) r.saw(1, f, `http://p${f}.test/frame`, 30);
  assert.deepEqual(r.tabsOf('http://shop.test/page', 40), [1]);
  r.saw(2, 0, 'http://x:y@cred.test/page?a', 0);
  assert.deepEqual(r.tabsOf('http://cred.test/page?a', 10), [2]);
});

test('RecentNavigations names the tabs that asked for a URL of late, bounded', () => {
  const n = new RecentNavigations(1000, 3);
  n.add(1, 'http://a.test/file.zip#x', 0);
  n.add(2, 'http://a.test/file.zip', 10);
  assert.deepEqual(n.tabsOf('http://a.test/file.zip', 500).sort(), [1, 2]);
  assert.deepEqual(n.tabsOf('http://a.test/file.zip', 1005), [2], 'past keepMs');
  assert.deepEqual(n.tabsOf('http://a.test/other', 10), []);
  assert.deepEqual(n.tabsOf(undefined, 10), []);
  for (const u of ['http://b.test/', 'http://c.test/', 'http://d.test/']) n.add(3, u, 20);
  assert.deepEqual(n.tabsOf('http://a.test/file.zip', 30), [], 'past max, the oldest URL went');
  n.add(4, 'not a url', 0);
  n.add(4, 'http://e.test/' + 'x'.repeat(5000), 0);
  assert.equal(n.byURL.size, 3);
});

test('originReferrer stands for a download with no referrer by its origin', () => {
  assert.equal(originReferrer('http://127.0.0.1:9/file/x.bin?a=1'), 'http://127.0.0.1:9/');
  assert.equal(originReferrer('blob:http://127.0.0.1:9/0b6f'), 'http://127.0.0.1:9/');
  assert.equal(originReferrer('data:text/plain,hi'), undefined);
  assert.equal(originReferrer(''), undefined);
  // A closed tab that showed a page of the origin is named by it.
  const r = new RecentPages(60_000, 32, 512, -Infinity);
  r.saw(7, 0, 'http://127.0.0.1:9/page', 0);
  r.closed(7, 10);
  assert.deepEqual(r.tabsOf(originReferrer('http://127.0.0.1:9/file/x.bin') ?? '', 20), [7]);
});
