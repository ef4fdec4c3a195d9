package page

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
)

// Tool is one of the Page's tools for an LLM tool-calling loop or an MCP
// server: its name, what it does, and the Go type of its arguments.
//
// The argument struct is the tool's input schema. Its json tags name the
// arguments, and a field without omitempty is required; its jsonschema tag
// is the argument's description (as github.com/google/jsonschema-go and the
// MCP SDK read it); its schema tag holds the other JSON Schema keywords, as
// space-separated key=value pairs: enum=a|b|c, default=v, minimum=n,
// maximum=n, minItems=n. Package agent turns it into the JSON Schema that
// MCP clients see (agent.Schema does it for other loops), so page itself
// stays free of a schema library.
type Tool struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Args        ToolArgs `json:"-"` // the zero value of the tool's argument struct
}

// ToolArgs is the arguments of one tool: SnapshotArgs, FindArgs, NavigateArgs,
// ClickArgs, TypeArgs, PressArgs, HoverArgs, ScrollArgs, SelectArgs,
// CheckArgs, DragArgs, FillFormArgs, WaitArgs, ReadArgs, EvalArgs, DialogArgs, TabsArgs,
// ClickXYArgs, ConsoleArgs, NetworkArgs, PDFArgs, ViewportArgs, StorageArgs
// or ScreenshotArgs. Run runs it.
type ToolArgs interface {
	// ToolName is the name of the tool these arguments are for.
	ToolName() string
	run(ctx context.Context, p *Page) (Result, error)
}

// Result is what a tool call returns to the model: text, an image, or both.
// IsError marks a failure the model should read and react to.
type Result struct {
	Text    string `json:"text,omitempty"`
	Image   []byte `json:"image,omitempty"`
	MIME    string `json:"mime,omitempty"` // of Image
	IsError bool   `json:"isError,omitempty"`
}

// RefArgs name the element a tool acts on, by index or by selector.
type RefArgs struct {
	Index    int    `json:"index,omitempty" jsonschema:"Element index from the latest snapshot." schema:"minimum=1"`
	Selector string `json:"selector,omitempty" jsonschema:"CSS selector, instead of index: the first visible match."`
}

// Ref is the element RefArgs name.
func (a RefArgs) Ref() Ref { return Ref(a) }

// SnapshotArgs are the arguments of browser_snapshot.
type SnapshotArgs struct {
	ViewportOnly bool `json:"viewport_only,omitempty" jsonschema:"List only elements in the viewport (fewer tokens)."`
	MaxElements  int  `json:"max_elements,omitempty" jsonschema:"Cap on listed elements; those nearest the viewport are kept." schema:"minimum=1"`
	Text         bool `json:"text,omitempty" jsonschema:"Add the viewport's visible text (up to 2000 characters)."` // DefaultViewText
}

// FindArgs are the arguments of browser_find.
type FindArgs struct {
	Text string `json:"text,omitempty" jsonschema:"Words that must all appear in the element's name, value, placeholder, title, link or text (any case)."`
	Role string `json:"role,omitempty" jsonschema:"Role or tag: button, link, textbox, checkbox, radio, combobox, tab, menuitem, img..."`
	Name string `json:"name,omitempty" jsonschema:"The element's whole accessible name (any case)."`
	Max  int    `json:"max,omitempty" jsonschema:"Cap on listed matches, in page order." schema:"minimum=1 default=20"` // DefaultMaxFound
}

// NavigateArgs are the arguments of browser_navigate.
type NavigateArgs struct {
	URL    string `json:"url,omitempty" jsonschema:"URL to load."`
	Action string `json:"action,omitempty" jsonschema:"Instead of url: move in the history or reload." schema:"enum=back|forward|reload"`
}

// ClickArgs are the arguments of browser_click.
type ClickArgs struct {
	RefArgs
	Button string `json:"button,omitempty" schema:"enum=left|right|middle default=left"`
	Double bool   `json:"double,omitempty" jsonschema:"Double-click."`
}

// TypeArgs are the arguments of browser_type.
type TypeArgs struct {
	RefArgs
	Text   string `json:"text"`
	Clear  bool   `json:"clear,omitempty" jsonschema:"Replace the current content instead of appending."`
	Submit bool   `json:"submit,omitempty" jsonschema:"Press Enter afterwards."`
}

