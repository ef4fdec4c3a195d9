package upload_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/upload"
)

// groupIsOnlyMine reports whether gid is a group no user but this one
// belongs to: no listed members, and no other user's primary group (a
// user private group, the default with USERGROUPS_ENAB on Debian, Ubuntu
// and Fedora, where user-made directories are 0775 under umask 002).
func groupIsOnlyMine(t *testing.T, gid int) bool {
	me := os.Getuid()
	g, err := os.Open("/etc/group")
	if err != nil {
		return false
	}
	defer g.Close()
	found := false
	for s := bufio.NewScanner(g); s.Scan(); {
		f := strings.Split(s.Text(), ":")
		if len(f) >= 4 && f[2] == strconv.Itoa(gid) {
			found = true
			if strings.TrimSpace(f[3]) != "" {
				return false
			}
		}
	}
	p, err := os.Open("/etc/passwd")
	if err != nil {
		return false
	}
	defer p.Close()
	for s := bufio.NewScanner(p); s.Scan(); {
		f := strings.Split(s.Text(), ":")
		if len(f) >= 4 && f[3] == strconv.Itoa(gid) && f[2] != strconv.Itoa(me) {
			return false
		}
	}
	return found
}

// TestRedTeamNativeUploadFromOwnGroupDir: a directory of the person's
// own, writable by the person's own private group (mode 0775, as every
// directory the person makes under umask 002 on a distribution with user
// private groups), is one no other user may change. othersMayChange took
// any group-write bit for "another user may change it", so native upload
// was refused (WithMode(Native) failed; Auto streamed the bytes instead).
func TestRedTeamNativeUploadFromOwnGroupDir(t *testing.T) {
	browsertest.RequireChromium(t)
	gid := os.Getgid()
	if !groupIsOnlyMine(t, gid) {
		t.Skipf("group %d has other users here", gid)
	}
	ctx := open(t, execTab)
	dir := filepath.Join(t.TempDir(), "Documents")
	if err := os.Mkdir(dir, 0o775); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o775)
	os.Chown(dir, os.Getuid(), gid)
	path := filepath.Join(dir, "owngroup-ref.png")
	data := bigPNG(64 << 10)
	if err := os.WriteFile(path, data, 0o664); err != nil {
		t.Fatal(err)
	}
	res, err := upload.Files(opCtx(t, ctx), upload.CSS("#ref"), []upload.File{upload.Path(path)}, upload.WithMode(upload.Native))
	if err != nil {
		t.Fatalf("a native upload of a file in a directory only this user (uid %d, its own group %d) may change: %v", os.Getuid(), gid, err)
	}
	if res.Mode != upload.Native {
		t.Errorf("mode %s (%s), want native", res.Mode, res.Fallback)
	}
	if u := uploaded(t, "input", "owngroup-ref.png"); u.SHA256 != sum(data) {
		t.Errorf("the server got sha256 %s, want %s", u.SHA256, sum(data))
	}
}
