// @ts-check
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { aheadRules, closedRules, dnrDomain, drivenRules, lingerRules, mergedPrivateRules, popupRules, workerRules } from '../lib/popups.js';

const vectors = JSON.parse(readFileSync(new URL('../../policy/testdata/domains.json', import.meta.url), 'utf8'));

/**
 * @param {string} host
 * @param {string[]} domains
 */
const inDomains = (host, domains) => domains.some((d) => host === d || host.endsWith('.' + d));

/**
 * Whether declarativeNetRequest would block a request by these rules, as
 * Chrome documents the conditions.
 * @param {import('../lib/popups.js').Rule[]} rules
 * @param {{url: string, initiator?: string, tabId: number, type: string}} req
 */
function blocked(rules, req) {
  const host = new URL(req.url).hostname;
  const matching = rules.filter(({ condition: c }) => {
    // Without resourceTypes, a rule matches every type but main_frame and
    // those it excludes.
    const types = /** @type {string[] | undefined} */ (c.resourceTypes);
    const excluded = /** @type {string[]} */ (c.excludedResourceTypes ?? (types ? [] : ['main_frame']));
    if (types ? !types.includes(req.type) : excluded.includes(req.type)) return false;
    if (c.excludedInitiatorDomains && req.initiator && inDomains(req.initiator, /** @type {string[]} */ (c.excludedInitiatorDomains))) return false;
    if (c.initiatorDomains && (!req.initiator || !inDomains(req.initiator, /** @type {string[]} */ (c.initiatorDomains)))) return false;
    if (c.excludedTabIds && /** @type {number[]} */ (c.excludedTabIds).includes(req.tabId)) return false;
    if (c.tabIds && !/** @type {number[]} */ (c.tabIds).includes(req.tabId)) return false;
    // Sites as the rules' tests need them: an address is its own site, a
    // name its last two labels.
    const site = (/** @type {string} */ h) => (/^[0-9.]+$/.test(h) ? h : h.split('.').slice(-2).join('.'));
    if (c.domainType === 'thirdParty' && (!req.initiator || site(req.initiator) === site(host))) return false;
    if (c.requestDomains && !inDomains(host, /** @type {string[]} */ (c.requestDomains))) return false;
    if (c.excludedRequestDomains && inDomains(host, /** @type {string[]} */ (c.excludedRequestDomains))) return false;
    if (c.regexFilter && !new RegExp(/** @type {string} */ (c.regexFilter), c.isUrlFilterCaseSensitive ? '' : 'i').test(req.url)) return false;
    return true;
  });
  // The rule of highest priority acts; at the same priority, allow wins.
  const top = Math.max(...matching.map((r) => r.priority));
  const acting = matching.filter((r) => r.priority === top);
  return acting.length > 0 && !acting.some((r) => r.action.type === 'allow');
}

test('dnr domains', () => {
  assert.equal(dnrDomain('*.Example.com'), 'example.com');
  assert.equal(dnrDomain('127.0.0.1'), '127.0.0.1');
  assert.equal(dnrDomain('10.0.0.0/8'), '');
  assert.equal(dnrDomain('::1'), '');
  assert.equal(dnrDomain('*'), '');
});

