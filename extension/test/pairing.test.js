// @ts-check
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  BRIDGE_LABEL, EXTENSION_LABEL, NONCE_BYTES, answerChallenge, newNonce, proof, urlPort, validNonce,
} from '../lib/pairing.js';
import { vectors } from './vectors.js';

/** @type {{bridgeLabel: string, extensionLabel: string, nonceBytes: number,
 *   proofs: Array<{name: string, token: string, url: string, port: number, extensionNonce: string, bridgeNonce: string,
 *     bridgeProof: string, extensionProof: string}>,
 *   nonces: {valid: string[], invalid: string[]}}} */
const v = vectors('pairing.json');
const URL = 'ws://127.0.0.1:9339/extension';

test('constants match the Go side', () => {
  assert.equal(BRIDGE_LABEL, v.bridgeLabel);
  assert.equal(EXTENSION_LABEL, v.extensionLabel);
  assert.equal(NONCE_BYTES, v.nonceBytes);
});

for (const p of v.proofs) {
  test(`proofs: ${p.name}`, async () => {
    assert.equal(urlPort(p.url), p.port);
    assert.equal(await proof(p.token, BRIDGE_LABEL, p.port, p.extensionNonce, p.bridgeNonce), p.bridgeProof);
    assert.equal(await proof(p.token, EXTENSION_LABEL, p.port, p.extensionNonce, p.bridgeNonce), p.extensionProof);
  });

  test(`a bridge that proves is answered with the extension's proof: ${p.name}`, async () => {
    const f = { method: 'ext.challenge', params: { nonce: p.bridgeNonce, proof: p.bridgeProof } };
    assert.deepEqual(await answerChallenge(p.token, p.extensionNonce, f, p.url), { proof: p.extensionProof });
  });

  test(`a bridge that cannot prove is refused: ${p.name}`, async () => {
    const bad = [
      { nonce: p.bridgeNonce, proof: p.extensionProof }, // our own proof reflected
      { nonce: p.bridgeNonce, proof: p.bridgeProof.replace(/.$/, (c) => (c === '0' ? '1' : '0')) },
      { nonce: p.bridgeNonce, proof: p.bridgeProof.toUpperCase() },
      { nonce: p.bridgeNonce, proof: '' },
      { nonce: p.bridgeNonce },
      { nonce: 'x', proof: p.bridgeProof },
      {},
    ];
    for (const params of bad) {
      const r = await answerChallenge(p.token, p.extensionNonce, { method: 'ext.challenge', params }, p.url);
      assert.ok('refuse' in r, JSON.stringify(params));
      assert.equal(r.refuse, `the program at ${p.url} could not prove it has the pairing token: it is not your livetab, or the token changed — pair again`);
    }
    const right = { method: 'ext.challenge', params: { nonce: p.bridgeNonce, proof: p.bridgeProof } };
    // The right proof for another nonce of ours is a replay.
    assert.ok('refuse' in await answerChallenge(p.token, newNonce(), right, p.url));
    // The right proof under another token: the token changed.
    assert.ok('refuse' in await answerChallenge(p.token + 'x', p.extensionNonce, right, p.url));
    // The right proof from a bridge on another port: a squatter using a
    // real bridge elsewhere as its oracle.
    assert.ok('refuse' in await answerChallenge(p.token, p.extensionNonce, right, `ws://127.0.0.1:${p.port + 1}/extension`));
  });
}

test('an old bridge that welcomes without a proof is refused with update advice', async () => {
  const r = await answerChallenge('t', newNonce(), { method: 'ext.welcome', params: { version: '1' } }, URL);
  assert.ok('refuse' in r && r.refuse.includes('update livetab'), JSON.stringify(r));
});

test('a command before the proof is refused, not obeyed', async () => {
  const r = await answerChallenge('t', newNonce(), { id: 1, method: 'ext.createTab', params: { url: 'about:blank' } }, URL);
  assert.ok('refuse' in r && r.refuse.includes('ext.createTab'), JSON.stringify(r));
});

test('nonces are fresh, 32 bytes of hex', () => {
  const seen = new Set();
  for (let i = 0; i < 100; i++) {
    const n = newNonce();
    assert.ok(validNonce(n), n);
    seen.add(n);
  }
  assert.equal(seen.size, 100);
  for (const n of v.nonces.valid) assert.ok(validNonce(n), n);
  for (const n of v.nonces.invalid) assert.ok(!validNonce(n), n);
});
