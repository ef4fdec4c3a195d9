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
    'mailto:a@b.c', 'view-source:http://127.0.0.1/', 'devtools://devtools/x', 'not a url', '']) {
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
