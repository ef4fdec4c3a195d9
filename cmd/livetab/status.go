package main

import (
	"context"
	"fmt"
	"os"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab"
	"github.com/livetab/livetab/extcdp"
)

func runStatus(ctx context.Context, args []string) error {
	fs := flags("status", "[--json]")
	asJSON := fs.Bool("json", false, "print the status as JSON (extcdp.Status)")
	if err := parse(fs, args); err != nil {
		return err
	}
	path, err := livetab.EndpointFile()
	if err != nil {
		return err
	}
	e, err := livetab.ReadEndpoint(path)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	body, err := livetab.Probe(ctx, e)
	if err != nil {
		return err
	}
	if *asJSON {
		os.Stdout.Write(body)
		fmt.Println()
		return nil
	}
	var st extcdp.Status
	if err := jsonv2.Unmarshal(body, &st); err != nil {
		return fmt.Errorf("decoding the status of %s (is the serve of another livetab version?): %w", e.HTTP, err)
	}
	fmt.Printf("serve      %s (pid %d)\n", e.HTTP, e.PID)
	if st.Connected {
		fmt.Printf("extension  connected: livetab %s, %s\n", st.Extension.Version, st.Extension.UserAgent)
	} else {
		fmt.Println("extension  not connected (`livetab doctor` says why)")
	}
	fmt.Printf("clients    %d\n", st.Clients)
	fmt.Printf("tabs       %d\n", len(st.Tabs))
	for _, t := range st.Tabs {
		state := "-"
		if t.Attached {
			state = fmt.Sprintf("attached, %d session(s)", t.Sessions)
		}
		if t.Created {
			state += ", opened by livetab"
		}
		if t.Client {
			// The serve shows no client's tab to another: its address is
			// that client's.
			fmt.Printf("  %-6d (a client's tab)  [%s]\n", t.TabID, state)
			continue
		}
		fmt.Printf("  %-6d %s  %q  [%s]\n", t.TabID, t.URL, t.Title, state)
	}
	return nil
}
