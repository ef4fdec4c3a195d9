// Unmodified Puppeteer against livetab's CDP endpoint. Run by extcdp's
// TestPuppeteer, which sets LIVETAB_CDP_URL, SITE_URL and UPLOAD_FILE.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import puppeteer from 'puppeteer-core';

const cdpURL = process.env.LIVETAB_CDP_URL;
const site = process.env.SITE_URL;

/** @param {Uint8Array} b */
function pngSize(b) {
  const buf = Buffer.from(b);
  assert.equal(buf.subarray(1, 4).toString(), 'PNG');
  return { w: buf.readUInt32BE(16), h: buf.readUInt32BE(20) };
}

// Each step says where it is, so that a step that times out names its line.
/** @param {number} n */
function step(n) { console.log(`at line ${n} (+${Math.round(performance.now())} ms)`); }

/** @type {import('puppeteer-core').Browser | undefined} */
let browser;
// A failed step leaves the connection open, which would keep node running.
after(() => browser?.disconnect());

test('puppeteer drives tabs through livetab', async () => {
  step(23);
  browser = await puppeteer.connect({ browserWSEndpoint: cdpURL, defaultViewport: { width: 800, height: 600 } });
  step(25);
  assert.match(await browser.version(), /Chrome/);
  step(27);
  const existing = await browser.pages();
  assert.ok(existing.length >= 1, 'the existing tabs are listed');
  step(30);
  assert.equal(await existing[0].evaluate(() => 6 * 7), 42);
  step(32);
  const page = await browser.newPage();

  // A same-document navigation of a new tab's about:blank crashed the whole
  // browser through chrome.debugger; livetab makes the page navigate itself.
  step(37);
  await page.goto('about:blank#x');
  step(39);
  assert.equal(await page.evaluate(() => location.hash), '#x');

  step(42);
  await page.goto(site + '/form');
  step(44);
  await page.goto(site + '/form#frag');
  step(46);
  assert.equal(await page.evaluate(() => location.hash), '#frag');
  step(48);
  await page.click('#btn');
  step(50);
  assert.equal(await page.$eval('#content', (e) => e.textContent), 'clicked');
  step(52);
  await page.type('#name', 'Ada');
  step(54);
  assert.equal(await page.$eval('#name', (e) => /** @type {HTMLInputElement} */ (e).value), 'Ada');
  step(56);
  assert.equal(await page.evaluate(() => 20 + 22), 42);

  step(59);
  const shot = pngSize(await page.screenshot());
  assert.deepEqual(shot, { w: 800, h: 600 });
  step(62);
  const btn = await page.$('#btn');
  step(64);
  const box = await btn.boundingBox();
  step(66);
  const el = pngSize(await btn.screenshot());
  assert.ok(Math.abs(el.w - box.width) <= 2 && Math.abs(el.h - box.height) <= 2, `element screenshot ${el.w}x${el.h}`);

  const logs = [];
  page.on('console', (m) => logs.push(m.text()));
  step(72);
  await page.evaluate(() => console.log('hello from the page'));
  step(74);
  await new Promise((r) => setTimeout(r, 50));
  assert.ok(logs.includes('hello from the page'), `console: ${logs}`);

  step(78);
  await page.goto(site + '/frames');
  const frame = page.frames().find((f) => f.url().includes('localhost'));
  assert.ok(frame, `cross-origin frame among ${page.frames().map((f) => f.url())}`);
  step(82);
  assert.equal(await frame.$eval('#inner', (e) => e.textContent), 'inside the frame');

  step(84);
  // A frame of another site that frames the page's own site again: three
  // renderers, the innermost reached through the middle one's session.
  await page.goto(site + '/nested');
  const back = page.frames().find((f) => f.parentFrame()?.url().includes('/mid'));
  assert.ok(back, `the nested frame among ${page.frames().map((f) => f.url())}`);
  assert.equal(await back.$eval('#inner', (e) => e.textContent), 'inside the frame');

  step(85);
  await page.goto(site + '/form');
  const popupTarget = browser.waitForTarget((t) => t.opener() === page.target());
  step(88);
  await page.click('#pop');
  step(90);
  const popup = await (await popupTarget).page();
  step(92);
  await popup.waitForFunction(() => document.readyState === 'complete');
  step(94);
  assert.equal(await popup.title(), 'form page');
  step(96);
  await popup.close();

  step(99);
  await page.goto(site + '/upload');
  step(101);
  const input = await page.$('#file');
  step(103);
  await input.uploadFile(process.env.UPLOAD_FILE);
  step(105);
  await page.waitForFunction(() => document.getElementById('status')?.textContent?.startsWith('sent '));

  step(108);
  const second = await browser.newPage();
  step(110);
  await Promise.all([second.goto(site + '/inner'), page.goto(site + '/form')]);
  step(112);
  await Promise.all([second.click('#inner'), page.type('#name', 'two')]);
  step(114);
  assert.equal(await page.$eval('#name', (e) => /** @type {HTMLInputElement} */ (e).value), 'two');

  step(117);
  await second.close();

  step(120);
  const other = await browser.createBrowserContext();
  step(122);
  const inOther = await other.newPage();
  step(124);
  await inOther.goto(site + '/form');
  step(126);
  assert.equal(await inOther.title(), 'form page');
  step(128);
  await other.close();

  step(131);
  await page.close();
  step(133);
  await browser.disconnect();
});
