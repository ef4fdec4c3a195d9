package activeport

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNotChrome means the port a DevToolsActivePort names is not held by
// the Chrome of that profile: the file is stale (Chrome crashed or was
// closed without removing it) and another program may have taken the port.
// Connecting there would hand that program every command, page and typed
// text meant for the browser.
var ErrNotChrome = errors.New("the port is not Chrome's")

// lockPID returns the pid in the profile's SingletonLock, the symlink
// "HOST-PID" Chrome keeps in its user data directory while it runs.
func lockPID(dir string) (int, error) {
	link, err := os.Readlink(filepath.Join(dir, "SingletonLock"))
	if err != nil {
		return 0, fmt.Errorf("%w: no Chrome holds the profile %s (no SingletonLock)", ErrNotChrome, dir)
	}
	i := strings.LastIndexByte(link, '-')
	pid, err := strconv.Atoi(link[i+1:])
	if i < 0 || err != nil || pid <= 0 {
		return 0, fmt.Errorf("%w: the profile's SingletonLock (%q) names no process", ErrNotChrome, link)
	}
	if host, err := os.Hostname(); err == nil && link[:i] != host {
		return 0, fmt.Errorf("%w: the profile is held by a Chrome on host %q, not this one", ErrNotChrome, link[:i])
	}
	return pid, nil
}
