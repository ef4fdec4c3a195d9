package extcdp

import (
	"fmt"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
)

// Downloads that chrome.downloads starts and that then fail crash the
// extension's renderer after some hundreds to a few thousand of them,
// taking livetab from every client until Chrome starts the worker again
// (measured on Chromium 156 with Livetab.downloadBlob: blob: URLs no page
// holds, or http URLs that answer 404, 600 at a time, serial or 32 at a
// time, crashed it once after 145 and otherwise within 1 to 5 floods, with
// or without the extension listening to chrome.downloads; 7,200 downloads
// of a blob that exists never did). Each such download also stays in the
// person's downloads list as failed. So:
//   - a blob: URL is first fetched by the tab's page, in a world of its own
//     that the page's scripts cannot lie to, and one that does not resolve
//     is refused with a clear error before Chrome sees it;
//   - the relay lets at most maxUnsettled Livetab.downloadBlob downloads be
//     in flight or have failed in the last minute, for all its clients, and
//     refuses more with an error that says when to retry.
//
// The check's world keeps the page's CSP: on a page whose connect-src
// leaves out blob:, its fetch is refused (and the page may hear of the
// violation). The page's securitypolicyviolation event tells that apart,
// and such a blob is downloaded unchecked, within the same bound
// (docs/decisions/2026-11-29-failing-downloads-are-bounded.md).

// blobResolves fetches a blob: URL and drops its body as soon as the
// response starts: a blob is answered from memory whatever its size, and
// a missing one rejects. It settles to "ok", to "csp" when the page's CSP
// refused the fetch, or to the reason it failed.
const blobResolves = `(() => {
	const url = %s;
	let csp = false;
	const seen = (e) => { if (String(e.blockedURI).startsWith("blob")) csp = true; };
	document.addEventListener("securitypolicyviolation", seen);
	const done = (v) => new Promise((r) => setTimeout(() => { document.removeEventListener("securitypolicyviolation", seen); r(csp ? "csp" : v); }, 20));
	return fetch(url).then((r) => { r.body && r.body.cancel(); document.removeEventListener("securitypolicyviolation", seen); return r.ok ? "ok" : "status " + r.status; }, (e) => done(String(e && e.message || e)));
})()`

// checkBlob reports, as an error that says what to do, that the blob: URL u
// does not resolve in the main frame of tab t.
func (c *Client) checkBlob(t *tab, u string) error {
	q, err := jsonv2.Marshal(u, wire.Options)
	if err != nil {
		return err
	}
	res, err := c.worldEval(t, "", c.frameOf(t, "", nil), fmt.Sprintf(blobResolves, q))
	if err != nil {
		return fmt.Errorf("livetab: could not ask the page whether %.120q exists: %w; retry once the page answers", u, err)
	}
	var v struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
	}
	if err := jsonv2.Unmarshal(res, &v, wire.Options); err != nil {
		return fmt.Errorf("livetab: reading the page's answer for %.120q: %w", u, err)
	}
	if v.Result.Value == "ok" || v.Result.Value == "csp" {
		return nil
	}
	return fmt.Errorf("livetab: %.120q is not a blob this tab's page holds (%s): it was revoked or never made here; download a blob: URL the page has just made, from the tab that made it", u, v.Result.Value)
}

// maxUnsettled is how many Livetab.downloadBlob downloads may be in flight
// or have failed within a minute of their start, for all clients of a
// relay: far above a capture's one at a time, far below the failures that
// crashed the extension.
const maxUnsettled = 16

// unsettledFor is how long a failed download counts against maxUnsettled,
// and how long one in flight does at most (its end may never be reported:
// the extension went away).
const (
	unsettledFor    = time.Minute
	unsettledAtMost = 10 * time.Minute
)

type unsettled struct {
	dl *download
	at time.Time
}

// settled reports whether u no longer counts at now: it completed, the
// client canceled it, Chrome never started it, or its time is over.
func (u unsettled) settled(now time.Time) bool {
	dl := u.dl
	switch {
	case now.Sub(u.at) >= unsettledAtMost:
		return true
	case !dl.done:
		return false
	case dl.chromeID == 0 || dl.info.State == "complete" || dl.info.Error == "USER_CANCELED":
		return true
	}
	return now.Sub(u.at) >= unsettledFor
}

// admit counts dl against maxUnsettled, or reports how long until a slot
// frees when none is left. Call with r.mu held.
func (d *downloadState) admit(dl *download, now time.Time) (wait time.Duration, ok bool) {
	kept := d.unsettled[:0]
	for _, u := range d.unsettled {
		if !u.settled(now) {
			kept = append(kept, u)
		}
	}
	clear(d.unsettled[len(kept):])
	d.unsettled = kept
	if len(kept) >= maxUnsettled {
		wait = unsettledFor
		for _, u := range kept {
			if u.dl.done {
				wait = min(wait, unsettledFor-now.Sub(u.at))
			}
		}
		return max(wait, time.Second), false
	}
	d.unsettled = append(d.unsettled, unsettled{dl: dl, at: now})
	return 0, true
}
