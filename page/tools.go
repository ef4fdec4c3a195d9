package page

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
)

// Tool describes one tool for an LLM tool-calling loop or an MCP server.
type Tool struct {
	Name        string       `json:"name"`
	Description string       `json:"description"`
	InputSchema jsonv2.Value `json:"inputSchema"` // JSON Schema of the arguments
}

// Result is what a tool call returns to the model: text, an image, or both.
// IsError marks a failure the model should read and react to.
type Result struct {
	Text    string `json:"text,omitempty"`
	Image   []byte `json:"image,omitempty"`
	MIME    string `json:"mime,omitempty"` // of Image
	IsError bool   `json:"isError,omitempty"`
}

const refProps = `"index": {"type": "integer", "minimum": 1, "description": "Element index from the latest snapshot."},
    "selector": {"type": "string", "description": "CSS selector, instead of index: the first visible match."}`

var toolDefs = []struct{ name, desc, schema string }{
	{"browser_snapshot", "List the elements of the current tab that can be acted on, numbered [1], [2]…, with the page URL, title and scroll position. Call it first and after every change of page; other tools take these indexes.",
		`{"type": "object", "properties": {
    "viewport_only": {"type": "boolean", "description": "List only elements in the viewport (fewer tokens)."},
    "max_elements": {"type": "integer", "minimum": 1, "description": "Cap on listed elements; those nearest the viewport are kept."}}}`},
	{"browser_navigate", "Load a URL in the current tab and wait for it, or go back, forward, or reload.",
		`{"type": "object", "properties": {
    "url": {"type": "string", "description": "URL to load."},
    "action": {"type": "string", "enum": ["back", "forward", "reload"], "description": "Instead of url: move in the history or reload."}}}`},
	{"browser_click", "Click an element with the real mouse, after scrolling it into view. Fails if it is hidden, disabled or covered by something else.",
		`{"type": "object", "properties": {
    ` + refProps + `,
    "button": {"type": "string", "enum": ["left", "right", "middle"], "default": "left"},
    "double": {"type": "boolean", "description": "Double-click."}}}`},
	{"browser_type", "Type text into a text field, text area or editable region with real key presses. A newline presses Enter.",
		`{"type": "object", "required": ["text"], "properties": {
    ` + refProps + `,
    "text": {"type": "string"},
    "clear": {"type": "boolean", "description": "Replace the current content instead of appending."},
    "submit": {"type": "boolean", "description": "Press Enter afterwards."}}}`},
	{"browser_press", "Press keys on the focused element: Enter, Escape, Tab, ArrowDown, Control+A, Shift+Tab…; several chords separated by spaces.",
		`{"type": "object", "required": ["keys"], "properties": {
    "keys": {"type": "string", "description": "For example \"Control+A Backspace\"."}}}`},
	{"browser_hover", "Move the mouse over an element, for menus and tooltips.",
		`{"type": "object", "properties": {
    ` + refProps + `}}`},
	{"browser_scroll", "Scroll the page (or the scrollable area holding an element) by pixels, or scroll an element into view. Without dx/dy it scrolls down most of a screen.",
		`{"type": "object", "properties": {
    ` + refProps + `,
    "dx": {"type": "number", "description": "Pixels to the right (negative: left)."},
    "dy": {"type": "number", "description": "Pixels down (negative: up)."},
    "into_view": {"type": "boolean", "description": "Scroll the element into view instead."}}}`},
	{"browser_select", "Choose options of a <select> by value or visible label.",
		`{"type": "object", "required": ["values"], "properties": {
    ` + refProps + `,
    "values": {"type": "array", "items": {"type": "string"}, "minItems": 1}}}`},
	{"browser_check", "Check or uncheck a checkbox, radio button or switch.",
		`{"type": "object", "properties": {
    ` + refProps + `,
    "checked": {"type": "boolean", "default": true}}}`},
	{"browser_drag", "Drag one element onto another with the real mouse (also HTML5 drag and drop).",
		`{"type": "object", "properties": {
    "from_index": {"type": "integer", "minimum": 1}, "from_selector": {"type": "string"},
    "to_index": {"type": "integer", "minimum": 1}, "to_selector": {"type": "string"}}}`},
	{"browser_wait", "Wait until text appears, an element appears or goes away, or the network is idle.",
		`{"type": "object", "properties": {
    "text": {"type": "string", "description": "Text that should appear."},
    "selector": {"type": "string", "description": "CSS selector of an element that should become visible."},
    "gone_index": {"type": "integer", "minimum": 1, "description": "Element that should disappear."},
    "gone_selector": {"type": "string", "description": "CSS selector of an element that should disappear."},
    "network_idle": {"type": "boolean"},
    "timeout_ms": {"type": "integer", "minimum": 1, "default": 10000}}}`},
	{"browser_read", "Read the page, or one element, as Markdown or plain text.",
		`{"type": "object", "properties": {
    ` + refProps + `,
    "format": {"type": "string", "enum": ["markdown", "text"], "default": "markdown"},
    "max_chars": {"type": "integer", "minimum": 100, "default": 20000}}}`},
	{"browser_eval", "Run a JavaScript expression in the page and return its JSON result (promises are awaited).",
		`{"type": "object", "required": ["expression"], "properties": {
    "expression": {"type": "string"}}}`},
	{"browser_dialog", "Accept or dismiss the JavaScript dialog (alert, confirm, prompt) that blocks the page.",
		`{"type": "object", "required": ["accept"], "properties": {
    "accept": {"type": "boolean"},
    "prompt_text": {"type": "string", "description": "Answer to a prompt()."}}}`},
	{"browser_tabs", "List, open, switch to or close tabs.",
		`{"type": "object", "required": ["action"], "properties": {
    "action": {"type": "string", "enum": ["list", "open", "switch", "close"]},
    "url": {"type": "string", "description": "For open: the URL to load."},
    "tab": {"type": "string", "description": "For switch and close: the tab id from list."}}}`},
	{"browser_screenshot", "Capture the viewport, the full page, one element, or the viewport with numbered boxes over the elements (marked: the numbers are element indexes, as in a snapshot).",
		`{"type": "object", "properties": {
    "mode": {"type": "string", "enum": ["viewport", "full", "element", "marked"], "default": "viewport"},
    ` + refProps + `,
    "format": {"type": "string", "enum": ["png", "jpeg"], "default": "png"},
    "quality": {"type": "integer", "minimum": 1, "maximum": 100, "description": "JPEG quality."}}}`},
}

