package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// A 50 KB article through `livetab mcp` with a tight --max-page-text:
// browser_read pages through it with the offsets its results give, each
// result under the cap and none cut by it, and every paragraph comes back.
func TestMCPReadPages(t *testing.T) {
	s := needShared(t)
	n := 0
	mux := http.NewServeMux()
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>Article</title></head><body><h1>A long article</h1>`)
	for n = 1; b.Len() < 50_000; n++ {
		fmt.Fprintf(&b, "<p>Paragraph %d: the quick brown fox jumps over the lazy dog, again and again.</p>\n", n)
	}
	n--
	b.WriteString(`<p>THE END</p></body></html>`)
	article := b.String()
	mux.HandleFunc("/article", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, article) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	const limit = 15000
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--max-page-text", strconv.Itoa(limit))
	c.ok(t, "browser_navigate", map[string]any{"url": srv.URL + "/article"})
	next := regexp.MustCompile(`read on with offset=(\d+)\)`)
	var all strings.Builder
	args := map[string]any{}
	calls := 0
	for {
		text, _ := c.ok(t, "browser_read", args)
		calls++
		if utf8.RuneCountInString(text) > limit || strings.Contains(text, "livetab cut this result") {
			t.Fatalf("call %d: %d characters, over the cap of %d or cut by it:\n%s", calls, utf8.RuneCountInString(text), limit, text[len(text)-300:])
		}
		all.WriteString(text)
		m := next.FindStringSubmatch(text)
		if m == nil {
			if !strings.Contains(text, "the end)") {
				t.Fatalf("the last page does not say it is the end:\n%s", text[max(0, len(text)-300):])
			}
			break
		}
		if !strings.Contains(text, "max_chars 20000 was lowered to 13000") {
			t.Errorf("call %d does not say max_chars was lowered:\n%s", calls, text[len(text)-300:])
		}
		off, _ := strconv.Atoi(m[1])
		args = map[string]any{"offset": off}
		if calls > 8 {
			t.Fatal("too many calls")
		}
	}
	got := all.String()
	for i := 1; i <= n; i++ {
		if strings.Count(got, fmt.Sprintf("Paragraph %d:", i)) != 1 {
			t.Fatalf("paragraph %d is there %d times in %d calls", i, strings.Count(got, fmt.Sprintf("Paragraph %d:", i)), calls)
		}
	}
	if calls < 4 || !strings.Contains(got, "THE END") {
		t.Errorf("%d calls; the end read: %v", calls, strings.Contains(got, "THE END"))
	}
}
