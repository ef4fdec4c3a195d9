package extcdp

import (
	"fmt"
	"strings"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
	"github.com/livetab/livetab/policy"
)

// The person's cookies and site data through a tab's session. Chrome
// runs these on the profile, not the tab: measured through chrome.debugger
// (TestRedTeamCommandsThatWipeThePersonsLogins), Network.getAllCookies and
// Storage.getCookies handed any client every cookie of every site the
// person is logged in to, httpOnly ones included, and
// Network.clearBrowserCookies, Storage.clearCookies, Storage.clearDataForOrigin
// and Network.deleteCookies logged the person out of a site the client
// never opened; Network.clearBrowserCache emptied the HTTP cache of every
// site. The relay refuses the profile-wide ones on every session,
// and to a client with a domain policy it refuses those that name a site
// outside its domains; a client without one could open that site anyway.

// profileWide are refused on a tab's session: they read or wipe every
// site's cookies at once.
var profileWide = map[cdproto.MethodType]string{
	"Network.getAllCookies":          "it reads the person's cookies of every site; read your pages' with Network.getCookies",
	cdproto.CommandStorageGetCookies: "it reads the person's cookies of every site; read your pages' with Network.getCookies",
	"Network.clearBrowserCookies":    "it would log the person out of every site; delete your pages' cookies with Network.deleteCookies",
	"Storage.clearCookies":           "it would log the person out of every site; delete your pages' cookies with Network.deleteCookies",
	cdproto.CommandStorageSetCookies: "it sets cookies in the person's whole profile; set your pages' with Network.setCookie",
	// The HTTP cache is the profile's too: every site the person uses
	// would load everything again (TestRedTeamClearBrowserCacheWipesThePersons).
	"Network.clearBrowserCache": "it would empty the HTTP cache of the person's whole profile; to load your pages without it use Network.setCacheDisabled, or reload with Page.reload {ignoreCache: true}",
}

// browserLevelRefused are browser-level commands Playwright and Puppeteer
// send for a context's cookies and permissions (context.clearCookies,
// grantPermissions; Puppeteer's overridePermissions) that livetab does not
// emulate (Storage.getCookies and setCookies it does, for the client's own
// pages: contextcookies.go). livetab's contexts are groups of tabs in the
// person's own profile, so each would wipe every site's cookies or change
// the person's permissions: a clear refusal naming the per-page way,
// instead of "wasn't found".
var browserLevelRefused = map[cdproto.MethodType]string{
	"Storage.clearCookies":     "a context here is the person's own profile, and this would log them out of every site; delete your pages' cookies on a page's session with Network.deleteCookies {name, url} (Playwright: (await context.newCDPSession(page)).send('Network.deleteCookies', {name, url}); Puppeteer: page.deleteCookie)",
	"Browser.grantPermissions": "a context here is the person's own profile, and this changes what every site may do in it; let the page ask, or emulate on the page's session (e.g. Emulation.setGeolocationOverride, which Playwright's context.setGeolocation sends)",
	"Browser.setPermission":    "a context here is the person's own profile, and this changes what a site may do in it; let the page ask, or emulate on the page's session (e.g. Emulation.setGeolocationOverride)",
}

// cookiesOfThisPage names, for a client held to domains, the page's own
// URL in a Network.getCookies that names none: Chrome then gives the
// cookies of the page and of every frame in it, and the client read the
// person's login cookie of another site that the allowed page framed
// (TestRedTeamCookiesOfAFrameWithoutURLs). The URL is the one of the
// session's document (sid: a frame's own session), or none at all when
// the relay does not know it to be within the domains.
func (c *Client) cookiesOfThisPage(m *cdproto.Message, t *tab, sid string) {
	if m.Method != cdproto.CommandNetworkGetCookies {
		return
	}
	domains := c.heldDomains()
	if len(domains) == 0 {
		return
	}
	var p struct {
		URLs []string `json:"urls"`
	}
	if jsonv2.Unmarshal(m.Params, &p, wire.Options) != nil || len(p.URLs) > 0 {
		return // guardCookies checks the ones named, and bad params
	}
	r := c.r
	r.mu.Lock()
	url := t.info.URL
	if sid != "" {
		url = ""
		if ch := r.children[sid]; ch != nil && ch.tab == t {
			url = ch.info.URL
		}
	}
	r.mu.Unlock()
	urls := []string{}
	if strings.HasPrefix(url, "http") && policy.MatchURL(url, domains) {
		urls = append(urls, url)
	}
	b, err := jsonv2.Marshal(map[string]any{"urls": urls})
	if err == nil {
		m.Params = b
	}
}

