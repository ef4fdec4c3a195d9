package extcdp_test

import (
	"strings"
	"testing"
	"time"
)

// TestRedTeamLeftScreenRecordingRunsOn: client A recorded a tab the person
// opened (Page.startScreenRecording), which client B used too, and died.
// Chrome recorded on in the attachment B's session held: the person's tab
// went into the browser's memory for as long as B stayed, B could no
// longer screencast it ("Screencast is already active"), and the
// recording's stream was no one's: B stopped it and read it, a page of the
// person's outside B's domains among it (red team, 3 of 3 and 4 of 4). A
// recording is now a client's own tabs' only, and of the tab alone.
func TestRedTeamLeftScreenRecordingRunsOn(t *testing.T) {
	a, b, sa, sb := sharedTab(t, "/form?left-recording")
	if _, err := a.call(sa, "Page.startScreenRecording", map[string]any{}); err == nil || !strings.Contains(err.Error(), "livetab refuses") {
		t.Errorf("A's Page.startScreenRecording of the person's tab: %v, want livetab's refusal", err)
	}
	a.ws.CloseNow()
	<-a.closed
	time.Sleep(500 * time.Millisecond)
	if _, err := b.call(sb, "Page.startScreencast", map[string]any{"format": "jpeg", "maxWidth": 100, "maxHeight": 100}); err != nil {
		t.Errorf("after A left, B's screencast of the person's tab: %v", err)
	} else {
		b.call(sb, "Page.stopScreencast", nil)
	}
	if res, err := b.call(sb, "Page.stopScreenRecording", nil); err == nil {
		t.Errorf("A's recording of the person's tab ran on after A left: Page.stopScreenRecording gave B %s", res)
	}

	// A tab of the client's own records, the tab alone.
	srv, tok := endpoint(t)
	c := dialRawTo(t, srv, tok)
	_, s := c.newTab(t, site.URL+"/form?own-recording")
	if _, err := c.call(s, "Page.startScreenRecording", map[string]any{"captureArea": "browserWindow"}); err == nil || !strings.Contains(err.Error(), "livetab refuses") {
		t.Errorf("a recording of the browser's window, which shows the person's tabs: %v, want livetab's refusal", err)
	}
	c.must(s, "Page.startScreenRecording", map[string]any{})
	time.Sleep(300 * time.Millisecond)
	if res := c.must(s, "Page.stopScreenRecording", nil); field(res, "stream") == "" {
		t.Errorf("the client's own recording: no stream in %s", res)
	}
}
