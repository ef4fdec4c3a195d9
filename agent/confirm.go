package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/livetab/livetab/page"
	"github.com/livetab/livetab/policy"
)

// Confirmation through MCP elicitation: the policy's Confirm hook asks the
// person with a form, as a multi-round-trip request (the SDK turns it into
// an elicitation/create request for older clients): the first call returns
// the question, the retry carries the answer.

const confirmKey = "livetab_confirm"

type confirmerKey struct{}

type confirmer struct {
	req     *mcp.CallToolRequest
	pending *mcp.ElicitParams
	state   string
}

// actionState ties an answer to the action it answers.
func actionState(a page.Action) string {
	h := sha256.Sum256([]byte(string(a.Kind) + "\x00" + a.Describe()))
	return hex.EncodeToString(h[:12])
}

func (s *Server) confirm(ctx context.Context, a page.Action) (bool, error) {
	c, _ := ctx.Value(confirmerKey{}).(*confirmer)
	if c == nil {
		return false, errors.New("there is no MCP request to ask the person through")
	}
	state := actionState(a)
	if resp, ok := c.req.Params.InputResponses[confirmKey]; ok && c.req.Params.RequestState == state {
		er, ok := resp.(*mcp.ElicitResult)
		if !ok {
			return false, fmt.Errorf("the client answered the confirmation with %T", resp)
		}
		allow, _ := er.Content["allow"].(bool)
		return er.Action == "accept" && allow, nil
	}
	if caps := c.req.ClientCapabilities(); caps == nil || caps.Elicitation == nil {
		return false, errors.New("this MCP client cannot ask the person (it does not support elicitation), so the action is refused; the person can confirm it in a client that can ask, or drop the domain from --confirm-domain")
	}
	c.pending = &mcp.ElicitParams{
		Message: "livetab: allow the agent to " + a.Describe() + "?",
		RequestedSchema: json.RawMessage(`{"type": "object", "properties": {"allow": {"type": "boolean", "title": "Allow this action",
  "description": "Yes lets the agent do it once."}}, "required": ["allow"]}`),
	}
	c.state = state
	return false, policy.ErrConfirmPending
}
