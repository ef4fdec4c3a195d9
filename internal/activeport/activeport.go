// Package activeport reads DevToolsActivePort, the file Chrome writes into
// its user data directory when remote debugging is on: line 1 the port,
// line 2 the path of the browser WebSocket, /devtools/browser/<id>. The
// native backend (package livetab) reads it in the person's profile, the
// launcher (package extension) in the profile of a Chromium it started.
package activeport

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// File is the file's name.
const File = "DevToolsActivePort"

// URL returns the browser WebSocket URL that the file's content b names,
// ws://127.0.0.1:PORT/devtools/browser/ID. Chrome listens on loopback
// only, so the host is not in the file. A file Chrome is still writing
// reads as malformed: a caller that waits for it reads again.
func URL(b []byte) (string, error) {
	port, path, err := Parse(b)
	if err != nil {
		return "", err
	}
	return "ws://127.0.0.1:" + strconv.Itoa(port) + path, nil
}

// Parse returns the port and the browser WebSocket's path the file's
// content b names.
func Parse(b []byte) (port int, path string, err error) {
	lines := strings.Split(string(bytes.TrimSpace(b)), "\n")
	if len(lines) != 2 {
		return 0, "", fmt.Errorf("%s has %d lines, want 2 (port, path)", File, len(lines))
	}
	port, err = strconv.Atoi(strings.TrimSpace(lines[0]))
	path = strings.TrimSpace(lines[1])
	if err != nil || port <= 0 || port > 65535 || !strings.HasPrefix(path, "/devtools/browser/") || len(path) == len("/devtools/browser/") {
		return 0, "", errors.New(File + " is not a port and a /devtools/browser/<id> path")
	}
	return port, path, nil
}
