//go:build unix

package extcdp_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/livetab/livetab/extcdp"
)

// A relay killed without closing leaves its directory of transfers from
// the page, with their files, in the temporary directory. The next relay
// removes the directories of relays that are gone, and only those: not one
// of a running relay, not one others may open, not a link, nothing else.
func TestTransferDirsOfGoneRelaysAreRemoved(t *testing.T) {
	dir := t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := gone.Process.Pid
	mk := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "livetab-transfer-x"), []byte("left bytes"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		return p
	}
	stale := mk(fmt.Sprintf("livetab-transfers-%d-123", dead), 0o700)
	running := mk(fmt.Sprintf("livetab-transfers-%d-123", os.Getppid()), 0o700)
	open := mk(fmt.Sprintf("livetab-transfers-%d-456", dead), 0o755)
	other := mk(fmt.Sprintf("livetab-downloads-%d-123", dead), 0o700)
	old := mk("livetab-transfers-123", 0o700)
	link := filepath.Join(dir, fmt.Sprintf("livetab-transfers-%d-789", dead))
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}

	extcdp.SweepStaleTransfers(dir)

	if _, err := os.Lstat(stale); err == nil {
		t.Error("the directory of a relay that is gone stays")
	}
	for _, p := range []string{running, open, other, old, link, filepath.Join(other, "livetab-transfer-x")} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}
}
