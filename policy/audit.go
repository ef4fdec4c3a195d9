package policy

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/page"
)

// The decisions of an audit entry.
const (
	DecisionAllowed   = "allowed"
	DecisionDenied    = "denied"
	DecisionConfirmed = "confirmed" // allowed after the person said yes
	// DecisionAsking is what OnCall hears of a call that waits for the
	// person's yes; the audit log writes the call once they answered.
	DecisionAsking = "asking you"
)

// The outcomes of an audit entry.
const (
	OutcomeOK      = "ok"
	OutcomeError   = "error"   // the tool ran and failed (a stale index, a timeout...)
	OutcomeDenied  = "denied"  // the policy refused it; nothing reached the tab
	OutcomeChecked = "checked" // a page action checked outside Call: the outcome is the caller's
)

// AuditEntry is one line of the audit log. Secrets are redacted before it
// is written: text typed into password fields (and into fields the policy
// could not see), values of arguments and URL parameters named like
// secrets (password, token, cookie, session, key...), and strings shaped
// like tokens.
type AuditEntry struct {
	Time       time.Time      `json:"time"`
	Tool       string         `json:"tool"`
	Tab        string         `json:"tab,omitempty"`
	URL        string         `json:"url,omitempty"`    // what the tab showed
	Target     string         `json:"target,omitempty"` // where a navigation went
	Decision   string         `json:"decision"`
	Rule       string         `json:"rule,omitempty"` // the rule that denied it
	Outcome    string         `json:"outcome"`
	Error      string         `json:"error,omitempty"`
	DurationMS float64        `json:"durationMs"`
	Args       map[string]any `json:"args,omitempty"`
}

type recordKey struct{}

// record gathers what the checks of one tool call saw.
type record struct {
	tool  string
	args  []byte
	start time.Time

	mu        sync.Mutex
	tab       string
	url       string
	target    string
	decision  string
	rule      string
	pending   bool // a confirmation is being asked; the call will be retried
	sawType   bool // a type or press action was checked
	sensitive bool // and its text may be a secret
	secrets   []string
}

func newRecord(tool string, args []byte) *record {
	return &record{tool: tool, args: args, start: time.Now()}
}

func recordFrom(ctx context.Context) *record {
	r, _ := ctx.Value(recordKey{}).(*record)
	return r
}

func (r *record) see(a Action) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a.Tab != "" {
		r.tab = a.Tab
	}
	if a.URL != "" {
		r.url = a.URL
	}
	if a.Target != "" {
		r.target = a.Target
	}
	if a.Op == "type" || a.Op == "press" {
		r.sawType = true
		if a.Sensitive() {
			r.sensitive = true
			if a.Text != "" {
				r.secrets = append(r.secrets, a.Text)
			}
		}
	}
}

func (r *record) decide(err error, confirmed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var de *DeniedError
	switch {
	case errors.Is(err, ErrConfirmPending):
		r.pending = true
	case errors.As(err, &de):
		r.decision, r.rule = DecisionDenied, de.Rule
	case r.decision == DecisionDenied:
	case confirmed:
		r.decision = DecisionConfirmed
	case r.decision == "":
		r.decision = DecisionAllowed
	}
}

// Call runs one tool call under the policy: f does the work (page's Call,
// or any tool of the agent), and every page action it runs is checked with
// this call's context. Call caps the result's text to MaxPageText with a
// note of what was cut, and writes one audit line with the decision,
// outcome and duration.
func (p *Policy) Call(ctx context.Context, tool string, args []byte, f func(ctx context.Context) (page.Result, error)) (page.Result, error) {
	r := newRecord(tool, args)
	res, err := f(context.WithValue(ctx, recordKey{}, r))
	if err == nil {
		res.Text = p.Budget(res.Text)
	}
	p.writeAudit(r, res, err, false)
	if p.OnCall != nil {
		r.mu.Lock()
		d := r.decision
		switch {
		case r.pending:
			d = DecisionAsking
		case d == "":
			d = DecisionAllowed
		}
		r.mu.Unlock()
		p.OnCall(tool, d)
	}
	return res, err
}

// PageCall is Call for one of page's tools on pg.
func (p *Policy) PageCall(ctx context.Context, pg *page.Page, tool string, args []byte) (page.Result, error) {
	return p.Call(ctx, tool, args, func(ctx context.Context) (page.Result, error) {
		return pg.Call(ctx, tool, args)
	})
}

// Budget cuts text to MaxPageText characters, closes a page block
// the cut left open, and says what was cut.
func (p *Policy) Budget(text string) string {
	limit := p.MaxPageText
	total := utf8.RuneCountInString(text)
	if limit <= 0 || total <= limit {
		return text
	}
	cut := string([]rune(text)[:limit])
	const open, closeTag = page.FenceOpen, page.FenceClose
	cut = trimPartial(cut, open)
	if i := strings.LastIndex(cut, open); i >= 0 {
		rest := cut[i+len(open):]
		if j := strings.IndexByte(rest, '>'); j < 0 {
			cut = cut[:i] // the cut fell inside the tag itself
		} else if id := rest[:j]; !strings.Contains(rest, closeTag+id+">") {
			cut = trimPartial(cut, closeTag+id+">") + "\n" + closeTag + id + ">"
		}
	}
	return cut + fmt.Sprintf("\n(livetab cut this result at %d of %d characters, the policy's budget; %d characters were left out. Ask for less at once: read one element with browser_read and its index, or take a snapshot with viewport_only.)",
		limit, total, total-limit)
}

