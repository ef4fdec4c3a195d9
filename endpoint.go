package livetab

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/bridge"
)

// EndpointEnv names the environment variable that overrides where the
// endpoint file is, for `livetab serve` (which writes it) and [Connect]
// (which reads it) alike.
const EndpointEnv = "LIVETAB_ENDPOINT"

// ErrNotRunning means no `livetab serve` answers: its endpoint file is
// missing, or the process that wrote it is gone. Test for it with errors.Is.
var ErrNotRunning = errors.New("livetab serve is not running: start it with `livetab serve` (it keeps the extension's connection and serves CDP to other programs)")

// ErrTokenRefused means the running serve refused the token of the endpoint
// file, so the file belongs to another serve than the one on its port.
var ErrTokenRefused = errors.New("livetab serve refused the token of the endpoint file: restart `livetab serve` so that it writes the file again; if the extension does not connect either, run `livetab pair` and paste the token into its popup")

// Endpoint is what a running `livetab serve` writes to its endpoint file,
// mode 0600, and removes when it ends.
type Endpoint struct {
	// URL is the browser-level CDP WebSocket URL with the token in it,
	// ws://127.0.0.1:PORT/devtools/browser/ID?token=T. chromedp's
	// remote.NewAllocator, Playwright's connectOverCDP and Puppeteer's
	// connect take it as it is. It is a secret: never log it.
	URL string `json:"url"`
	// HTTP is the serve's base URL, http://127.0.0.1:PORT, for /json/* and
	// /livetab/status.
	HTTP string `json:"http"`
	// PID is the process id of the serve.
	PID int `json:"pid"`
}

// Token returns the token carried in e.URL.
func (e Endpoint) Token() string {
	u, err := url.Parse(e.URL)
	if err != nil {
		return ""
	}
	return u.Query().Get("token")
}

// BridgeURL is the address the extension dials on the same serve,
// ws://127.0.0.1:PORT/extension.
func (e Endpoint) BridgeURL() string {
	return "ws://" + strings.TrimPrefix(e.HTTP, "http://") + "/extension"
}

// ErrNotServe means the program on the endpoint file's port could not prove
// that it holds the file's token: not a livetab serve, most likely another
// program that took the port of a serve that is gone. The token was not
// sent to it.
var ErrNotServe = errors.New("the program at the endpoint file's address could not prove it is your livetab serve (another program may hold the port of a serve that is gone); its token was not sent: restart `livetab serve`, or stop the program that holds its port")

// EndpointFile returns where the endpoint file is: $LIVETAB_ENDPOINT when
// set, else livetab/endpoint.json in the user's config directory
// (~/.config/livetab/endpoint.json on Linux).
func EndpointFile() (string, error) {
	if p := os.Getenv(EndpointEnv); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("livetab: finding the config directory for the endpoint file (set %s to a path): %w", EndpointEnv, err)
	}
	return filepath.Join(dir, "livetab", "endpoint.json"), nil
}

// ReadEndpoint reads an endpoint file. A missing file is [ErrNotRunning].
func ReadEndpoint(path string) (Endpoint, error) {
	var e Endpoint
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return e, fmt.Errorf("livetab: no endpoint file at %s: %w", path, ErrNotRunning)
	}
	if err != nil {
		return e, fmt.Errorf("livetab: reading the endpoint file: %w", err)
	}
	if err := jsonv2.Unmarshal(b, &e); err != nil {
		return e, fmt.Errorf("livetab: the endpoint file %s is damaged (delete it and restart `livetab serve`): %w", path, err)
	}
	if e.URL == "" || e.HTTP == "" {
		return e, fmt.Errorf("livetab: the endpoint file %s lacks url or http (delete it and restart `livetab serve`)", path)
	}
	return e, nil
}

