package extcdp

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/livetab/livetab/policy"
)

// TestOriginCheckAgreesWithPolicy runs the check written into a held
// client's new-document scripts in Node, for origins as Chrome spells
// them, and compares it with policy.MatchURL.
func TestOriginCheckAgreesWithPolicy(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is needed (scripts/test.sh installs it with the extension's checks):", err)
	}
	domains := []string{"127.0.0.1", "*.example.com", "App.Test.", "10.0.0.0/8", "::1", "[::ffff:192.168.1.2]", "bad*pattern", "host:80"}
	origins := []string{
		"http://127.0.0.1:8080", "http://127.0.0.2", "https://a.example.com", "https://example.com",
		"https://deep.a.example.com", "https://evil-example.com", "http://app.test", "http://app.test.evil",
		"http://10.200.3.4", "http://11.0.0.1", "http://[::1]:9", "http://[::2]", "http://192.168.1.2",
		"http://192.168.1.3", "http://host", "http://bad.pattern", "ftp://127.0.0.1", "null",
	}
	var script strings.Builder
	script.WriteString("const out = [];\n")
	for _, o := range origins {
		b, _ := json.Marshal(o)
		script.WriteString("globalThis.self = {origin: " + string(b) + "}; globalThis.location = {origin: " + string(b) + "};\n")
		script.WriteString("out.push(" + originCheck(domains) + ");\n")
	}
	script.WriteString("console.log(JSON.stringify(out));\n")
	out, err := exec.Command(node, "-e", script.String()).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var got []bool
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(origins) {
		t.Fatalf("node said %s (%v)", out, err)
	}
	for i, o := range origins {
		want := o == "null" || policy.MatchURL(o, domains)
		if got[i] != want {
			t.Errorf("origin %s: the page's check says %v, policy.MatchURL %v", o, got[i], want)
		}
	}
	// An opaque document counts its ancestors: a sandboxed frame of a
	// page outside holds that page's text.
	for anc, want := range map[string]bool{`["http://127.0.0.2"]`: false, `["http://127.0.0.1"]`: true, `[]`: true} {
		js := "globalThis.self = {origin: 'null'}; globalThis.location = {origin: 'null', ancestorOrigins: " + anc + "}; console.log(JSON.stringify(" + originCheck(domains) + "));"
		out, err := exec.Command(node, "-e", js).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != fmt.Sprint(want) {
			t.Errorf("an opaque document under %s: the check says %s (%v), want %v", anc, out, err, want)
		}
	}
}
