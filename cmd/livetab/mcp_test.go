package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/livetab/livetab/policy"
)

// studioPage is a small "generate an image" app: a prompt, a Generate
// button that asks the server for an image, a file input that sends the
// chosen file to the server, and a button that must never be pressed
// without the person's yes.
const studioPage = `<!doctype html><html><head><meta charset="utf-8"><title>Studio</title></head><body>
<label>Prompt <input id="prompt"></label>
<label>Password <input id="pw" type="password"></label>
<button id="gen" onclick="generate()">Generate</button>
<div id="result"></div>
<label>Reference image <input id="file" type="file" accept="image/*" onchange="send(this.files[0])"></label>
<p id="upl"></p>
<button id="del" onclick="fetch('/delete', {method: 'POST'}).then(() => upl.textContent = 'deleted')">Delete account</button>
<script>
function generate() {
  const p = document.getElementById('prompt').value;
  fetch('/generate', {method: 'POST', body: p}).then(r => r.text()).then(id => {
    const img = new Image();
    img.alt = 'Result for ' + p;
    img.src = '/img/' + id + '.png';
    document.getElementById('result').append(img);
  });
}
function send(f) {
  const fd = new FormData();
  fd.append('f', f);
  fetch('/upload', {method: 'POST', body: fd}).then(r => r.text()).then(t => upl.textContent = 'uploaded ' + t);
}
</script>
</body></html>`

// studio is the app's server side, with what the tests assert on.
type studio struct {
	*httptest.Server
	mu      sync.Mutex
	prompts []string
	images  map[string][]byte
	uploads []string // "name size sha256"
	deletes int
}

func newStudio(t *testing.T) *studio {
	s := &studio{images: map[string][]byte{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/app", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, studioPage)
	})
	mux.HandleFunc("POST /generate", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		img := image.NewRGBA(image.Rect(0, 0, 64, 48))
		for i := range img.Pix {
			img.Pix[i] = byte(len(b)*37 + i)
		}
		img.Set(1, 1, color.RGBA{255, 0, 0, 255})
		var buf bytes.Buffer
		png.Encode(&buf, img)
		s.mu.Lock()
		s.prompts = append(s.prompts, string(b))
		id := strconv.Itoa(len(s.prompts))
		s.images[id] = buf.Bytes()
		s.mu.Unlock()
		fmt.Fprint(w, id)
	})
	mux.HandleFunc("/img/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		b := s.images[strings.TrimSuffix(r.PathValue("id"), ".png")]
		s.mu.Unlock()
		w.Header().Set("Content-Type", "image/png")
		w.Write(b)
	})
	mux.HandleFunc("POST /upload", func(w http.ResponseWriter, r *http.Request) {
		f, h, err := r.FormFile("f")
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		b, _ := io.ReadAll(f)
		sum := sha256.Sum256(b)
		entry := fmt.Sprintf("%s %d %s", h.Filename, len(b), hex.EncodeToString(sum[:]))
		s.mu.Lock()
		s.uploads = append(s.uploads, entry)
		s.mu.Unlock()
		fmt.Fprint(w, entry)
	})
	mux.HandleFunc("POST /delete", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.deletes++
		s.mu.Unlock()
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// mcpClient is an MCP client session with the binary, and its stderr.
type mcpClient struct {
	*mcp.ClientSession
	stderr *lockedBuffer
	cmd    *exec.Cmd // the server's process; nil in process
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startMCP runs `livetab mcp args...` in h and connects the Go SDK's
// client to it over stdio.
func startMCP(t *testing.T, h *home, opts *mcp.ClientOptions, args ...string) *mcpClient {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"mcp"}, args...)...)
	cmd.Env = h.environ()
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	dieWithTest(cmd)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "livetab-test", Version: "v0"}, opts)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to livetab mcp: %v\n%s", err, stderr.String())
	}
	c := &mcpClient{ClientSession: cs, stderr: stderr, cmd: cmd}
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("livetab mcp's stderr:\n%s", stderr.String())
		}
	})
	return c
}

