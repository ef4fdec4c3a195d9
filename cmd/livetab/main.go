// Command livetab holds the livetab extension's connection and shares it
// with any number of programs over standard CDP.
//
//	livetab extension DIR   write the extension, paired with this machine's token
//	livetab pair            print the bridge URL and token for the extension's popup
//	livetab serve           hold the extension and serve CDP on 127.0.0.1
//	livetab endpoint        print the CDP WebSocket URL for clients
//	livetab status [--json] is the extension connected, which tabs, which clients
//	livetab doctor          check every precondition and say how to fix each
//
// Clients take the URL of `livetab endpoint` as it is: chromedp's
// remote.NewAllocator (or livetab.Connect), Playwright's
// chromium.connectOverCDP and Puppeteer's connect({browserWSEndpoint}).
//
// `livetab mcp` is an MCP server over stdio for an agent, limited by a
// policy (package policy). It finds the browser as livetab.Connect does:
// the running serve, else the extension dialing it, else Chrome's own
// remote debugging, else it keeps waiting for the extension; it logs which
// way it took and why. --launch[=headless] starts a throwaway Chromium with
// the extension instead (--chrome names its binary).
//
//   - --allow-domain HOST (repeatable): example.com (that host only),
//     *.example.com (its subdomains, not example.com: give both for both),
//     localhost, 127.0.0.1, 10.0.0.0/8. --any-domain allows every site and
//     is logged at start.
//   - --read-only (no input, navigation, uploads or JavaScript);
//     --allow-eval (JavaScript is off otherwise); --confirm-domain HOST
//     (input, navigation and uploads there need the person's yes, asked
//     through the client's elicitation; a client that cannot ask gets a
//     refusal).
//   - --download-dir (captures go there; uploads read only from there or
//     from --upload-dir), --audit FILE (one JSON line per tool call,
//     secrets redacted), --max-page-text N (characters of one result,
//     100,000 by default; browser_read returns 60,000 a call by default
//     and pages on with an offset), --config FILE (the same as
//     JSON), --settle D (how long an action waits at most for the page to
//     settle, 1s by default).
//   - Navigation is http and https only, checked after DNS and on every
//     redirect hop: loopback, private, link-local, CGNAT and cloud-metadata
//     addresses are refused unless --allow-private-networks or an
//     --allow-domain entry names the host. A refusal names its rule. The
//     relay enforces the tab sharing and the domains on this server's
//     connection too, and the extension blocks tabs that pages open outside
//     the domains before their first request; the policy ends with the
//     server (docs/decisions/2026-11-23-a-policy-belongs-to-its-client.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
)

// errUsage is a command line the command did not understand; the flag
// package has printed why already.
var errUsage = errors.New("usage")

// errFailed ends the process with status 1 after the command has printed
// its own report (doctor).
var errFailed = errors.New("failed")

type command struct {
	name    string
	args    string
	summary string
	run     func(ctx context.Context, args []string) error
}

var commands []command

func init() {
	// Assigned here, not in the declaration, because help refers to the
	// list itself.
	commands = []command{
		{"extension", "DIR", "write the extension (with the token) for chrome://extensions → Load unpacked", runExtension},
		{"pair", "", "print the bridge URL and the token to paste into the extension's popup", runPair},
		{"serve", "", "hold the extension's connection and serve CDP on 127.0.0.1 (--launch starts a Chromium)", runServe},
		{"endpoint", "", "print the CDP WebSocket URL (with the token) of the running serve", runEndpoint},
		{"status", "", "show whether the extension is connected, its tabs and the clients (--json)", runStatus},
		{"doctor", "", "check every precondition and say how to fix each failure", runDoctor},
		{"mcp", "", "an MCP server over stdio for an agent, within the domains and modes you allow (--allow-domain)", runMCP},
		{"help", "", "show this help", runHelp},
	}
}

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stderr))
}

func run(ctx context.Context, args []string, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "--help", "-help":
		name = "help"
	}
	for _, c := range commands {
		if c.name != name {
			continue
		}
		err := c.run(ctx, args[1:])
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			return 2
		case errors.Is(err, errFailed):
			return 1
		}
		fmt.Fprintln(stderr, "livetab "+name+":", err)
		return 1
	}
	fmt.Fprintf(stderr, "livetab: unknown command %q\n\n", name)
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "livetab drives your own, logged-in Chrome through the livetab extension, over standard CDP.")
	fmt.Fprintln(w, "\nUsage: livetab COMMAND [flags]")
	fmt.Fprintln(w)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-16s%s\n", strings.TrimSpace(c.name+" "+c.args), c.summary)
	}
	fmt.Fprintln(w, "\nFirst time: livetab extension ~/livetab-ext, load it in chrome://extensions, then livetab serve.")
	fmt.Fprintln(w, "Run `livetab COMMAND -h` for a command's flags.")
}

func runHelp(context.Context, []string) error {
	usage(os.Stdout)
	return nil
}

// flags returns a flag set for a subcommand whose errors and -h output go
// to stderr.
func flags(name, args string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: livetab %s\n", synopsis(fs, args))
		fs.PrintDefaults()
		if note := usageNotes[name]; note != "" {
			fmt.Fprintf(fs.Output(), "\n%s\n", note)
		}
	}
	return fs
}

// usageNotes follow a command's flags in its -h.
var usageNotes = map[string]string{
	"mcp": "An --allow-domain entry that names a loopback or private host (127.0.0.1, localhost,\n" +
		"10.0.0.0/8) already allows that host: --allow-private-networks is for every such address.",
}

// synopsis is a command's usage line, made from its flags so that it
// names every one of them: "mcp [--allow-domain host]... [--read-only] …".
// args are the operands after the flags.
func synopsis(fs *flag.FlagSet, args string) string {
	parts := []string{fs.Name()}
	fs.VisitAll(func(f *flag.Flag) {
		value, _ := flag.UnquoteUsage(f)
		part := "--" + f.Name
		if value != "" {
			part += " " + value
		}
		if s, ok := f.Value.(interface{ Synopsis() string }); ok {
			part = s.Synopsis()
		}
		part = "[" + part + "]"
		if _, ok := f.Value.(interface{ Repeatable() }); ok {
			part += "..."
		}
		parts = append(parts, part)
	})
	if args != "" {
		parts = append(parts, args)
	}
	return strings.Join(parts, " ")
}

// parse parses args into fs and maps its errors to the command's.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	return nil
}

// logger is the serve's log: text on stderr. Nothing logged carries the
// token: the bridge and the relay log addresses and ids only, and this
// command never logs an endpoint URL.
func logger() *slog.Logger {
	level := slog.LevelInfo
	if os.Getenv("LIVETAB_DEBUG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}
