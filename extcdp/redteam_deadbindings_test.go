package extcdp_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestRedTeamDeadClientsBindingsStay: clients come, add a binding to a tab
// the person opened (Runtime.addBinding: Puppeteer's exposeFunction,
// Playwright's exposeBinding), and die, one after the other, while another
// client stays on the tab. A binding is its session's on Chrome and goes
// with it; through the shared attachment each dead client's binding stays
// on the person's page (a function the page sees and calls for nothing),
// and the relay keeps each dead client and its binding's name in the tab's
// notes (relay.go tab.bindings) for as long as the tab lives: memory that
// grows with every client that ever came, never freed.
func TestRedTeamDeadClientsBindingsStay(t *testing.T) {
	srv, tok := endpoint(t)
	id := userTab(t, site.URL+"/form?dead-bindings")
	closeUserTab(t, id)
	b := dialRawTo(t, srv, tok)
	sb := b.attach(id)
	b.eval(sb, "1")
	heap := func() float64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapAlloc) / (1 << 20)
	}
	// Few rounds (each ~0.6 s): what the old code kept was 3 MiB a client.
	const n, size = 10, 1 << 20
	come := func(prefix string, n, size int) {
		for i := 0; i < n; i++ {
			a := dialRawTo(t, srv, tok)
			sa := a.attach(id)
			name := fmt.Sprintf("%s%03d_", prefix, i) + strings.Repeat("x", size)
			a.must(sa, "Runtime.addBinding", map[string]any{"name": name})
			a.ws.CloseNow()
			<-a.closed
		}
	}
	// The control: as many clients come and go with a short name each.
	before0 := heap()
	come("livetabShort", 3, 8)
	before := heap()
	t.Logf("relay heap %.1f MiB -> %.1f MiB after 3 clients each added a short binding and died", before0, before)
	come("livetabDead", n, size)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && env.Relay.Status().Clients > 1; {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	after := heap()
	onPage := b.eval(sb, `Object.getOwnPropertyNames(window).filter(k => k.startsWith('livetabDead')).length`)
	t.Logf("relay heap %.1f MiB -> %.1f MiB after %d clients each added a %d KiB binding and died; the dead clients' bindings on the person's page: %s", before, after, n, size>>10, onPage)
	if onPage != "0" {
		t.Errorf("%s of %d dead clients' bindings are still on the person's page while another client stays", onPage, n)
	}
	if after-before > n*size/(1<<20)/2 {
		t.Errorf("the relay holds %.0f MiB more after %d clients left (each added a %d KiB binding)", after-before, n, size>>10)
	}
}
