// Unmodified Playwright against livetab's CDP endpoint. Run by
// extcdp's TestPlaywright, which sets LIVETAB_CDP_URL and SITE_URL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const cdpURL = process.env.LIVETAB_CDP_URL;
const site = process.env.SITE_URL;

/** @param {Buffer} b */
function pngSize(b) {
  assert.equal(b.subarray(1, 4).toString(), 'PNG');
  return { w: b.readUInt32BE(16), h: b.readUInt32BE(20) };
}

test('playwright drives tabs through livetab', async () => {
  const browser = await chromium.connectOverCDP(cdpURL);
  const context = browser.contexts()[0];
  // The user's tabs are there already, and usable without being closed.
  const existing = context.pages();
  assert.ok(existing.length >= 1, 'the existing tabs are listed');
  assert.equal(await existing[0].evaluate(() => 6 * 7), 42);
  const page = await context.newPage();

  // A same-document navigation of a new tab's about:blank crashed the whole
  // browser through chrome.debugger; livetab makes the page navigate itself.
  await page.goto('about:blank#x');
  assert.equal(await page.evaluate(() => location.hash), '#x');

  await page.goto(site + '/form');
  await page.goto(site + '/form#frag');
  assert.equal(await page.evaluate(() => location.hash), '#frag');
  await page.click('#btn');
  assert.equal(await page.textContent('#content'), 'clicked');
  await page.fill('#name', 'Ada');
  assert.equal(await page.inputValue('#name'), 'Ada');
  assert.equal(await page.evaluate(() => 20 + 22), 42);

  const shot = pngSize(await page.screenshot());
  assert.ok(shot.w > 100 && shot.h > 100, `viewport screenshot ${shot.w}x${shot.h}`);
  const box = await page.locator('#btn').boundingBox();
  const el = pngSize(await page.locator('#btn').screenshot());
  assert.ok(Math.abs(el.w - box.width) <= 2 && Math.abs(el.h - box.height) <= 2, `element screenshot ${el.w}x${el.h} vs ${box.width}x${box.height}`);

  const logs = [];
  page.on('console', (m) => logs.push(m.text()));
  await page.evaluate(() => console.log('hello from the page'));
  await page.waitForTimeout(50);
  assert.ok(logs.includes('hello from the page'), `console: ${logs}`);

  await page.goto(site + '/frames');
  assert.equal(await page.frameLocator('#cross').locator('#inner').textContent(), 'inside the frame');

  await page.goto(site + '/form');
  // Popups driven in their main world: its context could reach the relay
  // before the frame tree's reply, and Playwright dropped it (evaluate hung
  // in 4 of 9 popups; TestContextEventsWaitForTheFrameTree).
  for (let i = 0; i < 5; i++) {
    const [popup] = await Promise.all([page.waitForEvent('popup'), page.click('#pop')]);
    await popup.waitForLoadState();
    assert.equal(await popup.title(), 'form page');
    const sum = await Promise.race([popup.evaluate(() => 40 + 2), new Promise((r) => setTimeout(() => r('no answer in 10 s'), 10_000))]);
    assert.equal(sum, 42, `popup ${i + 1}'s main world`);
    await popup.close();
  }

  await page.goto(site + '/upload');
  await page.setInputFiles('#file', { name: 'pw.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(300000, 7) });
  await page.waitForFunction(() => document.getElementById('status')?.textContent === 'sent 300000 200');

  const second = await context.newPage();
  await Promise.all([second.goto(site + '/inner'), page.goto(site + '/form')]);
  await Promise.all([second.click('#inner'), page.fill('#name', 'two pages')]);
  assert.equal(await second.textContent('#inner'), 'inside the frame');
  assert.equal(await page.inputValue('#name'), 'two pages');

  await second.close();

  // A new context is a group of tabs in the user's profile; closing it
  // closes them.
  const other = await browser.newContext();
  const inOther = await other.newPage();
  await inOther.goto(site + '/form');
  assert.equal(await inOther.title(), 'form page');
  assert.deepEqual(other.pages(), [inOther]);
  await other.close();

  await page.close();
  await browser.close();
});
