package extcdp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamSiteDataOfOtherSites: a client held to its domains asks,
// through its own tab's session, for the localStorage, IndexedDB, Cache
// Storage and storage of a site outside them, which the person uses
// (its tab is open): Chrome runs these on the profile, by origin, so the
// client would read or wipe what the person's other site keeps.
func TestRedTeamSiteDataOfOtherSites(t *testing.T) {
	srv, tok := endpoint(t)
	cross := strings.TrimSuffix(site.CrossURL, "/")
	person := userTab(t, cross+"/form?sitedata")
	closeUserTab(t, person)
	p := dialRawTo(t, srv, tok)
	psid := p.attach(person)
	seed := func() {
		p.eval(psid, `localStorage.setItem("token", "secret-local"), new Promise((ok, bad) => {
			const req = indexedDB.open("vault", 1);
			req.onupgradeneeded = () => req.result.createObjectStore("s");
			req.onsuccess = () => { const tx = req.result.transaction("s", "readwrite"); tx.objectStore("s").put("secret-idb", "k"); tx.oncomplete = () => { req.result.close(); ok(true) }; };
			req.onerror = () => bad(req.error);
		}).then(() => caches.open("cache1")).then(c => c.put("/secret-cache", new Response("secret-cached"))).then(() => true)`)
	}
	check := func() string {
		return p.eval(psid, `Promise.all([localStorage.getItem("token"), indexedDB.databases().then(d => d.map(x => x.name).join()), caches.keys().then(k => k.join())]).then(a => a.join("|"))`)
	}
	seed()
	if got := check(); got != "secret-local|vault|cache1" {
		t.Fatalf("seeding the person's site data: %q", got)
	}

	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	_, sid := a.open(site.URL + "/form?sitedata-reader")
	a.eval(sid, "1")
	storageID := map[string]any{"securityOrigin": cross, "isLocalStorage": true}
	for _, c := range []struct {
		method string
		params map[string]any
	}{
		{"DOMStorage.enable", nil},
		{"DOMStorage.getDOMStorageItems", map[string]any{"storageId": storageID}},
		{"DOMStorage.getDOMStorageItems", map[string]any{"storageId": map[string]any{"storageKey": cross + "/", "isLocalStorage": true}}},
		{"DOMStorage.setDOMStorageItem", map[string]any{"storageId": storageID, "key": "planted", "value": "x"}},
		{"DOMStorage.removeDOMStorageItem", map[string]any{"storageId": storageID, "key": "token"}},
		{"DOMStorage.clear", map[string]any{"storageId": storageID}},
		{"IndexedDB.enable", nil},
		{"IndexedDB.requestDatabaseNames", map[string]any{"securityOrigin": cross}},
		{"IndexedDB.requestDatabaseNames", map[string]any{"storageKey": cross + "/"}},
		{"IndexedDB.requestData", map[string]any{"securityOrigin": cross, "databaseName": "vault", "objectStoreName": "s", "indexName": "", "skipCount": 0, "pageSize": 10}},
		{"IndexedDB.clearObjectStore", map[string]any{"securityOrigin": cross, "databaseName": "vault", "objectStoreName": "s"}},
		{"IndexedDB.deleteDatabase", map[string]any{"securityOrigin": cross, "databaseName": "vault"}},
		{"CacheStorage.requestCacheNames", map[string]any{"securityOrigin": cross}},
		{"CacheStorage.requestCacheNames", map[string]any{"storageKey": cross + "/"}},
		{"CacheStorage.deleteCache", map[string]any{"cacheId": cross + "/|cache1"}},
		{"Storage.getUsageAndQuota", map[string]any{"origin": cross}},
		{"Storage.trackIndexedDBForOrigin", map[string]any{"origin": cross}},
		{"Storage.trackCacheStorageForOrigin", map[string]any{"origin": cross}},
		{"Storage.getSharedStorageEntries", map[string]any{"ownerOrigin": cross}},
		{"Storage.clearSharedStorageEntries", map[string]any{"ownerOrigin": cross}},
		{"Storage.deleteStorageBucket", map[string]any{"bucket": map[string]any{"storageKey": cross + "/", "name": "default"}}},
	} {
		res, err := a.call(sid, c.method, c.params)
		got := "answered"
		if err != nil {
			got = err.Error()
		}
		t.Logf("%s: %s %.300s", c.method, got, res)
		if strings.Contains(string(res), "secret") || strings.Contains(string(res), "vault") || strings.Contains(string(res), "cache1") {
			t.Errorf("%s read the person's data of a site outside the client's domains: %.300s", c.method, res)
		}
		if now := check(); now != "secret-local|vault|cache1" {
			t.Errorf("%s changed the person's data of a site outside the client's domains: %q", c.method, now)
			seed()
		}
	}
}

