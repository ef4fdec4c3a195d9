package extension

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/coder/websocket"
	"github.com/livetab/livetab/internal/wire"
)

// TestSquatterLearnsNothing is the attack on pairing: with no livetab
// running, another local program listens where the extension dials. The
// real extension, configured with the right token, must give it nothing
// that stands for the token and obey none of its commands, whatever the
// squatter answers: commands before any proof, a welcome without one (as
// an old bridge would), a made-up proof, a proof under another token, the
// right token's proof for another port (a real bridge elsewhere used as an
// oracle), and an old bridge's refusal of a token-less hello.
func TestSquatterLearnsNothing(t *testing.T) {
	requireChromium(t)
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<!doctype html><title>%s</title>", r.URL.Path)
	}))
	defer pages.Close()

	sq := startBridge(t)
	dir := t.TempDir()
	const token = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	if err := Write(dir, Config{URL: sq.url, Token: token}); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	browser, err := Launch(ctx, dir, LaunchOptions{ExecPath: chromiumPath, Headless: true, DebugPort: true, Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		browser.Close()
		if t.Failed() {
			t.Logf("chromium stderr:\n%s", stderr.String())
		}
	}()
	cdp := dialCDP(t, browser.DebugURL)
	pagesBefore := pageTargets(t, cdp)
	// The ids of the tabs there are, for the squatter's ext.closeTab.
	var tabIDs []int64
	{
		target, session := openPopup(t, cdp)
		var r evalResult
		cdp.call(t, session, "Runtime.evaluate", map[string]any{
			"expression": `chrome.tabs.query({}).then((ts) => ts.map((t) => t.id))`, "awaitPromise": true, "returnByValue": true,
		}, &r)
		if err := jsonv2.Unmarshal(r.Result.Value, &tabIDs); err != nil || len(tabIDs) == 0 {
			t.Fatalf("tab ids %s: %v", r.Result.Value, err)
		}
		cdp.call(t, "", "Target.closeTarget", map[string]any{"targetId": target}, nil)
	}

	var conns []*extConn
	// The extension may hang up at any of the squatter's frames: a write
	// to a closed socket is no failure here.
	try := func(c *extConn, f *wire.Frame) {
		b, _ := wire.Encode(f)
		c.c.Write(context.Background(), websocket.MessageText, b)
	}
	send := func(c *extConn, method string, params any) {
		b, _ := jsonv2.Marshal(params)
		try(c, &wire.Frame{Method: method, Params: b})
	}
	// Nothing that was received holds the token, anything derived from it
	// alone, or a proof; only hellos came, each with a fresh nonce. Checked
	// even when the test stops early.
	defer func() {
		sum := sha256.Sum256([]byte(token))
		secrets := []string{token, strings.ToUpper(token), hex.EncodeToString(sum[:])}
		nonces := map[string]bool{}
		for i, c := range conns {
			c.rawMu.Lock()
			raw := append([][]byte(nil), c.raw...)
			c.rawMu.Unlock()
			for _, m := range raw {
				for _, s := range secrets {
					if bytes.Contains(m, []byte(s)) {
						t.Errorf("connection %d: the squatter received the token (or its hash): %s", i+1, m)
					}
				}
				var f wire.Frame
				if err := wire.Decode(m, &f); err != nil {
					t.Errorf("connection %d: undecodable message %q", i+1, m)
					continue
				}
				if f.Method != wire.Hello || f.ID != 0 {
					t.Errorf("connection %d: the squatter received %s (id %d): %s", i+1, f.Method, f.ID, m)
					continue
				}
				var keys map[string]jsonv2.Value
				jsonv2.Unmarshal(f.Params, &keys)
				for k := range keys {
					switch k {
					// fullVersion: Chromium's version, which any web page
					// reads too (navigator.userAgentData).
					case "nonce", "version", "userAgent", "extensionId", "attached", "fileAccess", "fullVersion":
					default:
						t.Errorf("connection %d: hello field %q: %s", i+1, k, m)
					}
				}
				var h wire.HelloParams
				jsonv2.Unmarshal(f.Params, &h)
				if !wire.ValidNonce(h.Nonce) || nonces[h.Nonce] {
					t.Errorf("connection %d: nonce %q is not fresh", i+1, h.Nonce)
				}
				nonces[h.Nonce] = true
			}
		}
	}()

	var nextID int64 = 100
	command := func(c *extConn) {
		// Requests the extension must never run: open a tab, close every
		// tab there is.
		nextID++
		b, _ := jsonv2.Marshal(wire.CreateTabParams{URL: pages.URL + "/squatted", Active: true})
		try(c, &wire.Frame{ID: nextID, Method: wire.CreateTab, Params: b})
		for _, tab := range tabIDs {
			nextID++
			try(c, &wire.Frame{ID: nextID, Method: wire.CloseTab, Params: jsonv2.Value(fmt.Sprintf(`{"tabId":%d}`, tab))})
		}
	}
	hello := func(c *extConn) wire.HelloParams {
		f := c.event(t, wire.Hello, nil)
		var h wire.HelloParams
		jsonv2.Unmarshal(f.Params, &h)
		return h
	}
	closed := func(c *extConn) {
		select {
		case <-c.done:
		case <-time.After(5 * time.Second):
			t.Fatal("the extension stayed connected to a squatter")
		}
	}
	status := func() string {
		_, session := openPopup(t, cdp)
		var r evalResult
		cdp.call(t, session, "Runtime.evaluate", map[string]any{
			"expression":   `chrome.runtime.sendMessage({type: 'livetab.status'}).then((s) => s.lastClose ? s.lastClose.text : '')`,
			"awaitPromise": true, "returnByValue": true,
		}, &r)
		var text string
		jsonv2.Unmarshal(r.Result.Value, &text)
		return text
	}
	notProved := "the program at " + sq.url + " could not prove it has the pairing token: it is not your livetab, or the token changed — pair again"

	// 1. A welcome with no proof, as an old bridge would send, then
	// commands.
	c := sq.next(t, 15*time.Second)
	conns = append(conns, c)
	hello(c)
	send(c, wire.Welcome, map[string]string{"version": "1"})
	command(c)
	closed(c)

	// 2. Commands at once.
	c = sq.next(t, 5*time.Second)
	conns = append(conns, c)
	if got := status(); !strings.Contains(got, "update livetab") || !strings.Contains(got, sq.url) {
		t.Errorf("after a welcome without proof the popup says %q", got)
	}
	hello(c)
	command(c)
	closed(c)

	// 3. A made-up proof, and commands after it.
	c = sq.next(t, 5*time.Second)
	conns = append(conns, c)
	if got := status(); !strings.HasPrefix(got, notProved) || !strings.Contains(got, "ext.createTab") {
		t.Errorf("after commands before a proof the popup says %q", got)
	}
	hello(c)
	send(c, wire.Challenge, wire.ChallengeParams{Nonce: wire.NewNonce(), Proof: wire.NewNonce()})
	command(c)
	closed(c)

	// 4. A real proof, but under another token.
	c = sq.next(t, 5*time.Second)
	conns = append(conns, c)
	if got := status(); got != notProved {
		t.Errorf("after a made-up proof the popup says %q, want %q", got, notProved)
	}
	h := hello(c)
	nb := wire.NewNonce()
	send(c, wire.Challenge, wire.ChallengeParams{Nonce: nb, Proof: wire.BridgeProof("another token", c.port, h.Nonce, nb)})
	command(c)
	closed(c)
	if got := status(); got != notProved {
		t.Errorf("after a proof under another token the popup says %q, want %q", got, notProved)
	}

	// 5. The right token's proof for another port: what a real livetab on
	// another port with the same token answers when the squatter passes it
	// the extension's nonce. A squatter must not use it as an oracle.
	c = sq.next(t, 5*time.Second)
	conns = append(conns, c)
	h = hello(c)
	nb = wire.NewNonce()
	send(c, wire.Challenge, wire.ChallengeParams{Nonce: nb, Proof: wire.BridgeProof(token, c.port+1, h.Nonce, nb)})
	command(c)
	closed(c)
	if got := status(); got != notProved {
		t.Errorf("after a proof for another port the popup says %q, want %q", got, notProved)
	}

	// 6–: the squatter closes at once; the extension must back off, not
	// hammer it.
	start := time.Now()
	var dials []time.Duration
	for time.Since(start) < 4*time.Second {
		select {
		case c = <-sq.conns:
			conns = append(conns, c)
			dials = append(dials, time.Since(start).Round(time.Millisecond))
			c.c.Close(websocket.StatusNormalClosure, "")
		case <-time.After(100 * time.Millisecond):
		}
	}
	if len(dials) > 6 {
		t.Errorf("%d dials to the squatter in 4 s (at %v): no backoff", len(dials), dials)
	}
	t.Logf("dials in 4 s after five refusals: %v", dials)

	// Last: an old bridge refuses the token-less hello with its 4001.
	c = sq.next(t, 10*time.Second)
	conns = append(conns, c)
	hello(c)
	c.c.Close(wire.CloseBadToken, "livetab: wrong pairing token; open the livetab popup and paste the token printed by `livetab pair`")
	closed(c)
	time.Sleep(200 * time.Millisecond)
	if got := status(); !strings.Contains(got, "update livetab") {
		t.Errorf("after an old bridge's refusal the popup says %q", got)
	}

	// No command ran: no tab opened, none closed.
	time.Sleep(300 * time.Millisecond)
	after := pageTargets(t, cdp)
	for _, u := range after {
		if strings.Contains(u, "/squatted") {
			t.Errorf("the squatter's ext.createTab opened %s", u)
		}
	}
	for _, u := range pagesBefore {
		found := false
		for _, v := range after {
			found = found || v == u
		}
		if !found {
			t.Errorf("tab %s was closed by the squatter's ext.closeTab", u)
		}
	}
}

// pageTargets lists the URLs of the browser's tabs, the popups opened by
// the test aside.
func pageTargets(t *testing.T, cdp *cdpClient) []string {
	t.Helper()
	var all struct {
		TargetInfos []struct {
			Type string `json:"type"`
			URL  string `json:"url"`
		} `json:"targetInfos"`
	}
	cdp.call(t, "", "Target.getTargets", nil, &all)
	var urls []string
	for _, ti := range all.TargetInfos {
		if ti.Type == "page" && !strings.HasPrefix(ti.URL, Origin) {
			urls = append(urls, ti.URL)
		}
	}
	return urls
}
