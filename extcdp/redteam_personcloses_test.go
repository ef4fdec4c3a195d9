package extcdp_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestRedTeamPersonClosesTabMidCommand: the person closes a tab while a
// client waits on a promise there that never settles. The command is
// answered at once, not at the 5-minute bound, and the next command on
// the session fails at once, saying the session is gone.
func TestRedTeamPersonClosesTabMidCommand(t *testing.T) {
	id := userTab(t, site.URL+"/form?person-closes")
	a := dialRaw(t)
	a.bound = 10 * time.Second
	sa := a.attach(id)
	a.eval(sa, "1")
	done := make(chan error, 1)
	go func() {
		_, err := a.call(sa, "Runtime.evaluate", map[string]any{"expression": "new Promise(() => {})", "awaitPromise": true})
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	closed := time.Now()
	if err := u.CloseTab(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Logf("the pending evaluate: answered %v after the close: %v", time.Since(closed).Round(time.Millisecond), err)
		if err == nil {
			t.Error("the pending evaluate succeeded on a closed tab")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a command pending on the tab the person closed got no answer in 5 s")
	}
	s := time.Now()
	_, err = a.call(sa, "Runtime.evaluate", map[string]any{"expression": "1"})
	t.Logf("the next command: answered in %v: %v", time.Since(s).Round(time.Millisecond), err)
	if err == nil || !strings.Contains(err.Error(), "not found") || time.Since(s) > time.Second {
		t.Errorf("the next command on the closed tab's session: %v after %v, want at once that the session is gone", err, time.Since(s))
	}
}