// TestRedTeamStorageBucketOfOtherSites: a client held to its domains asks,
// through its own tab's session, to hear of the storage of a site outside
// them, which the person uses (Storage.track*, setStorageBucketTracking),
// and to delete a storage bucket of it. Chrome runs these on the profile
// by origin or storage key: the client would hear each time the person's
// other site stores something, and the site would lose what it keeps in
// the bucket.
func TestRedTeamStorageBucketOfOtherSites(t *testing.T) {
	srv, tok := endpoint(t)
	cross := strings.TrimSuffix(site.CrossURL, "/")
	person := userTab(t, cross+"/form?bucket")
	closeUserTab(t, person)
	p := dialRawTo(t, srv, tok)
	psid := p.attach(person)
	p.eval(psid, "1")

	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	_, sid := a.open(site.URL + "/form?bucket-wiper")
	a.eval(sid, "1")
	for _, c := range []struct {
		method string
		params map[string]any
	}{
		{"Storage.trackCacheStorageForOrigin", map[string]any{"origin": cross}},
		{"Storage.trackIndexedDBForOrigin", map[string]any{"origin": cross}},
		{"Storage.trackCacheStorageForStorageKey", map[string]any{"storageKey": cross + "/"}},
		{"Storage.trackIndexedDBForStorageKey", map[string]any{"storageKey": cross + "/"}},
		{"Storage.setStorageBucketTracking", map[string]any{"storageKey": cross + "/", "enable": true}},
	} {
		if _, err := a.call(sid, c.method, c.params); err == nil || !strings.Contains(err.Error(), "outside the domains") {
			t.Errorf("%s of another site: %v, want a refusal naming the domains", c.method, err)
		}
	}

	const buckets = `navigator.storageBuckets.keys().then(k => k.join())`
	p.eval(psid, `navigator.storageBuckets.open("vault").then(b => b.caches.open("c")).then(c => c.put("/secret", new Response("secret-in-bucket"))).then(() => caches.open("c2")).then(() => new Promise(ok => { const r = indexedDB.open("db2", 1); r.onupgradeneeded = () => r.result.createObjectStore("s"); r.onsuccess = () => { r.result.close(); ok(true) } }))`)
	if got := p.eval(psid, buckets); got != "vault" {
		t.Fatalf("seeding the person's bucket: %q", got)
	}
	_, err := a.call(sid, "Storage.deleteStorageBucket", map[string]any{"bucket": map[string]any{"storageKey": cross + "/", "name": "vault"}})
	time.Sleep(time.Second) // Chrome deletes after it answers
	if got := p.eval(psid, buckets); got != "vault" {
		t.Errorf("Storage.deleteStorageBucket (%v) deleted the person's bucket of a site outside the client's domains: buckets now %q", err, got)
	}
	if err == nil || !strings.Contains(err.Error(), "outside the domains") {
		t.Errorf("Storage.deleteStorageBucket of another site: %v, want a refusal naming the domains", err)
	}
	a.mu.Lock()
	for _, e := range a.events {
		if strings.HasPrefix(e.Method, "Storage.") && strings.Contains(string(e.Params), cross) {
			t.Errorf("the client heard of the person's storage of a site outside its domains: %s %.200s", e.Method, e.Params)
		}
	}
	a.mu.Unlock()

	// Its own site's bucket it may delete.
	a.eval(sid, `navigator.storageBuckets.open("mine").then(() => true)`)
	a.must(sid, "Storage.deleteStorageBucket", map[string]any{"bucket": map[string]any{"storageKey": site.URL + "/", "name": "mine"}})
	a.must(sid, "Storage.trackCacheStorageForOrigin", map[string]any{"origin": site.URL})
}
