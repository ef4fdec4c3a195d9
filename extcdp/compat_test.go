package extcdp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	"github.com/livetab/livetab/internal/browsertest"
)

// The tests here hold what chromedp's own suite found missing
// (internal/chromedpsuite), each on both doors: in process and through the
// CDP endpoint.

// doors runs fn with an allocator of each door.
func doors(t *testing.T, fn func(t *testing.T, actx context.Context)) {
	t.Run("inproc", func(t *testing.T) {
		if env == nil {
			t.Skip("no test browser")
		}
		fn(t, env.Allocator(t))
	})
	t.Run("endpoint", func(t *testing.T) {
		srv, tok := endpoint(t)
		actx, cancel := remote.NewAllocator(context.Background(), env.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok))
		t.Cleanup(cancel)
		fn(t, actx)
	})
}

// tabOn opens a tab on actx for one test, bounded in time.
func tabOn(t *testing.T, actx context.Context, opts ...chromedp.ContextOption) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(actx, opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := context.WithTimeout(ctx, 30*time.Second)
	t.Cleanup(cancel2)
	return ctx
}

func TestCompatDataURL(t *testing.T) {
	doors(t, func(t *testing.T, actx context.Context) {
		ctx := tabOn(t, actx)
		for i := range 2 {
			url := fmt.Sprintf("data:text/html,<html><body><h1 id=x>Hi %d</h1></body></html>", i)
			if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady(chromedp.ID("x"))); err != nil {
				t.Fatalf("navigation %d to a data: URL: %v", i+1, err)
			}
			text, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("x")))
			if err != nil || text != fmt.Sprintf("Hi %d", i) {
				t.Fatalf("navigation %d: text %q, %v", i+1, text, err)
			}
		}
	})
}

func TestCompatCommandLineAPI(t *testing.T) {
	doors(t, func(t *testing.T, actx context.Context) {
		ctx := tabOn(t, actx)
		if err := chromedp.Do(ctx, chromedp.Navigate(site.URL+"/form")); err != nil {
			t.Fatal(err)
		}
		// EvaluateAsDevTools sets includeCommandLineAPI, as DevTools'
		// console does: $x, $$, copy… exist.
		got, err := chromedp.Run(ctx, chromedp.EvaluateAsDevTools[string](`typeof $x + " " + typeof $$`))
		if err != nil || got != "function function" {
			t.Fatalf("the command-line API: %q, %v", got, err)
		}
		// And not without it.
		res, err := chromedp.Run(ctx, chromedp.Evaluate[string](`typeof $x`))
		if err != nil || res != "undefined" {
			t.Fatalf("without includeCommandLineAPI: %q, %v", res, err)
		}
	})
}

func TestCompatBrowserContextOnTabSession(t *testing.T) {
	doors(t, func(t *testing.T, actx context.Context) {
		root := tabOn(t, actx)
		if err := chromedp.Do(root); err != nil {
			t.Fatal(err)
		}
		ctx := tabOn(t, root, chromedp.WithNewBrowserContext())
		if err := chromedp.Do(ctx); err != nil {
			t.Fatal(err)
		}
		want := chromedp.FromContext(ctx).BrowserContextID
		var got target.Info
		if err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			res, err := chromedp.Call(ctx, target.GetTargetInfo, target.GetTargetInfoParams{})
			if err == nil {
				got = *res.TargetInfo
			}
			return err
		})); err != nil {
			t.Fatal(err)
		}
		if want == "" || got.BrowserContextID != want {
			t.Fatalf("Target.getTargetInfo on the tab's session says browser context %q, want %q (the one the tab was opened in)", got.BrowserContextID, want)
		}
		if got.TargetID != chromedp.FromContext(ctx).Target.TargetID {
			t.Fatalf("target %q, want %q", got.TargetID, chromedp.FromContext(ctx).Target.TargetID)
		}
	})
}

