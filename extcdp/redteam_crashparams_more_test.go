package extcdp_test

import (
	"testing"
	"time"

	"github.com/livetab/livetab/internal/browsertest"
)

// Attacks the new refusals of guardCrashers from around them: the other
// transitionTypes of Page.navigate (which the relay passes), and
// Page.printToPDF with a paper the relay accepts (>= 0.1 in) but margins
// that leave no content area, or the largest paper it takes. Each must be
// answered, and the browser, the extension, the tab and another tab must
// still be there.
func TestRedTeamNavigateTransitionsAndPDFMargins(t *testing.T) {
	if env == nil {
		browsertest.RequireChromium(t)
	}
	e := startCrashEnv(t)
	type tc struct {
		name, method string
		params       map[string]any
	}
	var cases []tc
	for _, tt := range []string{"Auto_Subframe", "address_bar", "auto_bookmark", "generated", "auto_toplevel", "form_submit", "reload", "keyword", "keyword_generated", "other"} {
		cases = append(cases, tc{"nav/" + tt, "Page.navigate", map[string]any{"url": site.URL + "/form?tt=" + tt, "transitionType": tt}})
		cases = append(cases, tc{"navblank/" + tt, "Page.navigate", map[string]any{"url": "about:blank", "transitionType": tt}})
	}
	cases = append(cases,
		tc{"pdf/hugeMargins", "Page.printToPDF", map[string]any{"marginTop": 1e9, "marginBottom": 1e9, "marginLeft": 1e9, "marginRight": 1e9}},
		tc{"pdf/negMargins", "Page.printToPDF", map[string]any{"marginTop": -1e9, "marginLeft": -1e9}},
		tc{"pdf/minPaper", "Page.printToPDF", map[string]any{"paperWidth": 0.1, "paperHeight": 0.1, "marginTop": 0, "marginBottom": 0, "marginLeft": 0, "marginRight": 0}},
		tc{"pdf/minPaperBigScale", "Page.printToPDF", map[string]any{"paperWidth": 0.1, "paperHeight": 1000, "scale": 2}},
		tc{"pdf/maxPaper", "Page.printToPDF", map[string]any{"paperWidth": 1000, "paperHeight": 1000}},
	)
	for _, k := range cases {
		t.Run(k.name, func(t *testing.T) {
			e.ensure(t)
			c := dialCDP(t, e.url)
			c.bound = 30 * time.Second
			tid, sid := c.newTab(t, site.URL+"/form?yy")
			defer c.send("", "Target.closeTarget", map[string]any{"targetId": tid})
			if _, err := c.evalJSON(sid, "1"); err != nil {
				t.Fatal(err)
			}
			m, err := c.send(sid, k.method, k.params)
			if err != nil {
				t.Errorf("%s %v: %v, want an answer", k.method, k.params, err)
			} else if m.Error != nil {
				t.Logf("%s: %s", k.method, m.Error.Message)
			}
			time.Sleep(500 * time.Millisecond)
			if !e.env.Bridge.Connected() {
				t.Errorf("%s %v: the extension disconnected", k.method, k.params)
			}
			e.alive(t)
			if v, err := c.evalJSON(sid, "6*7"); err != nil || v != "42" {
				t.Fatalf("%s %v: the tab then answered %q %v", k.method, k.params, v, err)
			}
		})
	}
}
