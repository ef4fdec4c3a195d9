package extcdp_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/testsite"
	"github.com/livetab/livetab/internal/wire"
	"github.com/livetab/livetab/livetabcdp"
)

// loopbackServer serves h on ip (loopback only).
func loopbackServer(t *testing.T, ip string, h http.Handler) *httptest.Server {
	t.Helper()
	if a := net.ParseIP(ip); a == nil || !a.IsLoopback() {
		t.Fatalf("loopback only, not %s", ip)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	s := &httptest.Server{Listener: l, Config: &http.Server{Handler: h}}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// A client held to
// 127.0.0.1 (and off private addresses but 127.0.0.1) asks Chrome, through
// its own allowed tab's session, to load a resource as DevTools loads a
// source map (Network.loadNetworkResource, with the person's credentials),
// and reads it with IO.read: a page of a site outside its domains where the
// person is logged in, and an address its policy keeps it off.
func TestRedTeamLoadNetworkResource(t *testing.T) {
	var secretHits atomic.Int64
	bank := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/login":
			http.SetCookie(w, &http.Cookie{Name: "sess", Value: "person-session-secret", Path: "/", HttpOnly: true})
			fmt.Fprint(w, "<title>logged in</title>")
		case "/secret":
			secretHits.Add(1)
			c, _ := r.Cookie("sess")
			v := ""
			if c != nil {
				v = c.Value
			}
			fmt.Fprintf(w, "BANK-PAGE-SECRET cookie=%s", v)
		default:
			fmt.Fprint(w, "<title>bank</title>")
		}
	}))
	bankURL := strings.Replace(bank.URL, "127.0.0.1", "localhost", 1)
	private := testsite.NewCounter(t, "127.0.0.2", "PRIVATE-BODY")

	// The person logs in to the other site.
	person := userTab(t, bankURL+"/login")
	closeUserTab(t, person)
	time.Sleep(500 * time.Millisecond)

	srv, tok := endpoint(t)
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}, "blockPrivate": true, "privateAllowed": []string{"127.0.0.1"}})
	tid, sid := a.open(site.URL + "/form?lnr")
	a.eval(sid, "1")

	read := func(url string) (string, error) {
		res, err := a.call(sid, "Network.loadNetworkResource", map[string]any{
			"frameId": tid, "url": url,
			"options": map[string]any{"disableCache": true, "includeCredentials": true},
		})
		if err != nil {
			return "", err
		}
		var r struct {
			Resource struct {
				Success        bool    `json:"success"`
				HTTPStatusCode float64 `json:"httpStatusCode"`
				Stream         string  `json:"stream"`
				NetError       float64 `json:"netError"`
				NetErrorName   string  `json:"netErrorName"`
			} `json:"resource"`
		}
		jsonv2.Unmarshal(res, &r, wire.Options)
		if r.Resource.Stream == "" {
			return fmt.Sprintf("no stream: %s", res), nil
		}
		var body strings.Builder
		for range 100 {
			chunk, err := a.call(sid, "IO.read", map[string]any{"handle": r.Resource.Stream})
			if err != nil {
				return body.String(), err
			}
			var c struct {
				Data          string `json:"data"`
				Base64Encoded bool   `json:"base64Encoded"`
				EOF           bool   `json:"eof"`
			}
			jsonv2.Unmarshal(chunk, &c, wire.Options)
			if c.Base64Encoded {
				b, _ := base64.StdEncoding.DecodeString(c.Data)
				body.Write(b)
			} else {
				body.WriteString(c.Data)
			}
			if c.EOF {
				break
			}
		}
		return body.String(), nil
	}

	got, err := read(bankURL + "/secret")
	t.Logf("loadNetworkResource of %s/secret: %q %v (the server was asked %d times)", bankURL, got, err, secretHits.Load())
	if strings.Contains(got, "BANK-PAGE-SECRET") {
		t.Errorf("a client held to 127.0.0.1 read a page of %s (outside its domains) through Network.loadNetworkResource: %q", bankURL, got)
	}
	if strings.Contains(got, "person-session-secret") {
		t.Errorf("... and the person's httpOnly cookie of that site went with it: %q", got)
	}
	got, err = read(private.URL + "/p")
	t.Logf("loadNetworkResource of %s/p: %q %v (hits %d)", private.URL, got, err, private.Hits.Load())
	if n := private.Hits.Load(); n != 0 || strings.Contains(got, "PRIVATE-BODY") {
		t.Errorf("a client held off private addresses reached %s %d times through Network.loadNetworkResource: %q", private.URL, n, got)
	}
}

// A client sends
// Page.setRPHRegistrationMode {autoAccept} on a tab of its own and
// leaves. Chrome keeps the mode for the profile (the protocol-handler
// registry), not the tab: afterwards any page the person visits registers
// itself as the handler of a scheme with no prompt, and a link of that
// scheme takes the person to the page.
func TestRedTeamProtocolHandlerModeOutlivesTheClient(t *testing.T) {
	var handled atomic.Int64
	const scheme = "web+livetabrt"
	h := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/h" {
			handled.Add(1)
			fmt.Fprint(w, "<title>handler</title>handled")
			return
		}
		fmt.Fprint(w, "<!doctype html><title>registers</title><a id=l href='"+scheme+":payload'>x</a>")
	}))
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// register and follow: the person's tab (never a livetab client's)
	// registers the page as the scheme's handler and follows a link of it.
	try := func(name string) int64 {
		before := handled.Load()
		id, err := u.OpenTab(ctx, h.URL+"/page?"+name)
		if err != nil {
			t.Fatal(err)
		}
		defer u.CloseTab(ctx, id)
		time.Sleep(500 * time.Millisecond)
		res, err := u.Eval(ctx, id, `(() => { try { navigator.registerProtocolHandler("`+scheme+`", location.origin + "/h?u=%s"); return "asked" } catch (e) { return String(e) } })()`)
		t.Logf("%s: registerProtocolHandler: %s %v", name, res, err)
		time.Sleep(time.Second)
		res, err = u.Eval(ctx, id, `document.getElementById('l').click(), "clicked"`)
		t.Logf("%s: click: %s %v", name, res, err)
		time.Sleep(2 * time.Second)
		return handled.Load() - before
	}
	if n := try("control"); n != 0 {
		t.Skipf("without any client the page's handler was registered with no prompt (%d hits): nothing to tell apart", n)
	}

	srv, tok := endpoint(t)
	a := dialRawTo(t, srv, tok)
	_, sid := a.open(site.URL + "/form?rph")
	a.eval(sid, "1")
	for _, m := range []struct{ method, mode string }{{"Page.setRPHRegistrationMode", "autoAccept"}, {"Page.setSPCTransactionMode", "autoAccept"}} {
		res, err := a.call(sid, m.method, map[string]any{"mode": m.mode})
		t.Logf("%s %s: %s %v", m.method, m.mode, res, err)
	}
	a.ws.CloseNow()
	time.Sleep(2 * time.Second) // its tab closes, the debugger leaves

	if n := try("after"); n != 0 {
		t.Errorf("after a client set Page.setRPHRegistrationMode autoAccept on its own tab and left, a page in the person's own tab registered itself as the %s: handler with no prompt, and the person's link went to it (%d requests to the handler)", scheme, n)
	}
}
