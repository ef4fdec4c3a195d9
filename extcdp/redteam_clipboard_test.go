package extcdp_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestRedTeamPasteReadsThePersonsClipboard: the person copies a secret in
// a tab of a site outside a client's domains (their bank: 127.0.0.2). The
// client, held to 127.0.0.1, pastes into a page of its own with a
// synthetic key event (Input.dispatchKeyEvent's editing commands, or
// Ctrl+V) and reads the secret back: the person's data of a site outside
// its domains.
func TestRedTeamPasteReadsThePersonsClipboard(t *testing.T) {
	const secret = "person-clipboard-secret-4242"
	bank := loopbackServer(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>bank</title><input id=iban value="`+secret+`">`)
	}))
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pid := userTab(t, bank.URL+"/account")
	t.Cleanup(func() { u.CloseTab(context.Background(), pid) })
	// The person selects the number and copies it (Ctrl+C).
	at, err := u.Call(ctx, "Target.attachToTarget", map[string]any{"targetId": pid, "flatten": true})
	if err != nil {
		t.Fatal(err)
	}
	ps := field(at, "sessionId")
	u.Call(ctx, "Target.activateTarget", map[string]any{"targetId": pid})
	u.CallSession(ctx, ps, "Page.bringToFront", nil)
	// The person's window has the focus (headless: emulated).
	u.CallSession(ctx, ps, "Emulation.setFocusEmulationEnabled", map[string]any{"enabled": true})
	u.CallSession(ctx, ps, "Runtime.evaluate", map[string]any{"expression": `document.getElementById("iban").select()`})
	for _, typ := range []string{"keyDown", "keyUp"} {
		p := map[string]any{"type": typ, "key": "c", "code": "KeyC", "windowsVirtualKeyCode": 67, "modifiers": 2}
		if typ == "keyDown" {
			p["commands"] = []string{"copy"}
		}
		if _, err := u.CallSession(ctx, ps, "Input.dispatchKeyEvent", p); err != nil {
			t.Fatal(err)
		}
	}
	// The person's own paste, to see the copy took.
	u.CallSession(ctx, ps, "Runtime.evaluate", map[string]any{"expression": `document.body.insertAdjacentHTML("beforeend", "<textarea id=mine></textarea>"), document.getElementById("mine").focus()`})
	u.CallSession(ctx, ps, "Input.dispatchKeyEvent", map[string]any{"type": "rawKeyDown", "key": "v", "code": "KeyV", "windowsVirtualKeyCode": 86, "modifiers": 2, "commands": []string{"paste"}})
	u.CallSession(ctx, ps, "Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": "v", "modifiers": 2})
	mine, _ := u.CallSession(ctx, ps, "Runtime.evaluate", map[string]any{"expression": `document.getElementById("mine").value`, "returnByValue": true})
	if !strings.Contains(string(mine), secret) {
		t.Fatalf("the person's own copy and paste did not take (%s): nothing to tell apart", mine)
	}
	u.Call(ctx, "Target.detachFromTarget", map[string]any{"sessionId": ps})

	srv, tok := endpoint(t)
	c := dialRawTo(t, srv, tok)
	c.must("", "Livetab.setPolicy", map[string]any{"domains": []string{"127.0.0.1"}, "blockPrivate": true})
	_, s := c.newTab(t, site.URL+"/form?paste")
	for _, way := range []struct {
		name string
		down map[string]any
	}{
		{"commands", map[string]any{"type": "rawKeyDown", "key": "Unidentified", "commands": []string{"paste"}}},
		{"ctrlV", map[string]any{"type": "rawKeyDown", "key": "v", "code": "KeyV", "windowsVirtualKeyCode": 86, "modifiers": 2}},
		{"ctrlV keyDown", map[string]any{"type": "keyDown", "key": "v", "code": "KeyV", "windowsVirtualKeyCode": 86, "modifiers": 2}},
		{"shiftInsert", map[string]any{"type": "rawKeyDown", "key": "Insert", "code": "Insert", "windowsVirtualKeyCode": 45, "modifiers": 8}},
	} {
		c.eval(s, `document.body.insertAdjacentHTML("beforeend", '<textarea id=t></textarea>'), document.getElementById("t").remove(), document.body.insertAdjacentHTML("beforeend", '<textarea id=t></textarea>'), document.getElementById("t").focus(), 1`)
		_, err := c.call(s, "Input.dispatchKeyEvent", way.down)
		up := map[string]any{"type": "keyUp", "key": way.down["key"], "modifiers": way.down["modifiers"]}
		c.call(s, "Input.dispatchKeyEvent", up)
		got := c.eval(s, `document.getElementById("t").value`)
		t.Logf("%s: %v, the textarea reads %q", way.name, err, got)
		if strings.Contains(got, secret) {
			t.Errorf("a client held to 127.0.0.1 pasted (%s) the person's clipboard, copied on %s, into its own page and read it: %q", way.name, bank.URL, got)
		} else if err == nil || !strings.Contains(err.Error(), "refuses a paste") {
			t.Errorf("%s: %v, want livetab's refusal of a paste", way.name, err)
		}
	}
	// Typing is no paste.
	c.eval(s, `document.getElementById("t").value = "", 1`)
	c.must(s, "Input.dispatchKeyEvent", map[string]any{"type": "keyDown", "key": "v", "code": "KeyV", "text": "v", "windowsVirtualKeyCode": 86})
	c.must(s, "Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": "v", "code": "KeyV", "windowsVirtualKeyCode": 86})
	if got := c.eval(s, `document.getElementById("t").value`); got != "v" {
		t.Errorf("a plain v typed: the textarea reads %q", got)
	}
}