test('popup rules block a new tab exactly outside the domains (shared vectors)', () => {
  for (const v of vectors.hosts) {
    if (!dnrDomain(v.pattern) || !dnrDomain(v.host)) continue; // CIDR, IPv6, "*": no rule can say them
    // A host the rules see in another spelling (a trailing dot): they
    // block it, the stricter way.
    if (dnrDomain(v.host) !== v.host.toLowerCase()) continue;
    const rules = popupRules({ sharedOnly: false, domains: [v.pattern] }, [1], 100);
    const initiator = dnrDomain(v.pattern).replace(/^example\.com$/, 'www.example.com');
    const req = { url: `http://${v.host}:8080/x?q`, initiator, tabId: 7, type: 'main_frame' };
    assert.equal(blocked(rules, req), !v.match, `${v.pattern}: a popup to ${v.host}`);
    assert.equal(blocked(rules, { ...req, tabId: 1 }), false, 'a tab that was open before is left alone');
    assert.equal(blocked(rules, { ...req, initiator: undefined }), false, 'a navigation no page started is left alone');
  }
  const both = ['example.com', '*.example.com', 'a.other.net', '*.b.other.net'];
  const rules = popupRules({ sharedOnly: false, domains: both }, [], 1);
  /** @type {[string, boolean][]} */
  const cases = [
    ['https://example.com/', false], ['https://x.example.com/', false], ['https://evil.com/', true],
    ['https://a.other.net/', false], ['https://x.a.other.net/', true], ['https://other.net/', true],
    ['https://b.other.net/', true], ['https://x.b.other.net/', false], ['https://user@x.b.other.net/', false],
  ];
  for (const [url, want] of cases) {
    assert.equal(blocked(rules, { url, initiator: 'example.com', tabId: 9, type: 'sub_frame' }), want, url);
  }
  assert.deepEqual(popupRules({ sharedOnly: true, domains: [] }, [], 1), []);
  assert.deepEqual(popupRules({ sharedOnly: false, domains: ['10.0.0.0/8'] }, [], 1), []);
  assert.deepEqual(popupRules({ sharedOnly: false, domains: ['*'] }, [], 1), []);
  const ids = rules.map((r) => r.id);
  assert.deepEqual(ids, [...new Set(ids)]);
});

test('popup rules keep new tabs off private addresses but those named', () => {
  /** @type {[string, boolean][]} */
  const cases = [
    ['http://127.0.0.2:9/', true], ['http://10.1.2.3/', true], ['http://192.168.1.1/admin', true],
    ['http://172.16.0.1/', true], ['http://169.254.169.254/latest', true], ['http://100.64.0.1/', true],
    ['http://localhost:8080/', true], ['http://app.localhost/', true], ['http://[::1]:80/', true],
    ['http://[fd00:ec2::254]/', true], ['http://0.0.0.0/', true],
    // A name with its trailing dot is the same name to the resolver.
    ['http://localhost.:8080/', true], ['http://app.localhost./x', true], ['ws://localhost./', true],
    ['http://127.0.0.1:8080/x', false], ['https://example.com/', false], ['http://172.32.0.1/', false],
    ['http://10.example.com/', false], ['http://192.168.1.1.example.com/', false],
  ];
  const any = popupRules({ sharedOnly: true, domains: [], blockPrivate: true, privateAllowed: ['127.0.0.1'] }, [1], 1);
  for (const [url, want] of cases) {
    assert.equal(blocked(any, { url, tabId: 5, type: 'main_frame' }), want, url);
    assert.equal(blocked(any, { url, tabId: 1, type: 'main_frame' }), false, `${url} in a tab open before`);
  }
  const some = popupRules({ sharedOnly: true, domains: ['127.0.0.1', '*.example.com'], blockPrivate: true, privateAllowed: ['127.0.0.1'] }, [], 1);
  assert.equal(blocked(some, { url: 'http://127.0.0.2/', initiator: '127.0.0.1', tabId: 5, type: 'main_frame' }), true);
  assert.equal(blocked(some, { url: 'http://127.0.0.1:3/', initiator: '127.0.0.1', tabId: 5, type: 'main_frame' }), false);
  assert.equal(blocked(some, { url: 'http://192.168.0.1/', tabId: 5, type: 'main_frame' }), false, 'no page started it');
  // Every other request of a new tab, whoever started it (a frame of
  // another site, a worker); none of a tab open before, none of no tab.
  for (const type of ['xmlhttprequest', 'image', 'websocket', 'ping', 'script', 'media', 'other']) {
    for (const initiator of ['127.0.0.1', 'evil.example', undefined]) {
      assert.equal(blocked(some, { url: 'http://127.0.0.2:9/x', initiator, tabId: 5, type }), true, `${type} from ${initiator}`);
      assert.equal(blocked(some, { url: 'http://127.0.0.1:9/x', initiator, tabId: 5, type }), false, `${type} to a named host`);
      assert.equal(blocked(some, { url: 'https://example.com/x', initiator, tabId: 5, type }), false, `${type} to a public host`);
    }
    assert.equal(blocked(any, { url: 'ws://localhost:9/x', tabId: 1, type }), false, `${type} in a tab open before`);
    assert.equal(blocked(any, { url: 'ws://localhost:9/x', tabId: -1, type }), false, `${type} of no tab`);
    assert.equal(blocked(any, { url: 'ws://localhost:9/x', tabId: 5, type }), true, `${type} to localhost`);
  }
});

