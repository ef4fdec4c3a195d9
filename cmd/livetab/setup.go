package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/livetab/livetab"
	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/extension"
)

// token returns the pairing token and its file, creating the file (0600)
// the first time, as the serve does.
func token() (tok, path string, err error) {
	if path, err = bridge.DefaultTokenFile(); err != nil {
		return "", "", err
	}
	tok, err = bridge.LoadOrCreateToken(path)
	return tok, path, err
}

func runExtension(_ context.Context, args []string) error {
	fs := flags("extension", "DIR")
	addr := fs.String("addr", bridge.DefaultAddr, "the `host:port` livetab serve listens on, which the extension dials")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	if err := checkLoopback(*addr); err != nil {
		return err
	}
	dir, err := filepath.Abs(fs.Arg(0))
	if err != nil {
		return fmt.Errorf("resolving %s: %w", fs.Arg(0), err)
	}
	tok, _, err := token()
	if err != nil {
		return err
	}
	url := "ws://" + *addr + bridge.ExtensionPath
	if err := extension.Write(dir, extension.Config{URL: url, Token: tok}); err != nil {
		return err
	}
	fmt.Printf(`Wrote the livetab extension to %s, paired with this machine's token and %s.

Install it in Chrome or Chromium, once:
  1. Open chrome://extensions
  2. Switch on "Developer mode" (top right)
  3. Click "Load unpacked" and choose %s

Then run "livetab serve": the extension connects by itself, and "livetab status" shows it.
The folder holds the token (config.json, readable by you only): keep it, and don't share it.
`, dir, url, dir)
	return nil
}

func runPair(ctx context.Context, args []string) error {
	fs := flags("pair", "")
	if err := parse(fs, args); err != nil {
		return err
	}
	tok, _, err := token()
	if err != nil {
		return err
	}
	url := "ws://" + bridge.DefaultAddr + bridge.ExtensionPath
	// A serve on another port is the one to pair with.
	if e, err := currentEndpoint(ctx); err == nil {
		url = e.BridgeURL()
	}
	// The only place livetab shows the token, on purpose: the user pastes it.
	fmt.Printf(`Paste these into the livetab extension's popup (click its toolbar icon):
  Bridge URL  %s
  Token       %s
Keep the token secret: whoever holds it can drive this browser.
`, url, tok)
	return nil
}

func runEndpoint(ctx context.Context, args []string) error {
	fs := flags("endpoint", "")
	if err := parse(fs, args); err != nil {
		return err
	}
	e, err := currentEndpoint(ctx)
	if err != nil {
		return err
	}
	fmt.Println(e.URL)
	return nil
}

// currentEndpoint reads the endpoint file and checks that its serve answers
// and takes its token.
func currentEndpoint(ctx context.Context) (livetab.Endpoint, error) {
	path, err := livetab.EndpointFile()
	if err != nil {
		return livetab.Endpoint{}, err
	}
	e, err := livetab.ReadEndpoint(path)
	if err != nil {
		return e, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := livetab.Probe(ctx, e); err != nil {
		return e, err
	}
	return e, nil
}
