package extcdp_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Two programs share one serve. What A opens is A's: B, trying every way
// CDP offers, neither sees it nor touches it (docs/decisions/2026-11-23-each-client-owns-the-tabs-it-opens.md).
func TestClientsDoNotSeeEachOthersTabs(t *testing.T) {
	a, b := dialRaw(t), dialRaw(t)
	b.must("", "Target.setDiscoverTargets", map[string]any{"discover": true})
	b.must("", "Target.setAutoAttach", map[string]any{"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": false})

	tA := field(a.must("", "Target.createTarget", map[string]any{"url": site.URL + "/form?ownedByA"}), "targetId")
	sA := field(a.must("", "Target.attachToTarget", map[string]any{"targetId": tA, "flatten": true}), "sessionId")
	a.must(sA, "Runtime.enable", nil)
	a.must(sA, "Runtime.evaluate", map[string]any{"expression": `console.log("secret-of-A"); window.open(location.origin + "/form?popupOfA"); 1`, "userGesture": true})

	// A sees its popup: it belongs to A too.
	var popup string
	deadline := time.Now().Add(20 * time.Second)
	for popup == "" && time.Now().Before(deadline) {
		for _, info := range targetInfos(t, a) {
			if strings.HasSuffix(info.URL, "popupOfA") {
				popup = info.TargetID
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if popup == "" {
		var chrome []string
		if u, err := env.User(context.Background()); err == nil {
			ts, _ := u.Targets(context.Background())
			for _, ti := range ts {
				chrome = append(chrome, ti.Type+" "+ti.URL)
			}
			u.Close()
		}
		t.Fatalf("A does not see the popup its own tab opened; A sees %v; Chrome has %v; relay: %+v", targetInfos(t, a), chrome, env.Relay.Status().Tabs)
	}

	for _, info := range targetInfos(t, b) {
		if info.TargetID == tA || info.TargetID == popup {
			t.Errorf("B lists A's tab %s (%s)", info.TargetID, info.URL)
		}
	}
	for _, id := range []string{tA, popup} {
		for _, try := range []struct {
			method string
			params map[string]any
		}{
			{"Target.attachToTarget", map[string]any{"targetId": id, "flatten": true}},
			{"Target.getTargetInfo", map[string]any{"targetId": id}},
			{"Target.activateTarget", map[string]any{"targetId": id}},
			{"Target.closeTarget", map[string]any{"targetId": id}},
			{"Livetab.closeTab", map[string]any{"targetId": id}},
		} {
			if _, err := b.call("", try.method, try.params); err == nil || !strings.Contains(err.Error(), "No target with given id") {
				t.Errorf("B's %s on A's tab: %v, want 'No target with given id found'", try.method, err)
			}
		}
	}
	// A's child sessions are A's alone, even by Chrome's own session id.
	if _, err := b.call(sA, "Runtime.evaluate", map[string]any{"expression": "1"}); err == nil {
		t.Error("B used A's session")
	}
	if tabs := string(b.must("", "Livetab.getTabs", nil)); strings.Contains(tabs, tA) || strings.Contains(tabs, "ownedByA") {
		t.Errorf("Livetab.getTabs shows B A's tab: %s", tabs)
	}
	srv, tok := endpoint(t)
	resp, err := http.Get(srv.URL + "/json/list?token=" + tok)
	if err != nil {
		t.Fatal(err)
	}
	list, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(list), tA) || strings.Contains(string(list), "ownedByA") {
		t.Errorf("/json/list shows A's tab: %s", list)
	}

	// After all that, A's tabs are open and A's session works.
	a.must(sA, "Runtime.evaluate", map[string]any{"expression": `console.log("still-A")`})
	open := map[string]bool{}
	for _, info := range targetInfos(t, a) {
		open[info.TargetID] = true
	}
	if !open[tA] || !open[popup] {
		t.Fatalf("A's tabs were closed: %v", open)
	}
	time.Sleep(200 * time.Millisecond)
	for _, s := range []string{tA, popup, "secret-of-A", "still-A", "ownedByA", "popupOfA", sA} {
		if b.seen(s) {
			t.Errorf("B received an event about A's tab: %q", s)
		}
	}
	// A leaves; its tabs go with it before the next test looks at tabs.
	a.ws.CloseNow()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		left := false
		for _, ts := range env.Relay.Status().Tabs {
			left = left || ts.TargetID == tA || ts.TargetID == popup
		}
		if !left {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("A's tabs stayed open after A left")
		}
	}
}

type rawTarget struct {
	TargetID string `json:"targetId"`
	URL      string `json:"url"`
	Type     string `json:"type"`
}

func targetInfos(t *testing.T, c *rawClient) []rawTarget {
	t.Helper()
	var r struct {
		TargetInfos []rawTarget `json:"targetInfos"`
	}
	if err := unmarshal(c.must("", "Target.getTargets", nil), &r); err != nil {
		t.Fatal(err)
	}
	return r.TargetInfos
}

// A client that sends createTarget and vanishes before the reply leaves no
// tab behind: it would belong to nobody, and be everybody's.
func TestCreateTargetThenVanish(t *testing.T) {
	before := len(env.Relay.Status().Tabs)
	c := dialRaw(t)
	c.ws.Write(context.Background(), 1, []byte(`{"id":1,"method":"Target.createTarget","params":{"url":"about:blank#vanish"}}`))
	c.ws.CloseNow()
	deadline := time.Now().Add(10 * time.Second)
	for {
		time.Sleep(300 * time.Millisecond)
		b := dialRaw(t)
		n := 0
		for _, info := range targetInfos(t, b) {
			if strings.HasSuffix(info.URL, "#vanish") {
				n++
			}
		}
		b.ws.CloseNow()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the vanished client's tab is still open (%d tabs before)", before)
		}
	}
}
