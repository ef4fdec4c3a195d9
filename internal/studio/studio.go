// Package studio serves a fake "generation studio" for the tests and
// examples of packages capture and upload: a page with a prompt box, a
// reference-image input, a drop zone and a paste target that, after a
// delay, shows an image made on a canvas (as a blob: URL), a video served
// with range requests, a video held as a blob, an audio clip and a
// download-only file. The server knows the SHA-256 of everything it
// generated and records every upload it receives, so tests can compare
// bytes end to end.
package studio

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

var (
	//go:embed studio.html
	studioHTML string
	//go:embed js/studio.js
	studioJS string
)

// Asset is a generated file as the server knows it.
type Asset struct {
	Name   string
	MIME   string
	Size   int64
	SHA256 string
	URL    string
}

// Upload is a file the page posted back after receiving it.
type Upload struct {
	// Via is "input", "small", "multi", "drop" or "paste": the control that
	// got the file.
	Via          string
	Name         string
	MIME         string
	LastModified int64
	Size         int64
	SHA256       string
	// Data holds the bytes of uploads up to 1 MiB.
	Data []byte
}

// Options configure a Studio.
type Options struct {
	// Delay is how long a generation takes. Default 200 ms.
	Delay time.Duration
	// VideoSize is the size of the generated videos (the streamed one and
	// the blob). Default 2 MiB.
	VideoSize int64
	// AudioSize is the size of the audio clip's samples. Default 256 KiB.
	AudioSize int64
	// DownloadSize is the size of the download-only file. Default 512 KiB.
	DownloadSize int64
}

// Studio is a running fake studio.
type Studio struct {
	// URL is the studio page.
	URL string
	// CrossURL is another origin serving the same media without CORS
	// headers.
	CrossURL string

	srv, cross *httptest.Server
	opts       Options

	mu      sync.Mutex
	seq     int
	assets  map[string]Asset // by kind: image, video, audio, blobvideo, download
	uploads []Upload
	changed chan struct{}
	refPNG  []byte
	bgPNG   []byte
	// whole counts the whole-file (no Range) requests of each media path
	// by their Sec-Fetch-Mode: "cors" is a page's fetch, "navigate" a
	// download.
	whole map[string]map[string]int
}

// New starts a Studio; Close stops it.
func New(opts Options) *Studio {
	if opts.Delay == 0 {
		opts.Delay = 200 * time.Millisecond
	}
	if opts.VideoSize == 0 {
		opts.VideoSize = 2 << 20
	}
	if opts.AudioSize == 0 {
		opts.AudioSize = 256 << 10
	}
	if opts.DownloadSize == 0 {
		opts.DownloadSize = 512 << 10
	}
	s := &Studio{
		opts:    opts,
		assets:  map[string]Asset{},
		changed: make(chan struct{}),
		refPNG:  gradient(96, 64, 1),
		bgPNG:   gradient(64, 64, 2),
	}
	s.cross = httptest.NewServer(http.HandlerFunc(s.media))
	s.srv = httptest.NewServer(s)
	s.URL = s.srv.URL
	// Another origin on the same machine: localhost instead of 127.0.0.1.
	s.CrossURL = strings.Replace(s.cross.URL, "127.0.0.1", "localhost", 1)
	return s
}

// Close stops the servers.
func (s *Studio) Close() {
	s.srv.Close()
	s.cross.Close()
}

// SetVideoSize changes the size of the videos of later generations and
// returns the previous size.
func (s *Studio) SetVideoSize(n int64) (old int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, s.opts.VideoSize = s.opts.VideoSize, n
	return old
}

// SetDownloadSize changes the size of the download-only file of later
// generations and returns the previous size.
func (s *Studio) SetDownloadSize(n int64) (old int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, s.opts.DownloadSize = s.opts.DownloadSize, n
	return old
}

// RefPNG returns the bytes of /media/ref.png, the page's reference image.
func (s *Studio) RefPNG() []byte { return s.refPNG }