test('drivenRules keep every request of the owner\'s tabs off private addresses but those named', () => {
  const pol = { sharedOnly: false, domains: ['127.0.0.1'], blockPrivate: true, privateAllowed: ['127.0.0.1'], tabs: [3] };
  const rules = drivenRules(pol, [1, 2], 100);
  for (const type of ['sub_frame', 'xmlhttprequest', 'image', 'websocket', 'media']) {
    assert.equal(blocked(rules, { url: 'http://127.0.0.2:9/x', initiator: 'evil.example', tabId: 3, type }), true, type);
    assert.equal(blocked(rules, { url: 'http://127.0.0.1:9/x', initiator: '127.0.0.1', tabId: 3, type }), false, `${type} to a named host`);
    assert.equal(blocked(rules, { url: 'http://127.0.0.2:9/x', tabId: 1, type }), false, `${type} in another tab`);
    assert.equal(blocked(rules, { url: 'http://127.0.0.2:9/x', tabId: -1, type }), false, `${type} of no tab`);
  }
  // The person's own load of the tab is theirs (no page started it).
  assert.equal(blocked(rules, { url: 'http://192.168.0.1/', tabId: 3, type: 'main_frame' }), false);
  // An owner that guards its loads itself, or names no domain: its
  // documents are left alone, its other requests are not.
  for (const p of [{ ...pol, guardsLoads: true }, { ...pol, domains: [] }]) {
    const only = drivenRules(p, [1, 2], 100);
    assert.ok(only.length > 0);
    assert.equal(blocked(only, { url: 'http://127.0.0.2:9/', initiator: '127.0.0.1', tabId: 3, type: 'main_frame' }), false);
    assert.equal(blocked(only, { url: 'http://10.0.0.1:9/x', initiator: '127.0.0.1', tabId: 3, type: 'xmlhttprequest' }), true);
  }
  assert.deepEqual(drivenRules({ ...pol, guardsLoads: true, blockPrivate: false }, [1, 2], 100), []);
});

test('aheadRules hold a main-frame load of a private address that no page of the domains started', () => {
  const pol = { sharedOnly: false, domains: ['a.localhost', '127.0.0.3'], blockPrivate: true, privateAllowed: ['a.localhost', '127.0.0.3'] };
  const rules = aheadRules(pol, [1, 2], 100);
  // Chrome's prefetch and prerender for the tab: no initiator.
  for (const url of ['http://127.0.0.2:9/x', 'http://b.localhost:9/x', 'http://192.168.0.1/', 'http://[::1]:9/']) {
    assert.equal(blocked(rules, { url, tabId: 3, type: 'main_frame' }), true, url);
    assert.equal(blocked(rules, { url, tabId: 1, type: 'main_frame' }), false, `${url} in a tab left out`);
  }
  // The hosts named, and the page's own navigations (the guard's).
  assert.equal(blocked(rules, { url: 'http://a.localhost:9/', tabId: 3, type: 'main_frame' }), false);
  assert.equal(blocked(rules, { url: 'http://127.0.0.3:9/', tabId: 3, type: 'main_frame' }), false);
  assert.equal(blocked(rules, { url: 'http://127.0.0.2:9/', initiator: 'a.localhost', tabId: 3, type: 'main_frame' }), false);
  // Only main frames: the other rules hold the rest.
  assert.equal(blocked(rules, { url: 'http://127.0.0.2:9/', tabId: 3, type: 'sub_frame' }), false);
  assert.deepEqual(aheadRules({ ...pol, blockPrivate: false }, [1, 2], 100), []);
  // A subdomain of a host named alone is not named.
  assert.equal(blocked(rules, { url: 'http://x.a.localhost:9/', tabId: 3, type: 'main_frame' }), true);
  const wild = aheadRules({ ...pol, privateAllowed: ['*.a.localhost'] }, [1, 2], 100);
  assert.equal(blocked(wild, { url: 'http://x.a.localhost:9/', tabId: 3, type: 'main_frame' }), false);
  // A range or an IPv6 address named: no rules, which would block the
  // owner's own loads of it.
  assert.deepEqual(aheadRules({ ...pol, privateAllowed: ['127.0.0.4/30'] }, [1, 2], 100), []);
  assert.deepEqual(aheadRules({ ...pol, privateAllowed: ['::1'] }, [1, 2], 100), []);
  // Any domain allowed: every main-frame load of a private address.
  const any = aheadRules({ ...pol, domains: [], privateAllowed: [] }, [1], 100);
  assert.equal(blocked(any, { url: 'http://10.1.2.3/', initiator: 'a.example', tabId: 3, type: 'main_frame' }), true);
});

