package extension

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
)

// idFromKey computes an extension id the way Chrome does: the first 32 hex
// digits of SHA-256 over the DER public key, each digit 0-f mapped to a-p.
func idFromKey(t *testing.T, key string) string {
	t.Helper()
	der, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		t.Fatalf("manifest key is not base64: %v", err)
	}
	sum := sha256.Sum256(der)
	id := []byte(hex.EncodeToString(sum[:])[:32])
	for i, c := range id {
		if c <= '9' {
			id[i] = 'a' + (c - '0')
		} else {
			id[i] = 'a' + 10 + (c - 'a')
		}
	}
	return string(id)
}

func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ext")
	cfg := Config{URL: "ws://127.0.0.1:9/extension", Token: "s3cret"}
	if err := Write(dir, cfg); err != nil {
		t.Fatal(err)
	}

	var manifest struct {
		ManifestVersion int      `json:"manifest_version"`
		Name            string   `json:"name"`
		Version         string   `json:"version"`
		Key             string   `json:"key"`
		Permissions     []string `json:"permissions"`
		Background      struct {
			ServiceWorker string `json:"service_worker"`
			Type          string `json:"type"`
		} `json:"background"`
		Action struct {
			Popup string `json:"default_popup"`
		} `json:"action"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := jsonv2.Unmarshal(b, &manifest); err != nil {
		t.Fatal(err)
	}
	if got := idFromKey(t, manifest.Key); got != ID {
		t.Errorf("manifest key gives id %s, want %s", got, ID)
	}
	if manifest.ManifestVersion != 3 || manifest.Name != "livetab" || manifest.Version != "0.1.0" {
		t.Errorf("manifest = %+v", manifest)
	}
	for _, p := range []string{"debugger", "tabs", "storage", "alarms", "downloads"} {
		if !slices.Contains(manifest.Permissions, p) {
			t.Errorf("permission %s missing from %v", p, manifest.Permissions)
		}
	}
	if manifest.Background.ServiceWorker != "background.js" || manifest.Background.Type != "module" || manifest.Action.Popup != "popup.html" {
		t.Errorf("manifest background/action = %+v %+v", manifest.Background, manifest.Action)
	}
	for _, name := range []string{"background.js", "popup.html", "popup.js", "lib/chunk.js", "lib/frame.js", "lib/backoff.js", "lib/tabs.js"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}

	name := filepath.Join(dir, ConfigFile)
	var got Config
	b, err = os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := jsonv2.Unmarshal(b, &got); err != nil || got != cfg {
		t.Errorf("config.json = %s (%v), want %+v", b, err, cfg)
	}
	if runtime.GOOS != "windows" {
		// Also when an older, readable config.json is in the way.
		if err := os.Chmod(name, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := Write(dir, Config{URL: cfg.URL, Token: "other"}); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("config.json mode %v, want 0600", fi.Mode().Perm())
		}
	}
}

// Every module the service worker imports must be embedded, and nothing
// that is only for development.
func TestFilesHoldExactlyTheExtension(t *testing.T) {
	var got []string
	err := fs.WalkDir(Files(), ".", func(name string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			got = append(got, name)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want, err := fs.Glob(os.DirFS("."), "lib/*.js")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, "background.js", "manifest.json", "popup.html", "popup.js", "transfer.html", "transfer.js")
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("Files() = %v, want %v", got, want)
	}
}

func TestFindChromiumHonoursEnv(t *testing.T) {
	t.Setenv("LIVETAB_CHROME", filepath.Join(t.TempDir(), "missing"))
	if _, err := FindChromium(); err == nil {
		t.Error("FindChromium accepted a missing LIVETAB_CHROME")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("LIVETAB_CHROME", exe)
	if got, err := FindChromium(); err != nil || got != exe {
		t.Errorf("FindChromium() = %q, %v; want %q", got, err, exe)
	}
}
