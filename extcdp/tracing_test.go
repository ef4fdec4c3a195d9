package extcdp_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
)

// traceEvent is what the test reads of a trace event.
type traceEvent struct {
	Name string `json:"name"`
	Pid  int64  `json:"pid"`
	Args struct {
		Data struct {
			Frames []struct {
				Frame     string `json:"frame"`
				URL       string `json:"url"`
				ProcessID int64  `json:"processId"`
			} `json:"frames"`
			IsOutermostMainFrame bool `json:"isOutermostMainFrame"`
		} `json:"data"`
	} `json:"args"`
}

// TestTracingNamesThePage: a trace through chrome.debugger holds the tab's
// renderer only, without the browser's TracingStartedInBrowser, so the
// DevTools trace engine found no page in it (chrome-devtools-mcp's
// performance_start_trace: "URL: ", no insight set). The relay adds the
// event, in both transfer modes, naming the page's frame, URL and process;
// and the trace's events go to the session that traces, not to another
// client on the tab.
func TestTracingNamesThePage(t *testing.T) {
	c := dialRaw(t)
	other := dialRaw(t)
	url := site.URL + "/form?trace"
	// A tab of the person's, on which both clients have a session.
	target := userTab(t, url)
	closeUserTab(t, target)
	sid := c.attach(target)
	osid := other.attach(target)
	c.must(sid, "Page.enable", nil)
	categories := "-*,devtools.timeline,disabled-by-default-devtools.timeline,loading,__metadata"

	check := func(mode string, events []traceEvent) {
		t.Helper()
		var started []traceEvent
		var navPid int64
		for _, e := range events {
			switch e.Name {
			case "TracingStartedInBrowser":
				started = append(started, e)
			case "navigationStart":
				if e.Args.Data.IsOutermostMainFrame {
					navPid = e.Pid
				}
			}
		}
		if len(started) != 1 {
			t.Fatalf("%s: %d TracingStartedInBrowser events among %d, want 1", mode, len(started), len(events))
		}
		f := started[0].Args.Data.Frames
		if len(f) != 1 || f[0].Frame != target || f[0].URL != url || f[0].ProcessID == 0 || f[0].ProcessID != started[0].Pid {
			t.Errorf("%s: TracingStartedInBrowser names %+v (pid %d); want frame %s, %s", mode, f, started[0].Pid, target, url)
		}
		if navPid != 0 && len(f) == 1 && f[0].ProcessID != navPid {
			t.Errorf("%s: TracingStartedInBrowser names process %d, the page's navigationStart is of %d", mode, f[0].ProcessID, navPid)
		}
	}
	waitEvent := func(method string) jsonv2.Value {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			c.mu.Lock()
			for _, e := range c.events {
				if e.Method == method && e.SessionID == sid {
					c.mu.Unlock()
					return e.Params
				}
			}
			c.mu.Unlock()
			if time.Now().After(deadline) {
				t.Fatalf("no %s within 30 s", method)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	reload := func() {
		c.must(sid, "Page.reload", nil)
		waitEvent("Page.loadEventFired")
		time.Sleep(200 * time.Millisecond)
	}

	// As a stream (Puppeteer's page.tracing, chrome-devtools-mcp).
	c.must(sid, "Tracing.start", map[string]any{"transferMode": "ReturnAsStream", "categories": categories})
	reload()
	c.must(sid, "Tracing.end", nil)
	var done struct {
		Stream string `json:"stream"`
	}
	jsonv2.Unmarshal(waitEvent("Tracing.tracingComplete"), &done, wire.Options)
	if done.Stream == "" {
		t.Fatal("tracingComplete named no stream")
	}
	var data strings.Builder
	for {
		var r struct {
			Data string `json:"data"`
			EOF  bool   `json:"eof"`
		}
		jsonv2.Unmarshal(c.must(sid, "IO.read", map[string]any{"handle": done.Stream, "size": 1 << 20}), &r, wire.Options)
		data.WriteString(r.Data)
		if r.EOF {
			break
		}
	}
	c.must(sid, "IO.close", map[string]any{"handle": done.Stream})
	var trace struct {
		TraceEvents []traceEvent `json:"traceEvents"`
	}
	if err := json.Unmarshal([]byte(data.String()), &trace); err != nil {
		t.Fatalf("the trace is not JSON: %v (%.200s)", err, data.String())
	}
	check("stream", trace.TraceEvents)

	// As events (Tracing.dataCollected).
	c.mu.Lock()
	c.events = nil
	c.mu.Unlock()
	c.must(sid, "Tracing.start", map[string]any{"transferMode": "ReportEvents", "categories": categories})
	reload()
	c.must(sid, "Tracing.end", nil)
	waitEvent("Tracing.tracingComplete")
	var events []traceEvent
	c.mu.Lock()
	for _, e := range c.events {
		if e.Method == "Tracing.dataCollected" && e.SessionID == sid {
			var p struct {
				Value []traceEvent `json:"value"`
			}
			json.Unmarshal(e.Params, &p)
			events = append(events, p.Value...)
		}
	}
	c.mu.Unlock()
	check("events", events)

	other.mu.Lock()
	defer other.mu.Unlock()
	for _, e := range other.events {
		if strings.HasPrefix(e.Method, "Tracing.") {
			t.Errorf("another client on the tab (session %s) received %s", osid, e.Method)
			break
		}
	}
}