// Tools returns the tools that Call serves.
func Tools() []Tool {
	out := make([]Tool, 0, len(toolDefs))
	for _, d := range toolDefs {
		out = append(out, Tool{Name: d.name, Description: d.desc, InputSchema: jsonv2.Value(d.schema)})
	}
	return out
}

type toolArgs struct {
	ViewportOnly bool     `json:"viewport_only"`
	MaxElements  int      `json:"max_elements"`
	URL          string   `json:"url"`
	Action       string   `json:"action"`
	Index        int      `json:"index"`
	Selector     string   `json:"selector"`
	Button       string   `json:"button"`
	Double       bool     `json:"double"`
	Text         string   `json:"text"`
	Clear        bool     `json:"clear"`
	Submit       bool     `json:"submit"`
	Keys         string   `json:"keys"`
	DX           float64  `json:"dx"`
	DY           float64  `json:"dy"`
	IntoView     bool     `json:"into_view"`
	Values       []string `json:"values"`
	Checked      *bool    `json:"checked"`
	FromIndex    int      `json:"from_index"`
	FromSelector string   `json:"from_selector"`
	ToIndex      int      `json:"to_index"`
	ToSelector   string   `json:"to_selector"`
	GoneIndex    int      `json:"gone_index"`
	GoneSelector string   `json:"gone_selector"`
	NetworkIdle  bool     `json:"network_idle"`
	TimeoutMS    int      `json:"timeout_ms"`
	Format       string   `json:"format"`
	MaxChars     int      `json:"max_chars"`
	Expression   string   `json:"expression"`
	Accept       *bool    `json:"accept"`
	PromptText   string   `json:"prompt_text"`
	Tab          string   `json:"tab"`
	Mode         string   `json:"mode"`
	Quality      int      `json:"quality"`
}

func (a toolArgs) ref() Ref { return Ref{Index: a.Index, Selector: a.Selector} }

var errNoRef = fmt.Errorf("%w: give the element's index from the snapshot, or a CSS selector", ErrUnsupported)

// Call runs tool name with its JSON arguments on the current tab. Every
// failure of the tool (a stale index, a covered element, a timeout, bad
// arguments) comes back as a Result with IsError and a text that says what
// to do next; the error is non-nil only when ctx ended or the Page is closed.
func (p *Page) Call(ctx context.Context, name string, args []byte) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	var a toolArgs
	if s := strings.TrimSpace(string(args)); s != "" && s != "null" {
		if err := jsonv2.Unmarshal([]byte(s), &a); err != nil {
			return Result{Text: fmt.Sprintf("Error: the arguments of %s are not valid: %v", name, err), IsError: true}, nil
		}
	}
	res, err := p.dispatch(ctx, name, a)
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		if errors.Is(err, ErrClosed) {
			return Result{}, err
		}
		return Result{Text: "Error: " + err.Error(), IsError: true}, nil
	}
	return res, nil
}

