package livetab_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The packages that work on any chromedp tab, and the helpers they share,
// never reach the relay, the bridge or the extension's wire: a program
// imports them without livetab's browser side (and they run on a plain
// Chrome). livetabcdp, the Livetab domain, depends on cdproto alone (and
// the JSON package cdproto uses).
func TestImportRules(t *testing.T) {
	const mod = "github.com/livetab/livetab"
	forbidden := []string{mod + "/extcdp", mod + "/bridge", mod + "/internal/wire", mod + "/internal/fakeext", mod + "/extension", "github.com/coder/websocket"}
	for pkg, only := range map[string][]string{
		"page":                nil,
		"capture":             nil,
		"upload":              nil,
		"internal/inpage":     nil,
		"livetabcdp":          {"github.com/chromedp/cdproto", "github.com/go-json-experiment/json"},
		"internal/activeport": {},
		"internal/hidden":     {"github.com/chromedp/cdproto", "github.com/go-json-experiment/json"},
	} {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", mod+"/"+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep == mod+"/"+pkg {
				continue
			}
			for _, f := range forbidden {
				if dep == f || strings.HasPrefix(dep, f+"/") {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
			if only == nil {
				continue
			}
			ok := false
			for _, o := range only {
				ok = ok || dep == o || strings.HasPrefix(dep, o+"/")
			}
			if !ok {
				t.Errorf("%s depends on %s; it may depend only on %v", pkg, dep, only)
			}
		}
	}
}
