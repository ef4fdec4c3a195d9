package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// signupPage is a sign-up form of nine fields of every kind, posted to the
// server.
const signupPage = `<!doctype html><html><head><meta charset="utf-8"><title>Sign up</title></head><body>
<form method="post" action="/submit" enctype="multipart/form-data">
<label>Full name <input name="name"></label>
<label>Email <input name="email" type="email"></label>
<label>Password <input name="pw" type="password"></label>
<label>About you <textarea name="bio"></textarea></label>
<label for="country">Country</label> <select id="country" name="country"><option value="">Choose</option><option value="fr">France</option><option value="jp">Japan</option></select>
<label><input name="news" type="checkbox" checked> Newsletter</label>
<label><input type="radio" name="plan" value="free" checked> Free</label>
<label><input type="radio" name="plan" value="pro"> Pro</label>
<label><input name="terms" type="checkbox"> I accept the terms</label>
<label>Photo <input name="photo" type="file"></label>
<button>Sign up</button>
</form></body></html>`

type formApp struct {
	*httptest.Server
	mu  sync.Mutex
	got []string // "key=value" of each submission, sorted
}

func newFormApp(t *testing.T) *formApp {
	a := &formApp{}
	mux := http.NewServeMux()
	mux.HandleFunc("/form", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, signupPage) })
	mux.HandleFunc("POST /submit", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		var kv []string
		for k, vs := range r.MultipartForm.Value {
			for _, v := range vs {
				kv = append(kv, k+"="+v)
			}
		}
		for k, fs := range r.MultipartForm.File {
			for _, fh := range fs {
				f, _ := fh.Open()
				b, _ := io.ReadAll(f)
				f.Close()
				sum := sha256.Sum256(b)
				kv = append(kv, k+"="+fh.Filename+":"+hex.EncodeToString(sum[:8]))
			}
		}
		sort.Strings(kv)
		a.mu.Lock()
		a.got = kv
		a.mu.Unlock()
		fmt.Fprintf(w, `<!doctype html><title>Welcome</title><h1>Welcome, %s</h1><p>Your %s plan is ready.</p>`, r.FormValue("name"), r.FormValue("plan"))
	})
	a.Server = httptest.NewServer(mux)
	t.Cleanup(a.Close)
	return a
}

// A nine-field form through `livetab mcp`, under a confirm domain: look,
// fill every field and submit, and read the answer — three calls — with
// the person asked once per action, and the password kept out of the
// audit log.
func TestMCPFillForm(t *testing.T) {
	s := needShared(t)
	app := newFormApp(t)
	up := filepath.Join(s.home.dir, "form-uploads")
	if err := os.MkdirAll(up, 0o755); err != nil {
		t.Fatal(err)
	}
	photo := []byte("photo bytes")
	if err := os.WriteFile(filepath.Join(up, "me.png"), photo, 0o644); err != nil {
		t.Fatal(err)
	}
	audit := filepath.Join(s.home.dir, "form-audit.jsonl")
	const password = "pw-Form-Never-Logged-7"
	var mu sync.Mutex
	var asked []string
	opts := &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req.Params.Message)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}, nil
		},
	}
	c := startMCP(t, s.home, opts, "--allow-domain", "127.0.0.1", "--upload-dir", up, "--audit", audit, "--confirm-domain", "127.0.0.1")
	c.ok(t, "browser_navigate", map[string]any{"url": app.URL + "/form"})

	snap, _ := c.ok(t, "browser_snapshot", nil)
	at := func(line string) int { return index(t, snap, line) }
	fields := []map[string]any{
		{"index": at(`textbox "Full name"`), "text": "Ada Lovelace"},
		{"index": at(`textbox "Email"`), "text": "ada@example.com"},
		{"index": at(`textbox "Password"`), "text": password},
		{"index": at(`textbox "About you"`), "text": "Analyst"},
		{"index": at(`combobox "Country"`), "values": []string{"Japan"}},
		{"index": at(`checkbox "Newsletter"`), "checked": false},
		{"index": at(`radio "Pro"`), "checked": true},
		{"index": at(`checkbox "I accept the terms"`), "checked": true},
		{"index": at(`button "Photo"`), "files": []string{"me.png"}},
	}
	mu.Lock()
	asked = nil
	mu.Unlock()
	text, _ := c.ok(t, "browser_fill_form", map[string]any{"fields": fields, "submit_index": at(`button "Sign up"`)})
	if !strings.Contains(text, "Set 9 of 9 fields, each to what was asked. Then clicked") || !strings.Contains(text, "the page navigated") {
		t.Fatalf("fill:\n%s", text)
	}
	// The fields by label, to check the indexes; no value, as each holds
	// what was asked.
	for _, want := range []string{`] "Full name"` + "\n", `] "Country"` + "\n", `] "Newsletter"` + "\n", `] "Photo"` + "\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("fill: the result lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Ada Lovelace") || strings.Contains(text, "me.png") {
		t.Errorf("fill: the result repeats the values asked:\n%s", text)
	}
	if strings.Contains(text, password) {
		t.Errorf("the result shows the password:\n%s", text)
	}
	page, _ := c.ok(t, "browser_read", nil)
	if !strings.Contains(page, "Welcome, Ada Lovelace") || !strings.Contains(page, "Your pro plan is ready") {
		t.Errorf("read after submit:\n%s", page)
	}
	sum := sha256.Sum256(photo)
	want := []string{"bio=Analyst", "country=jp", "email=ada@example.com", "name=Ada Lovelace", "photo=me.png:" + hex.EncodeToString(sum[:8]),
		"plan=pro", "pw=" + password, "terms=on"}
	app.mu.Lock()
	got := app.got
	app.mu.Unlock()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the server got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Nine fields and the submit click: one question about all ten.
	mu.Lock()
	n := len(asked)
	q := strings.Join(asked, "\n")
	mu.Unlock()
	if n != 1 || !strings.Contains(q, "do these 10 things on "+app.URL+"/form: type [") || !strings.Contains(q, `; upload [`) || !strings.Contains(q, `; click [`) {
		t.Errorf("%d questions:\n%s", n, q)
	}
	b, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), password) {
		t.Errorf("the audit log holds the password:\n%s", b)
	}
	if !strings.Contains(string(b), `"tool":"browser_fill_form"`) {
		t.Errorf("no audit line for browser_fill_form:\n%s", b)
	}
}

