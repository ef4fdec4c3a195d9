package extcdp_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/internal/testsite"
	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamPopupWaysOutOfTheDomains: a page of a tab that a client held
// to its domains drives opens a forbidden address in a new tab or window
// in ways TestPopupsStayWithinThePolicy does not try: links and windows
// without an opener, a window the page opens blank and then sends away or
// writes a redirect into, and clicks that open a background tab or a new
// window (ctrl-, middle-, shift-click) as a person's would.
func TestRedTeamPopupWaysOutOfTheDomains(t *testing.T) {
	if env == nil {
		t.Skip("no test browser")
	}
	srv, tok := endpoint(t)
	forbidden := testsite.NewCounter(t, "127.0.0.2", "<title>forbidden</title>secret")
	F := forbidden.URL + "/x"
	page := fmt.Sprintf(`<!doctype html><title>opener</title><style>a,button{display:block;height:30px}</style>
<a id=noopener target=_blank rel="noopener noreferrer" href="%[1]s">noopener</a>
<button id=opennoopener onclick="window.open('%[1]s', '_blank', 'noopener')">b</button>
<form id=f target=_blank rel=noreferrer method=get action="%[1]s"><button id=formnoref>f</button></form>
<button id=blankthen onclick="const w = window.open(''); w.location = '%[1]s'">c</button>
<button id=blankwrite onclick="const w = window.open(''); w.document.write('&lt;meta http-equiv=refresh content=&quot;0;url=%[1]s&quot;&gt;'); w.document.close()">d</button>
<button id=blanklater onclick="const w = window.open('about:blank', 'named'); setTimeout(() => window.open('%[1]s', 'named'), 300)">e</button>
<a id=plain href="%[1]s">plain</a>`, F)
	opener := testsite.NewCounter(t, "127.0.0.1", page)
	// The control: without a policy each way does reach the server.
	for _, held := range []bool{false, true} {
		a := dialRawTo(t, srv, tok)
		if held {
			a.must("", livetabcdp.CommandSetPolicy, map[string]any{"sharedOnly": true, "domains": []string{"127.0.0.1"}})
		}
		tryWays(t, a, opener.URL+"/", func(name string, act func()) {
			before := forbidden.Hits.Load()
			act()
			if !held {
				waitFor(t, name+" without a policy", func() bool { return forbidden.Hits.Load() > before })
				return
			}
			time.Sleep(1500 * time.Millisecond)
			if n := forbidden.Hits.Load() - before; n != 0 {
				t.Errorf("%s: the forbidden server got %d requests", name, n)
			}
		})
		a.ws.CloseNow()
	}
}

func tryWays(t *testing.T, a *rawClient, url string, check func(string, func())) {
	tid, sid := a.open(url)
	a.eval(sid, `document.readyState === 'complete' || new Promise(r => onload = r)`)
	for _, el := range []string{"noopener", "opennoopener", "formnoref", "blankthen", "blankwrite", "blanklater"} {
		check(el, func() { a.eval(sid, `document.getElementById('`+el+`').click(), true`) })
	}
	click := func(button string, modifiers int) {
		xy := strings.Split(a.eval(sid, `(() => { const r = document.getElementById('plain').getBoundingClientRect(); return (r.x + 5) + ',' + (r.y + 5) })()`), ",")
		x, _ := strconv.ParseFloat(xy[0], 64)
		y, _ := strconv.ParseFloat(xy[1], 64)
		for _, typ := range []string{"mousePressed", "mouseReleased"} {
			a.must(sid, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": x, "y": y, "button": button, "clickCount": 1, "modifiers": modifiers})
		}
	}
	check("ctrl-click", func() { click("left", 2) })
	check("middle-click", func() { click("middle", 0) })
	check("shift-click", func() { click("left", 8) })
	a.must("", "Target.closeTarget", map[string]any{"targetId": tid})
}
