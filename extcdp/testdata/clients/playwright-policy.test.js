// Playwright held to its domains (Livetab.setPolicy) on a page with a
// frame of another site. Run by extcdp's TestPlaywrightFrameOutsideTheDomains.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const cdpURL = process.env.LIVETAB_CDP_URL;
const site = process.env.SITE_URL;

test('a page with a frame outside the domains loads, and the frame is not read', async () => {
  const browser = await chromium.connectOverCDP(cdpURL);
  const cdp = await browser.newBrowserCDPSession();
  await cdp.send(/** @type {any} */ ('Livetab.setPolicy'), /** @type {any} */ ({ domains: ['127.0.0.1'] }));
  const page = await browser.contexts()[0].newPage();
  try {
    // frames.html holds a same-origin frame and one of localhost, another site.
    await page.goto(site + '/frames', { waitUntil: 'load', timeout: 20_000 });
    assert.equal(await page.evaluate(() => 6 * 7), 42);
    const cross = page.frames().find((f) => f.url().includes('localhost'));
    assert.ok(cross, `the frame of the other site is listed: ${page.frames().map((f) => f.url())}`);
    // Refused by the relay; Playwright words it its own way.
    let read = '';
    try {
      read = await Promise.race([cross.evaluate(() => document.body.innerText), new Promise((_, bad) => setTimeout(() => bad(new Error('no answer in 3 s')), 3_000))]);
    } catch {
      // refused
    }
    assert.equal(read, '', 'the frame outside the domains was read');
    await page.reload({ waitUntil: 'load', timeout: 20_000 });
  } finally {
    await page.close();
    await browser.close();
  }
});