// pickyPage refuses a file bigger than ten bytes the moment it is chosen,
// as pages check a size limit, and counts the submits it saw.
const pickyPage = `<!doctype html><html><head><meta charset="utf-8"><title>Picky</title></head><body>
<form id="f" action="/picky-sent" method="post" enctype="multipart/form-data">
<label>Name <input name="name"></label>
<label>Avatar <input id="av" name="av" type="file"></label>
<button>Send</button></form>
<script>
av.onchange = () => av.setCustomValidity(av.files[0] && av.files[0].size > 10 ? 'The avatar is over 10 bytes' : '');
</script></body></html>`

// fill_form's file fields check for a rejection as the files go in, not
// after a wait of their own: a file the page refuses at once is a failed
// field, and the form is not submitted.
func TestMCPFillFormFileRejected(t *testing.T) {
	onServe(t, func(t *testing.T, h *home, args []string) {
		var sent atomic.Int32
		mux := http.NewServeMux()
		mux.HandleFunc("/picky", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, pickyPage) })
		mux.HandleFunc("/picky-sent", func(w http.ResponseWriter, r *http.Request) { sent.Add(1); fmt.Fprint(w, "sent") })
		app := httptest.NewServer(mux)
		t.Cleanup(app.Close)
		up := t.TempDir()
		if err := os.WriteFile(filepath.Join(up, "big.png"), []byte("far more than ten bytes"), 0o644); err != nil {
			t.Fatal(err)
		}
		c := startMCP(t, h, nil, append(args, "--allow-domain", "127.0.0.1", "--upload-dir", up)...)
		c.ok(t, "browser_navigate", map[string]any{"url": app.URL + "/picky"})
		snap, _ := c.ok(t, "browser_snapshot", nil)
		out, _ := c.ok(t, "browser_fill_form", map[string]any{
			"fields": []map[string]any{
				{"index": index(t, snap, `textbox "Name"`), "text": "Ada"},
				{"index": index(t, snap, `"Avatar"`), "files": []string{"big.png"}},
			},
			"submit_index": index(t, snap, `button "Send"`),
		})
		for _, want := range []string{"Set 1 of 2 fields", "FAILED", "The avatar is over 10 bytes", "not clicked"} {
			if !strings.Contains(out, want) {
				t.Errorf("fill_form lacks %q:\n%s", want, out)
			}
		}
		if n := sent.Load(); n != 0 {
			t.Errorf("the form was sent %d times", n)
		}
	})
}
