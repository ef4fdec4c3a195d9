package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/livetab/livetab"
	"github.com/livetab/livetab/agent"
	"github.com/livetab/livetab/extension"
	"github.com/livetab/livetab/page"
	"github.com/livetab/livetab/policy"
)

// mcpFlags is the one table of livetab mcp's flags: its -h, the command's
// doc and docs/mcp.md are checked against it (TestMCPFlagsDocumented).
func mcpFlags() (fs *flag.FlagSet, launch *launchMode, chrome *string, pf *policy.Flags, settle *time.Duration) {
	fs = flags("mcp", "")
	settle = fs.Duration("settle", page.DefaultSettle, "how long an action waits at most for the page to settle (navigation loaded, network idle, DOM quiet) before it returns what changed; 0: return at once")
	launch = new(launchMode)
	fs.Var(launch, "launch", "start a Chromium with a fresh profile and the extension, instead of using your Chrome; --launch=headless without a window")
	chrome = fs.String("chrome", "", "the Chromium `binary` for --launch (default: $LIVETAB_CHROME, else found on the system)")
	pf = policy.RegisterFlags(fs)
	if f := fs.Lookup("max-page-text"); f != nil {
		f.Usage = fmt.Sprintf("cap on the `characters` of one tool result (about 4 per token); browser_read returns %d characters a call by default, "+
			"at most this cap less %d, and reads on from the offset its result gives; 0: no cap", page.DefaultMaxChars, agent.ReadMargin)
	}
	return fs, launch, chrome, pf, settle
}

func runMCP(ctx context.Context, args []string) error {
	fs, launch, chrome, pf, settle := mcpFlags()
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return errUsage
	}
	cfg, err := pf.Config()
	if err != nil {
		return err
	}
	pol, closer, err := cfg.Policy()
	if err != nil {
		return err
	}
	defer closer.Close()
	// stdout carries the protocol and nothing else: every log line goes
	// to stderr.
	lg := logger()
	switch {
	case pol.AnyDomain:
		lg.Warn("--any-domain: the agent may read, act on and load every site of the shared tabs and the tabs it opens")
	case len(pol.AllowDomains) == 0:
		lg.Warn("no domain is allowed, so the agent can do nothing yet: pass --allow-domain HOST (repeatable), e.g. --allow-domain example.com --allow-domain '*.example.com'")
	}
	lg.Info("policy", "summary", pol.Summary(), "audit", cfg.Audit)

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	conn, err := connectBrowser(ctx, *launch, *chrome, lg)
	if err != nil {
		return err
	}
	defer conn.close()
	if *settle == 0 {
		*settle = -1 // agent.Options says "at once" so
	}
	a, err := agent.New(agent.Options{Browser: conn.alloc, Ready: conn.ready, Policy: pol, EmulateViewport: conn.headless, Settle: *settle, Logger: lg, ClientName: "livetab mcp"})
	if err != nil {
		return err
	}
	defer a.Close()
	err = a.MCPServer().Run(ctx, &mcp.StdioTransport{})
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// browserConn is how the MCP server reaches Chrome: a chromedp allocator
// from livetab.Connect.
type browserConn struct {
	alloc context.Context
	// ready waits until the extension is connected; nil when another way
	// answers for the browser itself.
	ready    func(ctx context.Context) error
	headless bool // a Chromium this process launched without a window
	close    func()
}

// connectBrowser uses a Chromium of its own with --launch, else what
// livetab.Connect finds first: the running `livetab serve`, the extension
// dialing this process, Chrome's own remote debugging. When none answers
// it keeps waiting for the extension: an MCP client starts this server
// before the person may have opened Chrome.
func connectBrowser(ctx context.Context, launch launchMode, chrome string, lg *slog.Logger) (*browserConn, error) {
	o := livetab.Options{Logger: lg, WaitForExtension: true, ClientName: "livetab mcp"}
	if launch != "" {
		o.Ways = []livetab.Way{livetab.WayLaunch}
		o.Launch = &extension.LaunchOptions{ExecPath: chrome, Headless: launch == "headless"}
	}
	alloc, cancel, err := livetab.Connect(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("%w (`livetab doctor` checks the browser)", err)
	}
	c := livetab.FromContext(alloc)
	var skipped []string
	for _, s := range c.Skipped {
		if s.Err != nil { // the ways --launch leaves out say nothing new
			skipped = append(skipped, s.String())
		}
	}
	lg.Info("browser: "+describeWay(c.Way), "way", c.Way, "reason", c.Reason, "skipped", skipped)
	conn := &browserConn{alloc: alloc, headless: launch == "headless", close: cancel}
	if c.Way == livetab.WayExtension {
		conn.ready = func(ctx context.Context) error {
			wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			defer cancel()
			if err := c.Ready(wctx); err != nil {
				return fmt.Errorf("%w; retry once it is", err)
			}
			return nil
		}
	}
	return conn, nil
}

// describeWay is the start of the log line that says which browser the
// server uses.
func describeWay(w livetab.Way) string {
	switch w {
	case livetab.WayServe:
		return "using the running livetab serve"
	case livetab.WayExtension:
		return "using the extension, which dials this process"
	case livetab.WayNative:
		return "using Chrome's own remote debugging"
	case livetab.WayLaunch:
		return "launched Chromium with the extension"
	}
	return string(w)
}
