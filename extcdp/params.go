package extcdp

import (
	"fmt"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"

	"github.com/livetab/livetab/internal/wire"
)

// params decodes the params of a command the relay answers itself into p.
// Absent params leave p at its defaults, as Chrome takes them. Params of the
// wrong shape (a string where a boolean goes) get -32602, as from Chrome:
// acting on defaults instead would do what the client did not ask for, such
// as opening about:blank for a createTarget whose url was a number. False
// means the command was answered.
func (c *Client) params(m *cdproto.Message, sid target.SessionID, p any) bool {
	if len(m.Params) == 0 {
		return true
	}
	if err := jsonv2.Unmarshal(m.Params, p, wire.Options); err != nil {
		c.fail(m.ID, sid, -32602, fmt.Sprintf("Invalid parameters: %s: %v; see the method's parameters in the CDP reference", m.Method, err))
		return false
	}
	return true
}
