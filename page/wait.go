package page

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/livetab/livetab/internal/inpage"
)

// WaitOptions says what to wait for. All the conditions given must hold at
// the same time.
type WaitOptions struct {
	Text        string        // this text is visible in the page
	Selector    string        // an element that matches this CSS selector is visible
	Gone        Ref           // this element is removed or hidden
	NetworkIdle bool          // no request has been in flight for IdleTime
	IdleTime    time.Duration // default 500 ms
	Timeout     time.Duration // default DefaultWaitTimeout
}

// Wait waits until the conditions hold, or fails with ErrTimeout naming the
// ones that did not.
func (p *Page) Wait(ctx context.Context, opts WaitOptions) error {
	_, err := p.run(ctx, false, Action{Kind: KindRead, Op: "wait"}, func(a *action) (string, error) { return a.wait(opts) })
	return err
}

func (a *action) wait(o WaitOptions) (string, error) {
	if o.Text == "" && o.Selector == "" && o.Gone.IsZero() && !o.NetworkIdle {
		return "", fmt.Errorf("%w: nothing to wait for; give a text, a selector, an element that should go, or network idle", ErrUnsupported)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultWaitTimeout
	}
	if o.IdleTime <= 0 {
		o.IdleTime = 500 * time.Millisecond
	}
	start := time.Now()
	deadline := start.Add(o.Timeout)
	for {
		unmet, err := a.unmet(o)
		if err != nil {
			return "", err
		}
		if len(unmet) == 0 {
			return fmt.Sprintf("waited %v", time.Since(start).Round(time.Millisecond)), nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return "", fmt.Errorf("%w after %v waiting for %s", ErrTimeout, o.Timeout, strings.Join(unmet, " and "))
		}
		timer := time.NewTimer(min(pollInterval, left))
		select {
		case <-timer.C:
		case <-a.ctx.Done():
			timer.Stop()
			return "", context.Cause(a.ctx)
		}
	}
}

// unmet lists the conditions of o that do not hold now.
func (a *action) unmet(o WaitOptions) ([]string, error) {
	var unmet []string
	if o.Text != "" || o.Selector != "" {
		q := map[string]any{}
		if o.Text != "" {
			q["text"] = o.Text
		}
		if o.Selector != "" {
			q["selector"] = o.Selector
		}
		var r struct {
			Text     bool `json:"text"`
			Selector bool `json:"selector"`
		}
		if err := a.call(a.t.libs.main, "check", &r, q); err != nil {
			var je *inpage.Error
			if errors.As(err, &je) {
				return nil, &ElementError{Ref: Selector(o.Selector), Code: je.Code, Msg: je.Msg}
			}
			if !contextGone(err) {
				return nil, err
			}
			r.Text, r.Selector = false, false
		}
		if o.Text != "" && !r.Text {
			unmet = append(unmet, fmt.Sprintf("text %q", o.Text))
		}
		if o.Selector != "" && !r.Selector {
			unmet = append(unmet, fmt.Sprintf("a visible %q", o.Selector))
		}
	}
	if !o.Gone.IsZero() {
		gone := true
		s, jsref, err := a.route(o.Gone)
		if err == nil {
			var r struct {
				Gone bool `json:"gone"`
			}
			if cerr := a.call(s, "check", &r, map[string]any{"gone": jsref}); cerr != nil {
				var je *inpage.Error
				if errors.As(cerr, &je) || !contextGone(cerr) {
					return nil, elemErr(o.Gone, cerr)
				}
			} else {
				gone = r.Gone
			}
		} else if !errors.Is(err, ErrStaleElement) {
			return nil, err
		}
		if !gone {
			unmet = append(unmet, o.Gone.String()+" to go")
		}
	}
	if o.NetworkIdle {
		t := a.t
		t.mu.Lock()
		n := len(t.inflight)
		quiet := time.Since(t.netActive)
		t.mu.Unlock()
		if n > 0 || quiet < o.IdleTime {
			unmet = append(unmet, fmt.Sprintf("the network to be idle (%d requests in flight)", n))
		}
	}
	return unmet, nil
}