// PressArgs are the arguments of browser_press.
type PressArgs struct {
	Keys string `json:"keys" jsonschema:"For example \"Control+A Backspace\"."`
}

// HoverArgs are the arguments of browser_hover.
type HoverArgs struct {
	RefArgs
}

// ScrollArgs are the arguments of browser_scroll.
type ScrollArgs struct {
	RefArgs
	DX       float64 `json:"dx,omitempty" jsonschema:"Pixels to the right (negative: left)."`
	DY       float64 `json:"dy,omitempty" jsonschema:"Pixels down (negative: up)."`
	IntoView bool    `json:"into_view,omitempty" jsonschema:"Scroll the element into view instead."`
}

// SelectArgs are the arguments of browser_select.
type SelectArgs struct {
	RefArgs
	Values []string `json:"values" schema:"minItems=1"`
}

// CheckArgs are the arguments of browser_check.
type CheckArgs struct {
	RefArgs
	Checked *bool `json:"checked,omitempty" schema:"default=true"` // nil: check
}

// DragArgs are the arguments of browser_drag.
type DragArgs struct {
	FromIndex    int    `json:"from_index,omitempty" schema:"minimum=1"`
	FromSelector string `json:"from_selector,omitempty"`
	ToIndex      int    `json:"to_index,omitempty" schema:"minimum=1"`
	ToSelector   string `json:"to_selector,omitempty"`
}

// FillFormArgs are the arguments of browser_fill_form.
type FillFormArgs struct {
	Fields         []FormField `json:"fields" jsonschema:"The fields, each by index or selector, with one of text, values, checked or files." schema:"minItems=1"`
	SubmitIndex    int         `json:"submit_index,omitempty" jsonschema:"Element to click once every field is set (the form's submit button)." schema:"minimum=1"`
	SubmitSelector string      `json:"submit_selector,omitempty" jsonschema:"CSS selector of the element to click, instead of submit_index."`
}

// WaitArgs are the arguments of browser_wait.
type WaitArgs struct {
	Text         string `json:"text,omitempty" jsonschema:"Text that should appear."`
	Selector     string `json:"selector,omitempty" jsonschema:"CSS selector of an element that should become visible."`
	GoneIndex    int    `json:"gone_index,omitempty" jsonschema:"Element that should disappear." schema:"minimum=1"`
	GoneSelector string `json:"gone_selector,omitempty" jsonschema:"CSS selector of an element that should disappear."`
	NetworkIdle  bool   `json:"network_idle,omitempty"`
	TimeoutMS    int    `json:"timeout_ms,omitempty" schema:"minimum=1 default=10000"` // DefaultWaitTimeout
}

// ReadArgs are the arguments of browser_read.
type ReadArgs struct {
	RefArgs
	Format   string `json:"format,omitempty" schema:"enum=markdown|text default=markdown"`
	MaxChars int    `json:"max_chars,omitempty" jsonschema:"Characters to return." schema:"minimum=100 default=60000"` // DefaultMaxChars
	Offset   int    `json:"offset,omitempty" jsonschema:"Characters to skip: the offset the last result said to read on with." schema:"minimum=0"`
}

// EvalArgs are the arguments of browser_eval.
type EvalArgs struct {
	Expression string `json:"expression"`
}

// DialogArgs are the arguments of browser_dialog.
type DialogArgs struct {
	Accept     *bool  `json:"accept"` // required: nil is refused
	PromptText string `json:"prompt_text,omitempty" jsonschema:"Answer to a prompt()."`
}

// TabsArgs are the arguments of browser_tabs.
type TabsArgs struct {
	Action string `json:"action" schema:"enum=list|open|switch|close"`
	URL    string `json:"url,omitempty" jsonschema:"For open: the URL to load."`
	Tab    string `json:"tab,omitempty" jsonschema:"For switch and close: the tab id from list."`
}

// ScreenshotArgs are the arguments of browser_screenshot.
type ScreenshotArgs struct {
	Mode string `json:"mode,omitempty" schema:"enum=viewport|full|element|marked default=viewport"`
	RefArgs
	Format  string `json:"format,omitempty" schema:"enum=png|jpeg default=png"`
	Quality int    `json:"quality,omitempty" jsonschema:"JPEG quality." schema:"minimum=1 maximum=100"`
}

