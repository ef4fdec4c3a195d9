package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// makerPage makes an image after a click the way image generators do: a
// canvas drawn a moment later, its toBlob becoming an <img src=blob:>, a
// status line, a changed total and a request telling the server.
const makerPage = `<!doctype html><html><head><meta charset="utf-8"><title>Maker</title></head><body>
<h1>Maker</h1>
<button id="make" onclick="make()">Make image</button>
<button id="old">Old button</button>
<label>Total <input id="total" value="1"></label>
<div role="status" id="st"></div>
<script>
function make() {
  setTimeout(() => {
    const c = document.createElement('canvas');
    c.width = 120; c.height = 90;
    const g = c.getContext('2d');
    g.fillStyle = 'red'; g.fillRect(0, 0, 120, 90);
    c.toBlob(b => {
      const img = new Image();
      img.alt = 'Generated picture';
      img.src = URL.createObjectURL(b);
      document.body.append(img);
      document.getElementById('old').remove();
      document.getElementById('st').textContent = 'Image ready';
      document.getElementById('total').value = '2';
      document.querySelector('h1').textContent = 'Maker: done';
      const al = document.createElement('div');
      al.setAttribute('role', 'alert');
      al.textContent = 'Quota almost used';
      document.body.append(al);
      fetch("/made", {method: "POST"});
    });
  }, 80);
}
</script>
</body></html>`

type makerApp struct {
	*httptest.Server
	made atomic.Int32
}

func newMakerApp(t *testing.T) *makerApp {
	a := &makerApp{}
	mux := http.NewServeMux()
	mux.HandleFunc("/maker", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, makerPage) })
	mux.HandleFunc("POST /made", func(w http.ResponseWriter, r *http.Request) { a.made.Add(1) })
	a.Server = httptest.NewServer(mux)
	t.Cleanup(a.Close)
	return a
}

// A click returns once the page has settled: the image the click made
// later is in the snapshot taken right after, the request it sent has
// reached the server, and the click's result says what it waited for and
// what changed.
func TestMCPSettle(t *testing.T) {
	onServe(t, func(t *testing.T, h *home, args []string) {
		app := newMakerApp(t)
		c := startMCP(t, h, nil, append(args, "--allow-domain", "127.0.0.1")...)
		c.ok(t, "browser_navigate", map[string]any{"url": app.URL + "/maker"})
		snap, _ := c.ok(t, "browser_snapshot", nil)
		out, _ := c.ok(t, "browser_click", map[string]any{"index": index(t, snap, `button "Make image"`)})
		for _, want := range []string{
			"; settled in ",
			// The blob's URL, for browser_capture to take at once.
			`+ img "Generated picture" (blob: image) src=blob:` + app.URL + "/",
			`- button "Old button"`,
			`~ textbox "Total" = "2"`,
			`! status "Image ready"`,
			`! alert "Quota almost used"`,
			`# heading "Maker: done"`,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("the click's result lacks %q:\n%s", want, out)
			}
		}
		if n := strings.Count(out, "Quota almost used"); n != 1 {
			t.Errorf("the alert is said %d times:\n%s", n, out)
		}
		if n := app.made.Load(); n != 1 {
			t.Errorf("the server heard of %d images when the click returned, want 1", n)
		}
		snap, _ = c.ok(t, "browser_snapshot", map[string]any{"text": true})
		if !strings.Contains(snap, `img "Generated picture"`) {
			t.Errorf("the snapshot right after the click lacks the image:\n%s", snap)
		}
		_, vt, _ := strings.Cut(snap, "Visible text of the viewport:")
		for _, want := range []string{"Maker: done", "Image ready", "Quota almost used"} {
			if !strings.Contains(vt, want) {
				t.Errorf("the viewport text lacks %q:\n%s", want, snap)
			}
		}
		// Nothing happens: a short wait, and it says so.
		out, _ = c.ok(t, "browser_hover", map[string]any{"index": index(t, snap, `button "Make image"`)})
		if !strings.HasSuffix(out, "; nothing changed") {
			t.Errorf("hover: %s", out)
		}
	})
}