// BgPNG returns the bytes of /media/bg.png, the page's CSS background.
func (s *Studio) BgPNG() []byte { return s.bgPNG }

// Asset returns what the latest generation produced of a kind: "image",
// "video", "audio", "blobvideo", "download".
func (s *Studio) Asset(kind string) (Asset, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.assets[kind]
	return a, ok
}

// WholeReads says how many times path was requested whole (without a
// Range header), by Sec-Fetch-Mode ("cors" for a page's fetch, "navigate"
// for a download).
func (s *Studio) WholeReads(path string) map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.whole[path] {
		out[k] = v
	}
	return out
}

// Uploads returns the uploads received so far.
func (s *Studio) Uploads() []Upload {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Upload(nil), s.uploads...)
}

// WaitUploads waits until at least n uploads arrived and returns them all.
func (s *Studio) WaitUploads(ctx context.Context, n int) ([]Upload, error) {
	for {
		s.mu.Lock()
		ups, ch := append([]Upload(nil), s.uploads...), s.changed
		s.mu.Unlock()
		if len(ups) >= n {
			return ups, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ups, fmt.Errorf("studio: %d uploads arrived, waiting for %d: %w", len(ups), n, ctx.Err())
		}
	}
}

// ResetUploads forgets the uploads received so far.
func (s *Studio) ResetUploads() {
	s.mu.Lock()
	s.uploads = nil
	s.mu.Unlock()
}

func (s *Studio) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// ServeHTTP serves the studio.
func (s *Studio) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, strings.ReplaceAll(studioHTML, "CROSS", s.CrossURL))
	case r.URL.Path == "/studio.js":
		w.Header().Set("Content-Type", "text/javascript")
		io.WriteString(w, studioJS)
	case r.URL.Path == "/sandboxed":
		// A page whose CSP sandbox withholds allow-downloads: it may run
		// scripts but never start a download.
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "sandbox allow-scripts allow-same-origin")
		io.WriteString(w, "<!doctype html><title>sandboxed</title><video id=v></video>")
	case r.URL.Path == "/away":
		// A URL of the studio's origin that sends its reader to another.
		http.Redirect(w, r, s.CrossURL+"/media/ref.png", http.StatusFound)
	case r.URL.Path == "/generate":
		s.generate(w, r)
	case r.URL.Path == "/report":
		s.report(w, r)
	case r.URL.Path == "/upload":
		s.upload(w, r)
	case strings.HasPrefix(r.URL.Path, "/media/"), strings.HasPrefix(r.URL.Path, "/download/"),
		strings.HasPrefix(r.URL.Path, "/broken/"):
		s.media(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Studio) generate(w http.ResponseWriter, r *http.Request) {
	prompt, _ := io.ReadAll(io.LimitReader(r.Body, 4096))
	s.mu.Lock()
	s.seq++
	id := s.seq
	o := s.opts
	s.mu.Unlock()
	seed := uint64(id)*1000003 + uint64(len(prompt))
	q := func(kind string, size int64) string {
		return fmt.Sprintf("/media/%s-%d.%s?seed=%d&size=%d", kind, id, extOf(kind), seed+uint64(len(kind)), size)
	}
	job := map[string]any{
		"id":        id,
		"seed":      seed & 0x7fffffff,
		"delayMs":   o.Delay.Milliseconds(),
		"video":     q("video", o.VideoSize),
		"audio":     q("audio", o.AudioSize),
		"blobVideo": q("blobvideo", o.VideoSize),
		"download":  fmt.Sprintf("/download/result-%d.zip?seed=%d&size=%d", id, seed+99, o.DownloadSize),
		"broken":    fmt.Sprintf("/broken/result-%d.zip?size=%d", id, o.DownloadSize),
	}
	s.record("video", job["video"].(string))
	s.record("audio", job["audio"].(string))
	s.record("blobvideo", job["blobVideo"].(string))
	s.record("download", job["download"].(string))
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(job)
}

