// @ts-check
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CHUNK_HEADER, CHUNK_LAST, CHUNK_SIZE, Reassembler, encodeFrame, splitChunks,
} from '../lib/chunk.js';
import { vectors } from './vectors.js';

const cv = vectors('chunks.json');

test('constants match wire.go', () => {
  assert.equal(CHUNK_SIZE, cv.chunkSize);
  assert.equal(CHUNK_HEADER, cv.chunkHeader);
  assert.equal(CHUNK_LAST, cv.chunkLast);
});

/**
 * @param {Uint8Array} b
 */
const hex = (b) => Buffer.from(b).toString('hex');

for (const v of cv.send) {
  test(`send: ${v.name}`, () => {
    const text = v.repeat.repeat(v.count);
    assert.equal(Buffer.byteLength(text), v.utf8Bytes);
    const out = encodeFrame(text, v.stream);
    if (v.text) {
      assert.equal(out, text);
      return;
    }
    assert.ok(Array.isArray(out));
    assert.deepEqual(
      out.map((c) => ({ header: hex(c.subarray(0, CHUNK_HEADER)), length: c.length - CHUNK_HEADER })),
      v.chunks);
    const r = new Reassembler();
    const got = out.map((c) => r.push(c));
    assert.ok(got.slice(0, -1).every((g) => g === null));
    assert.equal(got.at(-1), text);
  });
}

for (const v of cv.receive) {
  test(`receive: ${v.name}`, () => {
    const r = new Reassembler();
    const texts = [];
    for (const h of v.chunksHex) {
      const b = Buffer.from(h, 'hex');
      // As a WebSocket delivers it: an ArrayBuffer of exactly the message.
      const t = r.push(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
      if (t !== null) texts.push(t);
    }
    assert.deepEqual(texts, v.texts);
    assert.equal(r.pending.size, 0);
  });
}

test('a chunk shorter than its header is an error', () => {
  assert.throws(() => new Reassembler().push(new Uint8Array([1, 0, 0])), /shorter than a chunk header/);
});

test('splitChunks of empty bytes sends one empty last chunk', () => {
  const out = splitChunks(new Uint8Array(0), 4);
  assert.equal(out.length, 1);
  assert.equal(hex(out[0]), '0100000004');
});

test('reset drops unfinished streams', () => {
  const r = new Reassembler();
  assert.equal(r.push(Buffer.from('00000000016162', 'hex')), null);
  r.reset();
  assert.equal(r.push(Buffer.from('010000000163', 'hex')), 'c');
});
