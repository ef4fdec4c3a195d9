package extcdp_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/internal/testsite"
	"github.com/livetab/livetab/internal/wire"
	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamPolicyFloodKeepsOthersRules: another program on the endpoint
// sets a policy of thousands of domains. Chrome takes at most 1000 regex
// rules of declarativeNetRequest, and the extension installs every
// client's popup rules in one update: an update over the limit fails
// whole, so a policy that took them all would leave every other client's
// popups unheld. The flood's policy is refused, and A's popups stay within
// A's domains.
func TestRedTeamPolicyFloodKeepsOthersRules(t *testing.T) {
	srv, tok := endpoint(t)
	forbidden := testsite.NewCounter(t, "127.0.0.2", "<title>forbidden</title>secret")
	opener := testsite.NewCounter(t, "127.0.0.1", popupPage(forbidden.URL+"/x"))

	flood := dialRawTo(t, srv, tok)
	var domains []string
	for i := range 3000 {
		domains = append(domains, fmt.Sprintf("d%d.example", i))
	}
	_, err := flood.call("", livetabcdp.CommandSetPolicy, map[string]any{"domains": domains, "blockPrivate": true})
	t.Logf("the flood's policy: %v", err)
	// Many clients within the bound, together past Chrome's 1000 regex
	// rules: each one's policy that does not fit is refused, and leaves
	// the others' rules in place.
	for i := range 20 {
		f := dialRawTo(t, srv, tok)
		_, err := f.call("", livetabcdp.CommandSetPolicy, map[string]any{"domains": domains[i*64 : (i+1)*64], "blockPrivate": true})
		if i == 0 || err != nil {
			t.Logf("flood client %d's policy: %v", i, err)
		}
	}

	a := dialRawTo(t, srv, tok)
	if _, err := a.call("", livetabcdp.CommandSetPolicy, map[string]any{"sharedOnly": true, "domains": []string{"127.0.0.1"}, "blockPrivate": true}); err != nil {
		t.Errorf("A's policy after the flood's: %v", err)
	}
	a.clickPopupLinks(opener.URL + "/")
	if n := forbidden.Hits.Load(); n != 0 {
		t.Fatalf("A's popups reached the forbidden server %d times after another program's policy flood", n)
	}
}

// TestRedTeamCloseTabKeepsThePolicy: Livetab.closeTab closes a tab the
// person opened, on purpose; but a client whose policy keeps it to the
// tabs the person shared (an agent, which a page's text may have talked
// into it) must not close, nor bring to the front, a tab it may not even
// attach to.
func TestRedTeamCloseTabKeepsThePolicy(t *testing.T) {
	srv, tok := endpoint(t)
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"sharedOnly": true, "domains": []string{"127.0.0.1"}})
	user := userTab(t, site.URL+"/form?not-shared-close")
	closeUserTab(t, user)
	if _, err := a.call("", "Target.attachToTarget", map[string]any{"targetId": user, "flatten": true}); err == nil {
		t.Fatal("A attached to a tab the person did not share")
	}
	if _, err := a.call("", "Target.activateTarget", map[string]any{"targetId": user}); err == nil || !strings.Contains(err.Error(), "not shared") {
		t.Errorf("A brought to the front a tab the person did not share: %v", err)
	}
	if _, err := a.call("", livetabcdp.CommandCloseTab, map[string]any{"targetId": user}); err == nil || !strings.Contains(err.Error(), "not shared") {
		t.Errorf("A closed a tab the person did not share: %v", err)
	}
	var r struct {
		TargetInfos []struct {
			TargetID string `json:"targetId"`
		} `json:"targetInfos"`
	}
	time.Sleep(300 * time.Millisecond)
	b := dialRawTo(t, srv, tok)
	unmarshal(b.must("", "Target.getTargets", map[string]any{}), &r)
	found := false
	for _, ti := range r.TargetInfos {
		found = found || ti.TargetID == user
	}
	if !found {
		t.Fatal("the person's tab is gone")
	}
	// Its own tab it closes.
	own, _ := a.open(site.URL + "/form?own")
	a.must("", livetabcdp.CommandCloseTab, map[string]any{"targetId": own})
}