// receiverPage sends a chosen file to the server and says so in a status
// line once the server answered.
const receiverPage = `<!doctype html><html><head><meta charset="utf-8"><title>Receiver</title></head><body>
<label>Report <input id="f" type="file"></label><p role="status" id="st">No file yet</p>
<script>
f.onchange = async () => {
  const r = await fetch('/receive', {method: 'POST', body: f.files[0]});
  st.textContent = 'Received ' + f.files[0].name + ': ' + (await r.text()) + ' bytes';
};
</script></body></html>`

// An upload settles like a click: its result says what the page made of
// the file (here the status line written once the server answered), so
// the agent needs no snapshot to check it.
func TestMCPUploadSettles(t *testing.T) {
	onServe(t, func(t *testing.T, h *home, args []string) {
		var got atomic.Int32
		mux := http.NewServeMux()
		mux.HandleFunc("/receiver", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, receiverPage) })
		mux.HandleFunc("POST /receive", func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			got.Store(int32(len(b)))
			fmt.Fprint(w, len(b))
		})
		app := httptest.NewServer(mux)
		t.Cleanup(app.Close)
		up := t.TempDir()
		if err := os.WriteFile(filepath.Join(up, "report.txt"), []byte("twelve bytes"), 0o644); err != nil {
			t.Fatal(err)
		}
		c := startMCP(t, h, nil, append(args, "--allow-domain", "127.0.0.1", "--upload-dir", up)...)
		c.ok(t, "browser_navigate", map[string]any{"url": app.URL + "/receiver"})
		snap, _ := c.ok(t, "browser_snapshot", nil)
		out, _ := c.ok(t, "browser_upload", map[string]any{"index": index(t, snap, `"Report"`), "files": []string{"report.txt"}})
		for _, want := range []string{"report.txt (text/plain", "settled in", `! status "Received report.txt: 12 bytes"`} {
			if !strings.Contains(out, want) {
				t.Errorf("the upload's result lacks %q:\n%s", want, out)
			}
		}
		if n := got.Load(); n != 12 {
			t.Errorf("the server had %d bytes when the upload returned, want 12", n)
		}
	})
}

// stepsPage reacts to a click in steps, each started by the one before: a
// status line at once, a request answered late, two frames after its
// answer a second
// status and request, and in the frame after that answer the last status
// line. None waits on a timer.
const stepsPage = `<!doctype html><html><head><meta charset="utf-8"><title>Steps</title></head><body>
<button id="go">Go</button><div role="status" id="st">Idle</div>
<script>
const frames = (n, f) => n ? requestAnimationFrame(() => frames(n - 1, f)) : f();
go.onclick = async () => {
  st.textContent = 'Working';
  await fetch('/step?n=1');
  frames(2, async () => {
    st.textContent = 'Saving';
    await fetch('/step?n=2');
    frames(1, () => { st.textContent = 'Done: 2 steps'; });
  });
};
</script></body></html>`

// A page that reacts settles sooner than one that does not (speed is the
// agents benchmark's), but not before its reaction ran its course: each
// step a request answer or a frame starts is waited for, and the click's
// result says the last status line, with both requests served.
func TestMCPSettleFollowsTheReaction(t *testing.T) {
	onServe(t, func(t *testing.T, h *home, args []string) {
		var steps atomic.Int32
		mux := http.NewServeMux()
		mux.HandleFunc("/steps", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, stepsPage) })
		mux.HandleFunc("/step", func(w http.ResponseWriter, r *http.Request) {
			// The first answer comes late: the status line written at
			// once is long quiet by then.
			if r.URL.Query().Get("n") == "1" {
				time.Sleep(80 * time.Millisecond)
			}
			steps.Add(1)
			fmt.Fprint(w, "ok")
		})
		app := httptest.NewServer(mux)
		t.Cleanup(app.Close)
		c := startMCP(t, h, nil, append(args, "--allow-domain", "127.0.0.1")...)
		c.ok(t, "browser_navigate", map[string]any{"url": app.URL + "/steps"})
		snap, _ := c.ok(t, "browser_snapshot", nil)
		for i := range 3 {
			out, _ := c.ok(t, "browser_click", map[string]any{"index": index(t, snap, `button "Go"`)})
			if !strings.Contains(out, `! status "Done: 2 steps"`) || !strings.Contains(out, "; settled in ") {
				t.Errorf("click %d: the result lacks the last step:\n%s", i+1, out)

			}
			if n := steps.Load(); n != int32(2*(i+1)) {
				t.Errorf("click %d: the server served %d steps when the click returned, want %d", i+1, n, 2*(i+1))
			}
			// The status is the same text again: reset it so the next
			// click's change shows.
			c.ok(t, "browser_navigate", map[string]any{"url": app.URL + "/steps"})
			snap, _ = c.ok(t, "browser_snapshot", nil)
		}
	})
}

