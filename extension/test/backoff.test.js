// @ts-check
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Backoff, REFUSED_DELAY, describeClose, isRefusal } from '../lib/backoff.js';

test('backoff doubles from 100 ms up to 5 s and resets', () => {
  const b = new Backoff();
  const got = Array.from({ length: 9 }, () => b.next());
  assert.deepEqual(got, [100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000]);
  b.reset();
  assert.equal(b.next(), 100);
});

test('refusals wait long', () => {
  assert.ok(isRefusal(4001));
  assert.ok(isRefusal(4009));
  assert.ok(isRefusal(4002));
  assert.ok(!isRefusal(4000));
  assert.ok(!isRefusal(1006));
  assert.ok(REFUSED_DELAY >= 30_000);
});

test('close descriptions say what to do', () => {
  assert.match(describeClose(4001, ''), /token/);
  assert.match(describeClose(4009, 'close the other browser'), /already connected.*close the other browser/);
  assert.match(describeClose(1006, ''), /code 1006/);
});