// ClickXYArgs are the arguments of browser_click_xy.
type ClickXYArgs struct {
	X      float64 `json:"x" jsonschema:"CSS pixels from the viewport's left edge."`
	Y      float64 `json:"y" jsonschema:"CSS pixels from the viewport's top edge."`
	Button string  `json:"button,omitempty" schema:"enum=left|right|middle default=left"`
	Double bool    `json:"double,omitempty"`
}

// ConsoleArgs are the arguments of browser_console.
type ConsoleArgs struct {
	Level string `json:"level,omitempty" schema:"enum=all|error|warning|info|debug default=all"`
	Clear bool   `json:"clear,omitempty" jsonschema:"Forget the messages listed."`
}

// NetworkArgs are the arguments of browser_network.
type NetworkArgs struct {
	RequestID string `json:"request_id,omitempty" jsonschema:"One request from the list: its headers and body."`
	Filter    string `json:"filter,omitempty" jsonschema:"List only URLs containing this."`
	MaxBody   int    `json:"max_body,omitempty" jsonschema:"Characters of the body." schema:"minimum=100 default=4000"` // DefaultMaxBody
}

func (SnapshotArgs) ToolName() string   { return "browser_snapshot" }
func (ClickXYArgs) ToolName() string    { return "browser_click_xy" }
func (ConsoleArgs) ToolName() string    { return "browser_console" }
func (NetworkArgs) ToolName() string    { return "browser_network" }
func (PDFArgs) ToolName() string        { return "browser_pdf" }
func (ViewportArgs) ToolName() string   { return "browser_resize" }
func (StorageArgs) ToolName() string    { return "browser_storage" }
func (FindArgs) ToolName() string       { return "browser_find" }
func (NavigateArgs) ToolName() string   { return "browser_navigate" }
func (ClickArgs) ToolName() string      { return "browser_click" }
func (TypeArgs) ToolName() string       { return "browser_type" }
func (PressArgs) ToolName() string      { return "browser_press" }
func (HoverArgs) ToolName() string      { return "browser_hover" }
func (ScrollArgs) ToolName() string     { return "browser_scroll" }
func (SelectArgs) ToolName() string     { return "browser_select" }
func (CheckArgs) ToolName() string      { return "browser_check" }
func (DragArgs) ToolName() string       { return "browser_drag" }
func (FillFormArgs) ToolName() string   { return "browser_fill_form" }
func (WaitArgs) ToolName() string       { return "browser_wait" }
func (ReadArgs) ToolName() string       { return "browser_read" }
func (EvalArgs) ToolName() string       { return "browser_eval" }
func (DialogArgs) ToolName() string     { return "browser_dialog" }
func (TabsArgs) ToolName() string       { return "browser_tabs" }
func (ScreenshotArgs) ToolName() string { return "browser_screenshot" }

type toolDef struct {
	desc   string
	args   ToolArgs
	decode func([]byte) (ToolArgs, error)
}

func def[A ToolArgs](desc string) toolDef {
	var zero A
	return toolDef{desc: desc, args: zero, decode: func(b []byte) (ToolArgs, error) {
		var a A
		err := jsonv2.Unmarshal(b, &a)
		return a, err
	}}
}

