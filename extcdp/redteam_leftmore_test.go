package extcdp_test

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRedTeamLeftRuntimeAndDragsOnNoTab: client A sets, on a tab the person
// opened and client B uses too, a setting that leftstate.go's undoOf does
// not name, then dies. Each probe is what the person's page sees, read by
// B before A came, while A is there, and after A left.
func TestRedTeamLeftRuntimeAndDragsOnNoTab(t *testing.T) {
	// The page's own async code: 200,000 awaits.
	const awaits = `(async () => { const t = performance.now(); for (let i = 0; i < 2e5; i++) await null; return String(Math.round(performance.now() - t)) })()`
	// The page's own console use: 30 calls 3000 frames deep.
	const consoleDeep = `(() => { const t = performance.now(); const f = n => n ? f(n - 1) : console.debug('x'); for (let i = 0; i < 30; i++) f(3000); return String(Math.round(performance.now() - t)) })()`
	for _, tc := range []struct {
		name  string
		probe string // js for B; "timing:<js>" for a duration in ms; "once:<js>" for one eval bounded to 5 s
		setup [][2]any
		cmds  [][2]any
		// noWith: no probe while A is there (a drag the probe started
		// could still be held then).
		noWith bool
	}{
		// The Debugger's own depth was taken back before: the control.
		{name: "asyncStacksDebugger", probe: "timing:" + awaits,
			cmds: [][2]any{{"Debugger.enable", nil}, {"Debugger.setAsyncCallStackDepth", map[string]any{"maxDepth": 10000}}}},
		{name: "asyncStacksRuntime", probe: "timing:" + awaits,
			cmds: [][2]any{{"Runtime.setAsyncCallStackDepth", map[string]any{"maxDepth": 10000}}}},
		{name: "customFormatters", probe: `(() => { let n = 0; window.devtoolsFormatters = [{ header() { n++; return null }, hasBody() { return false } }]; console.log({ a: 1 }); return String(n) })()`,
			setup: [][2]any{{"Runtime.enable", nil}},
			cmds:  [][2]any{{"Runtime.setCustomObjectFormatterEnabled", map[string]any{"enabled": true}}}},
		{name: "maxCallStackToCapture", probe: "timing:" + consoleDeep,
			setup: [][2]any{{"Runtime.enable", nil}},
			cmds:  [][2]any{{"Runtime.setMaxCallStackSizeToCapture", map[string]any{"size": 100000}}}},
		{name: "interceptDrags", probe: "drag",
			cmds: [][2]any{{"Input.setInterceptDrags", map[string]any{"enabled": true}}}},
		{name: "interceptDragsUnprobed", probe: "drag", noWith: true,
			cmds: [][2]any{{"Input.setInterceptDrags", map[string]any{"enabled": true}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, sa, sb := sharedTab(t, "/form?left-more-"+tc.name)
			b.bound = 30 * time.Second
			for _, c := range tc.setup {
				b.must(sb, c[0].(string), c[1])
			}
			probe := func() string {
				t.Helper()
				switch {
				case tc.probe == "drag":
					return dragProbe(t, b, sb)
				case strings.HasPrefix(tc.probe, "reload:"):
					// Chrome's removeBinding leaves the function in the
					// document it was added to: a new document tells.
					b.call(sb, "Page.reload", nil)
					time.Sleep(500 * time.Millisecond)
					b.eval(sb, `document.readyState === 'complete' || new Promise(r => onload = r)`)
					return b.eval(sb, strings.TrimPrefix(tc.probe, "reload:"))
				case strings.HasPrefix(tc.probe, "once:"):
					old := b.bound
					b.bound = 5 * time.Second
					defer func() { b.bound = old }()
					v, err := b.evalJSON(sb, strings.TrimPrefix(tc.probe, "once:"))
					if err != nil {
						return "error: " + err.Error()
					}
					return v
				case strings.HasPrefix(tc.probe, "timing:"):
					best := 1 << 30
					for range 3 {
						n, _ := strconv.Atoi(b.eval(sb, strings.TrimPrefix(tc.probe, "timing:")))
						best = min(best, n)
					}
					return strconv.Itoa(best)
				}
				return b.eval(sb, tc.probe)
			}
			before := probe()
			for _, c := range tc.cmds {
				if _, err := a.call(sa, c[0].(string), c[1]); err != nil {
					t.Fatalf("A's %s: %v", c[0], err)
				}
			}
			set := "(not probed)"
			if !tc.noWith {
				set = probe()
			}
			t.Logf("before A: %.100q; with A: %.100q", before, set)
			a.ws.CloseNow()
			<-a.closed
			time.Sleep(1500 * time.Millisecond)
			after := probe()
			t.Logf("after A left: %.100q", after)
			if strings.HasPrefix(tc.probe, "timing:") {
				nb, _ := strconv.Atoi(before)
				na, _ := strconv.Atoi(after)
				if na > 3*max(nb, 5) {
					t.Errorf("the person's page runs %d ms where it ran %d ms before A came, after A left", na, nb)
				}
				return
			}
			if set == before && !tc.noWith {
				t.Errorf("A's commands changed nothing the page sees (%q): the probe shows nothing", set)
				return
			}
			if after != before {
				t.Errorf("after A left: %.120q; before A came: %.120q", after, before)
			}
		})
	}
}

// dragProbe builds a draggable box and a drop zone on the page and drags
// one onto the other with B's mouse: what the page heard.
func dragProbe(t *testing.T, b *rawClient, sb string) string {
	t.Helper()
	b.eval(sb, `(() => { document.querySelectorAll('.ltdrag').forEach(e => e.remove()); window.dragLog = [];
		const s = Object.assign(document.createElement('div'), { className: 'ltdrag', draggable: true, textContent: 'drag me' });
		s.style.cssText = 'position:fixed;left:10px;top:10px;width:80px;height:40px;background:#ccc;z-index:99999';
		const d = Object.assign(document.createElement('div'), { className: 'ltdrag', textContent: 'drop here' });
		d.style.cssText = 'position:fixed;left:200px;top:10px;width:120px;height:80px;background:#9c9;z-index:99999';
		s.addEventListener('dragstart', e => { dragLog.push('start'); e.dataTransfer.setData('text/plain', 'x') });
		d.addEventListener('dragover', e => e.preventDefault());
		d.addEventListener('drop', e => { e.preventDefault(); dragLog.push('drop') });
		document.body.append(s, d); return 1 })()`)
	mouse := func(typ string, x, y float64, buttons int) {
		b.call(sb, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": x, "y": y, "button": "left", "buttons": buttons, "clickCount": 1})
	}
	mouse("mouseMoved", 50, 30, 0)
	mouse("mousePressed", 50, 30, 1)
	for i := 1; i <= 10; i++ {
		mouse("mouseMoved", 50+float64(i)*20, 30+float64(i)*2, 1)
		time.Sleep(20 * time.Millisecond)
	}
	mouse("mouseReleased", 260, 50, 0)
	time.Sleep(300 * time.Millisecond)
	return b.eval(sb, `dragLog.join(',') || 'nothing'`)
}
