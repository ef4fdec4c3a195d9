// @ts-check
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { hostMatches, parsePolicy, policyOwner, urlAllowed } from '../lib/policy.js';

// One rule for domain patterns at both ends: the Go policy checks the same
// vectors (policy/match_test.go).
const vectors = JSON.parse(readFileSync(new URL('../../policy/testdata/domains.json', import.meta.url), 'utf8'));

test('host patterns (shared vectors)', () => {
  for (const v of vectors.hosts) {
    assert.equal(hostMatches(v.host, v.pattern), v.match, `${v.pattern} on ${v.host}`);
  }
});

test('urls under a policy (shared vectors)', () => {
  for (const v of vectors.urls) {
    assert.equal(urlAllowed(v.url, v.domains), v.allowed, `${v.url} under ${v.domains}`);
  }
});

test('urls Go refuses and a browser reads inside the domains (shared vectors)', () => {
  for (const v of vectors.urlsStricterInGo) {
    assert.equal(urlAllowed(v.url, v.domains), true, `${v.url} under ${v.domains}`);
  }
});

test('policy params', () => {
  assert.deepEqual(parsePolicy({ sharedOnly: true, domains: ['a', 3, ''] }), { sharedOnly: true, domains: ['a'] });
  assert.deepEqual(parsePolicy(undefined), { sharedOnly: false, domains: [] });
  const transfer = 'http://127.0.0.1:4567/livetab/transfer/';
  assert.equal(parsePolicy({ domains: [], blockPrivate: true, transfer }).transfer, transfer);
  assert.equal(parsePolicy({ domains: [], transfer }).transfer, undefined, 'no private rules, nothing to let through');
  for (const bad of ['http://127.0.0.2:4567/livetab/transfer/', 'http://127.0.0.1/livetab/transfer/', 'http://127.0.0.1:4567/', 'http://192.168.0.1:80/livetab/transfer/', 'https://127.0.0.1:4567/livetab/transfer/.*', 3]) {
    assert.equal(parsePolicy({ domains: [], blockPrivate: true, transfer: bad }).transfer, undefined, String(bad));
  }
  assert.equal(policyOwner({ owner: 'A1' }), 'A1');
  assert.equal(policyOwner({ owner: 3 }), '');
});
