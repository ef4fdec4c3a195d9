// @ts-check
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hostMatches, parsePolicy, urlAllowed } from '../lib/policy.js';

test('host patterns', () => {
  assert.ok(hostMatches('example.com', 'example.com'));
  assert.ok(hostMatches('EXAMPLE.com', 'example.COM'));
  assert.ok(!hostMatches('evil-example.com', 'example.com'));
  assert.ok(hostMatches('a.b.example.com', '*.example.com'));
  assert.ok(hostMatches('example.com', '*.example.com'));
  assert.ok(!hostMatches('example.com.evil.net', '*.example.com'));
  assert.ok(hostMatches('[::1]', '::1'));
  assert.ok(hostMatches('anything', '*'));
  assert.ok(hostMatches('10.1.2.3', '10.0.0.0/8'));
  assert.ok(!hostMatches('11.1.2.3', '10.0.0.0/8'));
  assert.ok(hostMatches('192.168.1.7', '192.168.1.0/24'));
  assert.ok(!hostMatches('192.168.2.7', '192.168.1.0/24'));
  assert.ok(!hostMatches('example.com', '10.0.0.0/8'));
});

test('urls under a policy', () => {
  const d = ['127.0.0.1', '*.example.com'];
  assert.ok(urlAllowed('http://127.0.0.1:8080/x', d));
  assert.ok(urlAllowed('https://www.example.com/', d));
  assert.ok(urlAllowed('about:blank', d));
  assert.ok(!urlAllowed('http://localhost/', d));
  assert.ok(!urlAllowed('file:///etc/passwd', d));
  assert.ok(!urlAllowed('javascript:alert(1)', d));
  assert.ok(!urlAllowed('not a url', d));
  assert.ok(urlAllowed('file:///etc/passwd', []), 'no list, no limit');
});

test('policy params', () => {
  assert.deepEqual(parsePolicy({ sharedOnly: true, domains: ['a', 3, ''] }), { sharedOnly: true, domains: ['a'] });
  assert.deepEqual(parsePolicy(undefined), { sharedOnly: false, domains: [] });
});