var toolDefs = []toolDef{
	def[SnapshotArgs]("List the elements of the current tab that can be acted on, numbered [1], [2]…, with the page URL, title and scroll position. Call it first and after every change of page; other tools take these indexes."),
	def[FindArgs]("Search the whole page — all frames and shadow roots, not only what a snapshot lists — for elements by text, role or name, and list the matches with indexes the other tools take at once. The last snapshot's indexes stay valid. Cheaper than a snapshot on a big page."),
	def[NavigateArgs]("Load a URL in the current tab and wait for it, or go back, forward, or reload."),
	def[ClickArgs]("Click an element with the real mouse, after scrolling it into view. Fails if it is hidden, disabled or covered by something else."),
	def[TypeArgs]("Type text into a text field, text area or editable region with real key presses. A newline presses Enter."),
	def[PressArgs]("Press keys on the focused element: Enter, Escape, Tab, ArrowDown, Control+A, Shift+Tab…; several chords separated by spaces."),
	def[HoverArgs]("Move the mouse over an element, for menus and tooltips."),
	def[ScrollArgs]("Scroll the page (or the scrollable area holding an element) by pixels, or scroll an element into view. Without dx/dy it scrolls down most of a screen."),
	def[SelectArgs]("Choose options of a <select> by value or visible label."),
	def[CheckArgs]("Check or uncheck a checkbox, radio button or switch."),
	def[DragArgs]("Drag one element onto another with the real mouse (also HTML5 drag and drop)."),
	def[FillFormArgs]("Fill many form fields in one call — text fields, selects, checkboxes, radio buttons, file inputs — each by index or selector, then optionally click the submit button. A field that fails does not stop the others; the result lists what each field holds now, or why it failed (the submit click is skipped then)."),
	def[WaitArgs]("Wait until text appears, an element appears or goes away, or the network is idle."),
	def[ReadArgs]("Read the page, or one element, as Markdown or plain text, max_chars characters at a time (60000 by default). The result gives the content's total length and, when there is more, the offset to read on with."),
	def[EvalArgs]("Run a JavaScript expression in the page and return its JSON result (promises are awaited)."),
	def[DialogArgs]("Accept or dismiss the JavaScript dialog (alert, confirm, prompt) that blocks the page."),
	def[TabsArgs]("List, open, switch to or close tabs."),
	def[ClickXYArgs]("Click at a point of the viewport, as seen on a screenshot."),
	def[ConsoleArgs]("List the tab's console messages and uncaught errors."),
	def[NetworkArgs]("List the tab's requests, or show one request's headers and bodies."),
	def[PDFArgs]("Save the page as a PDF in the download directory."),
	def[ViewportArgs]("Resize the viewport, emulate a phone, print media or a colour scheme; or reset."),
	def[StorageArgs]("Read the page's cookies (httpOnly values withheld), localStorage and sessionStorage."),
	def[ScreenshotArgs]("Capture the viewport, the full page, one element, or the viewport with numbered boxes over the elements (marked: the numbers are element indexes, as in a snapshot)."),
}

// Tools returns the tools that Call and Run serve.
func Tools() []Tool {
	out := make([]Tool, 0, len(toolDefs))
	for _, d := range toolDefs {
		out = append(out, Tool{Name: d.args.ToolName(), Description: d.desc, Args: d.args})
	}
	return out
}

var errNoRef = fmt.Errorf("%w: give the element's index from the snapshot, or a CSS selector", ErrUnsupported)

// Call runs tool name with its JSON arguments on the current tab, as Run
// does; arguments that do not decode come back as a Result with IsError.
func (p *Page) Call(ctx context.Context, name string, args []byte) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	var d *toolDef
	for i := range toolDefs {
		if toolDefs[i].args.ToolName() == name {
			d = &toolDefs[i]
		}
	}
	if d == nil {
		names := make([]string, 0, len(toolDefs))
		for _, d := range toolDefs {
			names = append(names, d.args.ToolName())
		}
		return Result{Text: fmt.Sprintf("Error: %v: no tool %q; the tools are %s", ErrUnsupported, name, strings.Join(names, ", ")), IsError: true}, nil
	}
	a := d.args
	if s := strings.TrimSpace(string(args)); s != "" && s != "null" {
		var err error
		if a, err = d.decode([]byte(s)); err != nil {
			return Result{Text: fmt.Sprintf("Error: the arguments of %s are not valid: %v", name, err), IsError: true}, nil
		}
	}
	return p.Run(ctx, a)
}

// Run runs one tool on the current tab. Every failure of the tool (a stale
// index, a covered element, a timeout, bad arguments) comes back as a
// Result with IsError and a text that says what to do next; the error is
// non-nil only when ctx ended or the Page is closed.
func (p *Page) Run(ctx context.Context, args ToolArgs) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if args == nil {
		return Result{Text: fmt.Sprintf("Error: %v: no tool arguments", ErrUnsupported), IsError: true}, nil
	}
	res, err := args.run(ctx, p)
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		if errors.Is(err, ErrClosed) {
			return Result{}, err
		}
		return Result{Text: ErrorText(err), IsError: true}, nil
	}
	return res, nil
}

func text(s string) Result { return Result{Text: s} }

func (a SnapshotArgs) run(ctx context.Context, p *Page) (Result, error) {
	s, err := p.Snapshot(ctx, SnapshotOptions(a))
	if err != nil {
		return Result{}, err
	}
	return text(s.Text), nil
}

