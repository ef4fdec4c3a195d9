// Package testsite serves the pages the end-to-end tests drive: a form, an
// upload page whose server keeps what it receives, frames with a same-origin
// and a cross-origin iframe, a popup link and a download. The same handler
// answers on two origins (127.0.0.1 and localhost), so the cross-origin
// iframe is a separate target under --site-per-process.
package testsite

import (
	"bytes"
	"embed"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

//go:embed pages/*.html
var pages embed.FS

// DownloadBody is what /download serves, as an attachment named report.bin.
var DownloadBody = bytes.Repeat([]byte("livetab download "), 1000)

// Site is a running test site.
type Site struct {
	// URL is the main origin, http://127.0.0.1:PORT.
	URL string
	// CrossURL is the other origin, http://localhost:PORT2.
	CrossURL string

	main, cross *httptest.Server
	mu          sync.Mutex
	received    map[string][]byte
}

// Start serves the site until Close.
func Start() *Site {
	s := &Site{received: map[string][]byte{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/sink", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.received[r.URL.Query().Get("name")] = b
		s.mu.Unlock()
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		// What the browser sent, for the interception checks.
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		fmt.Fprintf(w, "%s %s x-livetab=%s", r.Method, r.URL.Path, r.Header.Get("X-Livetab"))
	})
	mux.HandleFunc("/download", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="report.bin"`)
		w.Write(DownloadBody)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		name := strings.Trim(r.URL.Path, "/")
		switch name {
		case "", "popup-target":
			name = "form"
		}
		b, err := pages.ReadFile("pages/" + name + ".html")
		if err != nil {
			http.NotFound(w, r)
			return
		}
		b = bytes.ReplaceAll(b, []byte("CROSS"), []byte(s.CrossURL))
		b = bytes.ReplaceAll(b, []byte("MAIN"), []byte(s.URL))
		w.Header().Set("Content-Type", "text/html")
		w.Write(b)
	})
	s.main = httptest.NewServer(mux)
	s.cross = httptest.NewServer(mux)
	s.URL = s.main.URL
	s.CrossURL = strings.Replace(s.cross.URL, "127.0.0.1", "localhost", 1)
	return s
}

// Received returns the bytes the upload page sent for a file name.
func (s *Site) Received(name string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.received[name]
}

// Close stops both servers.
func (s *Site) Close() {
	s.main.Close()
	s.cross.Close()
}
