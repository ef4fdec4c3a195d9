package extcdp_test

import (
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/wire"
)

// TestRedTeamTabFlood: a program connected to the endpoint opens tabs in a
// loop. Each tab costs the person's browser a renderer's memory; without a
// bound, a buggy or hostile client takes the whole browser down. One
// client may have MaxTabs tabs open; past it createTarget fails with an
// error that says what to do, a closed tab frees its place, and other
// clients are not counted against it.
func TestRedTeamTabFlood(t *testing.T) {
	if env == nil {
		t.Skip("no test browser")
	}
	const max = 3
	tok := "tab-flood-token"
	srv := httptest.NewServer(env.Relay.Handler(extcdp.HandlerOptions{Token: tok, MaxTabs: max}))
	defer srv.Close()
	flood := dialRawTo(t, srv, tok)
	other := dialRawTo(t, srv, tok)

	// At once, as a flood would: the bound holds for createTargets in flight too.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var opened []string
	refused := 0
	for range max + 3 {
		wg.Go(func() {
			m, err := flood.send("", "Target.createTarget", map[string]any{"url": "about:blank", "background": true})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case m.Error == nil:
				var r struct {
					TargetID string `json:"targetId"`
				}
				if jsonv2.Unmarshal(m.Result, &r, wire.Options) == nil && r.TargetID != "" {
					opened = append(opened, r.TargetID)
				}
			case strings.Contains(m.Error.Message, "close some"):
				refused++
			default:
				t.Errorf("createTarget: %s, want the tab bound's error", m.Error.Message)
			}
		})
	}
	wg.Wait()
	defer func() {
		for _, id := range opened {
			flood.send("", "Target.closeTarget", map[string]any{"targetId": id})
		}
	}()
	if len(opened) != max || refused != 3 {
		t.Fatalf("opened %d tabs and was refused %d times; want %d and 3", len(opened), refused, max)
	}

	// Another client is not counted against the flood's tabs.
	id, _ := other.open("about:blank")
	other.must("", "Target.closeTarget", map[string]any{"targetId": id})

	// A closed tab frees its place.
	flood.must("", "Target.closeTarget", map[string]any{"targetId": opened[0]})
	opened = opened[1:]
	m, err := flood.send("", "Target.createTarget", map[string]any{"url": "about:blank", "background": true})
	if err != nil || m.Error != nil {
		t.Fatalf("createTarget after a close: %v %+v", err, m.Error)
	}
	var r struct {
		TargetID string `json:"targetId"`
	}
	jsonv2.Unmarshal(m.Result, &r, wire.Options)
	opened = append(opened, r.TargetID)
}