// TestRedTeamDownloadFloodIsBounded: a program asks for thousands of
// downloads of a blob (Livetab.downloadBlob, which Chrome does not hold to
// one automatic download per page). The relay's record of downloads must
// not grow with them for the life of `livetab serve`.
func TestRedTeamDownloadFloodIsBounded(t *testing.T) {
	srv, tok := endpoint(t)
	a := dialRawTo(t, srv, tok)
	_, sid := a.open(site.URL + "/form?dlflood")
	dir, err := os.MkdirTemp("", "livetab-dlflood-")
	if err != nil {
		t.Fatal(err)
	}
	// Chrome may still be moving the last files in as the test ends.
	t.Cleanup(func() { time.Sleep(time.Second); os.RemoveAll(dir) })
	a.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "allowAndName", "downloadPath": dir, "eventsEnabled": true})
	blob := a.eval(sid, "URL.createObjectURL(new Blob(['flood']))")
	before := env.Relay.Counts()["downloads"]
	const n = 270 // more than the finished downloads the relay keeps
	var wg sync.WaitGroup
	var refused atomic.Int32
	sem := make(chan struct{}, 8)
	for range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			// More than maxUnsettled in flight are refused: wait for a slot.
			for try := 0; ; try++ {
				_, err := a.call(sid, livetabcdp.CommandDownloadBlob, map[string]any{"url": blob})
				if err == nil || !strings.Contains(err.Error(), "retry in") || try == 100 {
					return
				}
				refused.Add(1)
				time.Sleep(50 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	// The downloads end as Chrome reports them, which on a loaded machine
	// takes seconds; unbounded, the finished ones would stay at two
	// records a download.
	got, done := 0, 0
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		c := env.Relay.Counts()
		got, done = c["downloads"]-before, c["downloadsDone"]
		if got <= done || time.Now().After(deadline) {
			break
		}
	}
	if done > 2*256 { // once in each of its two maps
		t.Fatalf("the relay holds %d records of finished downloads after %d blob downloads, want at most 2×256", done, n)
	}
	t.Logf("the relay holds %d download records (%d of finished ones) after %d blob downloads (%d waits for a slot)", got, done, n, refused.Load())
}

// TestRedTeamMissingBlobFloodKeepsTheWorker: another program on the
// endpoint asks for downloads of blob: URLs of the tab's origin that no
// page made (or that it revoked). Chrome's chrome.downloads takes each, lists
// it in the person's downloads as failed, and after some hundreds to a few
// thousand of them the extension's renderer crashes (measured on Chromium
// 156: in 1 to 5 floods of 600, serial or 32 at a time; blobs that exist
// never did it, 7,200 in a row), so livetab is gone for every client until
// Chrome starts the worker again. A blob URL that does not resolve in the
// tab is refused with a clear error before the extension sees it.
func TestRedTeamMissingBlobFloodKeepsTheWorker(t *testing.T) {
	srv, tok := endpoint(t)
	a := dialRawTo(t, srv, tok)
	_, sid := a.open(site.URL + "/form?blobflood")
	origin := a.eval(sid, "location.origin")
	var drops atomic.Int32
	defer env.Bridge.Subscribe(func(f *wire.Frame) {
		if f.Method == bridge.Disconnected {
			drops.Add(1)
		}
	})()
	const n = 400
	var wg sync.WaitGroup
	var refused, accepted atomic.Int32
	var firstErr atomic.Value
	sem := make(chan struct{}, 16)
	for i := range n {
		if drops.Load() > 0 {
			break
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			_, err := a.call(sid, livetabcdp.CommandDownloadBlob, map[string]any{"url": fmt.Sprintf("blob:%s/00000000-0000-0000-0000-%012d", origin, i)})
			if err == nil {
				accepted.Add(1)
				return
			}
			refused.Add(1)
			firstErr.CompareAndSwap(nil, err.Error())
		}()
	}
	wg.Wait()
	if d := drops.Load(); d > 0 {
		t.Fatalf("the extension's socket closed during a flood of downloads of blobs no page made (%d accepted, %d refused before)", accepted.Load(), refused.Load())
	}
	if accepted.Load() > 0 {
		t.Errorf("%d of %d downloads of blobs no page made were started (they land in the person's downloads as failed)", accepted.Load(), n)
	}
	if e, _ := firstErr.Load().(string); !strings.Contains(e, "blob") {
		t.Errorf("the refusal does not say what is wrong with the URL: %q", e)
	}
	// A blob the page has still downloads.
	real := a.eval(sid, "URL.createObjectURL(new Blob(['livetab']))")
	if _, err := a.call(sid, livetabcdp.CommandDownloadBlob, map[string]any{"url": real}); err != nil {
		t.Fatalf("a blob the page made: %v", err)
	}
	// And on a page whose CSP allows it no fetch at all.
	csp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; connect-src 'none'")
		w.Write([]byte("<!doctype html><title>csp</title><p>no fetch here"))
	}))
	defer csp.Close()
	_, csid := a.open(csp.URL + "/")
	blocked := a.eval(csid, "fetch(URL.createObjectURL(new Blob(['x']))).then(() => 'fetched', () => 'blocked')")
	if _, err := a.call(csid, livetabcdp.CommandDownloadBlob, map[string]any{"url": a.eval(csid, "URL.createObjectURL(new Blob(['livetab']))")}); err != nil {
		t.Fatalf("a blob of a page whose CSP blocks its own fetch (%s): %v", blocked, err)
	}
	t.Logf("refused %d of %d; first refusal: %v", refused.Load(), n, firstErr.Load())

}

