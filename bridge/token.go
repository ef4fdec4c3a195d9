package bridge

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DefaultTokenFile returns where the pairing token lives unless
// [Options.TokenFile] says otherwise: livetab/token in the user's config
// directory (~/.config/livetab/token on Linux).
func DefaultTokenFile() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("bridge: finding the config directory for the pairing token (set Options.TokenFile): %w", err)
	}
	return filepath.Join(dir, "livetab", "token"), nil
}

// LoadOrCreateToken reads the pairing token from path, or creates a new
// random one there with mode 0600 (directory 0700) when the file does not
// exist. An existing file readable by others is tightened to 0600, since the
// token is what lets a program drive the user's browser.
func LoadOrCreateToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return "", fmt.Errorf("bridge: the token file %s is empty: delete it to pair again", path)
		}
		if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(path, 0o600); err != nil {
				return "", fmt.Errorf("bridge: making the token file %s private: %w", path, err)
			}
		}
		return tok, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("bridge: reading the token file: %w", err)
	}
	tok := NewToken()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("bridge: creating the token directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) { // another process won the race: use its token
			return LoadOrCreateToken(path)
		}
		return "", fmt.Errorf("bridge: writing the token file: %w", err)
	}
	if _, err := f.WriteString(tok + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("bridge: writing the token file: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("bridge: writing the token file: %w", err)
	}
	return tok, nil
}

// NewToken returns a fresh random pairing token (256 bits, hex).
func NewToken() string {
	var b [32]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
