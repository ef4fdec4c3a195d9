package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/livetab/livetab"
	"github.com/livetab/livetab/extcdp"
)

// The text status is what a person reads to attach to a tab: it must show
// the target id chromedp.WithTargetID takes, and say what its marks mean.
func TestStatusTextNamesTargetIDs(t *testing.T) {
	st := extcdp.Status{Connected: true, Clients: 1, Tabs: []extcdp.TabStatus{
		{TabID: 8211112, TargetID: "4C6BFFDFDFA6F4CF26E21C674E756C30", URL: "about:blank", Title: "about:blank"},
		{TabID: 8211113, TargetID: "9A0BFFDFDFA6F4CF26E21C674E756C31", URL: "https://example.com/", Title: "Example", Attached: true, Sessions: 2},
		{TabID: 8211114, Client: true, Attached: true, Sessions: 1, Created: true},
	}}
	st.Extension.Version = "1.2.3"
	var buf bytes.Buffer
	writeStatus(&buf, livetab.Endpoint{HTTP: "http://127.0.0.1:9339", PID: 7}, st)
	out := buf.String()
	for _, want := range []string{
		"TARGET ID", "4C6BFFDFDFA6F4CF26E21C674E756C30", "9A0BFFDFDFA6F4CF26E21C674E756C31",
		"free", "attached (2 sessions)", "a client's tab", "opened by livetab",
		"chromedp.WithTargetID",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "paused") {
		t.Errorf("status text says paused when it is not:\n%s", out)
	}
	st.Paused = true
	buf.Reset()
	writeStatus(&buf, livetab.Endpoint{HTTP: "http://127.0.0.1:9339", PID: 7}, st)
	if !strings.Contains(buf.String(), "paused     yes") || !strings.Contains(buf.String(), "Resume") {
		t.Errorf("status text does not say paused, and how to resume:\n%s", buf.String())
	}
	if strings.Contains(out, "[-]") {
		t.Errorf("status text has an unexplained mark:\n%s", out)
	}
}