// call calls a tool and returns its result; a protocol error fails the
// test.
func (c *mcpClient) call(t *testing.T, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// ok calls a tool that must succeed and returns its text.
func (c *mcpClient) ok(t *testing.T, name string, args map[string]any) (string, *mcp.CallToolResult) {
	t.Helper()
	res := c.call(t, name, args)
	text := resultText(res)
	if res.IsError {
		t.Fatalf("%s %v: %s", name, args, text)
	}
	return text, res
}

// denied calls a tool that the policy must refuse by rule.
func (c *mcpClient) denied(t *testing.T, rule, name string, args map[string]any) string {
	t.Helper()
	res := c.call(t, name, args)
	text := resultText(res)
	if !res.IsError || !strings.Contains(text, "denied by livetab's policy [rule "+rule+"]") {
		t.Fatalf("%s %v: want a denial by rule %s, got %s", name, args, rule, text)
	}
	return text
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// index finds the index of the element on a snapshot line.
func index(t *testing.T, snapshot, line string) int {
	t.Helper()
	i := strings.Index(snapshot, line)
	if i < 0 {
		t.Fatalf("no %s in the snapshot:\n%s", line, snapshot)
	}
	head := snapshot[:i]
	n, err := strconv.Atoi(head[strings.LastIndex(head, "[")+1 : strings.LastIndex(head, "]")])
	if err != nil {
		t.Fatalf("no index before %s: %v", line, err)
	}
	return n
}

func structured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	b, err := jsonv2.Marshal(res.StructuredContent)
	if err == nil {
		err = jsonv2.Unmarshal(b, v)
	}
	if err != nil {
		t.Fatalf("structured content %v: %v", res.StructuredContent, err)
	}
}

// The whole task through `livetab mcp --launch=headless` as a subprocess:
// look, type, click, screenshot, capture the generated image, upload it,
// and the policy on the way (a confirmation the person declines, eval off,
// a private address), then the audit log line by line.
func TestMCPTask(t *testing.T) {
	requireBrowser(t)
	st := newStudio(t)
	h := newHome(t)
	dl := filepath.Join(h.dir, "downloads")
	audit := filepath.Join(h.dir, "audit.jsonl")
	const password = "pw-Never-In-The-Log-42"
	var elicited []string
	opts := &mcp.ClientOptions{
		// The person: yes to everything but deleting the account.
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			elicited = append(elicited, req.Params.Message)
			allow := !strings.Contains(req.Params.Message, "Delete account")
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": allow}}, nil
		},
	}
	c := startMCP(t, h, opts, "--launch=headless", "--allow-domain", "127.0.0.1",
		"--download-dir", dl, "--audit", audit, "--confirm-domain", "127.0.0.1")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tools, err := c.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]*mcp.Tool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = tool
	}
	for _, want := range []string{"browser_snapshot", "browser_navigate", "browser_click", "browser_type", "browser_screenshot",
		"browser_tabs", "browser_capture", "browser_upload", "browser_read", "browser_find", "browser_fill_form"} {
		if names[want] == nil {
			t.Fatalf("no tool %s in %v", want, tools.Tools)
		}
	}
	// Evaluation is off, so its tool is not listed; the retry note is said
	// once, in the instructions.
	if names["browser_eval"] != nil {
		t.Errorf("browser_eval is listed while evaluation is off")
	}
	if d := names["browser_click"].Description; !strings.Contains(d, "latest browser_snapshot") || strings.Contains(d, "reconnecting") {
		t.Errorf("browser_click's description: %s", d)
	}
	if ins := c.InitializeResult().Instructions; !strings.Contains(ins, "reconnecting or disconnected, wait a second and retry") {
		t.Errorf("the instructions lack the retry note:\n%s", ins)
	}

	c.ok(t, "browser_navigate", map[string]any{"url": st.URL + "/app"})
	snap, _ := c.ok(t, "browser_snapshot", nil)
	prompt := index(t, snap, `textbox "Prompt"`)
	pw := index(t, snap, `textbox "Password"`)
	gen := index(t, snap, `button "Generate"`)
	c.ok(t, "browser_type", map[string]any{"index": prompt, "text": "red fox"})
	c.ok(t, "browser_type", map[string]any{"index": pw, "text": password})
	c.ok(t, "browser_click", map[string]any{"index": gen})
	c.ok(t, "browser_wait", map[string]any{"selector": "#result img"})
	st.mu.Lock()
	prompts := strings.Join(st.prompts, "|")
	st.mu.Unlock()
	if prompts != "red fox" {
		t.Fatalf("the server got prompts %q", prompts)
	}

	// A screenshot comes back as image content.
	_, res := c.ok(t, "browser_screenshot", nil)
	var shot *mcp.ImageContent
	for _, ct := range res.Content {
		if ic, ok := ct.(*mcp.ImageContent); ok {
			shot = ic
		}
	}
	if shot == nil || shot.MIMEType != "image/png" {
		t.Fatalf("no PNG image content in the screenshot: %v", res.Content)
	}
	if _, err := png.Decode(bytes.NewReader(shot.Data)); err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}

	// Capture the generated image into the download directory.
	snap, _ = c.ok(t, "browser_snapshot", nil)
	img := index(t, snap, `img "Result for red fox"`)
	text, res := c.ok(t, "browser_capture", map[string]any{"index": img})
	var cap struct {
		Path   string `json:"path"`
		MIME   string `json:"mime"`
		SHA256 string `json:"sha256"`
		Size   int64  `json:"size"`
	}
	structured(t, res, &cap)
	st.mu.Lock()
	served := st.images["1"]
	st.mu.Unlock()
	sum := sha256.Sum256(served)
	if cap.SHA256 != hex.EncodeToString(sum[:]) || cap.Size != int64(len(served)) || cap.MIME != "image/png" || filepath.Dir(cap.Path) != dl {
		t.Fatalf("capture: %+v (%s); want %d bytes, sha256 %x in %s", cap, text, len(served), sum, dl)
	}
	if b, err := os.ReadFile(cap.Path); err != nil || !bytes.Equal(b, served) {
		t.Fatalf("the captured file: %v", err)
	}
	var link *mcp.ResourceLink
	for _, ct := range res.Content {
		if l, ok := ct.(*mcp.ResourceLink); ok {
			link = l
		}
	}
	if link == nil || link.URI != "file://"+cap.Path || link.MIMEType != "image/png" || link.Size == nil || *link.Size != cap.Size {
		t.Fatalf("the capture's resource link: %+v", link)
	}

	// Upload the captured file, by its name in the download directory.
	file := index(t, snap, `type=file`)
	del := index(t, snap, `button "Delete account"`)
	_, res = c.ok(t, "browser_upload", map[string]any{"index": file, "files": []string{filepath.Base(cap.Path)}})
	var up struct {
		Files []struct {
			Name   string `json:"name"`
			SHA256 string `json:"sha256"`
		} `json:"files"`
	}
	structured(t, res, &up)
	if len(up.Files) != 1 || up.Files[0].SHA256 != cap.SHA256 {
		t.Fatalf("upload result: %+v", up)
	}
	c.ok(t, "browser_wait", map[string]any{"text": "uploaded " + up.Files[0].Name})
	st.mu.Lock()
	uploads := strings.Join(st.uploads, "|")
	st.mu.Unlock()
	if uploads != fmt.Sprintf("%s %d %s", up.Files[0].Name, cap.Size, cap.SHA256) {
		t.Fatalf("the server got uploads %q", uploads)
	}
	// A file outside the upload directory is refused.
	c.denied(t, policy.RuleUpload, "browser_upload", map[string]any{"index": file, "files": []string{"/etc/passwd"}})

	// The person declines; nothing reaches the server.
	text = c.denied(t, policy.RuleConfirm, "browser_click", map[string]any{"index": del})
	if !strings.Contains(text, "the person declined") {
		t.Errorf("the declined click: %s", text)
	}
	if res, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "browser_eval", Arguments: map[string]any{"expression": "document.title"}}); err == nil && !res.IsError {
		t.Errorf("browser_eval ran while evaluation is off: %s", resultText(res))
	}
	c.denied(t, policy.RuleDomain, "browser_navigate", map[string]any{"url": "http://10.0.0.1/"})
	c.denied(t, policy.RuleDomain, "browser_navigate", map[string]any{"url": "https://example.com/"})
	st.mu.Lock()
	deletes := st.deletes
	st.mu.Unlock()
	if deletes != 0 {
		t.Fatalf("the account was deleted %d times", deletes)
	}
	declined := 0
	for _, m := range elicited {
		if strings.Contains(m, "Delete account") {
			declined++
		}
	}
	if declined != 1 || len(elicited) < 4 {
		t.Errorf("elicitations: %q", elicited)
	}

	// The agent's tabs.
	_, res = c.ok(t, "browser_tabs", map[string]any{"action": "list"})
	var tabs struct {
		Tabs []struct {
			ID      string `json:"id"`
			URL     string `json:"url"`
			Origin  string `json:"origin"`
			Current bool   `json:"current"`
		} `json:"tabs"`
	}
	structured(t, res, &tabs)
	if len(tabs.Tabs) != 1 || tabs.Tabs[0].Origin != "opened" || !tabs.Tabs[0].Current || tabs.Tabs[0].URL != st.URL+"/app" {
		t.Errorf("tabs: %+v", tabs)
	}
	if strings.Contains(c.stderr.String(), password) {
		t.Error("the server's log holds the typed password")
	}
	c.Close()

	// The audit log, line by line.
	b, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(password)) {
		t.Fatalf("the audit log holds the typed password:\n%s", b)
	}
	want := []struct{ tool, decision, outcome, rule string }{
		{"browser_navigate", "confirmed", "ok", ""},
		{"browser_snapshot", "allowed", "ok", ""},
		{"browser_type", "confirmed", "ok", ""},
		{"browser_type", "confirmed", "ok", ""},
		{"browser_click", "confirmed", "ok", ""},
		{"browser_wait", "allowed", "ok", ""},
		{"browser_screenshot", "allowed", "ok", ""},
		{"browser_snapshot", "allowed", "ok", ""},
		{"browser_capture", "allowed", "ok", ""},
		{"browser_upload", "confirmed", "ok", ""},
		{"browser_wait", "allowed", "ok", ""},
		{"browser_upload", "denied", "denied", policy.RuleUpload},
		{"browser_click", "denied", "denied", policy.RuleConfirm},
		{"browser_navigate", "denied", "denied", policy.RuleDomain},
		{"browser_navigate", "denied", "denied", policy.RuleDomain},
		{"browser_tabs", "allowed", "ok", ""},
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	i := 0
	for sc.Scan() {
		var e policy.AuditEntry
		if err := jsonv2.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit line %d: %v: %s", i+1, err, sc.Text())
		}
		if i >= len(want) {
			t.Fatalf("more audit lines than calls: %s", sc.Text())
		}
		w := want[i]
		if e.Tool != w.tool || e.Decision != w.decision || e.Outcome != w.outcome || e.Rule != w.rule || e.Time.IsZero() || e.DurationMS <= 0 {
			t.Errorf("audit line %d: %s; want %+v", i+1, sc.Text(), w)
		}
		if e.Tab == "" && w.tool != "browser_tabs" {
			t.Errorf("audit line %d has no tab: %s", i+1, sc.Text())
		}
		if e.Tool == "browser_type" && i == 3 && e.Args["text"] != fmt.Sprintf("[redacted, %d characters]", len(password)) {
			t.Errorf("the password's line: %s", sc.Text())
		}
		if e.Tool == "browser_type" && i == 2 && e.Args["text"] != "red fox" {
			t.Errorf("the prompt's line: %s", sc.Text())
		}
		i++
	}
	if i != len(want) {
		t.Fatalf("%d audit lines, want %d:\n%s", i, len(want), b)
	}
}

