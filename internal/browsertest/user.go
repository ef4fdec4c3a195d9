package browsertest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/coder/websocket"

	"github.com/livetab/livetab/extension"
	"github.com/livetab/livetab/internal/wire"
)

// User is "the person at the keyboard": a direct CDP connection to the test
// browser's own debugging port, which opens and closes tabs behind
// livetab's back and can stop the extension's service worker.
type User struct {
	mu   sync.Mutex
	ws   *websocket.Conn
	next int64
}

// User connects to the browser's debugging port; the Env must have been
// started with DebugPort.
func (e *Env) User(ctx context.Context) (*User, error) {
	if e.Browser.DebugURL == "" {
		return nil, fmt.Errorf("browsertest: start the Env with DebugPort to act as the user")
	}
	ws, _, err := websocket.Dial(ctx, e.Browser.DebugURL, nil)
	if err != nil {
		return nil, fmt.Errorf("browsertest: dialing the debugging port: %w", err)
	}
	ws.SetReadLimit(64 << 20)
	return &User{ws: ws}, nil
}

// Close ends the connection.
func (u *User) Close() { u.ws.CloseNow() }

// Call sends a browser-level CDP command and returns its result.
func (u *User) Call(ctx context.Context, method string, params any) (jsonv2.Value, error) {
	return u.CallSession(ctx, "", method, params)
}

