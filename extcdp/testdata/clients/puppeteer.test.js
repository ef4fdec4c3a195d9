// Unmodified Puppeteer against livetab's CDP endpoint. Run by extcdp's
// TestPuppeteer, which sets LIVETAB_CDP_URL, SITE_URL and UPLOAD_FILE.
import { test } from 'node:test';
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

test('puppeteer drives tabs through livetab', async () => {
  const browser = await puppeteer.connect({ browserWSEndpoint: cdpURL, defaultViewport: { width: 800, height: 600 } });
  assert.match(await browser.version(), /Chrome/);
  const existing = await browser.pages();
  assert.ok(existing.length >= 1, 'the existing tabs are listed');
  assert.equal(await existing[0].evaluate(() => 6 * 7), 42);
  const page = await browser.newPage();

  // A same-document navigation of a new tab's about:blank crashed the whole
  // browser through chrome.debugger; livetab makes the page navigate itself.
  await page.goto('about:blank#x');
  assert.equal(await page.evaluate(() => location.hash), '#x');

  await page.goto(site + '/form');
  await page.goto(site + '/form#frag');
  assert.equal(await page.evaluate(() => location.hash), '#frag');
  await page.click('#btn');
  assert.equal(await page.$eval('#content', (e) => e.textContent), 'clicked');
  await page.type('#name', 'Ada');
  assert.equal(await page.$eval('#name', (e) => /** @type {HTMLInputElement} */ (e).value), 'Ada');
  assert.equal(await page.evaluate(() => 20 + 22), 42);

  const shot = pngSize(await page.screenshot());
  assert.deepEqual(shot, { w: 800, h: 600 });
  const btn = await page.$('#btn');
  const box = await btn.boundingBox();
  const el = pngSize(await btn.screenshot());
  assert.ok(Math.abs(el.w - box.width) <= 2 && Math.abs(el.h - box.height) <= 2, `element screenshot ${el.w}x${el.h}`);

  const logs = [];
  page.on('console', (m) => logs.push(m.text()));
  await page.evaluate(() => console.log('hello from the page'));
  await new Promise((r) => setTimeout(r, 50));
  assert.ok(logs.includes('hello from the page'), `console: ${logs}`);

  await page.goto(site + '/frames');
  const frame = page.frames().find((f) => f.url().includes('localhost'));
  assert.ok(frame, `cross-origin frame among ${page.frames().map((f) => f.url())}`);
  assert.equal(await frame.$eval('#inner', (e) => e.textContent), 'inside the frame');

  await page.goto(site + '/form');
  const popupTarget = browser.waitForTarget((t) => t.opener() === page.target());
  await page.click('#pop');
  const popup = await (await popupTarget).page();
  await popup.waitForFunction(() => document.readyState === 'complete');
  assert.equal(await popup.title(), 'form page');
  await popup.close();

  await page.goto(site + '/upload');
  const input = await page.$('#file');
  await input.uploadFile(process.env.UPLOAD_FILE);
  await page.waitForFunction(() => document.getElementById('status')?.textContent?.startsWith('sent '));

  const second = await browser.newPage();
  await Promise.all([second.goto(site + '/inner'), page.goto(site + '/form')]);
  await Promise.all([second.click('#inner'), page.type('#name', 'two')]);
  assert.equal(await page.$eval('#name', (e) => /** @type {HTMLInputElement} */ (e).value), 'two');

  await second.close();

  const other = await browser.createBrowserContext();
  const inOther = await other.newPage();
  await inOther.goto(site + '/form');
  assert.equal(await inOther.title(), 'form page');
  await other.close();

  await page.close();
  await browser.disconnect();
});