// Through the running `livetab serve`: no browser of its own, and
// JavaScript when the person allows it.
func TestMCPThroughServe(t *testing.T) {
	s := needShared(t)
	st := newStudio(t)
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--allow-eval")
	c.ok(t, "browser_navigate", map[string]any{"url": st.URL + "/app"})
	text, _ := c.ok(t, "browser_eval", map[string]any{"expression": "document.title"})
	if !strings.Contains(text, `"Studio"`) {
		t.Fatalf("eval: %s", text)
	}
	if !strings.Contains(c.stderr.String(), "using the running livetab serve") {
		t.Errorf("the server did not use the serve:\n%s", c.stderr.String())
	}
}

// A client without elicitation cannot confirm: the action is refused with
// a message that says why.
func TestMCPNoElicitation(t *testing.T) {
	s := needShared(t)
	st := newStudio(t)
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--confirm-domain", "127.0.0.1")
	text := c.denied(t, policy.RuleConfirm, "browser_navigate", map[string]any{"url": st.URL + "/app"})
	if !strings.Contains(text, "does not support elicitation") {
		t.Fatalf("the denial: %s", text)
	}
}

func requireBrowser(t *testing.T) {
	t.Helper()
	needShared(t)
}

// onBothBackends runs f on the two ways livetab mcp reaches a browser: the
// shared serve's Chromium, and a Chromium of its own (--launch=headless) in
// a fresh home. args are the backend's flags to start livetab mcp with.
// The two carry the agent's policy differently (over the endpoint's
// Livetab domain, or to a relay in the same process), so the tests of what
// the policy holds run on both.
func onBothBackends(t *testing.T, f func(t *testing.T, h *home, args []string)) {
	onBackends(t, f, true)
}

// onServe runs f on the shared serve's Chromium only: for the tests of
// what a tool does and how it settles, which run the same agent code over
// either backend. A Chromium of its own for each cost CI about 100 s.
func onServe(t *testing.T, f func(t *testing.T, h *home, args []string)) {
	onBackends(t, f, false)
}

func onBackends(t *testing.T, f func(t *testing.T, h *home, args []string), launch bool) {
	s := needShared(t)
	for _, b := range []struct {
		name string
		args []string
	}{
		{"serve", nil},
		{"launch", []string{"--launch=headless"}},
	} {
		if b.args != nil && !launch {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			h := s.home
			if b.args != nil {
				h = newHome(t)
			}
			f(t, h, slices.Clone(b.args))
		})
	}
}
