// The APIs a Puppeteer user reaches for, through livetab's CDP endpoint:
// each works as on Chrome, or fails at once with an error saying what to
// do. Run by extcdp's TestClientsCompat, which sets LIVETAB_CDP_URL,
// SITE_URL and UPLOAD_FILE.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import { NodeWebSocketTransport } from 'puppeteer-core/internal/node/NodeWebSocketTransport.js';

const cdpURL = process.env.LIVETAB_CDP_URL;
const site = process.env.SITE_URL;
// Each check is bounded: a hang fails it instead of the whole run.
const opts = { timeout: 20_000 };

/** @type {import('puppeteer-core').Browser} */
let browser;
/** @type {string[]} */
let personsPages = [];

before(async () => {
  browser = await puppeteer.connect({ browserWSEndpoint: cdpURL, defaultViewport: { width: 800, height: 600 }, protocolTimeout: 15_000 });
  personsPages = (await browser.pages()).map((p) => p.url());
});
after(async () => { await browser?.disconnect().catch(() => {}); });

/** @param {(page: import('puppeteer-core').Page) => Promise<void>} fn */
async function withPage(fn) {
  const page = await browser.newPage();
  page.setDefaultTimeout(10_000);
  try {
    await fn(page);
  } finally {
    await page.close().catch(() => {});
  }
}

test('request interception: respond, abort, continue with headers', opts, () => withPage(async (page) => {
  await page.setRequestInterception(true);
  page.on('request', (req) => {
    if (req.url().endsWith('/mocked')) return req.respond({ status: 200, contentType: 'text/plain', body: 'from interception' });
    if (req.url().endsWith('/blocked')) return req.abort();
    if (req.url().endsWith('/echo')) return req.continue({ headers: { ...req.headers(), 'x-livetab': 'added' } });
    return req.continue();
  });
  await page.goto(site + '/form');
  assert.equal(await page.evaluate(() => fetch('/mocked').then((r) => r.text())), 'from interception');
  assert.equal(await page.evaluate(() => fetch('/blocked').then(() => 'loaded', () => 'failed')), 'failed');
  assert.equal(await page.evaluate(() => fetch('/echo').then((r) => r.text())), 'GET /echo x-livetab=added');
}));

test('dialogs: accept and dismiss', opts, () => withPage(async (page) => {
  await page.goto(site + '/compat');
  page.once('dialog', (d) => d.accept());
  await page.click('#confirm');
  assert.equal(await page.$eval('#out', (e) => e.textContent), 'true');
  page.once('dialog', (d) => d.dismiss());
  await page.click('#confirm');
  assert.equal(await page.$eval('#out', (e) => e.textContent), 'false');
  page.once('dialog', (d) => d.accept('Ada'));
  await page.click('#prompt');
  assert.equal(await page.$eval('#out', (e) => e.textContent), 'Ada');
}));

test('waitForFileChooser and accept a path', opts, () => withPage(async (page) => {
  await page.goto(site + '/compat');
  const [chooser] = await Promise.all([page.waitForFileChooser(), page.click('#file')]);
  await chooser.accept([process.env.UPLOAD_FILE]);
  await page.waitForFunction(() => document.getElementById('files')?.textContent !== '');
  assert.equal(await page.$eval('#files', (e) => e.textContent), `${path.basename(process.env.UPLOAD_FILE)}:${fs.statSync(process.env.UPLOAD_FILE).size}`);
}));

test('page cookies work; browser-wide cookies and permissions are refused saying what to do', opts, () => withPage(async (page) => {
  await page.goto(site + '/form');
  await page.setCookie({ name: 'pptrcompat', value: 'v1', url: site });
  assert.ok((await page.cookies()).some((c) => c.name === 'pptrcompat'));
  await page.deleteCookie({ name: 'pptrcompat', url: site });
  assert.ok(!(await page.cookies()).some((c) => c.name === 'pptrcompat'));
  // The context's cookies are those of the pages the client opened.
  await browser.setCookie({ name: 'pptrctx', value: 'v2', domain: '127.0.0.1', path: '/' });
  assert.ok((await browser.cookies()).some((c) => c.name === 'pptrctx' && c.value === 'v2'));
  assert.equal(await page.evaluate(() => document.cookie), 'pptrctx=v2');
  await browser.deleteCookie({ name: 'pptrctx', domain: '127.0.0.1', path: '/' }).catch(() => page.deleteCookie({ name: 'pptrctx', url: site }));
  await page.deleteCookie({ name: 'pptrctx', url: site });
  await assert.rejects(browser.defaultBrowserContext().overridePermissions(site, ['geolocation']), /livetab refuses Browser.grantPermissions/);
  await page.setGeolocation({ latitude: 48.85, longitude: 2.35 });
}));

