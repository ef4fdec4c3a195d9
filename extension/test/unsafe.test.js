// @ts-check
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { commandRefusal, navigateRefusal } from '../lib/unsafe.js';

test('schemes a tab may be navigated to', () => {
  for (const url of ['http://127.0.0.1/x', 'https://example.com/#a', 'file:///tmp/a', 'data:text/html,hi',
    'javascript:void(0)', 'about:blank', 'about:srcdoc', 'blob:http://127.0.0.1/x']) {
    assert.equal(navigateRefusal(url, undefined), '', url);
  }
  for (const url of ['about:version', 'chrome://crash', ' CHROME://inducebrowsercrashforrealz', 'chr\nome://kill',
    'mailto:a@b.c', 'view-source:http://127.0.0.1/', 'devtools://devtools/x', 'not a url', '',
    'about:srcdoc#y', 'about:srcdoc?', ' ABOUT:srcdoc?x#y']) {
    assert.match(navigateRefusal(url, undefined), /livetab refuses/, url);
  }
});

test('same-document navigations of about:blank', () => {
  assert.match(navigateRefusal('about:blank#x', 'about:blank'), /same-document/);
  assert.match(navigateRefusal('about:blank#', 'about:blank'), /same-document/);
  assert.match(navigateRefusal('about:blank#b', 'about:blank#a'), /same-document/);
  assert.match(navigateRefusal('about:blank?q#x', 'about:blank?q'), /same-document/);
  assert.match(navigateRefusal(' about:blank#x\n', 'about:blank'), /same-document/);
  // A new document, or a page where Chrome survives it.
  assert.equal(navigateRefusal('about:blank', 'about:blank#a'), '');
  assert.equal(navigateRefusal('about:blank#x', 'http://127.0.0.1/form'), '');
  assert.equal(navigateRefusal('http://127.0.0.1/form#x', 'http://127.0.0.1/form'), '');
  assert.equal(navigateRefusal('about:blank?q#x', 'about:blank'), '');
});

test('display features that crash the browser', () => {
  for (const params of [{ features: [] }, {}, undefined, { features: null }]) {
    assert.match(commandRefusal('Emulation.setDisplayFeaturesOverride', params), /livetab refuses/, JSON.stringify(params));
  }
  assert.equal(commandRefusal('Emulation.setDisplayFeaturesOverride',
    { features: [{ orientation: 'vertical', offset: 600, maskLength: 20 }] }), '');
  assert.equal(commandRefusal('Runtime.evaluate', { expression: '1' }), '');
});

test('sizes that crash the browser or wedge the tab', () => {
  for (const [method, params] of /** @type {[string, unknown][]} */ ([
    ['Page.captureScreenshot', { clip: { x: 0, y: 0, width: 1920, height: 1080, scale: 20 } }],
    ['Page.captureScreenshot', { clip: { x: 0, y: 0, width: 100000, height: 100000 } }],
    ['Page.captureScreenshot', { clip: { x: 0, y: 0, width: 'x', height: 1 } }],
    ['Emulation.setDeviceMetricsOverride', { width: 800, height: 600, viewport: { x: 0, y: 0, width: 800, height: 600, scale: 1000 } }],
    ['Input.dispatchMouseEvent', { type: 'mouseMoved', x: 1e308, y: 1 }],
    ['Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x: 1, y: -1e308 }] }],
    ['Input.insertText', { text: 'x'.repeat(2 ** 20 + 1) }],
    ['Input.dispatchKeyEvent', { type: 'keyDown', key: 'x'.repeat(2 ** 20 + 1) }],
  ])) {
    assert.match(commandRefusal(method, params), /livetab refuses/, `${method} ${JSON.stringify(params)}`);
  }
  for (const [method, params] of /** @type {[string, unknown][]} */ ([
    ['Page.captureScreenshot', { format: 'png' }],
    ['Page.captureScreenshot', { clip: { x: 0, y: 0, width: 1280, height: 20000, scale: 2 } }],
    ['Emulation.setDeviceMetricsOverride', { width: 800, height: 600, viewport: { x: 0, y: 0, width: 800, height: 600, scale: 2 } }],
    ['Input.dispatchMouseEvent', { type: 'mouseMoved', x: 10, y: 10 }],
    ['Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] }],
    ['Input.insertText', { text: 'x'.repeat(1000) }],
  ])) {
    assert.equal(commandRefusal(method, params), '', `${method} ${JSON.stringify(params)}`);
  }
});
