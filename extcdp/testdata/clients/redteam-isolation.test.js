// Red team: two Playwright clients and a Puppeteer client on one endpoint.
// Nothing of A's (tabs, events, downloads, dialogs, policy) reaches B or P,
// and B's and P's browser-wide closes leave A's tabs and the person's alone.
// Run by TestRedTeamClientsIsolatedThroughHighLevelAPIs, which sets LIVETAB_CDP_URL, SITE_URL,
// CROSS_URL and PERSON_URL.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';

const cdpURL = process.env.LIVETAB_CDP_URL;
const site = process.env.SITE_URL;
const cross = process.env.CROSS_URL;
const personURL = process.env.PERSON_URL;
const opts = { timeout: 60_000 };

const log = (...a) => console.log('[isolation]', ...a);
const closers = [];
after(async () => { for (const c of closers) await c().catch(() => {}); });

test('A\'s tabs, events, downloads, dialogs and policy stay A\'s', opts, async () => {
  const A = await chromium.connectOverCDP(cdpURL);
  closers.push(() => A.close());
  const B = await chromium.connectOverCDP(cdpURL);
  closers.push(() => B.close());
  const P = await puppeteer.connect({ browserWSEndpoint: cdpURL, defaultViewport: null, protocolTimeout: 20_000 });
  closers.push(() => P.disconnect());

  // What B and P hear.
  const heard = [];
  const watchB = (ctx) => {
    ctx.on('page', (p) => heard.push('B page ' + p.url()));
    ctx.on('dialog', (d) => heard.push('B dialog ' + d.message()));
    ctx.on('request', (r) => { if (r.url().includes('secret')) heard.push('B request ' + r.url()); });
    ctx.on('console', (m) => heard.push('B console ' + m.text()));
  };
  for (const c of B.contexts()) watchB(c);
  for (const p of B.contexts()[0].pages()) {
    p.on('download', (d) => heard.push('B download ' + d.url()));
    p.on('dialog', (d) => heard.push('B page dialog ' + d.message()));
    p.on('console', (m) => heard.push('B page console ' + m.text()));
  }
  P.on('targetcreated', (t) => heard.push('P targetcreated ' + t.url() + ' ' + t.type()));
  P.on('targetchanged', (t) => { if (t.url().includes('secret')) heard.push('P targetchanged ' + t.url()); });

  // B sets downloads for its default context: where should A's downloads go?
  const bSession = await B.newBrowserCDPSession();
  const bDir = fs.mkdtempSync(path.join(os.tmpdir(), 'livetab-isolation-b-'));
  await bSession.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: bDir, eventsEnabled: true });
  bSession.on('Browser.downloadWillBegin', (e) => heard.push('B downloadWillBegin ' + e.url));
  bSession.on('Browser.downloadProgress', (e) => heard.push('B downloadProgress ' + e.guid + ' ' + e.state));
  await bSession.send('Target.setDiscoverTargets', { discover: true });
  bSession.on('Target.targetCreated', (e) => { if (e.targetInfo.type === 'page') heard.push('B raw targetCreated ' + e.targetInfo.targetId + ' ' + e.targetInfo.url); });
  bSession.on('Target.targetInfoChanged', (e) => { if (e.targetInfo.url.includes('secret')) heard.push('B raw targetInfoChanged ' + e.targetInfo.url); });

  // A: a page in a new context and one in the default context.
  const ctxA = await A.newContext();
  const pA = await ctxA.newPage();
  await pA.goto(site + '/compat?secretA1');
  const pA0 = await A.contexts()[0].newPage();
  await pA0.goto(site + '/compat?secretA0');
  const aSession = await A.newBrowserCDPSession();
  let step = 'start';
  pA.on('close', () => log('pA closed at step', step));
  pA0.on('close', () => log('pA0 closed at step', step));
  const aIds = (await aSession.send('Target.getTargets')).targetInfos.filter((t) => t.url.includes('secret')).map((t) => t.targetId);
  log('A target ids', aIds);

  // A's console, dialog and download.
  await pA0.evaluate(() => console.log('secret-console-of-A'));
  pA0.once('dialog', (d) => d.accept());
  await pA0.evaluate(() => { confirm('secret-dialog-of-A'); });
  const [dl] = await Promise.all([pA0.waitForEvent('download'), pA0.click('#dl')]);
  const dlPath = await dl.path();
  log('A download at', dlPath);
  const [dl2] = await Promise.all([pA.waitForEvent('download'), pA.click('#dl')]);
  await dl2.path();

  step = 'D policy';
  // D's policy: only the cross origin (localhost).
  const D = await chromium.connectOverCDP(cdpURL);
  closers.push(() => D.close());
  const dSession = await D.newBrowserCDPSession();
  await dSession.send('Livetab.setPolicy', { domains: ['localhost'] });
  const pD = await D.contexts()[0].newPage();
  await assert.rejects(pD.goto(site + '/form?secretD2blocked'), /./, 'D\'s policy keeps D off 127.0.0.1');
  await pD.goto(cross + '/form?secretD2').catch((e) => log('D goto cross', String(e).split('\n')[0]));

  step = 'B not bound';
  // B is not bound by A's policy.
  const pB = await B.contexts()[0].newPage();
  await pB.goto(site + '/form?B');
  assert.equal(await pB.evaluate(() => location.search), '?B');

  await new Promise((r) => setTimeout(r, 1000));

  // What B lists.
  const bURLs = B.contexts().flatMap((c) => c.pages()).map((p) => p.url());
  log('B lists', bURLs, B.contexts().length, 'contexts');
  for (const u of bURLs) assert.ok(!u.includes('secret'), `B lists A's page ${u}`);
  const bTargets = (await bSession.send('Target.getTargets')).targetInfos;
  for (const t of bTargets) assert.ok(!t.url.includes('secret') && !aIds.includes(t.targetId), `B's Target.getTargets has A's ${t.url}`);
  for (const id of aIds) {
    await assert.rejects(bSession.send('Target.getTargetInfo', { targetId: id }), /No target/);
    await assert.rejects(bSession.send('Target.attachToTarget', { targetId: id, flatten: true }), /No target/);
    await assert.rejects(bSession.send('Target.activateTarget', { targetId: id }), /No target/);
  }
  const bContexts = (await bSession.send('Target.getBrowserContexts')).browserContextIds;
  log('B browser contexts', bContexts);
  // What P lists.
  const pURLs = (await P.pages()).map((p) => p.url());
  const ptURLs = P.targets().map((t) => t.url());
  log('P pages', pURLs, 'P targets', ptURLs.length);
  for (const u of [...pURLs, ...ptURLs]) assert.ok(!u.includes('secret'), `P lists A's ${u}`);
  log('P browser contexts', P.browserContexts().length);

  // Every heard thing must be B's or P's own.
  const leaked = heard.filter((h) => h.includes('secret') || aIds.some((id) => h.includes(id)) || h.includes('download'));
  log('heard', heard);
  assert.deepEqual(leaked, [], 'B or P heard A');
  assert.deepEqual(fs.readdirSync(bDir), [], 'A\'s download went into B\'s folder');

  step = 'B/P close';
  // B closes its default context (Browser.close underneath); P closes its browser.
  await B.contexts()[0].close().catch((e) => log('B default context close', String(e).split('\n')[0]));
  await P.close().catch((e) => log('P close', String(e).split('\n')[0]));
  await new Promise((r) => setTimeout(r, 1000));

  // A's pages are still open and work.
  assert.equal(pA.isClosed(), false, 'A\'s page in a new context closed');
  assert.equal(pA0.isClosed(), false, 'A\'s page in the default context closed');
  assert.equal(await pA.evaluate(() => location.search), '?secretA1');
  assert.equal(await pA0.evaluate(() => location.search), '?secretA0');
  const aNow = (await aSession.send('Target.getTargets')).targetInfos.map((t) => t.targetId);
  for (const id of aIds) assert.ok(aNow.includes(id), `A's target ${id} gone after B and P closed`);

  // The person's tab is listed to a fresh client with its URL.
  const C = await chromium.connectOverCDP(cdpURL);
  try {
    const cURLs = C.contexts()[0].pages().map((p) => p.url());
    assert.ok(cURLs.includes(personURL), `the person's tab ${personURL} is gone: ${cURLs}`);
  } finally {
    await C.close();
  }
});