test('setViewport, emulateMediaFeatures, emulateMediaType', opts, () => withPage(async (page) => {
  await page.goto(site + '/form');
  await page.setViewport({ width: 640, height: 480 });
  assert.deepEqual(await page.evaluate(() => [innerWidth, innerHeight]), [640, 480]);
  // Each is one Emulation.setEmulatedMedia, which on Chrome too sets the
  // type and the features together: the second undoes the first.
  await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
  assert.equal(await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches), true);
  await page.emulateMediaType('print');
  assert.equal(await page.evaluate(() => matchMedia('print').matches), true);
}));

test('keyboard, mouse.wheel', opts, () => withPage(async (page) => {
  await page.goto(site + '/compat');
  await page.click('#name');
  await page.keyboard.type('Ab');
  await page.keyboard.press('Enter');
  assert.equal(await page.$eval('#name', (e) => /** @type {HTMLInputElement} */ (e).value), 'Ab');
  assert.equal(await page.$eval('#keys', (e) => e.textContent), 'A b Enter ');
  await page.mouse.move(100, 100);
  await page.mouse.wheel({ deltaY: 300 });
  await page.waitForFunction(() => scrollY > 0);
}));

test('evaluateOnNewDocument, exposeFunction', opts, () => withPage(async (page) => {
  await page.evaluateOnNewDocument(() => { window.initRan = 'yes'; });
  await page.exposeFunction('addUp', (a, b) => a + b);
  await page.goto(site + '/form');
  assert.equal(await page.evaluate(() => window.initRan), 'yes');
  assert.equal(await page.evaluate(() => window.addUp(40, 2)), 42);
}));

test('waitForNavigation, goBack, goForward, reload', opts, () => withPage(async (page) => {
  await page.goto(site + '/form');
  await Promise.all([page.waitForNavigation(), page.evaluate(() => { location.href = '/compat'; })]);
  await page.goBack();
  assert.equal(page.url(), site + '/form');
  await page.goForward();
  assert.equal(page.url(), site + '/compat');
  await page.evaluate(() => { window.marker = 1; });
  await page.reload();
  assert.equal(await page.evaluate(() => window.marker), undefined);
}));

test('pdf, accessibility, fullPage screenshot', opts, () => withPage(async (page) => {
  await page.goto(site + '/form');
  const pdf = Buffer.from(await page.pdf());
  assert.equal(pdf.subarray(0, 4).toString(), '%PDF');
  const tree = await page.accessibility.snapshot();
  assert.ok(JSON.stringify(tree).includes('Click'));
  const shot = Buffer.from(await page.screenshot({ fullPage: true }));
  assert.ok(shot.readUInt32BE(20) > 3000, `full page height ${shot.readUInt32BE(20)}`);
}));

test('a dedicated worker', opts, () => withPage(async (page) => {
  await page.goto(site + '/form');
  const created = new Promise((ok) => page.once('workercreated', ok));
  await page.evaluate(() => {
    window.w = new Worker(URL.createObjectURL(new Blob(['self.answer = 42;'], { type: 'text/javascript' })));
  });
  const worker = /** @type {import('puppeteer-core').WebWorker} */ (await created);
  // The worker's target can be announced before its script ran (once on
  // a loaded CI run): ask until it answers, within the test's bound.
  let answer;
  for (let i = 0; i < 100 && answer !== 42; i++) {
    answer = await worker.evaluate(() => self.answer);
    if (answer !== 42) await new Promise((ok) => setTimeout(ok, 50));
  }
  assert.equal(answer, 42);
  assert.equal(page.workers().length, 1);
}));

test('createCDPSession Runtime.evaluate', opts, () => withPage(async (page) => {
  const early = await page.createCDPSession();
  await early.detach();
  await page.goto(site + '/form');
  const cdp = await page.target().createCDPSession();
  const r = await cdp.send('Runtime.evaluate', { expression: 'document.title', returnByValue: true });
  assert.equal(r.result.value, 'form page');
  await cdp.detach();
  assert.equal(await page.title(), 'form page');
}));

test('browser.target() and a session of its own on the browser', opts, async () => {
  const target = browser.target();
  assert.equal(target.type(), 'browser');
  const cdp = await target.createCDPSession();
  const v = await cdp.send('Browser.getVersion');
  assert.match(v.product, /Chrom/);
  const { targetInfos } = await cdp.send('Target.getTargets');
  assert.ok(targetInfos.some((t) => t.type === 'page'), 'the browser session lists pages');
  await cdp.detach();
  assert.equal((await browser.pages()).length > 0, true, 'the connection still works');
});

test('tracing', opts, () => withPage(async (page) => {
  await page.tracing.start({ screenshots: true });
  await page.goto(site + '/form');
  const trace = await page.tracing.stop();
  assert.ok(trace && trace.length > 1000, 'a trace came back');
  // The DevTools trace engine finds the page by this event; chrome.debugger
  // traces lack it, and the relay adds it.
  const events = JSON.parse(Buffer.from(trace).toString()).traceEvents;
  const started = events.filter((e) => e.name === 'TracingStartedInBrowser');
  assert.equal(started.length, 1, 'one TracingStartedInBrowser');
  assert.equal(started[0].args.data.frames[0].frame, page.mainFrame()._id, 'it names the page\'s main frame');
}));

