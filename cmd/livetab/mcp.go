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
	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/page"
	"github.com/livetab/livetab/policy"
)

// mcpFlags is the one table of livetab mcp's flags: its -h, the command's
// doc and the README are checked against it (TestMCPFlagsDocumented).
func mcpFlags() (fs *flag.FlagSet, launch *launchMode, chrome *string, pf *policy.Flags) {
	fs = flags("mcp", "")
	launch = new(launchMode)
	fs.Var(launch, "launch", "start a Chromium with a fresh profile and the extension, instead of using your Chrome; --launch=headless without a window")
	chrome = fs.String("chrome", "", "the Chromium `binary` for --launch (default: $LIVETAB_CHROME, else found on the system)")
	pf = policy.RegisterFlags(fs)
	if f := fs.Lookup("max-page-text"); f != nil {
		f.Usage = fmt.Sprintf("cap on the `characters` of one tool result (about 4 per token); browser_read returns %d characters a call by default, "+
			"at most this cap less %d, and reads on from the offset its result gives; 0: no cap", page.DefaultMaxChars, agent.ReadMargin)
	}
	return fs, launch, chrome, pf
}

func runMCP(ctx context.Context, args []string) error {
	fs, launch, chrome, pf := mcpFlags()
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
	a, err := agent.New(agent.Options{Browser: conn.alloc, Ready: conn.ready, Policy: pol, EmulateViewport: conn.headless, Logger: lg, ClientName: "livetab mcp"})
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
// on the livetab extension, in-process or through a running serve.
type browserConn struct {
	alloc context.Context
	// ready waits until the extension is connected; nil when the serve
	// holds the connection (it answers for the extension itself).
	ready    func(ctx context.Context) error
	headless bool // a Chromium this process launched without a window
	close    func()
}

// connectBrowser uses, in order: a Chromium of its own (--launch), the
// running `livetab serve`, or the extension dialing this process.
func connectBrowser(ctx context.Context, launch launchMode, chrome string, lg *slog.Logger) (*browserConn, error) {
	if launch != "" {
		// A fresh token in memory: the launched browser is this process's
		// alone, and the user's token file stays untouched.
		b, err := bridge.Listen(ctx, bridge.Options{Addr: "127.0.0.1:0", Token: bridge.NewToken(), Logger: lg})
		if err != nil {
			return nil, err
		}
		br, err := launchBrowser(ctx, b, chrome, launch == "headless")
		if err != nil {
			b.Close()
			return nil, err
		}
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		go func() {
			select {
			case <-br.Done():
				cancel()
			case <-wctx.Done():
			}
		}()
		err = b.WaitConnected(wctx)
		cancel()
		if err != nil {
			br.stop(lg)
			b.Close()
			return nil, fmt.Errorf("the launched Chromium's extension did not connect within 30 s (`livetab doctor` checks the browser): %w", err)
		}
		lg.Info("launched Chromium with the extension", "headless", launch == "headless")
		alloc, cancelAlloc := extcdp.NewAllocator(ctx, b)
		return &browserConn{alloc: alloc, headless: launch == "headless", close: func() {
			cancelAlloc()
			br.stop(lg)
			b.Close()
		}}, nil
	}
	alloc, cancel, err := livetab.Connect(ctx)
	if err == nil {
		lg.Info("using the running livetab serve")
		return &browserConn{alloc: alloc, close: cancel}, nil
	}
	if !errors.Is(err, livetab.ErrNotRunning) {
		return nil, err
	}
	b, err := bridge.Listen(ctx, bridge.Options{Logger: lg})
	if err != nil {
		return nil, fmt.Errorf("no livetab serve runs, and waiting for the extension here failed: %w; start `livetab serve`, or use --launch", err)
	}
	lg.Info("no livetab serve runs: waiting for the extension to connect here", "bridge", b.URL(),
		"hint", "the extension must be installed and paired (`livetab doctor`)")
	alloc, cancelAlloc := extcdp.NewAllocator(ctx, b)
	return &browserConn{
		alloc: alloc,
		ready: func(ctx context.Context) error {
			wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			defer cancel()
			if err := b.WaitConnected(wctx); err != nil {
				return fmt.Errorf("the livetab extension is not connected (is Chrome open with the extension installed and paired? `livetab doctor` checks); retry once it is: %w", err)
			}
			return nil
		},
		close: func() {
			cancelAlloc()
			b.Close()
		},
	}, nil
}