func extOf(kind string) string {
	switch kind {
	case "video":
		return "mp4"
	case "audio":
		return "wav"
	case "blobvideo":
		return "webm"
	}
	return "bin"
}

// record notes the asset a generated URL serves, hashing it once.
func (s *Studio) record(kind, u string) {
	g, name, err := s.generator(u)
	if err != nil {
		return
	}
	h := sha256.New()
	io.Copy(h, io.NewSectionReader(g, 0, g.size))
	a := Asset{Name: name, MIME: g.mime, Size: g.size, SHA256: hex.EncodeToString(h.Sum(nil)), URL: s.URL + u}
	s.mu.Lock()
	s.assets[kind] = a
	s.mu.Unlock()
}

func (s *Studio) report(w http.ResponseWriter, r *http.Request) {
	h := sha256.New()
	n, _ := io.Copy(h, r.Body)
	kind := r.URL.Query().Get("kind")
	s.mu.Lock()
	s.assets[kind] = Asset{MIME: r.Header.Get("Content-Type"), Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}
	s.notify()
	s.mu.Unlock()
}

func (s *Studio) upload(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	h := sha256.New()
	var small bytes.Buffer
	n, err := io.Copy(io.MultiWriter(h, &limitWriter{w: &small, n: 1 << 20}), r.Body)
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	lm, _ := strconv.ParseInt(q.Get("lastModified"), 10, 64)
	u := Upload{
		Via: q.Get("via"), Name: q.Get("name"), MIME: q.Get("type"), LastModified: lm,
		Size: n, SHA256: hex.EncodeToString(h.Sum(nil)),
	}
	if n <= 1<<20 {
		u.Data = small.Bytes()
	}
	s.mu.Lock()
	s.uploads = append(s.uploads, u)
	s.notify()
	s.mu.Unlock()
}

type limitWriter struct {
	w io.Writer
	n int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(int64(len(p)), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// media serves the reference images, the generated media (with range
// requests, from a seeded generator: nothing large is held in memory), the
// download-only file and a download that breaks off.
func (s *Studio) media(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/media/ref.png":
		w.Header().Set("Content-Type", "image/png")
		w.Write(s.refPNG)
		return
	case "/media/bg.png":
		w.Header().Set("Content-Type", "image/png")
		w.Write(s.bgPNG)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/broken/") {
		// Announce the whole file, send a tenth, and hang up.
		size, _ := strconv.ParseInt(r.URL.Query().Get("size"), 10, 64)
		w.Header().Set("Content-Type", "application/zip")
		w.Header().Set("Content-Disposition", `attachment; filename="broken.zip"`)
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		w.WriteHeader(200)
		w.Write(make([]byte, size/10))
		w.(http.Flusher).Flush()
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
			}
		}
		return
	}
	if r.Header.Get("Range") == "" {
		s.mu.Lock()
		if s.whole == nil {
			s.whole = map[string]map[string]int{}
		}
		if s.whole[r.URL.Path] == nil {
			s.whole[r.URL.Path] = map[string]int{}
		}
		s.whole[r.URL.Path][r.Header.Get("Sec-Fetch-Mode")]++
		s.mu.Unlock()
	}
	g, name, err := s.generator(r.URL.RequestURI())
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", g.mime)
	if strings.HasPrefix(r.URL.Path, "/download/") {
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	}
	if strings.Contains(r.URL.Path, "/audio-") {
		// Whole responses only, so the audio can come from rung 1.
		r.Header.Del("Range")
	}
	http.ServeContent(w, r, name, time.Time{}, io.NewSectionReader(g, 0, g.size))
}