func (a FindArgs) run(ctx context.Context, p *Page) (Result, error) {
	f, err := p.Find(ctx, FindOptions(a))
	if err != nil {
		return Result{}, err
	}
	return text(f.Text), nil
}

func (a NavigateArgs) run(ctx context.Context, p *Page) (Result, error) {
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
}

func (a ClickArgs) run(ctx context.Context, p *Page) (Result, error) {
	ref := a.Ref()
	if ref.IsZero() {
		return Result{}, errNoRef
	}
	o := ClickOptions{Button: a.Button}
	if a.Double {
		o.Count = 2
	}
	msg, err := p.run(ctx, false, Action{Kind: KindAct, Op: "click", Ref: ref}, func(x *action) (string, error) { return x.click(ref, o) })
	return text(msg), err
}

func (a TypeArgs) run(ctx context.Context, p *Page) (Result, error) {
	ref := a.Ref()
	if ref.IsZero() {
		return Result{}, errNoRef
	}
	msg, err := p.run(ctx, false, Action{Kind: KindAct, Op: "type", Ref: ref, Text: a.Text}, func(x *action) (string, error) {
		return x.typeText(ref, a.Text, TypeOptions{Clear: a.Clear, Submit: a.Submit})
	})
	return text(msg), err
}

func (a PressArgs) run(ctx context.Context, p *Page) (Result, error) {
	msg, err := p.run(ctx, false, Action{Kind: KindAct, Op: "press", Text: a.Keys}, func(x *action) (string, error) { return x.press(a.Keys) })
	return text(msg), err
}

func (a HoverArgs) run(ctx context.Context, p *Page) (Result, error) {
	ref := a.Ref()
	if ref.IsZero() {
		return Result{}, errNoRef
	}
	msg, err := p.run(ctx, false, Action{Kind: KindAct, Op: "hover", Ref: ref}, func(x *action) (string, error) { return x.hover(ref) })
	return text(msg), err
}

func (a ScrollArgs) run(ctx context.Context, p *Page) (Result, error) {
	ref := a.Ref()
	msg, err := p.run(ctx, false, Action{Kind: KindRead, Op: "scroll", Ref: ref}, func(x *action) (string, error) {
		if a.IntoView {
			if ref.IsZero() {
				return "", errNoRef
			}
			return x.scrollTo(ref)
		}
		dx, dy := a.DX, a.DY
		if dx == 0 && dy == 0 {
			dy = 0.8 * float64(max(p.cfg.vh, 600))
		}
		pos, err := x.scrollBy(ref, dx, dy)
		return pos.String(), err
	})
	return text(msg), err
}

func (a SelectArgs) run(ctx context.Context, p *Page) (Result, error) {
	ref := a.Ref()
	if ref.IsZero() {
		return Result{}, errNoRef
	}
	msg, err := p.run(ctx, false, Action{Kind: KindAct, Op: "select", Ref: ref, Text: strings.Join(a.Values, "\n")}, func(x *action) (string, error) {
		_, msg, err := x.selectOption(ref, a.Values)
		return msg, err
	})
	return text(msg), err
}

func (a CheckArgs) run(ctx context.Context, p *Page) (Result, error) {
	ref := a.Ref()
	if ref.IsZero() {
		return Result{}, errNoRef
	}
	checked := a.Checked == nil || *a.Checked
	msg, err := p.run(ctx, false, Action{Kind: KindAct, Op: "check", Ref: ref}, func(x *action) (string, error) { return x.setChecked(ref, checked) })
	return text(msg), err
}

func (a DragArgs) run(ctx context.Context, p *Page) (Result, error) {
	from := Ref{Index: a.FromIndex, Selector: a.FromSelector}
	to := Ref{Index: a.ToIndex, Selector: a.ToSelector}
	if from.IsZero() || to.IsZero() {
		return Result{}, fmt.Errorf("%w: give from_index or from_selector, and to_index or to_selector", ErrUnsupported)
	}
	msg, err := p.run(ctx, false, Action{Kind: KindAct, Op: "drag", Ref: from}, func(x *action) (string, error) { return x.drag(from, to) })
	return text(msg), err
}

func (a FillFormArgs) run(ctx context.Context, p *Page) (Result, error) {
	r, err := p.FillForm(ctx, a.Fields, Ref{Index: a.SubmitIndex, Selector: a.SubmitSelector})
	if err != nil {
		return Result{}, err
	}
	return Result{Text: r.Text, IsError: r.Failed == len(r.Fields)}, nil
}

