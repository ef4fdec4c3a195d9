package capture

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSniff(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	mp4 := []byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom")
	for _, tc := range []struct {
		head     []byte
		declared string
		want     string
	}{
		{png, "", "image/png"},
		{png, "application/octet-stream", "image/png"},
		{png, "image/jpeg", "image/png"}, // the bytes win over a wrong label
		{[]byte("<svg xmlns='http://www.w3.org/2000/svg'></svg>"), "image/svg+xml", "image/svg+xml"},
		{mp4, "audio/mp4", "audio/mp4"}, // same container: the label is more precise
		{mp4, "", "video/mp4"},
		{[]byte("RIFF\x00\x00\x00\x00WAVEfmt "), "audio/x-wav", "audio/x-wav"},
		{[]byte{1, 2, 3}, "", "application/octet-stream"},
	} {
		if got := sniff(tc.head, tc.declared); got != tc.want {
			t.Errorf("sniff(%q, %q) = %q, want %q", tc.head[:4], tc.declared, got, tc.want)
		}
	}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct{ forced, server, src, mime, want string }{
		{"", "", "https://x.test/a/b/cat.png?sig=1", "image/png", "cat.png"},
		{"", "", "https://x.test/a/b/cat", "image/jpeg", "cat.jpg"},
		{"", "", "https://x.test/a/b/cat.jpeg", "image/jpeg", "cat.jpeg"},
		{"", "", "https://x.test/a/b/cat.png", "image/webp", "cat.png.webp"},
		{"", "", "blob:https://x.test/1234", "video/mp4", "capture.mp4"},
		{"", "result.zip", "https://x.test/dl?id=1", "application/zip", "result.zip"},
		{"mine", "result.zip", "https://x.test/dl", "application/zip", "mine.zip"},
		{"", "", "https://x.test/", "audio/mpeg", "capture.mp3"},
	} {
		if got := finalName(nameFrom(tc.forced, tc.server, tc.src), tc.mime); got != tc.want {
			t.Errorf("name(%q, %q, %q, %s) = %q, want %q", tc.forced, tc.server, tc.src, tc.mime, got, tc.want)
		}
	}
	if got := dispositionName(`attachment; filename="../../etc/passwd"`); got != "passwd" {
		t.Errorf("dispositionName kept a path: %q", got)
	}
	if got := dispositionName(`attachment; filename*=UTF-8''%E2%82%AC%20rates.pdf`); got != "€ rates.pdf" {
		t.Errorf("dispositionName(filename*) = %q", got)
	}
	if got := safeName(`a/b:c*?.png`); got != "a_b_c__.png" {
		t.Errorf("safeName = %q", got)
	}
}

func TestDirSink(t *testing.T) {
	dir := t.TempDir()
	put := func(data string) (string, error) {
		a, err := Dir(dir).Create(context.Background(), Meta{Name: "x.txt"})
		if err != nil {
			return "", err
		}
		a.Write([]byte(data))
		return a.Commit(&Result{Name: "x.txt"})
	}
	p1, err := put("one")
	if err != nil {
		t.Fatal(err)
	}
	p2, err := put("two")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(p1) != "x.txt" || filepath.Base(p2) != "x (2).txt" {
		t.Errorf("names %s, %s", p1, p2)
	}
	if b, _ := os.ReadFile(p1); string(b) != "one" {
		t.Errorf("the second capture overwrote the first: %q", b)
	}
	a, _ := Dir(dir).Create(context.Background(), Meta{Name: "y.txt"})
	a.Write([]byte("partial"))
	a.Abort()
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("an aborted capture left a file: %v", ents)
	}
}

func TestMadeName(t *testing.T) {
	at := time.Date(2026, 11, 23, 19, 22, 33, 0, time.UTC)
	for hint, want := range map[string]string{
		"A red fox, in the snow!": "a-red-fox-in-the-snow-20261123-192233",
		"":                        "capture-20261123-192233",
		"../../etc/passwd":        "etc-passwd-20261123-192233",
		"Café — menu":             "café-menu-20261123-192233",
	} {
		if got := madeName(hint, at); got != want {
			t.Errorf("madeName(%q) = %q, want %q", hint, got, want)
		}
	}
	if got := finalName(madeName("result", at), "image/png"); got != "result-20261123-192233.png" {
		t.Errorf("finalName = %q", got)
	}
}