func TestCompatDownloadIntoDir(t *testing.T) {
	doors(t, func(t *testing.T, actx context.Context) {
		ctx := tabOn(t, actx)
		dir := t.TempDir()
		body := "the bytes of " + t.Name()
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/data.bin" {
				w.Header().Set("Content-Type", "application/octet-stream")
				fmt.Fprint(w, body)
				return
			}
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<a id="download" href="/data.bin">download</a>`)
		}))
		defer s.Close()
		// As chromedp's TestDownloadIntoDir: the behavior set on the tab's
		// session, the events read there.
		progress := chromedp.Events(ctx, browser.DownloadProgress)
		if err := chromedp.Do(ctx,
			chromedp.Navigate(s.URL),
			chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
				_, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
					Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: new(true),
				})
				return err
			}),
			chromedp.Click(chromedp.ID("download")),
		); err != nil {
			t.Fatal(err)
		}
		for ev, err := range progress {
			if err != nil {
				t.Fatalf("waiting for the completed download: %v", err)
			}
			if ev.State != browser.DownloadProgressStateCompleted {
				continue
			}
			want := filepath.Join(dir, ev.GUID)
			got, err := os.ReadFile(want)
			if err != nil {
				t.Fatalf("the download is not at %s (allowAndName): %v; filePath %q", want, err, ev.FilePath)
			}
			if string(got) != body {
				t.Fatalf("the file holds %q, want %q", got, body)
			}
			if ev.FilePath != want {
				t.Errorf("filePath %q, want %q", ev.FilePath, want)
			}
			return
		}
	})
}

func TestCompatErrorPages(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/index", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<a id="bad" href="bad://%s/index">bad</a> <a id="badiframe" href="/badiframe">badiframe</a>`, r.Host)
	})
	mux.HandleFunc("/badiframe", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><body><iframe src="badurl://localhost/"></iframe></body></html>`)
	})
	s := httptest.NewServer(mux)
	defer s.Close()
	doors(t, func(t *testing.T, actx context.Context) {
		for _, tc := range []struct {
			name    string
			action  chromedp.Action[chromedp.Void]
			wantErr string
			wantURL string
		}{
			{"NavigateBadProtocol", chromedp.Navigate(strings.Replace(s.URL, "http://", "bad://", 1) + "/index"), "ERR_ABORTED", ""},
			{"ClickBadProtocol", chromedp.Click(chromedp.ID("bad")), "ERR_ABORTED", ""},
			{"NavigateBadIframe", chromedp.Navigate(s.URL + "/badiframe"), "", "/badiframe"},
			{"ClickBadIframe", chromedp.Click(chromedp.ID("badiframe")), "", "/badiframe"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ctx := tabOn(t, actx)
				ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
				defer cancel()
				if err := chromedp.Do(ctx, chromedp.Navigate(s.URL+"/index")); err != nil {
					t.Fatal(err)
				}
				resp, err := chromedp.RunResponse(ctx, tc.action)
				if tc.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) || resp != nil {
						t.Fatalf("want an error with %s and no response, got %v, %v", tc.wantErr, err, resp)
					}
				} else if err != nil || resp == nil || !strings.HasSuffix(resp.URL, tc.wantURL) {
					t.Fatalf("want the response of %s, got %v, %v", tc.wantURL, resp, err)
				}
				// The tab is still attached and answers.
				if v, err := chromedp.Run(ctx, chromedp.Evaluate[int](`1 + 1`)); err != nil || v != 2 {
					t.Fatalf("the tab after it: %d, %v", v, err)
				}
			})
		}
	})
}

// A program's downloadPath takes only its own downloads: the person's, in
// a tab the program neither opened nor drives, stay in the person's
// Downloads folder however the program set its behavior.
func TestDownloadPathTakesNotThePersonsDownloads(t *testing.T) {
	if env == nil {
		browsertest.RequireChromium(t)
	}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/persons.bin" {
			w.Header().Set("Content-Type", "application/octet-stream")
			fmt.Fprint(w, "the person's own file")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<a id="download" href="/persons.bin">download</a>`)
	}))
	defer s.Close()
	dir := t.TempDir()
	thief := dialRaw(t)
	thief.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": dir, "eventsEnabled": true})

	id := userTab(t, s.URL)
	closeUserTab(t, id)
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		if _, err := u.Eval(ctx, id, `document.getElementById('download').click(), true`); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the person's page did not load")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The download's completion reaches the relay within a second or two
	// here; give it five.
	time.Sleep(5 * time.Second)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		t.Errorf("the person's download %s was moved into another program's downloadPath", e.Name())
	}
	if thief.seen("persons.bin") {
		t.Error("another program heard of the person's download (its URL or path)")
	}
}