// WriteEndpoint writes e to path with mode 0600 (its directory 0700): the
// URL carries the token. It replaces the file in one step, so a reader never
// sees half of it (docs/decisions/2026-11-22-livetab-serve-endpoint-file.md).
func WriteEndpoint(path string, e Endpoint) error {
	b, err := jsonv2.Marshal(e)
	if err != nil {
		return fmt.Errorf("livetab: encoding the endpoint file: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("livetab: creating the directory of the endpoint file: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".endpoint-*.json")
	if err != nil {
		return fmt.Errorf("livetab: writing the endpoint file: %w", err)
	}
	defer os.Remove(f.Name())
	// CreateTemp makes the file 0600 already; Chmod states it.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("livetab: writing the endpoint file: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("livetab: writing the endpoint file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("livetab: writing the endpoint file: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("livetab: writing the endpoint file: %w", err)
	}
	return nil
}

// Probe asks the serve of e for its status (GET /livetab/status with the
// token) and returns the raw JSON. A serve that does not answer is
// [ErrNotRunning], a refused token [ErrTokenRefused].
func Probe(ctx context.Context, e Endpoint) ([]byte, error) {
	if err := proveServe(ctx, e); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.HTTP+"/livetab/status", nil)
	if err != nil {
		return nil, fmt.Errorf("livetab: the endpoint file holds a bad address %q (delete it and restart `livetab serve`): %w", e.HTTP, err)
	}
	req.Header.Set("Authorization", "Bearer "+e.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		// The error text names the URL, never the token: it is in a header.
		return nil, fmt.Errorf("livetab: nothing answers at %s (serve pid %d is gone?): %w: %w", e.HTTP, e.PID, ErrNotRunning, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("livetab: reading the status of %s: %w", e.HTTP, err)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return nil, fmt.Errorf("livetab: %s answered 401: %w", e.HTTP, ErrTokenRefused)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("livetab: %s/livetab/status answered %s: %s (is this a livetab serve? restart it)", e.HTTP, resp.Status, strings.TrimSpace(string(body)))
	}
	return body, nil
}

// proveServe has the program at e.HTTP prove that it holds e's token
// before anything sends it: the token is the same for every serve of one
// pairing, and a serve that died leaves its file naming a port any local
// program may take (bridge.EndpointProof). A program that cannot is
// [ErrNotServe], one that proves another token [ErrTokenRefused], one
// that does not answer [ErrNotRunning].
func proveServe(ctx context.Context, e Endpoint) error {
	u, err := url.Parse(e.HTTP)
	if err != nil || u.Port() == "" {
		return fmt.Errorf("livetab: the endpoint file holds a bad address %q (delete it and restart `livetab serve`)", e.HTTP)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return fmt.Errorf("livetab: the endpoint file holds a bad address %q (delete it and restart `livetab serve`): %w", e.HTTP, err)
	}
	var n [32]byte
	rand.Read(n[:])
	nonce := hex.EncodeToString(n[:])
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.HTTP+"/livetab/proof?nonce="+nonce, nil)
	if err != nil {
		return fmt.Errorf("livetab: the endpoint file holds a bad address %q (delete it and restart `livetab serve`): %w", e.HTTP, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("livetab: nothing answers at %s (serve pid %d is gone?): %w: %w", e.HTTP, e.PID, ErrNotRunning, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if err != nil {
		return fmt.Errorf("livetab: reading the proof of %s: %w", e.HTTP, err)
	}
	var p struct {
		Proof string `json:"proof"`
	}
	if resp.StatusCode != http.StatusOK || jsonv2.Unmarshal(body, &p) != nil || len(p.Proof) != 64 {
		return fmt.Errorf("livetab: %s (serve pid %d in the endpoint file): %w", e.HTTP, e.PID, ErrNotServe)
	}
	if !hmac.Equal([]byte(p.Proof), []byte(bridge.EndpointProof(e.Token(), port, nonce))) {
		// A serve of another pairing, or a program that only looks like
		// one: either way the file's token stays here.
		return fmt.Errorf("livetab: %s proved another token than the endpoint file's (its token was not sent): %w", e.HTTP, ErrTokenRefused)
	}
	return nil
}