// generator parses a generated URL (path and query) into its content.
func (s *Studio) generator(u string) (*gen, string, error) {
	path, query, _ := strings.Cut(u, "?")
	vals, _ := parseQuery(query)
	seed, err1 := strconv.ParseUint(vals["seed"], 10, 64)
	size, err2 := strconv.ParseInt(vals["size"], 10, 64)
	if err1 != nil || err2 != nil || size < 64 {
		return nil, "", fmt.Errorf("studio: bad generated URL %q", u)
	}
	name := path[strings.LastIndexByte(path, '/')+1:]
	g := &gen{seed: seed, size: size}
	switch {
	case strings.HasSuffix(name, ".mp4"):
		g.mime = "video/mp4"
		g.head = mp4Head()
	case strings.HasSuffix(name, ".webm"):
		g.mime = "video/webm"
		g.head = []byte{0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x86, 0x81, 0x01, 0x42, 0x82, 0x84, 'w', 'e', 'b', 'm'}
	case strings.HasSuffix(name, ".wav"):
		g.mime = "audio/wav"
		g.head = wavHead(size)
	case strings.HasSuffix(name, ".zip"):
		g.mime = "application/zip"
		g.head = []byte("PK\x03\x04")
	default:
		g.mime = "application/octet-stream"
	}
	return g, name, nil
}

func parseQuery(q string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range strings.Split(q, "&") {
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out, nil
}

func mp4Head() []byte {
	b := make([]byte, 0, 32)
	b = binary.BigEndian.AppendUint32(b, 24)
	b = append(b, "ftypmp42"...)
	b = binary.BigEndian.AppendUint32(b, 0)
	b = append(b, "mp42isom"...)
	return b
}

// wavHead is a RIFF header for 16-bit mono PCM at 22050 Hz whose data fills
// the rest of a file of size bytes: the noise after it is valid audio.
func wavHead(size int64) []byte {
	b := make([]byte, 0, 44)
	b = append(b, "RIFF"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(size-8))
	b = append(b, "WAVEfmt "...)
	b = binary.LittleEndian.AppendUint32(b, 16)
	b = binary.LittleEndian.AppendUint16(b, 1)
	b = binary.LittleEndian.AppendUint16(b, 1)
	b = binary.LittleEndian.AppendUint32(b, 22050)
	b = binary.LittleEndian.AppendUint32(b, 44100)
	b = binary.LittleEndian.AppendUint16(b, 2)
	b = binary.LittleEndian.AppendUint16(b, 16)
	b = append(b, "data"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(size-44))
	return b
}

const genBlock = 64 << 10

// gen is seeded pseudo-random content behind a fixed header, readable at
// any offset without holding it: block k is ChaCha8 seeded by (seed, k).
type gen struct {
	seed  uint64
	size  int64
	head  []byte
	mime  string
	mu    sync.Mutex
	k     int64
	block []byte
}

func (g *gen) ReadAt(p []byte, off int64) (int, error) {
	if off >= g.size {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && off < g.size {
		if off < int64(len(g.head)) {
			c := copy(p[n:], g.head[off:])
			n += c
			off += int64(c)
			continue
		}
		k := off / genBlock
		blk := g.blockAt(k)
		c := copy(p[n:], blk[off-k*genBlock:])
		if rem := g.size - off; int64(c) > rem {
			c = int(rem)
		}
		n += c
		off += int64(c)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (g *gen) blockAt(k int64) []byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.block != nil && g.k == k {
		return g.block
	}
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[0:], g.seed)
	binary.LittleEndian.PutUint64(seed[8:], uint64(k))
	if g.block == nil {
		g.block = make([]byte, genBlock)
	}
	rand.NewChaCha8(seed).Read(g.block)
	g.k = k
	return g.block
}

// Hash returns the lowercase hex SHA-256 of what r yields.
func Hash(r io.Reader) string {
	h := sha256.New()
	io.Copy(h, r)
	return hex.EncodeToString(h.Sum(nil))
}

// Content returns a reader of size bytes of seeded pseudo-random content,
// the same for the same seed, for sources of uploads and benchmarks of any
// size.
func Content(seed uint64, size int64) io.ReadSeeker {
	return io.NewSectionReader(&gen{seed: seed, size: size}, 0, size)
}

// gradient is a small deterministic PNG.
func gradient(w, h int, v uint8) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.NRGBA{uint8(x * 255 / w), uint8(y * 255 / h), v * 60, 255})
		}
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}