test('aheadRules hold a guarding owner\'s pages fetched ahead to its domains', () => {
  // Chrome's prefetch ahead of a prerender: a main-frame request of the tab
  // that no page started, which the guard's Fetch never sees.
  const pol = { sharedOnly: false, domains: ['a.localhost'], guardsLoads: true };
  const rules = aheadRules(pol, [1, 2], 100, [3]);
  assert.equal(blocked(rules, { url: 'http://b.localhost:9/secret', tabId: 3, type: 'main_frame' }), true);
  assert.equal(blocked(rules, { url: 'http://b.localhost:9/secret', tabId: 1, type: 'main_frame' }), false, 'a tab left out');
  // A tab opened since the rules were made (the person's new tab, its
  // first load, no initiator): not the owner's.
  assert.equal(blocked(rules, { url: 'http://b.localhost:9/', tabId: 7, type: 'main_frame' }), false, 'a new tab');
  assert.deepEqual(aheadRules(pol, [1, 2], 100), [], 'no tab of the owner\'s');
  // A range or an IPv6 address among the domains: none, which would block
  // the owner's own loads of it.
  assert.deepEqual(aheadRules({ ...pol, domains: ['a.localhost', '::1'] }, [1, 2], 100, [3]), []);
  assert.deepEqual(aheadRules({ ...pol, domains: ['a.localhost', '127.0.0.4/30'] }, [1, 2], 100, [3]), []);
  // Its domains, and a page's own location change (the guard aborts it).
  assert.equal(blocked(rules, { url: 'http://a.localhost:9/', tabId: 3, type: 'main_frame' }), false);
  assert.equal(blocked(rules, { url: 'http://b.localhost:9/', initiator: 'a.localhost', tabId: 3, type: 'main_frame' }), false);
  assert.equal(blocked(rules, { url: 'http://b.localhost:9/', tabId: 3, type: 'sub_frame' }), false);
  assert.deepEqual(aheadRules({ ...pol, guardsLoads: false }, [1, 2], 100), [], 'no tab of the owner\'s');
});

test('aheadRules hold the owner\'s own navigation that redirects outside its domains', () => {
  // Page.navigate or Target.createTarget's URL: no page started it, so
  // drivenRules' page-started rules never match its redirect.
  const pol = { sharedOnly: false, domains: ['127.0.0.1'] };
  const rules = aheadRules(pol, [1, 2], 100, [3]);
  assert.equal(blocked(rules, { url: 'http://127.0.0.2:9/secret', tabId: 3, type: 'main_frame' }), true);
  assert.equal(blocked(rules, { url: 'http://127.0.0.1:9/r', tabId: 3, type: 'main_frame' }), false);
  assert.equal(blocked(rules, { url: 'http://127.0.0.2:9/secret', tabId: 1, type: 'main_frame' }), false, 'a tab the person shared');
});

test('drivenRules hold only the main frame of the owner\'s tabs, none without tabs', () => {
  const pol = { sharedOnly: false, domains: ['127.0.0.1'] };
  assert.deepEqual(drivenRules(pol, [1, 2], 100), []);
  const rules = drivenRules({ ...pol, tabs: [3] }, [1, 2], 100);
  assert.ok(rules.length > 0);
  for (const r of rules) {
    assert.deepEqual(r.condition.resourceTypes, ['main_frame']);
    assert.deepEqual(r.condition.excludedTabIds, [1, 2]);
    assert.equal(r.action.type, 'block');
  }
  assert.equal(rules[0].id, 100);
});