// guardCookies answers m when it reads or changes the person's cookies or
// site data beyond what c may touch, and reports whether it did.
func (c *Client) guardCookies(m *cdproto.Message) bool {
	if why, ok := profileWide[m.Method]; ok {
		c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab refuses %s: %s", m.Method, why))
		return true
	}
	if m.Method == "Network.loadNetworkResource" {
		// The browser fetches the URL itself, with the person's cookies,
		// and follows its redirects: past the rules that hold the
		// client's tabs to its domains and off private addresses, and
		// the client reads the answer (TestRedTeamLoadNetworkResource).
		c.r.mu.Lock()
		held := c.guards()
		c.r.mu.Unlock()
		if held {
			c.fail(m.ID, m.SessionID, -32000, "livetab refuses Network.loadNetworkResource to a connection with a policy (Livetab.setPolicy): the browser would fetch the URL past the rules that hold this connection's requests; load it in a tab of the allowed domains, or fetch it from the page (Runtime.evaluate)")
			return true
		}
		return false
	}
	var urls []string
	var p struct {
		URLs       []string `json:"urls"`
		URL        string   `json:"url"`
		Domain     string   `json:"domain"`
		Origin     string   `json:"origin"`
		StorageKey string   `json:"storageKey"`
		Cookies    []struct {
			URL    string `json:"url"`
			Domain string `json:"domain"`
		} `json:"cookies"`
		Bucket struct {
			StorageKey string `json:"storageKey"`
		} `json:"bucket"`
	}
	switch m.Method {
	case cdproto.CommandNetworkGetCookies, cdproto.CommandNetworkDeleteCookies, cdproto.CommandNetworkSetCookie,
		cdproto.CommandNetworkSetCookies, cdproto.CommandStorageClearDataForOrigin, cdproto.CommandStorageGetUsageAndQuota,
		"Storage.clearDataForStorageKey",
		// Another site's storage bucket deleted, and word each time the
		// person's other site stores something
		// (TestRedTeamStorageBucketOfOtherSites).
		cdproto.CommandStorageDeleteStorageBucket, cdproto.CommandStorageSetStorageBucketTracking,
		cdproto.CommandStorageTrackCacheStorageForOrigin, cdproto.CommandStorageTrackCacheStorageForStorageKey,
		cdproto.CommandStorageTrackIndexedDBForOrigin, cdproto.CommandStorageTrackIndexedDBForStorageKey:
	default:
		return false
	}
	domains := c.heldDomains()
	if len(domains) == 0 {
		return false
	}
	if err := jsonv2.Unmarshal(m.Params, &p, wire.Options); err != nil {
		c.fail(m.ID, m.SessionID, -32602, fmt.Sprintf("livetab: invalid %s params: %v", m.Method, err))
		return true
	}
	urls = append(urls, p.URLs...)
	for _, u := range []string{p.URL, p.Origin, p.StorageKey, p.Bucket.StorageKey} {
		if u != "" {
			urls = append(urls, u)
		}
	}
	domain := func(d string) {
		if d != "" {
			urls = append(urls, "https://"+strings.TrimPrefix(d, ".")+"/")
		}
	}
	domain(p.Domain)
	for _, ck := range p.Cookies {
		if ck.URL != "" {
			urls = append(urls, ck.URL)
		}
		domain(ck.Domain)
	}
	for _, u := range urls {
		if !policy.MatchURL(u, domains) {
			c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab policy: %s names %s, outside the domains livetab may use (%s)", m.Method, u, strings.Join(domains, ", ")))
			return true
		}
	}
	return false
}
