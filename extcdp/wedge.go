package extcdp

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
)

// A client's script that never yields (while(true){}) holds the main
// thread of the person's tab: Chrome answers nothing there, the person can
// neither click nor type, and the loop outlived the client that sent it
// (TestRedTeamWedgedTabOutlivesNoClient). Chrome refuses
// Runtime.terminateExecution to an extension's debugger ("not allowed for
// untrusted clients"), and Debugger.pause needs the Debugger domain on
// before the script starts; what it does give is Runtime.evaluate's own
// timeout, which ends that evaluation's synchronous part and nothing else
// (V8 takes the termination back when the evaluation returns, so it never
// reaches the page's next script, and an awaited promise is not bounded).
// So on a tab the client did not open every Runtime.evaluate carries a
// timeout of at most syncScriptBound.
// docs/decisions/2026-11-27-a-script-does-not-wedge-the-persons-tab.md.

// syncScriptBound is how long a client's Runtime.evaluate may run without
// yielding on a tab the person opened.
var syncScriptBound atomic.Int64

func init() { syncScriptBound.Store(int64(10 * time.Second)) }

// terminatedMessage is what Chrome answers for an evaluation its timeout
// ended.
const terminatedMessage = "Execution was terminated"

// boundScript gives a Runtime.evaluate on t, when t is not c's own, a
// timeout of at most syncScriptBound. It returns the params to send and the
// bound it set (0 when the client's own timeout is the shorter, or t is
// c's own).
func (c *Client) boundScript(t *tab, params jsonv2.Value) (jsonv2.Value, time.Duration, error) {
	if c.opened(t) {
		return params, 0, nil
	}
	bound := time.Duration(syncScriptBound.Load())
	p := map[string]jsonv2.Value{}
	if len(params) > 0 {
		if err := jsonv2.Unmarshal(params, &p, wire.Options); err != nil {
			return nil, 0, fmt.Errorf("livetab: invalid Runtime.evaluate params: %w", err)
		}
	}
	if v, ok := p["timeout"]; ok {
		ms, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return nil, 0, fmt.Errorf("livetab: invalid Runtime.evaluate timeout %s: want milliseconds", v)
		}
		if ms <= float64(bound.Milliseconds()) {
			return params, 0, nil
		}
	}
	p["timeout"] = jsonv2.Value(strconv.FormatInt(bound.Milliseconds(), 10))
	out, err := jsonv2.Marshal(p, wire.Options)
	if err != nil {
		return nil, 0, fmt.Errorf("livetab: encoding Runtime.evaluate params: %w", err)
	}
	return out, bound, nil
}

// scriptEnded says why the relay's bound ended a client's evaluation, in
// place of Chrome's bare message.
func scriptEnded(t *tab, bound time.Duration) *cdproto.Error {
	return &cdproto.Error{Code: -32000, Message: fmt.Sprintf("livetab: Runtime.evaluate ran its script for %v without yielding on tab %d, which the person opened, so livetab ended it (%s): the person's tab answers nothing while a script runs; yield in between (await a promise with awaitPromise), or run long work in a tab of your own (Target.createTarget)", bound, t.id, terminatedMessage)}
}