func text(s string) Result { return Result{Text: s} }

func (p *Page) dispatch(ctx context.Context, name string, a toolArgs) (Result, error) {
	switch name {
	case "browser_snapshot":
		s, err := p.Snapshot(ctx, SnapshotOptions{ViewportOnly: a.ViewportOnly, MaxElements: a.MaxElements})
		if err != nil {
			return Result{}, err
		}
		return text(s.Text), nil

	case "browser_navigate":
		var f func(*action) (string, error)
		act := Action{Kind: KindNavigate, Op: a.Action}
		switch {
		case a.Action == "back":
			f = func(x *action) (string, error) { return x.history(-1) }
		case a.Action == "forward":
			f = func(x *action) (string, error) { return x.history(1) }
		case a.Action == "reload":
			f = (*action).reload
		case a.Action != "":
			return Result{}, fmt.Errorf("%w: unknown action %q; use back, forward or reload", ErrUnsupported, a.Action)
		case a.URL == "":
			return Result{}, fmt.Errorf("%w: give a url or an action", ErrUnsupported)
		default:
			act = navAction(a.URL)
			f = func(x *action) (string, error) { return x.navigate(a.URL) }
		}
		msg, err := p.run(ctx, false, act, f)
		return text(msg), err

	case "browser_click":
		if a.ref().IsZero() {
			return Result{}, errNoRef
		}
		o := ClickOptions{Button: a.Button}
		if a.Double {
			o.Count = 2
		}
		msg, err := p.run(ctx, false, Action{Kind: KindAct, Op: "click", Ref: a.ref()}, func(x *action) (string, error) { return x.click(a.ref(), o) })
		return text(msg), err

	case "browser_type":
		if a.ref().IsZero() {
			return Result{}, errNoRef
		}
		msg, err := p.run(ctx, false, Action{Kind: KindAct, Op: "type", Ref: a.ref(), Text: a.Text}, func(x *action) (string, error) {
			return x.typeText(a.ref(), a.Text, TypeOptions{Clear: a.Clear, Submit: a.Submit})
		})
		return text(msg), err

	case "browser_press":
		msg, err := p.run(ctx, false, Action{Kind: KindAct, Op: "press", Text: a.Keys}, func(x *action) (string, error) { return x.press(a.Keys) })
		return text(msg), err

	case "browser_hover":
		if a.ref().IsZero() {
			return Result{}, errNoRef
		}
		msg, err := p.run(ctx, false, Action{Kind: KindAct, Op: "hover", Ref: a.ref()}, func(x *action) (string, error) { return x.hover(a.ref()) })
		return text(msg), err

	case "browser_scroll":
		msg, err := p.run(ctx, false, Action{Kind: KindRead, Op: "scroll", Ref: a.ref()}, func(x *action) (string, error) {
			if a.IntoView {
				if a.ref().IsZero() {
					return "", errNoRef
				}
				return x.scrollTo(a.ref())
			}
			dx, dy := a.DX, a.DY
			if dx == 0 && dy == 0 {
				dy = 0.8 * float64(max(p.cfg.vh, 600))
			}
			pos, err := x.scrollBy(a.ref(), dx, dy)
			return pos.String(), err
		})
		return text(msg), err

	case "browser_select":
		if a.ref().IsZero() {
			return Result{}, errNoRef
		}
		msg, err := p.run(ctx, false, Action{Kind: KindAct, Op: "select", Ref: a.ref(), Text: strings.Join(a.Values, "\n")}, func(x *action) (string, error) {
			_, msg, err := x.selectOption(a.ref(), a.Values)
			return msg, err
		})
		return text(msg), err

	case "browser_check":
		if a.ref().IsZero() {
			return Result{}, errNoRef
		}
		checked := a.Checked == nil || *a.Checked
		msg, err := p.run(ctx, false, Action{Kind: KindAct, Op: "check", Ref: a.ref()}, func(x *action) (string, error) { return x.setChecked(a.ref(), checked) })
		return text(msg), err

	case "browser_drag":
		from := Ref{Index: a.FromIndex, Selector: a.FromSelector}
		to := Ref{Index: a.ToIndex, Selector: a.ToSelector}
		if from.IsZero() || to.IsZero() {
			return Result{}, fmt.Errorf("%w: give from_index or from_selector, and to_index or to_selector", ErrUnsupported)
		}
		msg, err := p.run(ctx, false, Action{Kind: KindAct, Op: "drag", Ref: from}, func(x *action) (string, error) { return x.drag(from, to) })
		return text(msg), err

	case "browser_wait":
		o := WaitOptions{
			Text: a.Text, Selector: a.Selector, NetworkIdle: a.NetworkIdle,
			Gone: Ref{Index: a.GoneIndex, Selector: a.GoneSelector},
		}
		if a.TimeoutMS > 0 {
			o.Timeout = time.Duration(a.TimeoutMS) * time.Millisecond
		}
		msg, err := p.run(ctx, false, Action{Kind: KindRead, Op: "wait"}, func(x *action) (string, error) { return x.wait(o) })
		return text(msg), err

	case "browser_read":
		c, err := p.Read(ctx, ReadOptions{Format: a.Format, Ref: a.ref(), MaxChars: a.MaxChars})
		if err != nil {
			return Result{}, err
		}
		return text(c.String()), nil

	case "browser_eval":
		if a.Expression == "" {
			return Result{}, fmt.Errorf("%w: give an expression", ErrUnsupported)
		}
		v, err := p.Evaluate(ctx, a.Expression)
		if err != nil {
			return Result{}, err
		}
		s := "undefined"
		if v != nil {
			s = string(v)
		}
		if len(s) > DefaultMaxChars {
			s = s[:DefaultMaxChars] + "…(cut)"
		}
		return text("result:\n" + wrapUntrusted(s)), nil

	case "browser_dialog":
		if a.Accept == nil {
			return Result{}, fmt.Errorf("%w: say accept true or false", ErrUnsupported)
		}
		msg, err := p.run(ctx, true, dialogAction(*a.Accept), func(x *action) (string, error) { return x.handleDialog(*a.Accept, a.PromptText) })
		return text(msg), err

	case "browser_tabs":
		return p.tabsTool(ctx, a)

	case "browser_screenshot":
		return p.screenshotTool(ctx, a)
	}
	names := make([]string, 0, len(toolDefs))
	for _, d := range toolDefs {
		names = append(names, d.name)
	}
	return Result{}, fmt.Errorf("%w: no tool %q; the tools are %s", ErrUnsupported, name, strings.Join(names, ", "))
}