test('page.resize sizes the page, leaving the person\'s window as it was', opts, () => withPage(async (page) => {
  await page.goto(site + '/form');
  const before = await page.windowId();
  await page.resize({ contentWidth: 640, contentHeight: 480 });
  assert.deepEqual(await page.evaluate(() => [innerWidth, innerHeight]), [640, 480]);
  assert.equal(await page.windowId(), before);
}));

test('response events and response.text', opts, () => withPage(async (page) => {
  const finished = [];
  page.on('requestfinished', (r) => finished.push(r.url()));
  await page.goto(site + '/form');
  const [resp] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/echo')), page.evaluate(() => fetch('/echo'))]);
  assert.equal(await resp.text(), 'GET /echo x-livetab=');
  const nav = await page.goto(site + '/compat');
  assert.match(await nav.text(), /compat page/);
  assert.ok(finished.some((u) => u.endsWith('/echo')), `finished: ${finished}`);
}));

test('downloads into a context\'s downloadPath', opts, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pptrdl-'));
  const ctx = await browser.createBrowserContext({ downloadBehavior: { policy: 'allow', downloadPath: dir } });
  try {
    const page = await ctx.newPage();
    await page.goto(site + '/compat');
    await page.click('#dl');
    const deadline = Date.now() + 10_000;
    while (!fs.existsSync(path.join(dir, 'report.bin')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.ok(fs.statSync(path.join(dir, 'report.bin')).size > 1000, `downloaded into ${dir}: ${fs.readdirSync(dir)}`);
  } finally {
    await ctx.close();
  }
});

test('setUserAgent, emulateTimezone, setOfflineMode, setExtraHTTPHeaders, metrics', opts, () => withPage(async (page) => {
  await page.setUserAgent('livetab-pptr-agent');
  await page.emulateTimezone('Asia/Tokyo');
  await page.setExtraHTTPHeaders({ 'X-Livetab': 'pptr-header' });
  await page.goto(site + '/form');
  assert.deepEqual(await page.evaluate(() => [navigator.userAgent, Intl.DateTimeFormat().resolvedOptions().timeZone]), ['livetab-pptr-agent', 'Asia/Tokyo']);
  assert.equal(await page.evaluate(() => fetch('/echo').then((r) => r.text())), 'GET /echo x-livetab=pptr-header');
  await page.setOfflineMode(true);
  assert.equal(await page.evaluate(() => fetch('/echo').then(() => 'online', () => 'offline')), 'offline');
  await page.setOfflineMode(false);
  const m = await page.metrics();
  assert.ok(m.Nodes > 0, JSON.stringify(m));
  await assert.rejects(page.coverage.startJSCoverage(), /Chrome does not give extensions .*Profiler/);
}));

test('acceptInsecureCerts is refused saying why', opts, async () => {
  // A failed connect leaves Puppeteer's socket open: the test closes it.
  const transport = await NodeWebSocketTransport.create(cdpURL);
  try {
    await assert.rejects(puppeteer.connect({ transport, acceptInsecureCerts: true }), /livetab cannot ignore certificate errors.*acceptInsecureCerts/);
  } finally {
    transport.close();
  }
});

test('the person\'s tab: evaluate works, a function that never returns is ended', opts, async () => {
  const theirs = (await browser.pages()).find((p) => p.url().endsWith('/compat?person'));
  assert.ok(theirs, 'the person\'s tab is listed');
  assert.equal(await theirs.evaluate((a, b) => a + b, 2, 3), 5);
  assert.equal(await theirs.$eval('body', (e, s) => e.tagName + s, '!'), 'BODY!');
  // TestClientsCompat sets the bound to 3 s.
  await assert.rejects(theirs.evaluate(() => { for (;;) {} }), /livetab: Runtime\.callFunctionOn ran its script .*Target\.createTarget/);
  assert.equal(await theirs.evaluate(() => document.title), 'compat page');
});

test('browser.close leaves the person\'s tabs open', opts, async () => {
  const mine = await browser.newPage();
  await mine.goto(site + '/form');
  await browser.close();
  const again = await puppeteer.connect({ browserWSEndpoint: cdpURL });
  try {
    const urls = (await again.pages()).map((p) => p.url());
    // A blank tab reads as about:blank or as no URL, by when it is
    // listed: the Go side checks every tab by its id.
    assert.ok(personsPages.some((u) => u.endsWith('/compat?person')), `the person's tab was listed: ${personsPages}`);
    for (const u of personsPages.filter((u) => u.startsWith('http'))) {
      assert.ok(urls.includes(u), `the person's tab ${u} survives: ${urls}`);
    }
  } finally {
    await again.disconnect();
  }
});
