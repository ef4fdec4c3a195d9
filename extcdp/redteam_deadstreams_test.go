package extcdp_test

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// deadStreams: client A, on a tab the person opened that client B uses
// too, prints the page to 3 PDF streams (Page.printToPDF transferMode
// ReturnAsStream, as Puppeteer's page.createPDFStream does) and starts a
// trace to a stream (Tracing.start transferMode ReturnAsStream, as
// chrome-devtools-mcp's performance_start_trace and Puppeteer's
// page.tracing do), then dies before it reads or closes any. It returns
// the tab, B, B's session and the handles: A's three, and the next one,
// the trace's, which Chrome hands over once the relay ends A's trace on
// its leave (Tracing.end is the undo of Tracing.start).
func deadStreams(t *testing.T, name string) (id string, b *rawClient, sb string, handles []string) {
	t.Helper()
	srv, tok := endpoint(t)
	id = userTab(t, site.URL+"/form?dead-streams-"+name)
	closeUserTab(t, id)
	b = dialRawTo(t, srv, tok)
	sb = b.attach(id)
	b.eval(sb, "1")
	a := dialRawTo(t, srv, tok)
	sa := a.attach(id)
	a.eval(sa, "1")
	for i := 0; i < 3; i++ {
		handles = append(handles, field(a.must(sa, "Page.printToPDF", map[string]any{"transferMode": "ReturnAsStream"}), "stream"))
	}
	a.must(sa, "Tracing.start", map[string]any{"transferMode": "ReturnAsStream", "traceConfig": map[string]any{"includedCategories": []string{"devtools.timeline", "v8"}}})
	a.eval(sa, "for (let i = 0; i < 2000; i++) document.body.appendChild(document.createElement('i')).textContent = i; 1")
	a.ws.CloseNow()
	<-a.closed
	time.Sleep(2 * time.Second) // the endpoint notices; the trace ends
	// Chrome numbers streams one after the other, browser-wide.
	last, err := strconv.Atoi(handles[2])
	if err != nil {
		t.Fatalf("A's PDF streams %v", handles)
	}
	handles = append(handles, strconv.Itoa(last+1))
	return id, b, sb, handles
}

// TestRedTeamDeadClientsStreamsStay: what a dead client was given as
// streams stays in the browser's memory for as long as another client
// stays on the person's tab: Chrome keeps a stream until IO.close or until
// the debugger leaves the tab. Each dead client's PDFs and traces (a trace
// of a busy page runs to tens of MB) add up. The relay must close the
// streams of a client that left, and the trace stream its own Tracing.end
// made.
func TestRedTeamDeadClientsStreamsStay(t *testing.T) {
	id, b, _, handles := deadStreams(t, "stay")
	open := openStreams(t, id, handles)
	if open > 0 {
		t.Errorf("%d of %d of the dead client's streams (3 PDFs, 1 trace) are still open on the person's tab while another client stays", open, len(handles))
	}
	// The control: once B leaves too, the debugger leaves the tab and the
	// streams go with it.
	b.ws.CloseNow()
	<-b.closed
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if ts, ok := tabStatus(id); !ok || !ts.Attached {
			break
		}
	}
	time.Sleep(500 * time.Millisecond)
	t.Logf("after B left too: %d of %d open", openStreams(t, id, handles), len(handles))
}

// TestRedTeamDeadClientsTraceReadByAnother: B, which never traced, reads
// the trace the relay ended for A as A left. The relay notes a trace's
// stream as its tracer's when Tracing.tracingComplete comes
// (tracing.go onTracingEvent), but the tracer had left by then, so the
// stream is no one's and any client on the tab may name it: A's PDFs are
// refused to B ("Invalid stream handle"), A's trace is not.
func TestRedTeamDeadClientsTraceReadByAnother(t *testing.T) {
	_, b, sb, handles := deadStreams(t, "read")
	for _, h := range handles {
		res, err := b.call(sb, "IO.read", map[string]any{"handle": h, "size": 64})
		t.Logf("B's IO.read of the dead client's stream %s: %.80s %v", h, res, err)
		if err == nil {
			t.Errorf("B read the dead client's stream %s: %.80s", h, res)
		}
	}
}

// openStreams counts the handles a DevTools session of the person's own,
// opened for the count and closed after, reads from.
func openStreams(t *testing.T, id string, handles []string) int {
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := u.Call(ctx, "Target.attachToTarget", map[string]any{"targetId": id, "flatten": true})
	if err != nil {
		t.Fatal(err)
	}
	sid := field(res, "sessionId")
	defer u.Call(ctx, "Target.detachFromTarget", map[string]any{"sessionId": sid})
	open := 0
	for _, h := range handles {
		res, err := u.CallSession(ctx, sid, "IO.read", map[string]any{"handle": h, "size": 16})
		t.Logf("the person's IO.read of stream %s: %.80s %v", h, res, err)
		if err == nil {
			open++
		}
	}
	return open
}
