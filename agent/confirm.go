package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

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
	asking  []string      // states of the actions the pending question asks about
	acts    []page.Action // and the actions

	once     bool
	approved []string // states of the actions the person allowed on this call's rounds
	declined []string // states of the actions the person refused
}

// maxAsk bounds the actions one tool call may gather confirmations for.
const maxAsk = 64

// actionState ties an answer to the action it answers.
func actionState(a page.Action) string {
	h := sha256.Sum256([]byte(string(a.Kind) + "\x00" + a.Describe()))
	return hex.EncodeToString(h[:12])
}

// answers reads the retry's answer. The request state is
// "allowed.allowed|asked.asked": the actions allowed on earlier rounds of
// the call, then those the answer is about. One question may be about
// several actions: browser_fill_form checks every field before it sets
// any, and the person answers for the whole form at once.
func (c *confirmer) answers() error {
	if c.once {
		return nil
	}
	c.once = true
	resp, ok := c.req.Params.InputResponses[confirmKey]
	if !ok || c.req.Params.RequestState == "" {
		return nil
	}
	before, asked, ok := strings.Cut(c.req.Params.RequestState, "|")
	if !ok || asked == "" {
		return nil
	}
	er, ok := resp.(*mcp.ElicitResult)
	if !ok {
		return fmt.Errorf("the client answered the confirmation with %T", resp)
	}
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, ".")
	}
	c.approved = split(before)
	if allow, _ := er.Content["allow"].(bool); er.Action == "accept" && allow {
		c.approved = append(c.approved, split(asked)...)
	} else {
		c.declined = split(asked)
	}
	if len(c.approved) > maxAsk {
		c.approved = nil
	}
	return nil
}

func (s *Server) confirm(ctx context.Context, a page.Action) (bool, error) {
	c, _ := ctx.Value(confirmerKey{}).(*confirmer)
	if c == nil {
		return false, errors.New("there is no MCP request to ask the person through")
	}
	if err := c.answers(); err != nil {
		return false, err
	}
	state := actionState(a)
	if slices.Contains(c.approved, state) {
		return true, nil
	}
	if slices.Contains(c.declined, state) {
		return false, nil
	}
	if caps := c.req.ClientCapabilities(); caps == nil || caps.Elicitation == nil {
		return false, errors.New("this MCP client cannot ask the person (it does not support elicitation), so the action is refused; the person can confirm it in a client that can ask, or drop the domain from --confirm-domain")
	}
	if c.pending != nil {
		// Another action of the same call: the one question asks about
		// both, and the person's answer covers both.
		if !slices.Contains(c.asking, state) && len(c.approved)+len(c.asking) < maxAsk {
			c.asking = append(c.asking, state)
			c.acts = append(c.acts, a)
			c.pending.Message = question(c.acts)
		}
		c.state = strings.Join(c.approved, ".") + "|" + strings.Join(c.asking, ".")
		return false, policy.ErrConfirmPending
	}
	c.acts = []page.Action{a}
	c.pending = &mcp.ElicitParams{
		Message: question(c.acts),
		RequestedSchema: json.RawMessage(`{"type": "object", "properties": {"allow": {"type": "boolean", "title": "Allow this action",
  "description": "Yes lets the agent do it once."}}, "required": ["allow"]}`),
	}
	c.asking = []string{state}
	c.state = strings.Join(c.approved, ".") + "|" + state
	return false, policy.ErrConfirmPending
}

// question asks about acts, naming the page once when they share it.
func question(acts []page.Action) string {
	same := true
	for _, a := range acts {
		same = same && a.URL == acts[0].URL
	}
	if len(acts) == 1 || !same || acts[0].URL == "" {
		descs := make([]string, len(acts))
		for i, a := range acts {
			descs[i] = a.Describe()
		}
		return "livetab: allow the agent to " + strings.Join(descs, "; ") + "?"
	}
	descs := make([]string, len(acts))
	for i, a := range acts {
		a.URL = ""
		descs[i] = a.Describe()
	}
	return fmt.Sprintf("livetab: allow the agent to do these %d things on %s: %s?", len(acts), acts[0].URL, strings.Join(descs, "; "))
}