test('a private host named alone leaves its subdomains held, in the tabs and their workers', () => {
  const pol = { sharedOnly: false, domains: ['a.localhost', 'c.localhost'], blockPrivate: true, privateAllowed: ['a.localhost', 'c.localhost'], tabs: [3] };
  const rules = [...drivenRules(pol, [1, 2], 100), ...workerRules([pol], 500)];
  for (const type of ['image', 'xmlhttprequest', 'script', 'sub_frame']) {
    const req = { url: 'http://x.a.localhost:9/x', initiator: 'a.localhost', tabId: 3, type };
    assert.equal(blocked(rules, req), true, `${type} to a subdomain of a named host`);
    assert.equal(blocked(rules, { ...req, url: 'http://a.localhost:9/x' }), false, `${type} to the named host`);
    assert.equal(blocked(rules, { ...req, url: 'http://c.localhost:9/x' }), false, `${type} to another named host`);
    assert.equal(blocked(rules, { ...req, tabId: 1 }), false, `${type} of a tab the owner does not drive`);
  }
  assert.equal(blocked(rules, { url: 'http://x.a.localhost:9/x', initiator: 'c.localhost', tabId: -1, type: 'xmlhttprequest' }), true, 'a worker');
  // Named with its subdomains, or not a name the rules see as private.
  const wild = drivenRules({ ...pol, privateAllowed: ['*.a.localhost', 'c.localhost'] }, [1, 2], 100);
  assert.equal(blocked(wild, { url: 'http://x.a.localhost:9/x', initiator: 'a.localhost', tabId: 3, type: 'image' }), false);
  const lan = drivenRules({ ...pol, domains: ['router.lan'], privateAllowed: ['router.lan'] }, [1, 2], 100);
  assert.equal(blocked(lan, { url: 'http://x.router.lan:9/x', initiator: 'router.lan', tabId: 3, type: 'image' }), false);
});

test('closedRules block every document of the held tabs, no regex', () => {
  const a = { sharedOnly: true, domains: ['127.0.0.1', '*.example.com'] };
  const b = { sharedOnly: false, domains: ['example.org'] };
  let rules = closedRules([a, b], [1, 2], 1000);
  assert.equal(rules.length, 1);
  assert.deepEqual(rules[0], {
    id: 1000, priority: 1, action: { type: 'block' },
    condition: {
      resourceTypes: ['main_frame', 'sub_frame'],
      initiatorDomains: ['127.0.0.1', 'example.com', 'example.org'],
      excludedTabIds: [1, 2],
    },
  });
  assert.equal(JSON.stringify(rules).includes('regexFilter'), false);
  // An owner with no domain: no initiator can be named.
  rules = closedRules([a, { sharedOnly: false, domains: [], blockPrivate: true }], [], 1000);
  assert.deepEqual(rules[0].condition, { resourceTypes: ['main_frame', 'sub_frame'] });
});

test('workerRules keep requests of no tab off private addresses of other sites while an owner holds its tabs', () => {
  const pol = { sharedOnly: false, domains: ['127.0.0.1'], blockPrivate: true, privateAllowed: ['127.0.0.1', '127.0.0.3'], tabs: [3] };
  assert.deepEqual(workerRules([{ ...pol, blockPrivate: false }], 100), []);
  assert.deepEqual(workerRules([], 100), []);
  const rules = workerRules([pol], 100, 'abcdefghijklmnop');
  assert.deepEqual(rules.map((r) => r.id), rules.map((_, i) => 100 + i));
  for (const type of ['xmlhttprequest', 'websocket', 'script', 'ping', 'other']) {
    const req = { url: 'http://127.0.0.2:9/x', initiator: '127.0.0.1', tabId: -1, type };
    assert.equal(blocked(rules, req), true, `${type} of a worker to another private host`);
    assert.equal(blocked(rules, { ...req, initiator: 'evil.example' }), true, `${type} of a worker of any site`);
    assert.equal(blocked(rules, { ...req, url: 'http://localhost:9/x' }), true, `${type} to localhost`);
    assert.equal(blocked(rules, { ...req, url: 'http://127.0.0.3:9/x' }), false, `${type} to a named host`);
    assert.equal(blocked(rules, { ...req, url: 'https://example.com/x' }), false, `${type} to a public host`);
    assert.equal(blocked(rules, { ...req, tabId: 3 }), false, `${type} of a tab (the tab rules' work)`);
    const own = { url: 'http://localhost:3000/api', initiator: 'localhost', tabId: -1, type };
    assert.equal(blocked(rules, own), false, `${type} of a worker to its own site`);
    assert.equal(blocked(rules, { ...req, initiator: 'abcdefghijklmnop' }), false, `${type} of the extension itself`);
  }
  // Two owners: a host only one of them named stays held.
  const two = workerRules([pol, { ...pol, privateAllowed: ['127.0.0.1'] }], 100);
  assert.equal(blocked(two, { url: 'http://127.0.0.3:9/x', initiator: '127.0.0.1', tabId: -1, type: 'xmlhttprequest' }), true);
  assert.equal(blocked(two, { url: 'http://127.0.0.1:9/x', initiator: 'evil.example', tabId: -1, type: 'xmlhttprequest' }), false);
});

