package extcdp

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// transferDirPrefix starts the name of a relay's directory of transfers
// from the page: the prefix, the relay's process id, a dash and a random
// suffix.
const transferDirPrefix = "livetab-transfers-"

// sweepStaleTransfers removes from dir the directories of transfers of
// relays that are gone: a relay killed without closing (SIGKILL, a power
// cut) leaves its directory and the files of the transfers open then. Only
// a directory of this user alone, named with the id of a process that no
// longer runs, goes; where that cannot be told, nothing does.
func sweepStaleTransfers(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), transferDirPrefix)
		if !ok {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() || !ownPrivate(fi) || processAlive(pid) {
			continue
		}
		os.RemoveAll(p)
	}
}
