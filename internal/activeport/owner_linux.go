package activeport

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// CheckOwner returns an error wrapping ErrNotChrome unless port is a
// listening socket of the process that holds the profile dir. It reads
// /proc only: the port is never connected to.
func CheckOwner(dir string, port int) error {
	pid, err := lockPID(dir)
	if err != nil {
		return err
	}
	inodes := listeners(port)
	if len(inodes) == 0 {
		return fmt.Errorf("%w: nothing listens on port %d (Chrome was closed?)", ErrNotChrome, port)
	}
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		return fmt.Errorf("%w: the profile's Chrome (pid %d) is gone or not readable by this user: %v", ErrNotChrome, pid, err)
	}
	for _, fd := range fds {
		link, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + fd.Name())
		if err == nil && inodes[link] {
			return nil
		}
	}
	return fmt.Errorf("%w: port %d is held by a program other than the profile's Chrome (pid %d)", ErrNotChrome, port, pid)
}

// listeners returns the inodes, as "socket:[N]", of the TCP sockets
// listening on port.
func listeners(port int) map[string]bool {
	want := fmt.Sprintf(":%04X", port)
	found := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		file, err := os.Open(f)
		if err != nil {
			continue
		}
		s := bufio.NewScanner(file)
		for s.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			f := strings.Fields(s.Text())
			if len(f) < 10 || f[3] != "0A" || !strings.HasSuffix(f[1], want) {
				continue
			}
			found["socket:["+f[9]+"]"] = true
		}
		file.Close()
	}
	return found
}