func (a WaitArgs) run(ctx context.Context, p *Page) (Result, error) {
	o := WaitOptions{
		Text: a.Text, Selector: a.Selector, NetworkIdle: a.NetworkIdle,
		Gone: Ref{Index: a.GoneIndex, Selector: a.GoneSelector},
	}
	if a.TimeoutMS > 0 {
		o.Timeout = time.Duration(a.TimeoutMS) * time.Millisecond
	}
	msg, err := p.run(ctx, false, Action{Kind: KindRead, Op: "wait"}, func(x *action) (string, error) { return x.wait(o) })
	return text(msg), err
}

func (a ReadArgs) run(ctx context.Context, p *Page) (Result, error) {
	c, err := p.Read(ctx, ReadOptions{Format: a.Format, Ref: a.Ref(), MaxChars: a.MaxChars, Offset: a.Offset})
	if err != nil {
		return Result{}, err
	}
	return text(c.String()), nil
}

// maxEvalChars caps the JSON of browser_eval's result: a value, not a page
// to read; browser_read pages long text.
const maxEvalChars = 20000

func (a EvalArgs) run(ctx context.Context, p *Page) (Result, error) {
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
	if len(s) > maxEvalChars {
		s = s[:maxEvalChars] + "…(cut)"
	}
	return text("result:\n" + wrapUntrusted(s)), nil
}

func (a DialogArgs) run(ctx context.Context, p *Page) (Result, error) {
	if a.Accept == nil {
		return Result{}, fmt.Errorf("%w: say accept true or false", ErrUnsupported)
	}
	accept := *a.Accept
	msg, err := p.run(ctx, true, dialogAction(accept), func(x *action) (string, error) { return x.handleDialog(accept, a.PromptText) })
	return text(msg), err
}

func (a TabsArgs) run(ctx context.Context, p *Page) (Result, error) {
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

func (a ScreenshotArgs) run(ctx context.Context, p *Page) (Result, error) {
	o := ScreenshotOptions{Format: a.Format, Quality: a.Quality}
	switch a.Mode {
	case "", "viewport":
	case "full":
		o.FullPage = true
	case "element":
		if a.Ref().IsZero() {
			return Result{}, errNoRef
		}
		o.Ref = a.Ref()
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

func (a ClickXYArgs) run(ctx context.Context, p *Page) (Result, error) {
	o := ClickOptions{Button: a.Button}
	if a.Double {
		o.Count = 2
	}
	msg, err := p.run(ctx, false, Action{Kind: KindAct, Op: "click"}, func(x *action) (string, error) { return x.clickAt(a.X, a.Y, o) })
	return text(msg), err
}

func (a ConsoleArgs) run(ctx context.Context, p *Page) (Result, error) {
	msg, err := p.run(ctx, false, Action{Kind: KindRead, Op: "console"}, func(x *action) (string, error) { return x.consoleText(a.Level, a.Clear), nil })
	return text(msg), err
}

func (a NetworkArgs) run(ctx context.Context, p *Page) (Result, error) {
	maxBody := a.MaxBody
	if maxBody <= 0 {
		maxBody = DefaultMaxBody
	}
	msg, err := p.run(ctx, false, Action{Kind: KindRead, Op: "network"}, func(x *action) (string, error) { return x.networkText(a.RequestID, a.Filter, maxBody) })
	return text(msg), err
}

func (a PDFArgs) run(ctx context.Context, p *Page) (Result, error) {
	msg, err := p.run(ctx, false, Action{Kind: KindCapture, Op: "pdf"}, func(x *action) (string, error) { return x.pdf(a) })
	return text(msg), err
}

func (a ViewportArgs) run(ctx context.Context, p *Page) (Result, error) {
	msg, err := p.runWith(ctx, false, Action{Kind: KindAct, Op: "resize"}, false, func(x *action) (string, error) { return x.emulate(a) })
	return text(msg), err
}

func (a StorageArgs) run(ctx context.Context, p *Page) (Result, error) {
	msg, err := p.run(ctx, false, Action{Kind: KindRead, Op: "storage"}, func(x *action) (string, error) { return x.storage(a.What) })
	return text(msg), err
}
