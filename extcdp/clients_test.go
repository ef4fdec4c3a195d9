package extcdp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/extcdp"
)

// TestClients runs unmodified Playwright and Puppeteer against the relay's
// CDP endpoint. They use the tabs that were open before them and must
// leave them open.
func TestClients(t *testing.T) {
	srv, tok := endpoint(t)
	// The tabs earlier tests' clients opened go with those clients, a
	// moment after they left: wait for that, so that what is left is the
	// person's.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		left := false
		for _, ts := range env.Relay.Status().Tabs {
			left = left || ts.Created
		}
		if !left {
			break
		}
	}
	before := pageTargets(t)
	site.CheckClients(t, env.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok))
	after := pageTargets(t)
	for id, url := range before {
		// A tab with no URL yet was just opened, by a test before this one.
		if url != "" && after[id] != url {
			t.Errorf("the user's tab %s (%s) is now %q after the clients left", id, url, after[id])
		}
	}
}

// pageTargets lists the browser's pages as Chrome sees them.
func pageTargets(t *testing.T) map[string]string {
	t.Helper()
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	ts, err := u.Targets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{}
	for _, ti := range ts {
		if ti.Type == "page" && !strings.HasPrefix(ti.URL, "chrome-extension://") {
			pages[ti.TargetID] = ti.URL
		}
	}
	return pages
}

// TestClientsCompat sweeps the APIs a Playwright or Puppeteer user reaches
// for: each works as on Chrome or fails at once saying what to do.
func TestClientsCompat(t *testing.T) {
	// The checks on the person's tab run a function that never returns.
	defer extcdp.SetSyncScriptBound(3 * time.Second)()
	srv, tok := endpoint(t)
	cdpURL := env.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok)
	upload := filepath.Join(t.TempDir(), "compat.txt")
	if err := os.WriteFile(upload, []byte("from a path"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A tab of the person's, on a page of the site: the clients may read
	// it, and must leave it as it was.
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	persons, err := u.OpenTab(context.Background(), site.URL+"/compat?person")
	if err != nil {
		t.Fatal(err)
	}
	defer u.CloseTab(context.Background(), persons)
	look := `JSON.stringify([innerWidth, innerHeight, matchMedia('print').matches, matchMedia('(prefers-color-scheme: dark)').matches, navigator.userAgent, document.cookie, typeof window.initRan])`
	var was string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if v, err := u.Eval(context.Background(), persons, `document.readyState === "complete" && `+look); err == nil && string(v) != "false" {
			was = string(v)
			break
		}
	}
	if was == "" {
		t.Fatal("the person's tab did not load")
	}
	t.Logf("the person's tab before the clients: %s", was)
	before := pageTargets(t)
	t.Run("Playwright", func(t *testing.T) {
		site.RunClient(t, "playwright-compat.test.js", cdpURL, "UPLOAD_FILE="+upload)
	})
	t.Run("Puppeteer", func(t *testing.T) {
		site.RunClient(t, "puppeteer-compat.test.js", cdpURL, "UPLOAD_FILE="+upload)
	})
	after := pageTargets(t)
	for id, url := range before {
		if url != "" && after[id] != url {
			t.Errorf("the user's tab %s (%s) is now %q after the clients left", id, url, after[id])
		}
	}
	if now, err := u.Eval(context.Background(), persons, look); err != nil || string(now) != was {
		t.Errorf("the person's tab is now %s (%v), was %s before the clients", now, err, was)
	}
}

// TestDisposeContextWhileItsTabCloses: a context's tab that closes while
// the context is disposed (Playwright closes a page whose setup failed as
// it disposes the context; the person may close it too) leaves the
// dispose nothing to do, not an error.
func TestDisposeContextWhileItsTabCloses(t *testing.T) {
	a := dialRaw(t)
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	for i := range 9 {
		ctxID := field(a.must("", "Target.createBrowserContext", nil), "browserContextId")
		id := field(a.must("", "Target.createTarget", map[string]any{"url": site.URL + "/form", "browserContextId": ctxID}), "targetId")
		closed := make(chan struct{})
		switch i % 3 {
		case 0:
			go func() {
				defer close(closed)
				a.call("", "Target.closeTarget", map[string]any{"targetId": id})
			}()
		case 1:
			if err := u.CloseTab(context.Background(), id); err != nil {
				t.Fatal(err)
			}
			close(closed)
		case 2:
			// Closed from its own session while the dispose runs.
			s := field(a.must("", "Target.attachToTarget", map[string]any{"targetId": id, "flatten": true}), "sessionId")
			go func() {
				defer close(closed)
				a.call(s, "Page.close", nil)
			}()
		}
		if _, err := a.call("", "Target.disposeBrowserContext", map[string]any{"browserContextId": ctxID}); err != nil {
			t.Errorf("round %d: disposing the context while its tab closed: %v", i, err)
		}
		<-closed
	}
}
