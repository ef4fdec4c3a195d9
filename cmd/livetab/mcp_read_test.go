package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/livetab/livetab/page"
	"github.com/livetab/livetab/policy"
)

// articleServer serves /article: paragraphs "Paragraph N: …" up to about
// size bytes, then THE END. It returns the server and the paragraphs'
// count.
func articleServer(t *testing.T, size int) (*httptest.Server, int) {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>Article</title></head><body><h1>A long article</h1>`)
	n := 0
	for b.Len() < size {
		n++
		fmt.Fprintf(&b, "<p>Paragraph %d: the quick brown fox jumps over the lazy dog, again and again.</p>\n", n)
	}
	b.WriteString(`<p>THE END</p></body></html>`)
	article := b.String()
	mux := http.NewServeMux()
	mux.HandleFunc("/article", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, article) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, n
}

// allParagraphs checks that got holds each of the n paragraphs once, and
// the end.
func allParagraphs(t *testing.T, got string, n, calls int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		if c := strings.Count(got, fmt.Sprintf("Paragraph %d:", i)); c != 1 {
			t.Fatalf("paragraph %d is there %d times in %d calls", i, c, calls)
		}
	}
	if !strings.Contains(got, "THE END") {
		t.Errorf("the end never came back in %d calls", calls)
	}
}

// Under the default flags a 50 KB article comes back whole from one
// browser_read, as the anchors' snapshots give it, and the tool tells
// Claude Code its results may be that long.
func TestMCPReadArticleWhole(t *testing.T) {
	onServe(t, func(t *testing.T, h *home, args []string) {
		srv, n := articleServer(t, 50_000)
		c := startMCP(t, h, nil, append(args, "--allow-domain", "127.0.0.1")...)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		tools, err := c.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range tools.Tools {
			if tool.Name == "browser_read" {
				if got, _ := tool.Meta["anthropic/maxResultSizeChars"].(float64); int(got) != policy.DefaultMaxPageText {
					t.Errorf("browser_read's _meta: %v, want anthropic/maxResultSizeChars %d", tool.Meta, policy.DefaultMaxPageText)
				}
			}
		}
		c.ok(t, "browser_navigate", map[string]any{"url": srv.URL + "/article"})
		text, _ := c.ok(t, "browser_read", nil)
		// Where it is from, in its page block.
		if !regexp.MustCompile(`^<page id=[0-9a-f]{6}>\nurl: ` + regexp.QuoteMeta(srv.URL+"/article") + `\ntitle: "Article"\n`).MatchString(text) {
			t.Errorf("the read does not start with where it is from:\n%s", text[:min(len(text), 300)])
		}
		m := regexp.MustCompile(`\(all (\d+) characters\)`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("one read did not return the whole article:\n%s", text[max(0, len(text)-300):])
		}
		if total, _ := strconv.Atoi(m[1]); total < 45_000 || total > page.DefaultMaxChars {
			t.Errorf("the article has %d characters, want 45,000 to %d", total, page.DefaultMaxChars)
		}
		allParagraphs(t, text, n, 1)
		if strings.Contains(text, "livetab cut this result") {
			t.Errorf("the policy's budget cut the read:\n%s", text[len(text)-300:])
		}
	})
}

// A 50 KB article through `livetab mcp` with a tight --max-page-text:
// browser_read pages through it with the offsets its results give, each
// result under the cap and none cut by it, and every paragraph comes back.
// Asking for more than the cap says it was lowered.
func TestMCPReadPages(t *testing.T) {
	onServe(t, func(t *testing.T, h *home, args []string) {
		srv, n := articleServer(t, 50_000)
		const limit = 15000
		c := startMCP(t, h, nil, append(args, "--allow-domain", "127.0.0.1", "--max-page-text", strconv.Itoa(limit))...)
		c.ok(t, "browser_navigate", map[string]any{"url": srv.URL + "/article"})
		next := regexp.MustCompile(`read on with offset=(\d+)\)`)
		var all strings.Builder
		params := map[string]any{}
		calls := 0
		for {
			text, _ := c.ok(t, "browser_read", params)
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
			want := fmt.Sprintf("(max_chars %d was lowered to 13000", page.DefaultMaxChars)
			if calls == 2 {
				want = "(max_chars 50000 was lowered to 13000"
			}
			if !strings.Contains(text, want) {
				t.Errorf("call %d does not say %q:\n%s", calls, want, text[len(text)-300:])
			}
			off, _ := strconv.Atoi(m[1])
			params = map[string]any{"offset": off}
			if calls == 1 {
				params["max_chars"] = 50000
			}
			if calls > 8 {
				t.Fatal("too many calls")
			}
		}
		allParagraphs(t, all.String(), n, calls)
		if calls < 4 {
			t.Errorf("%d calls for 50 KB in pages of 13,000 characters", calls)
		}
	})
}