test('lingerRules keep the workers of a left owner\'s domains off private addresses, and no one else\'s', () => {
  const pol = { sharedOnly: false, domains: ['127.0.0.1'], blockPrivate: true, privateAllowed: ['127.0.0.1', '127.0.0.3'], tabs: [] };
  assert.deepEqual(lingerRules([], 100), []);
  assert.deepEqual(lingerRules([{ pol: { ...pol, blockPrivate: false } }], 100), []);
  assert.deepEqual(lingerRules([{ pol: { ...pol, domains: [] } }], 100), [], 'no domains: no initiator to name');
  const rules = lingerRules([{ pol }], 100);
  assert.deepEqual(rules.map((r) => r.id), rules.map((_, i) => 100 + i));
  const req = { url: 'http://127.0.0.2:9/x', initiator: '127.0.0.1', tabId: -1, type: 'xmlhttprequest' };
  assert.equal(blocked(rules, req), true, 'its domain\'s worker to another private host');
  assert.equal(blocked(rules, { ...req, url: 'http://127.0.0.3:9/x' }), false, 'to a host it named');
  assert.equal(blocked(rules, { ...req, initiator: 'other.example' }), false, 'another site\'s worker');
  assert.equal(blocked(rules, { ...req, tabId: 3 }), false, 'a tab\'s request');
});

test('lingerRules hold the workers of the frames of a left owner\'s tabs', () => {
  const pol = { sharedOnly: false, domains: ['127.0.0.1'], blockPrivate: true, privateAllowed: ['127.0.0.1', '127.0.0.3'], tabs: [] };
  const rules = lingerRules([{ pol, sites: ['127.0.0.3', 'ads.example'] }], 100);
  const req = { url: 'http://127.0.0.2:9/x', initiator: 'ads.example', tabId: -1, type: 'xmlhttprequest' };
  assert.equal(blocked(rules, req), true, 'a framed site\'s worker');
  assert.equal(blocked(rules, { ...req, initiator: '127.0.0.3' }), true, 'a framed private site\'s worker');
  assert.equal(blocked(rules, { ...req, initiator: 'other.example' }), false, 'another site\'s worker');
  // Sites it could not name: every worker but the extension's.
  const all = lingerRules([{ pol, all: true }], 100, 'abcdefghijklmnop');
  assert.equal(blocked(all, { ...req, initiator: 'other.example' }), true, 'any site\'s worker');
  assert.equal(blocked(all, { ...req, initiator: 'abcdefghijklmnop' }), false, 'the extension\'s own');
});

