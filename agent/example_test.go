package agent_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/livetab/livetab"
	"github.com/livetab/livetab/agent"
	"github.com/livetab/livetab/policy"
)

type noteArgs struct {
	Text string `json:"text" jsonschema:"What to remember."`
}

func addNote(_ context.Context, _ *mcp.CallToolRequest, a noteArgs) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "noted: " + a.Text}}}, nil, nil
}

// A program with an MCP server of its own mounts livetab's tools next to
// its own, on the browser livetab.Connect finds (the running `livetab
// serve`, the extension, or Chrome's own remote debugging).
func Example() {
	ctx := context.Background()
	alloc, cancel, err := livetab.Connect(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer cancel()
	a, err := agent.New(agent.Options{
		Browser: alloc,
		Policy:  &policy.Policy{AllowDomains: []string{"example.com", "*.example.com"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	srv := mcp.NewServer(&mcp.Implementation{Name: "my-assistant", Version: "v1"},
		&mcp.ServerOptions{Instructions: "Notes and the browser.\n\n" + agent.Instructions})
	mcp.AddTool(srv, &mcp.Tool{Name: "notes_add", Description: "Remember a note."}, addNote)
	a.AddTools(srv)
	if err := srv.Run(ctx, &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}

// The mounted tools as a client of the program's server sees them. The
// browser is not reached here: Ready says the extension is not connected,
// and the tool call reports it to the model.
func ExampleServer_AddTools() {
	ctx := context.Background()
	// In a program: the allocator of livetab.Connect (the person's Chrome)
	// or of extcdp.NewAllocator; chromedp's own starts a fresh Chromium,
	// which works too. Ready fails first here, so none starts.
	alloc, cancel := chromedp.NewExecAllocator(ctx)
	defer cancel()
	a, err := agent.New(agent.Options{
		Browser: alloc,
		Ready: func(context.Context) error {
			return errors.New("the livetab extension is not connected; retry once it is")
		},
		Policy: &policy.Policy{AllowDomains: []string{"example.com"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	srv := mcp.NewServer(&mcp.Implementation{Name: "my-assistant", Version: "v1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "notes_add", Description: "Remember a note."}, addNote)
	a.AddTools(srv)

	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		log.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	var names []string
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	fmt.Println(strings.Join(names, "\n"))

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "browser_navigate", Arguments: map[string]any{"url": "https://example.com/"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// browser_capture
	// browser_check
	// browser_click
	// browser_dialog
	// browser_drag
	// browser_fill_form
	// browser_find
	// browser_hover
	// browser_navigate
	// browser_press
	// browser_read
	// browser_screenshot
	// browser_scroll
	// browser_select
	// browser_snapshot
	// browser_tabs
	// browser_type
	// browser_upload
	// browser_wait
	// notes_add
	// true Error: the livetab extension is not connected; retry once it is
}