// checkerPage asks the server whether it takes a file before it says so on
// the input: a file over ten bytes is marked invalid once the answer came.
const checkerPage = `<!doctype html><html><head><meta charset="utf-8"><title>Checker</title></head><body>
<label>Report <input id="f" type="file"></label><p role="status" id="st">No file yet</p>
<script>
f.onchange = async () => {
  const n = (await f.files[0].arrayBuffer()).byteLength;
  const ok = (await (await fetch('/check?n=' + n)).text()) === 'ok';
  f.setCustomValidity(ok ? '' : 'The report is too big: ' + n + ' bytes');
  st.textContent = ok ? 'Report taken' : 'Report refused';
};
</script></body></html>`

// An upload's check for a rejection comes after the page settled, in the
// one wait: a page that rejects the file only once its server answered is
// reported as rejecting it, and one that takes it as taking it.
func TestMCPUploadRejectedAfterSettling(t *testing.T) {
	onServe(t, func(t *testing.T, h *home, args []string) {
		mux := http.NewServeMux()
		mux.HandleFunc("/checker", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, checkerPage) })
		mux.HandleFunc("/check", func(w http.ResponseWriter, r *http.Request) {
			// A slow answer: longer than any fixed wait for a rejection.
			time.Sleep(150 * time.Millisecond)
			if r.URL.Query().Get("n") == "4" {
				fmt.Fprint(w, "ok")
				return
			}
			fmt.Fprint(w, "no")
		})
		app := httptest.NewServer(mux)
		t.Cleanup(app.Close)
		up := t.TempDir()
		for name, body := range map[string]string{"small.txt": "four", "big.txt": "far more than ten bytes"} {
			if err := os.WriteFile(filepath.Join(up, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		c := startMCP(t, h, nil, append(args, "--allow-domain", "127.0.0.1", "--upload-dir", up)...)
		c.ok(t, "browser_navigate", map[string]any{"url": app.URL + "/checker"})
		snap, _ := c.ok(t, "browser_snapshot", nil)
		res := c.call(t, "browser_upload", map[string]any{"index": index(t, snap, `"Report"`), "files": []string{"big.txt"}})
		if out := resultText(res); !res.IsError || !strings.Contains(out, "The report is too big: 23 bytes") {
			t.Errorf("a file the page refused after its server answered: error %v, %s", res.IsError, out)
		}
		out, _ := c.ok(t, "browser_upload", map[string]any{"index": index(t, snap, `"Report"`), "files": []string{"small.txt"}})
		if !strings.Contains(out, "small.txt (text/plain") || !strings.Contains(out, `! status "Report taken"`) {
			t.Errorf("a file the page took:\n%s", out)
		}
	})
}

// lateRenderPage renders its button only after its load event: a request
// answered late, then a frame.
const lateRenderPage = `<!doctype html><html><head><meta charset="utf-8"><title>Late</title></head><body>
<p id="st">Loading</p>
<script>
addEventListener('load', async () => {
  const text = await (await fetch('/late-data')).text();
  requestAnimationFrame(() => {
    const b = document.createElement('button');
    b.textContent = text;
    document.body.append(b);
    st.textContent = 'Ready';
    document.title = 'Late: ' + text;
  });
});
</script></body></html>`

// A navigation returns once the new page settled, not at its load event:
// what the page renders from a request it sends after loading is in the
// snapshot taken right after, and the title it sets then is the one the
// result says. The document is watched from its start, so a page that was
// quiet while loading is not waited for again.
func TestMCPNavigateSettlesAfterLoad(t *testing.T) {
	onServe(t, func(t *testing.T, h *home, args []string) {
		mux := http.NewServeMux()
		mux.HandleFunc("/late", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, lateRenderPage) })
		mux.HandleFunc("/late-data", func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(80 * time.Millisecond)
			fmt.Fprint(w, "Rendered late")
		})
		app := httptest.NewServer(mux)
		t.Cleanup(app.Close)
		c := startMCP(t, h, nil, append(args, "--allow-domain", "127.0.0.1")...)
		for i := range 3 {
			out, _ := c.ok(t, "browser_navigate", map[string]any{"url": app.URL + "/late"})
			if !regexp.MustCompile(`\ntitle: "Late: Rendered late"\n</page id=[0-9a-f]{6}>; settled in [\d.]+m?s$`).MatchString(out) {
				t.Errorf("navigation %d: %s", i+1, out)
			}
			snap, _ := c.ok(t, "browser_snapshot", nil)
			if !strings.Contains(snap, `button "Rendered late"`) {
				t.Errorf("navigation %d: the snapshot right after lacks what the page rendered after loading:\n%s", i+1, snap)
			}
		}
	})
}

