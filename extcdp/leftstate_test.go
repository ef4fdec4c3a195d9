package extcdp_test

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/fakeext"
	"github.com/livetab/livetab/internal/wire"
)

// TestLeftStateUndoneWithItsParams: what the relay sends to take back a
// leaver's settings on a shared tab, seen at a fake extension. Third-party
// cookie controls go back to Chrome's defaults (the test browser blocks
// third-party cookies whatever the controls say, so the end-to-end tests
// cannot see them), and each virtual sensor is turned off by its own type,
// which the undoing takes from the command that turned it on, as is the
// CPU pressure override by its source (in the test browser the real
// source's readings follow the machine's load, so a page cannot tell them
// from an override left on).
func TestLeftStateUndoneWithItsParams(t *testing.T) {
	var mu sync.Mutex
	var sent []string
	u, _, _ := fakeEndpoint(t, extcdp.HandlerOptions{}, func(e *fakeext.Ext) {
		tabsFake(e)
		for _, m := range []string{"Network.setCookieControls", "Emulation.setSensorOverrideEnabled", "Emulation.setPressureSourceOverrideEnabled", "Emulation.setPressureStateOverride"} {
			e.Handle(m, func(f *wire.Frame) (jsonv2.Value, *cdproto.Error) {
				mu.Lock()
				sent = append(sent, f.Method+" "+string(f.Params))
				mu.Unlock()
				return jsonv2.Value(`{}`), nil
			})
		}
	})
	a, b := dialRawURL(t, u), dialRawURL(t, u)
	sa := a.attach("T1")
	b.attach("T1")
	a.must(sa, "Network.setCookieControls", map[string]any{"enableThirdPartyCookieRestriction": true, "disableThirdPartyCookieMetadata": true, "disableThirdPartyCookieHeuristics": true})
	a.must(sa, "Emulation.setSensorOverrideEnabled", map[string]any{"enabled": true, "type": "accelerometer"})
	a.must(sa, "Emulation.setSensorOverrideEnabled", map[string]any{"enabled": true, "type": "gyroscope"})
	a.must(sa, "Emulation.setPressureSourceOverrideEnabled", map[string]any{"enabled": true, "source": "cpu"})
	a.must(sa, "Emulation.setPressureStateOverride", map[string]any{"source": "cpu", "state": "critical"})
	a.ws.CloseNow()
	<-a.closed
	want := []string{
		`Network.setCookieControls {"enableThirdPartyCookieRestriction":false,"disableThirdPartyCookieMetadata":false,"disableThirdPartyCookieHeuristics":false}`,
		`Emulation.setSensorOverrideEnabled {"enabled":false,"type":"gyroscope"}`,
		`Emulation.setSensorOverrideEnabled {"enabled":false,"type":"accelerometer"}`,
		`Emulation.setPressureSourceOverrideEnabled {"enabled":false,"source":"cpu"}`,
	}
	var got []string
	for range 100 {
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		got = slices.Clone(sent[min(5, len(sent)):])
		mu.Unlock()
		if len(got) >= len(want) {
			break
		}
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g string) bool { return sameJSONCommand(g, w) }) {
			t.Errorf("after A left, the relay did not send %s; it sent %q", w, got)
		}
	}
}

// sameJSONCommand compares "Method {params}" lines by their params' JSON
// values, not the order of their fields.
func sameJSONCommand(a, b string) bool {
	ma, pa, _ := strings.Cut(a, " ")
	mb, pb, _ := strings.Cut(b, " ")
	var va, vb any
	json.Unmarshal([]byte(pa), &va)
	json.Unmarshal([]byte(pb), &vb)
	ja, _ := json.Marshal(va) // map keys sorted
	jb, _ := json.Marshal(vb)
	return ma == mb && string(ja) == string(jb)
}
