package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/livetab/livetab/agent"
	"github.com/livetab/livetab/page"
	"github.com/livetab/livetab/policy"
)

// livetab mcp's flags are one table: its -h, the command's doc (main.go)
// and the MCP page of the docs (docs/mcp.md) each name every flag, so they
// cannot drift.
func TestMCPFlagsDocumented(t *testing.T) {
	fs, _, _, _, _ := mcpFlags()
	var help bytes.Buffer
	fs.SetOutput(&help)
	fs.Usage()
	doc, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../docs/mcp.md")
	if err != nil {
		t.Fatal(err)
	}
	synopsis, _, _ := strings.Cut(help.String(), "\n")
	fs.VisitAll(func(f *flag.Flag) {
		name := "--" + f.Name
		for where, text := range map[string]string{
			"the -h usage line": synopsis,
			"main.go's doc":     string(doc[:bytes.Index(doc, []byte("package main"))]),
			"docs/mcp.md":       string(readme),
		} {
			if !strings.Contains(text, name) {
				t.Errorf("%s does not name %s", where, name)
			}
		}
	})
	// The read budget and its cap, said the same way as browser_read's
	// description says them.
	for _, want := range []string{
		fmt.Sprintf("browser_read returns %d characters a call by default", page.DefaultMaxChars),
		fmt.Sprintf("at most this cap less %d", agent.ReadMargin),
		fmt.Sprintf("(default %d)", policy.DefaultMaxPageText),
	} {
		if !strings.Contains(strings.Join(strings.Fields(help.String()), " "), want) {
			t.Errorf("mcp -h does not say %q:\n%s", want, help.String())
		}
	}
	var desc string
	for _, tool := range page.Tools() {
		if tool.Name == "browser_read" {
			desc = tool.Description
		}
	}
	if !strings.Contains(desc, fmt.Sprintf("(%d by default)", page.DefaultMaxChars)) {
		t.Errorf("browser_read's description does not give the default %d: %s", page.DefaultMaxChars, desc)
	}
	if !strings.Contains(help.String(), "--allow-domain entry that names a loopback") {
		t.Errorf("mcp -h does not say that --allow-domain 127.0.0.1 allows that host:\n%s", help.String())
	}
}