// A page without scripts cannot change once parsed; one that refreshes
// itself to another page does, without a script.
const (
	staticPage  = `<!doctype html><html><head><meta charset="utf-8"><title>Static</title></head><body><h1>Static</h1><p>Nothing here runs.</p><a href="/landed">On</a></body></html>`
	refreshPage = `<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="refresh" content="0; url=/landed"><title>Moving</title></head><body><p>Moving on</p></body></html>`
	landedPage  = `<!doctype html><html><head><meta charset="utf-8"><title>Landed</title></head><body><button>Here</button></body></html>`
)

// A navigation to a page with no script settles as soon as its document
// was quiet a moment, without waiting for frames; a page with no script
// that refreshes itself at once is not taken for static: the navigation
// returns on the page it moved to, which the server has served by then.
func TestMCPNavigateStaticPage(t *testing.T) {
	onServe(t, func(t *testing.T, h *home, args []string) {
		var landed atomic.Int32
		mux := http.NewServeMux()
		mux.HandleFunc("/static", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, staticPage) })
		mux.HandleFunc("/refresh", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, refreshPage) })
		mux.HandleFunc("/landed", func(w http.ResponseWriter, r *http.Request) { landed.Add(1); fmt.Fprint(w, landedPage) })
		app := httptest.NewServer(mux)
		t.Cleanup(app.Close)
		c := startMCP(t, h, nil, append(args, "--allow-domain", "127.0.0.1")...)
		for i := range 3 {
			out, _ := c.ok(t, "browser_navigate", map[string]any{"url": app.URL + "/static"})
			if !regexp.MustCompile(`title: "Static"\n</page id=[0-9a-f]{6}>; settled in [\d.]+m?s$`).MatchString(out) {
				t.Errorf("static %d: %s", i+1, out)
			}
			n := landed.Load()
			out, _ = c.ok(t, "browser_navigate", map[string]any{"url": app.URL + "/refresh"})
			if landed.Load() != n+1 {
				t.Errorf("refresh %d: the server had not served the page it moved to when the navigation returned:\n%s", i+1, out)
			}
			if snap, _ := c.ok(t, "browser_snapshot", nil); !strings.Contains(snap, `button "Here"`) || !strings.Contains(snap, app.URL+"/landed") {
				t.Errorf("refresh %d: the snapshot right after:\n%s", i+1, snap)
			}
		}
	})
}

// vanishingPage removes its file input when asked.
const vanishingPage = `<!doctype html><html><head><meta charset="utf-8"><title>Vanishing</title></head><body>
<label>Report <input id="f" type="file" onchange="fetch('/got', {method: 'POST', body: f.files[0]})"></label>
<button onclick="f.parentElement.remove()">Remove it</button>
</body></html>`

