package extcdp_test

import (
	"testing"
	"time"

	"github.com/livetab/livetab/internal/browsertest"
)

// TestRedTeamPrintToPDFExtremes attacks Page.printToPDF with params the
// sizes decision (2026-11-27-sizes-and-scales-are-bounded.md) did not try,
// on a tab of the client's own:
//   - tinyPaper: {"paperWidth": 1e-9, "paperHeight": 1e-9}. Measured: the
//     whole browser exited (3 runs of 3); 0.01 in is refused by Chrome
//     ("content area is empty").
//
// (A header template of 1 MiB went unanswered for 150 s while the tab and
// others still answered; left to the relay's 5-minute bound of a command.)
//
// Each must be answered within 30 s, and the browser, the extension, the
// tab and another tab must still be there.
func TestRedTeamPrintToPDFExtremes(t *testing.T) {
	if env == nil {
		browsertest.RequireChromium(t)
	}
	e := startCrashEnv(t)
	for _, tc := range []struct {
		name   string
		params map[string]any
	}{
		{"tinyPaper", map[string]any{"paperWidth": 1e-9, "paperHeight": 1e-9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.ensure(t)
			c := dialCDP(t, e.url)
			c.bound = 30 * time.Second
			tid, sid := c.newTab(t, site.URL+"/form?pdf")
			defer c.send("", "Target.closeTarget", map[string]any{"targetId": tid})
			if _, err := c.evalJSON(sid, "1"); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			m, err := c.send(sid, "Page.printToPDF", tc.params)
			t.Logf("answered in %v", time.Since(start).Round(time.Millisecond))
			if err != nil {
				t.Errorf("Page.printToPDF: %v, want an answer within %v", err, c.bound)
			} else if m.Error != nil {
				t.Logf("Page.printToPDF: %s", m.Error.Message)
			}
			time.Sleep(300 * time.Millisecond)
			e.alive(t)
			if v, err := c.evalJSON(sid, "6*7"); err != nil || v != "42" {
				t.Fatalf("the tab then answered %q %v", v, err)
			}
		})
	}
}
