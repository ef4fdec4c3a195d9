package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab"
	"github.com/livetab/livetab/extcdp"
)

func runStatus(ctx context.Context, args []string) error {
	fs := flags("status", "")
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
	writeStatus(os.Stdout, e, st)
	return nil
}

// writeStatus prints st for a person: what they need to attach to a tab
// (its target id) and what each state means.
func writeStatus(w io.Writer, e livetab.Endpoint, st extcdp.Status) {
	fmt.Fprintf(w, "serve      %s (pid %d)\n", e.HTTP, e.PID)
	if st.Connected {
		fmt.Fprintf(w, "extension  connected: livetab %s, %s\n", st.Extension.Version, st.Extension.UserAgent)
	} else {
		fmt.Fprintln(w, "extension  not connected (`livetab doctor` says why)")
	}
	if st.Paused {
		fmt.Fprintln(w, "paused     yes: the person paused livetab in the extension's popup; every command that needs a tab fails until they press Resume there")
	}
	fmt.Fprintf(w, "clients    %d\n", st.Clients)
	fmt.Fprintf(w, "tabs       %d\n", len(st.Tabs))
	if len(st.Tabs) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  TARGET ID\tTAB\tSTATE\tURL\tTITLE")
	for _, t := range st.Tabs {
		state := "free"
		if t.Attached {
			state = fmt.Sprintf("attached (%d session%s)", t.Sessions, plural(t.Sessions))
		}
		if t.Created {
			state += ", opened by livetab"
		}
		if t.Client {
			// The serve shows no client's tab to another: its address is
			// that client's.
			fmt.Fprintf(tw, "  (a client's tab)\t%d\t%s\t\t\n", t.TabID, state)
			continue
		}
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%q\n", t.TargetID, t.TabID, state, t.URL, t.Title)
	}
	tw.Flush()
	fmt.Fprintln(w, `
Attach to a tab with chromedp.NewContext(allocCtx, chromedp.WithTargetID("<TARGET ID>")):
cancelling that context detaches, and closes the tab only if livetab opened it.
free: no program drives it; attached: programs hold that many sessions on it;
a client's tab: a program (or its page) opened it, so the others do not see it.`)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