// TestRedTeamDownloadsInFlightAreBounded: a program starts downloads that
// do not end (servers of its tabs' origins that hold each response; Chrome
// starts 6 at a time to a host, so four hosts). Failed downloads crash the
// extension (blobs.go) and Chrome holds each one open: past maxUnsettled
// the relay refuses more at once, saying when to retry, and slots free as
// the downloads complete.
func TestRedTeamDownloadsInFlightAreBounded(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free()
	held := func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			w.Write([]byte("<!doctype html><title>held</title>"))
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(make([]byte, 1<<10))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
	defer env.Relay.ForgetUnsettled()
	srv, tok := endpoint(t)
	a := dialRawTo(t, srv, tok)
	dir, err := os.MkdirTemp("", "livetab-held-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { time.Sleep(time.Second); os.RemoveAll(dir) })
	a.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "allowAndName", "downloadPath": dir, "eventsEnabled": true})
	var hosts []string
	var sids []string
	for k := 1; k <= 4; k++ {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.%d:0", k))
		if err != nil {
			t.Fatal(err)
		}
		s := &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(held)}}
		s.Start()
		defer s.Close()
		_, sid := a.open(s.URL + "/")
		a.eval(sid, "location.origin") // the page is there
		hosts, sids = append(hosts, s.URL), append(sids, sid)
	}
	const n = 20
	started := 0
	var refusals []error
	for i := range n {
		_, err := a.call(sids[i%4], livetabcdp.CommandDownloadBlob, map[string]any{"url": fmt.Sprintf("%s/held-%d.bin", hosts[i%4], i)})
		if err != nil {
			refusals = append(refusals, err)
		} else {
			started++
		}
	}
	if started != 16 || len(refusals) != n-16 {
		t.Fatalf("%d downloads that do not end were started and %d refused, want 16 and %d", started, len(refusals), n-16)
	}
	for _, err := range refusals {
		if !strings.Contains(err.Error(), "retry in") {
			t.Errorf("a refusal past the bound does not say when to retry: %v", err)
		}
	}
	free()
	// Completed, they free their slots.
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := a.call(sids[0], livetabcdp.CommandDownloadBlob, map[string]any{"url": hosts[0] + "/held-after.bin"})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no slot 20 s after the downloads completed: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("refused %d of %d: %v", len(refusals), n, refusals[0])
}

// TestRedTeamPolicyFloodKeepsOthersPrivateRules: other programs on the
// endpoint set policies within the bounds, each off private addresses,
// until the clients' rules together pass Chrome's limits and the extension
// falls back to rules that hold popups closed. The agent's tab must stay
// off private addresses through it: its page asks one every 50 ms.
func TestRedTeamPolicyFloodKeepsOthersPrivateRules(t *testing.T) {
	srv, tok := endpoint(t)
	forbidden := testsite.NewCounter(t, "127.0.0.2", "")
	hostile := testsite.NewCounter(t, "127.0.0.1", fmt.Sprintf(`<!doctype html><title>hostile</title><script>setInterval(() => fetch('%s/tick', {mode: 'no-cors'}).catch(() => {}), 50)</script>`, forbidden.URL))
	var domains []string
	for i := range 20 * 64 {
		domains = append(domains, fmt.Sprintf("d%d.example", i))
	}
	for i := range 20 {
		f := dialRawTo(t, srv, tok)
		if _, err := f.call("", livetabcdp.CommandSetPolicy, map[string]any{"domains": domains[i*64 : (i+1)*64], "blockPrivate": true}); err != nil {
			t.Logf("flood client %d's policy: %v", i, err)
		}
	}
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}, "blockPrivate": true, "privateAllowed": []string{"127.0.0.1"}})
	a.open(hostile.URL + "/")
	time.Sleep(500 * time.Millisecond)
	n := forbidden.Hits.Load()
	time.Sleep(2 * time.Second)
	if got := forbidden.Hits.Load() - n; got > 0 {
		t.Errorf("the agent's tab reached %s %d times in 2 s with 20 other policies in force", forbidden.URL, got)
	}
	if hostile.Hits.Load() == 0 {
		t.Error("the hostile page never loaded")
	}
}
