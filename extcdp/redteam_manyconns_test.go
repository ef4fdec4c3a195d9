package extcdp_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestRedTeamFloodFromManyConnections: TestRedTeamFloodLatency's flood,
// from one program over 24 connections (the endpoint serves 128), on a
// tab the person opened that they all attach to, or each on a tab of its
// own. The window of fair.go was per connection: each of them had 16
// commands at the extension, 384 in all, and B's commands on its own tab
// waited behind them: its p50 went from 2-6 ms to 0.9-7 s, some got no
// answer in 10 s, and twice Chrome stopped the extension's worker (red
// team, 6 of 6). More connections must not buy a bigger share: B's
// commands under the flood of 24 take about what they take under the
// flood of one. (The flooders' own writes take a core of this 2-core
// machine, so B is slower under any flood than alone.)
func TestRedTeamFloodFromManyConnections(t *testing.T) {
	one := floodOver(t, 1, false)
	for _, ownTabs := range []bool{false, true} {
		busy := floodOver(t, 24, ownTabs)
		if busy > 4*one+30*time.Millisecond {
			t.Errorf("a flood over 24 connections (each on a tab of its own: %v) slows B's commands to p50 %v, against %v under the flood of one connection", ownTabs, busy, one)
		}
	}
}

func floodOver(t *testing.T, conns int, ownTabs bool) time.Duration {
	b := dialRaw(t)
	tB := field(b.must("", "Target.createTarget", map[string]any{"url": site.URL + "/form?many-B-" + fmt.Sprint(conns)}), "targetId")
	sB := field(b.must("", "Target.attachToTarget", map[string]any{"targetId": tB, "flatten": true}), "sessionId")
	p50 := func() (time.Duration, time.Duration) {
		var d []time.Duration
		for range 30 {
			s := time.Now()
			_, err := b.call(sB, "Runtime.evaluate", map[string]any{"expression": "1+1"})
			d = append(d, time.Since(s))
			if err != nil {
				t.Errorf("B's evaluate on its own tab after %v: %v", time.Since(s).Round(time.Millisecond), err)
				break
			}
		}
		t.Logf("B's evaluates: %v", d)
		slices.Sort(d)
		return d[len(d)/2], d[len(d)-1]
	}
	// One tab, a page the flooding program has the person open: its
	// connections share it.
	tA := userTab(t, site.URL+"/form?many-A-"+fmt.Sprint(conns))
	closeUserTab(t, tA)
	type flooder struct {
		c   *rawClient
		sid string
	}
	var fl []flooder
	for range conns {
		c := dialRaw(t)
		if ownTabs {
			fl = append(fl, flooder{c, field(c.must("", "Target.attachToTarget", map[string]any{"targetId": field(c.must("", "Target.createTarget", map[string]any{"url": "about:blank", "background": true}), "targetId"), "flatten": true}), "sessionId")})
			continue
		}
		fl = append(fl, flooder{c, field(c.must("", "Target.attachToTarget", map[string]any{"targetId": tA, "flatten": true}), "sessionId")})
	}
	b.bound = 10 * time.Second
	quiet, qmax := p50()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, f := range fl {
		go func() {
			for i := int64(1 << 20); ctx.Err() == nil; i++ {
				if f.c.ws.Write(ctx, websocket.MessageText, []byte(fmt.Sprintf(`{"id":%d,"sessionId":%q,"method":"Runtime.evaluate","params":{"expression":"1+1"}}`, i, f.sid))) != nil {
					return
				}
			}
		}()
	}
	time.Sleep(2 * time.Second)
	// The person's own browser, through its debugging port: a tab of
	// theirs evaluates a sum (the extension is not on this path).
	pid := userTab(t, site.URL+"/form?many-person-"+fmt.Sprint(conns))
	closeUserTab(t, pid)
	pctx, pc := context.WithTimeout(context.Background(), 30*time.Second)
	u, err := env.User(pctx)
	if err == nil {
		st := time.Now()
		_, err = u.Eval(pctx, pid, "1+1")
		t.Logf("the person's own evaluate in a tab of theirs during the flood: %v %v", time.Since(st).Round(time.Millisecond), err)
		u.Close()
	}
	pc()
	busy, bmax := p50()
	cancel()
	t.Logf("B's p50 evaluate: %v (max %v) alone, %v (max %v) while one program floods over %d connections", quiet, qmax, busy, bmax, conns)
	return busy
}
