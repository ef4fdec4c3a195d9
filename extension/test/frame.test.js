// @ts-check
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  errorText, eventText, helloText, notifyText, parseError, proofText, replyText,
} from '../lib/frame.js';
import { tabInfo } from '../lib/tabs.js';
import { vectors } from './vectors.js';

/** @type {Array<{name: string, text: string, build?: any}>} */
const frames = vectors('frames.json');

test('every frame vector is JSON', () => {
  for (const v of frames) assert.doesNotThrow(() => JSON.parse(v.text), v.name);
});

for (const v of frames.filter((f) => f.build)) {
  test(`builds ${v.name}`, () => {
    const b = v.build;
    /** @type {string} */
    let got;
    switch (b.fn) {
      case 'reply': got = replyText(b.id, b.result); break;
      case 'error': got = errorText(b.id, b.error); break;
      case 'event': got = eventText(b.method, b.params, b.tabId, b.sessionId); break;
      case 'hello': got = helloText(b.params); break;
      case 'notify': got = notifyText(b.method, b.params); break;
      case 'proof': got = proofText(b.proof); break;
      case 'tabInfo': got = notifyText(b.method, tabInfo(b.tab, b.target ?? undefined)); break;
      default: throw new Error(`unknown builder ${b.fn}`);
    }
    assert.equal(got, v.text);
  });
}

/** @type {Array<{name: string, input: string, code: number, message: string, data?: unknown}>} */
const errors = vectors('errors.json');

for (const v of errors) {
  test(`parseError: ${v.name}`, () => {
    const want = v.data === undefined
      ? { code: v.code, message: v.message }
      : { code: v.code, message: v.message, data: v.data };
    assert.deepEqual(parseError(new Error(v.input)), want);
    assert.deepEqual(parseError(v.input), want);
  });
}

test('parseError of odd values', () => {
  assert.deepEqual(parseError({ message: 'x' }), { code: -32000, message: 'x' });
  assert.deepEqual(parseError(undefined), { code: -32000, message: 'undefined' });
});

test('event text keeps a lone surrogate escaped, so it stays valid UTF-8', () => {
  const t = eventText('Runtime.consoleAPICalled', { s: 'a\ud800b' }, 1, undefined);
  assert.equal(t, '{"method":"Runtime.consoleAPICalled","params":{"s":"a\\ud800b"},"tabId":1}');
});
