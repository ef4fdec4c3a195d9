// Package extension holds the livetab MV3 browser extension and writes it to
// disk for "Load unpacked", and launches a Chromium that loads it.
//
// The extension is a thin proxy: its service worker dials the livetab bridge
// over a WebSocket, says hello with a pairing token, forwards CDP commands to
// chrome.debugger and sends back replies and events. The frames are those of
// package internal/wire.
package extension // import "github.com/livetab/livetab/extension"

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
)

// ID is the extension's id. The "key" in manifest.json pins it, so the
// bridge knows the Origin to accept before the extension is installed.
const ID = "eklljajjoeckbndnofgggnldegggkbdp"

// Origin is the Origin header of the extension's WebSocket requests.
const Origin = "chrome-extension://" + ID

// ConfigFile is the name of the file, next to manifest.json, that the
// service worker reads its bridge URL and token from.
const ConfigFile = "config.json"

// Config is what the extension needs to find and pair with a bridge. Values
// the user pastes into the extension's popup take precedence over it.
type Config struct {
	// URL is the bridge's WebSocket URL, e.g. ws://127.0.0.1:9333/extension.
	URL string `json:"url"`
	// Token is the pairing secret. The extension proves it holds it and
	// never sends it (internal/wire/pairing.go).
	Token string `json:"token"`
}

// Only the files the browser loads: node_modules, tests and type-checking
// setup stay out of the binary.
//
//go:embed manifest.json background.js popup.html popup.js transfer.html transfer.js lib/*.js
var files embed.FS

// Files returns the extension's files: manifest.json, the service worker,
// the popup, the transfer page and lib/. It has no config.json.
func Files() fs.FS { return files }

// Write writes the extension into dir, creating it if needed, together with
// a config.json that holds cfg. config.json gets mode 0600 because the token
// is a secret. Load dir with chrome://extensions → "Load unpacked", or with
// --load-extension.
func Write(dir string, cfg Config) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("extension: creating %s: %w", dir, err)
	}
	err := fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(name))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := files.ReadFile(name)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		return fmt.Errorf("extension: writing the extension to %s: %w", dir, err)
	}
	b, err := jsonv2.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("extension: encoding %s: %w", ConfigFile, err)
	}
	if err := writePrivate(filepath.Join(dir, ConfigFile), b); err != nil {
		return fmt.Errorf("extension: writing %s: %w", ConfigFile, err)
	}
	return nil
}

// writePrivate writes a file only its owner can read, also when an older,
// more open file is in the way: WriteFile keeps an existing file's mode.
func writePrivate(name string, b []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
