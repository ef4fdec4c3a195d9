package main

import (
	"strings"
	"testing"
	"time"
)

// Regression of the re-check: ordinary hover effects of allowed pages
// must not make the agent's click refused. A button that lifts a little on
// hover with a transition, one whose label changes on hover, one under a
// sticky header, one that grows a child badge on hover. Each must be
// clicked. (A button that flees the pointer by more than its height, as a
// lift of 30 px did under load in CI, escapes a person's click as well.)
func TestHoverEffectsStillClick(t *testing.T) {
	s := needShared(t)
	vectors := map[string]string{
		"lift":   `<style>#b{transition:transform .3s} #b:hover{transform:translateY(-2px) scale(1.05)}</style><button id="b">Go</button>`,
		"label":  `<button id="b" onmouseenter="this.textContent='Go now'">Go</button>`,
		"badge":  `<button id="b" style="position:relative" onmouseenter="const s=document.createElement('span');s.textContent='!';s.style='position:absolute;inset:0;background:#fc0';this.append(s)">Go</button>`,
		"sticky": `<header style="position:sticky;top:0;height:200px;background:#eee;z-index:2">menu</header><div style="height:1500px"></div><button id="b">Go</button><div style="height:1500px"></div>`,
		"grow":   `<style>#b{transition:all .2s;padding:4px} #b:hover{padding:20px 40px;margin-left:-20px}</style><button id="b">Go</button>`,
	}
	page := newRecorder(t, "127.0.0.1", func(path string) string {
		v := strings.Trim(path, "/")
		return `<!doctype html><title>ok</title><body style="margin:40px">` + vectors[v] +
			`<script>b.addEventListener('click', () => fetch('/clicked-` + v + `'))</script>`
	})
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1")
	for v := range vectors {
		if strings.HasPrefix(v, "clicked") {
			continue
		}
		c.ok(t, "browser_navigate", map[string]any{"url": page.URL + "/" + v})
		res := resultText(c.call(t, "browser_click", map[string]any{"index": index(t, mustSnap(t, c), `button "Go"`)}))
		awaitNone(3*time.Second, func() []string {
			if page.hit("/clicked-" + v) {
				return nil
			}
			return []string{v}
		})
		t.Logf("%s: %s", v, firstLine(res))
		if !page.hit("/clicked-" + v) {
			t.Errorf("%s: a legitimate click was not delivered: %s", v, firstLine(res))
		}
	}
}