// CallSession sends a CDP command on a session of the user's connection.
func (u *User) CallSession(ctx context.Context, session, method string, params any) (jsonv2.Value, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.next++
	msg := map[string]any{"id": u.next, "method": method}
	if session != "" {
		msg["sessionId"] = session
	}
	if params != nil {
		msg["params"] = params
	}
	b, err := jsonv2.Marshal(msg, wire.Options)
	if err != nil {
		return nil, err
	}
	if err := u.ws.Write(ctx, websocket.MessageText, b); err != nil {
		return nil, err
	}
	for {
		_, data, err := u.ws.Read(ctx)
		if err != nil {
			return nil, err
		}
		var reply struct {
			ID     int64        `json:"id"`
			Result jsonv2.Value `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := jsonv2.Unmarshal(data, &reply, wire.Options); err != nil || reply.ID != u.next {
			continue // events
		}
		if reply.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, reply.Error.Message)
		}
		return reply.Result, nil
	}
}

// OpenTab opens a tab the way a person would, and returns its target id.
func (u *User) OpenTab(ctx context.Context, url string) (string, error) {
	res, err := u.Call(ctx, "Target.createTarget", map[string]any{"url": url})
	if err != nil {
		return "", err
	}
	var r struct {
		TargetID string `json:"targetId"`
	}
	err = jsonv2.Unmarshal(res, &r, wire.Options)
	return r.TargetID, err
}

// CloseTab closes a tab the way a person would.
func (u *User) CloseTab(ctx context.Context, targetID string) error {
	_, err := u.Call(ctx, "Target.closeTarget", map[string]any{"targetId": targetID})
	return err
}

// TargetInfo is what the user's browser says of one target.
type TargetInfo struct {
	TargetID string `json:"targetId"`
	Type     string `json:"type"`
	URL      string `json:"url"`
}

// Targets lists the browser's targets as Chrome itself sees them.
func (u *User) Targets(ctx context.Context) ([]TargetInfo, error) {
	res, err := u.Call(ctx, "Target.getTargets", map[string]any{})
	if err != nil {
		return nil, err
	}
	var r struct {
		TargetInfos []TargetInfo `json:"targetInfos"`
	}
	err = jsonv2.Unmarshal(res, &r, wire.Options)
	return r.TargetInfos, err
}

// OpenWindow has the page of the person's tab opener open a window at url
// (an absolute URL) with a click of the person's (a user gesture), and
// returns the window's target id once the browser lists it.
func (u *User) OpenWindow(ctx context.Context, opener, url string) (string, error) {
	expr, err := jsonv2.Marshal(url)
	if err != nil {
		return "", err
	}
	if err := u.inTarget(ctx, opener, func(sid string) error {
		_, err := u.CallSession(ctx, sid, "Runtime.evaluate", map[string]any{"expression": "window.open(" + string(expr) + "); true", "userGesture": true})
		return err
	}); err != nil {
		return "", err
	}
	for {
		targets, err := u.Targets(ctx)
		if err != nil {
			return "", err
		}
		for _, tg := range targets {
			if tg.URL == url {
				return tg.TargetID, nil
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("browsertest: the window at %s never opened: %w", url, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// StopWorker stops the extension's service worker, as Chrome does after
// 30 s of idleness.
func (u *User) StopWorker(ctx context.Context) error {
	ts, err := u.Targets(ctx)
	if err != nil {
		return err
	}
	for _, t := range ts {
		if t.Type == "service_worker" && strings.Contains(t.URL, extension.ID) {
			return u.CloseTab(ctx, t.TargetID)
		}
	}
	return fmt.Errorf("browsertest: the extension's service worker is not running")
}

// Eval runs JavaScript in a tab, as the person would in its console, and
// returns the value.
func (u *User) Eval(ctx context.Context, targetID, expr string) (jsonv2.Value, error) {
	var v jsonv2.Value
	err := u.inTarget(ctx, targetID, func(sid string) error {
		var err error
		v, err = u.evalIn(ctx, sid, expr)
		return err
	})
	return v, err
}

// inTarget runs fn on a session of the user's own on the target.
func (u *User) inTarget(ctx context.Context, targetID string, fn func(session string) error) error {
	res, err := u.Call(ctx, "Target.attachToTarget", map[string]any{"targetId": targetID, "flatten": true})
	if err != nil {
		return err
	}
	var a struct {
		SessionID string `json:"sessionId"`
	}
	if err := jsonv2.Unmarshal(res, &a, wire.Options); err != nil {
		return err
	}
	defer u.Call(ctx, "Target.detachFromTarget", map[string]any{"sessionId": a.SessionID})
	return fn(a.SessionID)
}

// evalIn evaluates expr on a session and returns its value.
func (u *User) evalIn(ctx context.Context, session, expr string) (jsonv2.Value, error) {
	res, err := u.CallSession(ctx, session, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true})
	if err != nil {
		return nil, err
	}
	var r struct {
		Result struct {
			Value jsonv2.Value `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := jsonv2.Unmarshal(res, &r, wire.Options); err != nil {
		return nil, err
	}
	if r.ExceptionDetails != nil {
		return nil, fmt.Errorf("browsertest: %s", r.ExceptionDetails.Text)
	}
	return r.Result.Value, nil
}

// OpenPopup opens the extension's popup page in a tab of its own, as the
// person's click on the toolbar button shows it, and waits until it shows
// the service worker's status. Close it with CloseTab.
func (u *User) OpenPopup(ctx context.Context) (string, error) {
	popup, err := u.OpenTab(ctx, "chrome-extension://"+extension.ID+"/popup.html")
	if err != nil {
		return "", err
	}
	// The new tab is still committing its first navigation for a moment,
	// and the worker may be waking up to answer the popup.
	for i := 0; ; i++ {
		v, err := u.Eval(ctx, popup, `location.href.startsWith('chrome-extension:') && document.readyState === 'complete' && document.getElementById('state').textContent !== '…'`)
		if err == nil && string(v) == "true" {
			return popup, nil
		}
		if i == 250 {
			u.CloseTab(ctx, popup)
			return "", fmt.Errorf("browsertest: the popup page did not load: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Pause pauses (or resumes) livetab the way a person does: the Pause
// button of the extension's popup. It returns once the popup shows the
// new state.
func (u *User) Pause(ctx context.Context, on bool) error {
	popup, err := u.OpenPopup(ctx)
	if err != nil {
		return err
	}
	defer u.CloseTab(ctx, popup)
	return u.ClickPause(ctx, popup, on)
}

// ClickPause presses the Pause or Resume button of an open popup when the
// popup is not in the state on already, and waits until it is.
func (u *User) ClickPause(ctx context.Context, popup string, on bool) error {
	want := "Pause"
	if on {
		want = "Resume"
	}
	_, err := u.Eval(ctx, popup, fmt.Sprintf(`(async () => {
		const b = document.getElementById('pause');
		if (b.textContent !== %q) b.click();
		for (let i = 0; i < 300 && b.textContent !== %q; i++) await new Promise(r => setTimeout(r, 10));
		if (b.textContent !== %q) throw new Error('the popup still shows ' + b.textContent);
		return true;
	})()`, want, want, want))
	return err
}

// ScreenshotPopup returns a PNG of an open popup page, cut to the popup's
// own size as Chrome shows it under the toolbar button.
func (u *User) ScreenshotPopup(ctx context.Context, popup string) ([]byte, error) {
	var png []byte
	err := u.inTarget(ctx, popup, func(sid string) error {
		v, err := u.evalIn(ctx, sid, `(() => { const r = document.body.getBoundingClientRect(); return [r.right + 10, r.bottom + 10]; })()`)
		if err != nil {
			return err
		}
		var size [2]float64
		if err := jsonv2.Unmarshal(v, &size, wire.Options); err != nil {
			return err
		}
		res, err := u.CallSession(ctx, sid, "Page.captureScreenshot", map[string]any{
			"format": "png",
			"clip":   map[string]any{"x": 0, "y": 0, "width": size[0], "height": size[1], "scale": 1},
			// A popup taller than the window still shows whole.
			"captureBeyondViewport": true,
		})
		if err != nil {
			return err
		}
		var shot struct {
			Data []byte `json:"data"`
		}
		err = jsonv2.Unmarshal(res, &shot, wire.Options)
		png = shot.Data
		return err
	})
	return png, err
}

// ShareTab shares a tab with livetab the way a person does: in the
// extension's popup, ticking the tab's box.
func (u *User) ShareTab(ctx context.Context, tabID int64, on bool) error {
	popup, err := u.OpenTab(ctx, "chrome-extension://"+extension.ID+"/popup.html")
	if err != nil {
		return err
	}
	defer u.CloseTab(ctx, popup)
	// The new tab is still committing its first navigation for a moment.
	for i := 0; ; i++ {
		v, err := u.Eval(ctx, popup, `location.href.startsWith('chrome-extension:') && document.readyState === 'complete'`)
		if err == nil && string(v) == "true" {
			break
		}
		if i == 100 {
			return fmt.Errorf("browsertest: the popup page did not load: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	want := "false"
	if on {
		want = "true"
	}
	_, err = u.Eval(ctx, popup, fmt.Sprintf(`(async () => {
		for (let i = 0; i < 200; i++) {
			const box = document.querySelector('#tabs input[data-tab-id="%d"]');
			if (box) {
				if (box.checked !== %s) box.click();
				for (let j = 0; j < 200 && box.checked !== %s; j++) await new Promise(r => setTimeout(r, 10));
				await new Promise(r => setTimeout(r, 50));
				return true;
			}
			await new Promise(r => setTimeout(r, 10));
		}
		throw new Error('the popup does not list tab %d');
	})()`, tabID, want, want, tabID))
	return err
}

// WaitPopup waits up to 10 s until the JavaScript condition cond holds in
// an open popup page.
func (u *User) WaitPopup(ctx context.Context, popup, cond string) error {
	_, err := u.Eval(ctx, popup, fmt.Sprintf(`(async () => {
		for (let i = 0; i < 1000; i++) {
			if (%s) return true;
			await new Promise(r => setTimeout(r, 10));
		}
		throw new Error('the popup never showed: ' + %q);
	})()`, cond, cond))
	return err
}

// ClickPopup waits until an open popup has an enabled element matching
// the CSS selector, and clicks it as the person does.
func (u *User) ClickPopup(ctx context.Context, popup, selector string) error {
	q := fmt.Sprintf(`document.querySelector(%q)`, selector)
	if err := u.WaitPopup(ctx, popup, q+` && !`+q+`.disabled`); err != nil {
		return err
	}
	_, err := u.Eval(ctx, popup, q+`.click(), true`)
	return err
}

// StopClient presses "Stop this client" next to the client of that name
// in an open popup.
func (u *User) StopClient(ctx context.Context, popup, name string) error {
	id, err := u.Eval(ctx, popup, fmt.Sprintf(`(async () => {
		for (let i = 0; i < 1000; i++) {
			for (const li of document.querySelectorAll('#now > li[data-client]')) {
				if (li.querySelector('.client span').textContent === %q) return li.dataset.client;
			}
			await new Promise(r => setTimeout(r, 10));
		}
		throw new Error('the popup does not list the client ' + %q);
	})()`, name, name))
	if err != nil {
		return err
	}
	return u.ClickPopup(ctx, popup, fmt.Sprintf(`#now > li[data-client=%s] .client button.stop`, id))
}

// StopTab presses "Stop" next to a driven tab in an open popup.
func (u *User) StopTab(ctx context.Context, popup string, tabID int64) error {
	return u.ClickPopup(ctx, popup, fmt.Sprintf(`#now .tab[data-tab-id="%d"] button.stop`, tabID))
}