test('lingerRules of many owners are of one size and let through only what all named', () => {
  const pol = (/** @type {string} */ d, /** @type {string[]} */ named) => ({ sharedOnly: false, domains: [d], blockPrivate: true, privateAllowed: named });
  const one = lingerRules([{ pol: pol('a.example', ['127.0.0.1']) }], 100);
  const many = lingerRules(Array.from({ length: 120 }, (_, i) => ({ pol: pol(`s${i}.example`, ['127.0.0.1']), sites: [`f${i}.example`] })), 100);
  assert.equal(many.length, one.length, 'no more rules for more owners');
  const req = { url: 'http://127.0.0.2:9/x', initiator: 's0.example', tabId: -1, type: 'xmlhttprequest' };
  assert.equal(blocked(many, req), true, 'the first owner\'s worker');
  assert.equal(blocked(many, { ...req, initiator: 's119.example' }), true, 'the last owner\'s worker');
  assert.equal(blocked(many, { ...req, initiator: 'f7.example' }), true, 'a frame\'s worker');
  assert.equal(blocked(many, { ...req, url: 'http://127.0.0.1:9/x' }), false, 'a host every owner named');
  const mixed = lingerRules([{ pol: pol('a.example', ['127.0.0.1', '127.0.0.2']) }, { pol: pol('b.example', ['127.0.0.1']) }], 100);
  assert.equal(blocked(mixed, { ...req, initiator: 'a.example' }), true, 'a host only one owner named');
  assert.equal(blocked(mixed, { ...req, initiator: 'a.example', url: 'http://127.0.0.1:9/x' }), false, 'a host both named');
  // Past the bound, every worker.
  const over = lingerRules(Array.from({ length: 20 }, (_, i) => ({ pol: pol(`s${i}.example`, []), sites: Array.from({ length: 32 }, (_, j) => `f${i}-${j}.example`) })), 100, 'abcdefghijklmnop');
  assert.equal(over.length, one.length);
  assert.equal(blocked(over, { ...req, initiator: 'other.example' }), true, 'past the bound, any site\'s worker');
  assert.equal(blocked(over, { ...req, initiator: 'abcdefghijklmnop' }), false, 'but the extension\'s');
});

test('the relay\'s transfer channel stays open to the tabs the rules keep off private addresses', () => {
  const transfer = 'http://127.0.0.1:4567/livetab/transfer/';
  const pol = { sharedOnly: false, domains: ['example.com'], blockPrivate: true, privateAllowed: [], tabs: [3], transfer };
  const token = 'A'.repeat(40) + '_-9';
  for (const rules of [drivenRules(pol, [1, 2], 100), popupRules(pol, [1, 2], 100)]) {
    const req = { url: transfer + token, initiator: 'null', tabId: 3, type: 'xmlhttprequest' };
    assert.equal(blocked(rules, req), false, 'the transfer frame\'s fetch');
    assert.equal(blocked(rules, { ...req, url: 'http://127.0.0.1:4568/livetab/transfer/' + token }), true, 'another port');
    assert.equal(blocked(rules, { ...req, url: 'http://127.0.0.1:4567/other' }), true, 'another path of the port');
    assert.equal(blocked(rules, { ...req, url: transfer + token + '/x' }), true, 'more path');
    assert.equal(blocked(rules, { ...req, url: transfer }), true, 'no token');
    assert.equal(blocked(rules, { ...req, type: 'image' }), true, 'an image of the page');
  }
});

test('mergedPrivateRules hold the tabs of every owner off private addresses in rules of one size', () => {
  const transfer = 'http://127.0.0.1:4567/livetab/transfer/';
  const pol = (/** @type {string[]} */ named) => ({ sharedOnly: false, domains: ['a.example'], blockPrivate: true, privateAllowed: named, transfer });
  assert.deepEqual(mergedPrivateRules([{ sharedOnly: false, domains: ['a.example'] }], [1], 100), []);
  const few = mergedPrivateRules([pol(['127.0.0.1'])], [1, 2], 100);
  const many = mergedPrivateRules(Array.from({ length: 50 }, () => pol(['127.0.0.1', '127.0.0.3'])), [1, 2], 100);
  assert.equal(many.length, few.length);
  for (const type of ['xmlhttprequest', 'image', 'websocket', 'sub_frame']) {
    const req = { url: 'http://127.0.0.2:9/x', initiator: 'a.example', tabId: 7, type };
    assert.equal(blocked(many, req), true, `${type} of a held tab`);
    assert.equal(blocked(many, { ...req, tabId: 1 }), false, `${type} of a tab no owner holds`);
    assert.equal(blocked(many, { ...req, url: 'http://127.0.0.1:9/x' }), false, `${type} to a host every owner named`);
  }
  const mixed = mergedPrivateRules([pol(['127.0.0.1', '127.0.0.3']), pol(['127.0.0.1'])], [1], 100);
  assert.equal(blocked(mixed, { url: 'http://127.0.0.3:9/x', initiator: 'a.example', tabId: 7, type: 'image' }), true, 'a host one owner did not name');
  assert.equal(blocked(mixed, { url: transfer + 'tok', initiator: 'null', tabId: 7, type: 'xmlhttprequest' }), false, 'the transfer channel');
});