// trimPartial drops the start of tag that ends s, so that a cut leaves no
// half tag behind.
func trimPartial(s, tag string) string {
	for k := len(tag) - 1; k > 0; k-- {
		if strings.HasSuffix(s, tag[:k]) {
			return s[:len(s)-k]
		}
	}
	return s
}

// writeAudit writes the line of a tool call. checkOnly marks a page action
// checked outside Call.
func (p *Policy) writeAudit(r *record, res page.Result, err error, checkOnly bool) {
	if p.Audit == nil {
		return
	}
	r.mu.Lock()
	if r.pending && !checkOnly {
		r.mu.Unlock()
		return
	}
	e := AuditEntry{
		Time:       r.start.UTC(),
		Tool:       r.tool,
		Tab:        r.tab,
		URL:        redactURL(r.url),
		Target:     redactURL(r.target),
		Decision:   r.decision,
		Rule:       r.rule,
		DurationMS: float64(time.Since(r.start).Microseconds()) / 1000,
	}
	secrets := r.secrets
	textOK := r.sawType && !r.sensitive
	r.mu.Unlock()
	if e.Decision == "" {
		e.Decision = DecisionAllowed
	}
	switch {
	case checkOnly && e.Decision == DecisionDenied:
		e.Outcome = OutcomeDenied
	case checkOnly:
		e.Outcome = OutcomeChecked
	case e.Decision == DecisionDenied:
		e.Outcome = OutcomeDenied
	case err != nil || res.IsError:
		e.Outcome = OutcomeError
	default:
		e.Outcome = OutcomeOK
	}
	msg := ""
	if err != nil {
		msg = err.Error()
	} else if res.IsError {
		msg = strings.TrimPrefix(res.Text, "Error: ")
	}
	if msg != "" {
		msg, _, _ = strings.Cut(msg, "\n")
		for _, s := range secrets {
			if s != "" {
				msg = strings.ReplaceAll(msg, s, "[redacted]")
			}
		}
		e.Error = truncate(redactString(msg), 400)
	}
	if len(r.args) > 0 {
		var args map[string]any
		if jsonv2.Unmarshal(r.args, &args) == nil && len(args) > 0 {
			for k, v := range args {
				args[k] = redactArg(k, v, textOK)
			}
			e.Args = args
		}
	}
	line, merr := jsonv2.Marshal(e)
	if merr != nil {
		return
	}
	p.auditMu.Lock()
	defer p.auditMu.Unlock()
	_, _ = p.Audit.Write(append(line, '\n'))
}

// secretName matches argument and URL parameter names whose values are
// secrets, after lower-casing and dropping - and _.
var secretName = regexp.MustCompile(`^(pass(word|wd|phrase|code)?|pwd|secret|clientsecret|token|accesstoken|refreshtoken|idtoken|authtoken|csrftoken|xsrftoken|cookies?|authorization|auth|apikey|key|sessionid|session|sid|otp|totp|mfa|credentials?|privatekey|pin|cvv|cvc|code|sig|signature|jwt)$`)

func isSecretName(name string) bool {
	n := strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(name))
	return secretName.MatchString(n)
}

// redactArg redacts one argument of a tool call. textOK says that typed
// text went into a field known not to hold a password.
func redactArg(key string, v any, textOK bool) any {
	if isSecretName(key) {
		return "[redacted]"
	}
	switch key {
	case "text", "keys", "prompt_text":
		if s, ok := v.(string); ok && (!textOK || key == "prompt_text") {
			return fmt.Sprintf("[redacted, %d characters]", utf8.RuneCountInString(s))
		}
	case "url", "target":
		if s, ok := v.(string); ok {
			return redactURL(s)
		}
	case "expression":
		if s, ok := v.(string); ok {
			return truncate(redactString(s), 500)
		}
	}
	switch x := v.(type) {
	case string:
		return truncate(redactString(x), 500)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactArg("", e, textOK)
		}
		return out
	case map[string]any:
		for k, e := range x {
			x[k] = redactArg(k, e, textOK)
		}
		return x
	}
	return v
}

// tokenish matches strings that look like credentials: JWTs, bearer
// tokens, long runs of letters and digits.
var tokenish = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*|(?i:bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}|[A-Za-z0-9_+/=-]{32,}`)

func redactString(s string) string {
	return tokenish.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(m, "eyJ") || strings.ContainsAny(m, " \t") {
			return "[redacted]"
		}
		hasDigit := strings.ContainsAny(m, "0123456789")
		hasLetter := strings.IndexFunc(m, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }) >= 0
		if hasDigit && hasLetter {
			return "[redacted]"
		}
		return m
	})
}

// redactURL removes the password of the user info and the values of query
// parameters named like secrets, and token-shaped path parts.
func redactURL(s string) string {
	if s == "" {
		return s
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "data" || u.Scheme == "javascript" {
		return truncate(redactString(s), 120)
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "redacted")
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k, vs := range q {
			for i := range vs {
				if isSecretName(k) {
					vs[i] = "redacted"
				} else {
					vs[i] = redactString(vs[i])
				}
			}
		}
		u.RawQuery = q.Encode()
	}
	if u.Fragment != "" {
		u.Fragment = redactString(u.Fragment)
		if strings.Contains(u.Fragment, "=") {
			// OAuth implicit flows put tokens in the fragment.
			u.Fragment = "redacted"
		}
	}
	out := u.String()
	return truncate(strings.ReplaceAll(redactString(out), "%5Bredacted%5D", "[redacted]"), 500)
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