func (p *Page) tabsTool(ctx context.Context, a toolArgs) (Result, error) {
	switch a.Action {
	case "", "list":
	case "open":
		if _, err := p.NewTab(ctx, a.URL); err != nil {
			return Result{}, err
		}
	case "switch":
		if err := p.SwitchTab(ctx, a.Tab); err != nil {
			return Result{}, err
		}
	case "close":
		if err := p.CloseTab(ctx, a.Tab); err != nil {
			return Result{}, err
		}
	default:
		return Result{}, fmt.Errorf("%w: unknown action %q; use list, open, switch or close", ErrUnsupported, a.Action)
	}
	tabs, err := p.Tabs(ctx)
	if err != nil {
		return Result{}, err
	}
	var b strings.Builder
	for _, t := range tabs {
		mark := " "
		if t.Current {
			mark = "*"
		}
		fmt.Fprintf(&b, "%s tab %s: %s %q\n", mark, t.ID, t.URL, t.Title)
	}
	head := fmt.Sprintf("%d tab(s); * marks the current one. Take a snapshot after switching.\n", len(tabs))
	if d := p.PendingDialog(); d != nil {
		head += fmt.Sprintf("The current tab has an open %s dialog.\n", d.Type)
	}
	return text(head + wrapUntrusted(b.String())), nil
}

func (p *Page) screenshotTool(ctx context.Context, a toolArgs) (Result, error) {
	o := ScreenshotOptions{Format: a.Format, Quality: a.Quality}
	switch a.Mode {
	case "", "viewport":
	case "full":
		o.FullPage = true
	case "element":
		if a.ref().IsZero() {
			return Result{}, errNoRef
		}
		o.Ref = a.ref()
	case "marked":
		img, snap, err := p.MarkedScreenshot(ctx, o, SnapshotOptions{})
		if err != nil {
			return Result{}, err
		}
		return Result{Text: "The numbered boxes are the element indexes below.\n" + snap.Text, Image: img.Data, MIME: img.MIME}, nil
	default:
		return Result{}, fmt.Errorf("%w: unknown mode %q; use viewport, full, element or marked", ErrUnsupported, a.Mode)
	}
	img, err := p.Screenshot(ctx, o)
	if err != nil {
		return Result{}, err
	}
	msg := fmt.Sprintf("%s screenshot, %dx%d", strings.TrimPrefix(img.MIME, "image/"), img.Width, img.Height)
	if img.Truncated {
		msg += fmt.Sprintf(" (the page is taller; cut at %d CSS pixels)", p.cfg.maxShotHeight)
	}
	return Result{Text: msg, Image: img.Data, MIME: img.MIME}, nil
}