// An upload to an element the page removed since the snapshot fails and
// says why, and nothing reaches the server; to a selector, it goes in.
func TestMCPUploadToRemovedElement(t *testing.T) {
	onServe(t, func(t *testing.T, h *home, args []string) {
		var got atomic.Int32
		mux := http.NewServeMux()
		mux.HandleFunc("/vanishing", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, vanishingPage) })
		mux.HandleFunc("POST /got", func(w http.ResponseWriter, r *http.Request) { got.Add(1) })
		app := httptest.NewServer(mux)
		t.Cleanup(app.Close)
		up := t.TempDir()
		if err := os.WriteFile(filepath.Join(up, "a.txt"), []byte("a"), 0o644); err != nil {
			t.Fatal(err)
		}
		c := startMCP(t, h, nil, append(args, "--allow-domain", "127.0.0.1", "--upload-dir", up)...)
		c.ok(t, "browser_navigate", map[string]any{"url": app.URL + "/vanishing"})
		snap, _ := c.ok(t, "browser_snapshot", nil)
		input := index(t, snap, `"Report"`)
		c.ok(t, "browser_click", map[string]any{"index": index(t, snap, `button "Remove it"`)})
		res := c.call(t, "browser_upload", map[string]any{"index": input, "files": []string{"a.txt"}})
		if out := resultText(res); !res.IsError || !strings.Contains(out, "was removed from the page") {
			t.Errorf("an upload to a removed input: error %v: %s", res.IsError, out)
		}
		c.ok(t, "browser_navigate", map[string]any{"url": app.URL + "/vanishing"})
		c.ok(t, "browser_upload", map[string]any{"selector": "#f", "files": []string{"a.txt"}})
		if n := got.Load(); n != 1 {
			t.Errorf("the server got %d uploads, want 1", n)
		}
	})
}

// busyPage starts, on a click, a request 300 ms later and a counter that
// changes the page at once and then every 10 ms for ever (at once: under
// CI's load the first tick once came after the click had settled).
const busyPage = `<!doctype html><html><head><meta charset="utf-8"><title>Busy</title></head><body>
<button id="late" onclick="setTimeout(() => fetch('/late', {method: 'POST'}), 300)">Later</button>
<button id="tick" onclick="n.textContent = +n.textContent + 1; setInterval(() => n.textContent = +n.textContent + 1, 10)">Tick</button><p id="n">0</p>
</body></html>`

// --settle bounds the wait: 0 returns at once, before what the page does
// later (which still happens), and a page that never goes quiet is given
// up on after the bound, with the result saying so.
func TestMCPSettleFlag(t *testing.T) {
	onServe(t, func(t *testing.T, h *home, args []string) {
		var late atomic.Int32
		mux := http.NewServeMux()
		mux.HandleFunc("/busy", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, busyPage) })
		mux.HandleFunc("POST /late", func(w http.ResponseWriter, r *http.Request) { late.Add(1) })
		app := httptest.NewServer(mux)
		t.Cleanup(app.Close)

		c := startMCP(t, h, nil, append(slices.Clone(args), "--allow-domain", "127.0.0.1", "--settle", "0")...)
		c.ok(t, "browser_navigate", map[string]any{"url": app.URL + "/busy"})
		snap, _ := c.ok(t, "browser_snapshot", nil)
		out, _ := c.ok(t, "browser_click", map[string]any{"index": index(t, snap, `button "Later"`)})
		if n := late.Load(); n != 0 || strings.Contains(out, "settled") {
			t.Errorf("--settle 0: the server had %d requests when the click returned: %s", n, out)
		}
		// What the page does later still happens. (A browser_wait for
		// network idle here could return before the page's timer fired:
		// no request in flight yet. Under CI's load it did.)
		for deadline := time.Now().Add(5 * time.Second); late.Load() == 0 && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
		if n := late.Load(); n != 1 {
			t.Errorf("--settle 0: the page's late request reached the server %d times, want 1", n)
		}

		c = startMCP(t, h, nil, append(slices.Clone(args), "--allow-domain", "127.0.0.1", "--settle", "300ms")...)
		c.ok(t, "browser_navigate", map[string]any{"url": app.URL + "/busy"})
		snap, _ = c.ok(t, "browser_snapshot", nil)
		start := time.Now()
		out, _ = c.ok(t, "browser_click", map[string]any{"index": index(t, snap, `button "Tick"`)})
		if !regexp.MustCompile(`; not settled after (3\d\d|[4-9]\d\d)ms: the DOM still changing`).MatchString(out) {
			t.Errorf("--settle 300ms on a page that never goes quiet: %s", out)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("the click took %v", d)
		}
	})
}
