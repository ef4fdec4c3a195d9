package page

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/livetab/livetab/internal/inpage"
)

// run runs f as one action on the current tab and returns its summary for a
// model, with what else happened on the way (a navigation, a dialog the
// policy handled).
func (p *Page) run(ctx context.Context, dialogOK bool, act Action, f func(a *action) (string, error)) (string, error) {
	// An upload settles too: what the page makes of the files (a preview,
	// a request, a status line) is what the agent wants to check.
	return p.runWith(ctx, dialogOK, act, act.Kind == KindAct || act.Kind == KindNavigate || act.Kind == KindUpload, f)
}

// runWith is run, with or without settling after f and reporting what
// changed (a form's fields settle only once, after the submit).
func (p *Page) runWith(ctx context.Context, dialogOK bool, act Action, settle bool, f func(a *action) (string, error)) (string, error) {
	t, err := p.current()
	if err != nil {
		return "", err
	}
	if err := p.check(ctx, t, act); err != nil {
		return "", err
	}
	a, err := p.begin(ctx, dialogOK)
	if err != nil {
		return "", err
	}
	if a.t != t {
		// The guard looked at another tab than the one the action got.
		err := fmt.Errorf("%w: the current tab changed while the action started; try again", ErrUnsupported)
		return "", p.end(a, err)
	}
	mark := a.t.markPopups()
	if settle && (act.Kind == KindAct || act.Kind == KindUpload) {
		a.watch()
	}
	a.t.mu.Lock()
	a.dlSeq = a.t.dlSeq
	a.t.mu.Unlock()
	a.settles = settle
	msg, err := f(a)
	var settled string
	switch {
	case !settle || err != nil:
	case a.settled != nil:
		settled = *a.settled
	default:
		settled = a.quietDown()
	}
	if dls := a.t.downloadsSince(a.dlSeq); len(dls) > 0 {
		if d := a.finishDownloads(dls); d != "" {
			settled = strings.TrimPrefix(settled+"; "+d, "; ")
		}
	}
	a.note = append(a.note, p.popupNotes(ctx, a.t, mark)...)
	a.t.mu.Lock()
	handled := a.t.handled
	a.t.handled = nil
	a.t.mu.Unlock()
	for _, h := range handled {
		a.note = append(a.note, "a JavaScript "+h)
	}
	if !a.blockReported {
		a.note = append(a.note, blockedNote(a.t.blockedSince(a.blockSeq))...)
	}
	if len(a.note) > 0 {
		if msg != "" {
			msg += "; "
		}
		msg += strings.Join(a.note, "; ")
	}
	if settled != "" {
		if msg != "" {
			msg += "; "
		}
		msg += settled
	}
	return msg, p.end(a, err)
}

type pointOpts struct {
	Enabled bool  `json:"enabled"`
	Scroll  *bool `json:"scroll,omitempty"`
}

type pointRes struct {
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	Label string  `json:"label"`
}

type frameBox struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
	W float64 `json:"w"`
	H float64 `json:"h"`
}

// point finds the viewport point where a trusted mouse event reaches ref:
// scrolled into view, on top of whatever else is there, enabled if asked.
func (a *action) point(ref Ref, o pointOpts) (pointRes, error) {
	var pr pointRes
	s, jsref, err := a.route(ref)
	if err != nil {
		return pr, err
	}
	if s.main {
		err := a.call(s, "point", &pr, jsref, o)
		return pr, elemErr(ref, err)
	}
	main := a.t.libs.main
	var fb frameBox
	if o.Scroll == nil || *o.Scroll {
		if err := a.call(main, "frameBox", &fb, s.frame, true); err != nil {
			return pr, elemErr(ref, err)
		}
	}
	// The frame draws, then its parent draws it in: see painted.
	a.painted(s)
	a.painted(main)
	if err := a.call(s, "point", &pr, jsref, o); err != nil {
		return pr, elemErr(ref, err)
	}
	if err := a.call(main, "frameBox", &fb, s.frame, false); err != nil {
		return pr, elemErr(ref, err)
	}
	pr.X += fb.X
	pr.Y += fb.Y
	return pr, nil
}

// ClickOptions modifies a click.
type ClickOptions struct {
	Button    string   // "left" (default), "right" or "middle"
	Count     int      // 2 for a double click; default 1
	Modifiers []string // keys held during the click: "Shift", "Control", "Alt", "Meta"
}

// Click clicks the element with trusted mouse events at its centre (or the
// nearest visible point of it), after scrolling it into view. It refuses a
// hidden, disabled or covered element, and one that hides, moves or is
// covered as the pointer arrives (the press would land on something else,
// such as a frame of another site a hostile page uncovers). When the click
// starts a navigation, Click waits for the new page.
func (p *Page) Click(ctx context.Context, ref Ref, opts ClickOptions) error {
	_, err := p.run(ctx, false, Action{Kind: KindAct, Op: "click", Ref: ref}, func(a *action) (string, error) { return a.click(ref, opts) })
	return err
}

// mouseButton reads ClickOptions.Button.
func mouseButton(name string) (input.MouseButton, error) {
	switch strings.ToLower(name) {
	case "", "left":
		return input.MouseButtonLeft, nil
	case "right":
		return input.MouseButtonRight, nil
	case "middle":
		return input.MouseButtonMiddle, nil
	}
	return "", fmt.Errorf("%w: unknown mouse button %q; use left, right or middle", ErrUnsupported, name)
}

func (a *action) click(ref Ref, o ClickOptions) (string, error) {
	btn, err := mouseButton(o.Button)
	if err != nil {
		return "", err
	}
	mods, err := modifierMask(o.Modifiers)
	if err != nil {
		return "", err
	}
	count := max(o.Count, 1)
	pt, err := a.point(ref, pointOpts{Enabled: true})
	if err != nil {
		return "", err
	}
	withMods := func(p *input.DispatchMouseEventParams) { p.Modifiers = mods }
	if err := chromedp.Do(a.ctx, chromedp.MouseEvent(chromedp.MouseMoved, pt.X, pt.Y, withMods)); err != nil {
		return "", err
	}
	// Once more where the pointer now is: a hostile page can hide its
	// element, or uncover a frame of another site, as the pointer arrives,
	// and the press would land on what is there instead.
	if err := a.stillThere(ref, pt); err != nil {
		return "", err
	}
	if err := a.pressLandsOn(ref, pt); err != nil {
		return "", err
	}
	for i := 1; i <= count; i++ {
		if err := chromedp.Do(a.ctx, chromedp.MouseClickXY(pt.X, pt.Y,
			chromedp.ButtonType(btn), chromedp.ClickCount(i), withMods)); err != nil {
			return "", err
		}
	}
	a.settle()
	verb := "clicked"
	switch {
	case count == 2:
		verb = "double-clicked"
	case btn == input.MouseButtonRight:
		verb = "right-clicked"
	case btn == input.MouseButtonMiddle:
		verb = "middle-clicked"
	}
	return verb + " " + refLabel(ref, pt.Label), nil
}

// stillThere checks, after the pointer moved to pt, that a press there
// still lands on ref's element. In a frame, whose own viewport the page
// side knows, the element must still be reachable.
func (a *action) stillThere(ref Ref, pt pointRes) error {
	s, jsref, err := a.route(ref)
	if err != nil {
		return err
	}
	var why string
	if s.main {
		var hit struct {
			OK bool   `json:"ok"`
			By string `json:"by"`
		}
		if err := a.call(s, "hitsAt", &hit, jsref, pt.X, pt.Y); err != nil {
			return elemErr(ref, err)
		}
		if hit.OK {
			return nil
		}
		why = "a press there would land on " + hit.By
	} else if _, err := a.point(ref, pointOpts{Enabled: true, Scroll: new(false)}); err != nil {
		why = err.Error()
		if inpage.WordsOf(err) != "" {
			why = "a script of the page threw" // its words are the page's, unfenced here
		}
	} else {
		return nil
	}
	return &ElementError{Ref: ref, Code: "moved", Msg: fmt.Sprintf("%s changed as the pointer came over it (%s): the click was not sent; take a new snapshot", pt.Label, why)}
}

// refLabel says what an action hit: the index or selector, and the page's
// label of the element, whose name is quoted (as JSON) with any copy of a
// page tag defused, since it shows outside a page block.
func refLabel(ref Ref, label string) string {
	label = Defuse(label)
	if ref.Selector != "" {
		return label + " (" + ref.Selector + ")"
	}
	return fmt.Sprintf("[%d] %s", ref.Index, label)
}

// Hover moves the mouse over the element, scrolled into view.
func (p *Page) Hover(ctx context.Context, ref Ref) error {
	_, err := p.run(ctx, false, Action{Kind: KindAct, Op: "hover", Ref: ref}, func(a *action) (string, error) { return a.hover(ref) })
	return err
}

func (a *action) hover(ref Ref) (string, error) {
	pt, err := a.point(ref, pointOpts{})
	if err != nil {
		return "", err
	}
	if err := chromedp.Do(a.ctx, chromedp.MouseEvent(chromedp.MouseMoved, pt.X, pt.Y)); err != nil {
		return "", err
	}
	return "hovering over " + refLabel(ref, pt.Label), nil
}

// TypeOptions modifies typing.
type TypeOptions struct {
	Clear  bool // replace the current content instead of appending to it
	Submit bool // press Enter after the text
	// Insert puts the text in at once with Input.insertText, as a paste or
	// an input method does: the page gets beforeinput and input events but
	// no key events. What Playwright's fill does; one call, not three per
	// character.
	Insert bool
}

// Type focuses the element and types text into it with trusted key events:
// an <input>, a <textarea> or a contenteditable region. A newline in text is
// the Enter key. Typing stops with ErrNavigated when the page navigates away
// part way, and with an ElementError when the element loses the keyboard
// focus (the keys would go wherever the page moved it).
func (p *Page) Type(ctx context.Context, ref Ref, text string, opts TypeOptions) error {
	_, err := p.run(ctx, false, Action{Kind: KindAct, Op: "type", Ref: ref, Text: text}, func(a *action) (string, error) { return a.typeText(ref, text, opts) })
	return err
}

func (a *action) typeText(ref Ref, text string, o TypeOptions) (string, error) {
	s, jsref, err := a.route(ref)
	if err != nil {
		return "", err
	}
	var f struct {
		HasText bool   `json:"hasText"`
		Focused bool   `json:"focused"`
		Label   string `json:"label"`
	}
	if err := a.call(s, "focus", &f, jsref, map[string]bool{"clear": o.Clear}); err != nil {
		return "", elemErr(ref, err)
	}
	if !f.Focused {
		return "", &ElementError{Ref: ref, Code: "unfocusable", Msg: f.Label + " did not take the keyboard focus; click it first"}
	}
	if o.Clear && f.HasText {
		if err := chromedp.Do(a.ctx, chromedp.KeyEvent(kb.Backspace)); err != nil {
			return "", err
		}
	}
	// The keys go wherever the focus is when they arrive: each is sent
	// only while the element holds it, the first once the page's answer
	// to the focus had time to run (a move to a frame of another process
	// takes effect a moment later). A hostile page that moves the focus to
	// a frame of another site later gets at most the one key already on
	// its way.
	moved := func(typed int) error {
		var held bool
		if err := a.call(s, "holdsFocus", &held, jsref, typed == 0); err != nil {
			return elemErr(ref, err)
		}
		if held && typed == 0 {
			select {
			case <-time.After(focusSettle):
			case <-a.ctx.Done():
				return a.ctx.Err()
			}
			if err := a.call(s, "holdsFocus", &held, jsref, false); err != nil {
				return elemErr(ref, err)
			}
		}
		if held {
			return a.keysStayIn(s)
		}
		return &ElementError{Ref: ref, Code: "focus", Msg: fmt.Sprintf("%s lost the keyboard focus after %d of %d characters (the page moved it, perhaps to a frame of another site): typing stopped so that the rest goes nowhere else; take a new snapshot", f.Label, typed, len([]rune(text)))}
	}
	runes := []rune(text)
	if len(runes) > 0 {
		// A page that does not have the focus (a tab in the background)
		// hears of the element's focus only when the first key event
		// arrives, and a hostile page moved the focus then: that first
		// key went to a frame of another site (1 run in 4). A Shift tap,
		// which types nothing, gives the page its focus events before the
		// check.
		if err := chromedp.Do(a.ctx, chromedp.KeyEvent(kb.Shift)); err != nil {
			return "", err
		}
		if err := moved(0); err != nil {
			return "", err
		}
	}
	if o.Insert && len(runes) > 0 {
		if _, err := chromedp.Call(a.ctx, input.InsertText, input.InsertTextParams{Text: text}); err != nil {
			return "", err
		}
		runes = runes[len(runes):]
	}
	for i, r := range runes {
		if a.navigated() {
			a.settle()
			return "", fmt.Errorf("%s: %w after %d of %d characters; take a new snapshot", ref, ErrNavigated, i, len(runes))
		}
		if i > 0 {
			if err := moved(i); err != nil {
				if a.navigated() {
					a.settle()
					return "", fmt.Errorf("%s: %w after %d of %d characters; take a new snapshot", ref, ErrNavigated, i, len(runes))
				}
				return "", err
			}
		}
		if err := sendKey(a.ctx, r, 0, func() error { return a.keysStayIn(s) }); err != nil {
			return "", err
		}
	}
	if o.Submit {
		// The Enter is a key like the others: a page moved the focus to
		// a frame of another site as the last character arrived, and
		// that frame's form was sent.
		if err := moved(len(runes)); err != nil {
			return "", err
		}
		if err := sendKey(a.ctx, '\r', 0, func() error { return a.keysStayIn(s) }); err != nil {
			return "", err
		}
	}
	a.settle()
	msg := fmt.Sprintf("typed %d characters into %s", len([]rune(text)), refLabel(ref, f.Label))
	if o.Submit {
		msg += " and pressed Enter"
	}
	if !a.navigated() {
		var v string
		if err := a.call(s, "value", &v, jsref); err == nil && !isPasswordish(f.Label) {
			msg += "; its value is now\n" + wrapUntrusted(v)
		}
	}
	return msg, nil
}

// focusSettle is how long typing waits after focusing, for the page's
// answer to the focus (see typeText).
const focusSettle = 20 * time.Millisecond

func isPasswordish(label string) bool {
	return strings.Contains(strings.ToLower(label), "password")
}

// Press presses keys on the focused element: chords such as "Enter",
// "Control+A", "Shift+Tab" or "Control+Shift+ArrowLeft", several separated by
// spaces. Key names are those of KeyboardEvent.key; single characters stand
// for themselves.
func (p *Page) Press(ctx context.Context, keys string) error {
	_, err := p.run(ctx, false, Action{Kind: KindAct, Op: "press", Text: keys}, func(a *action) (string, error) { return a.press(keys) })
	return err
}

func (a *action) press(keys string) (string, error) {
	chords, err := parseKeys(keys)
	if err != nil {
		return "", err
	}
	stay := func() error { return a.keysStayIn(nil) }
	for _, c := range chords {
		if err := stay(); err != nil {
			return "", err
		}
		if err := c.dispatch(a.ctx, stay); err != nil {
			return "", err
		}
	}
	a.settle()
	return "pressed " + keys, nil
}

// ScrollPos is a scroll position after a scroll.
type ScrollPos struct {
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	MaxX  float64 `json:"maxX"`
	MaxY  float64 `json:"maxY"`
	Moved bool    `json:"moved"`
	Label string  `json:"label"`
}

// ScrollBy scrolls the page, or the scrollable area that holds ref when ref
// is not zero, by dx, dy CSS pixels (positive: right, down).
func (p *Page) ScrollBy(ctx context.Context, ref Ref, dx, dy float64) (ScrollPos, error) {
	var pos ScrollPos
	_, err := p.run(ctx, false, Action{Kind: KindRead, Op: "scroll", Ref: ref}, func(a *action) (string, error) {
		var err error
		pos, err = a.scrollBy(ref, dx, dy)
		return "", err
	})
	return pos, err
}

func (a *action) scrollBy(ref Ref, dx, dy float64) (ScrollPos, error) {
	var pos ScrollPos
	if ref.IsZero() {
		err := a.call(a.t.libs.main, "scroll", &pos, nil, dx, dy)
		return pos, err
	}
	s, jsref, err := a.route(ref)
	if err != nil {
		return pos, err
	}
	err = a.call(s, "scroll", &pos, jsref, dx, dy)
	return pos, elemErr(ref, err)
}

func (pos ScrollPos) String() string {
	what := "the page"
	if pos.Label != "" {
		what = "the area of " + pos.Label
	}
	if !pos.Moved {
		return fmt.Sprintf("%s did not move: it is at %.0f,%.0f of at most %.0f,%.0f", what, pos.X, pos.Y, pos.MaxX, pos.MaxY)
	}
	return fmt.Sprintf("scrolled %s to %.0f,%.0f (at most %.0f,%.0f)", what, pos.X, pos.Y, pos.MaxX, pos.MaxY)
}

// ScrollTo scrolls the element into the middle of the viewport.
func (p *Page) ScrollTo(ctx context.Context, ref Ref) error {
	_, err := p.run(ctx, false, Action{Kind: KindRead, Op: "scroll", Ref: ref}, func(a *action) (string, error) { return a.scrollTo(ref) })
	return err
}

func (a *action) scrollTo(ref Ref) (string, error) {
	s, jsref, err := a.route(ref)
	if err != nil {
		return "", err
	}
	if !s.main {
		if err := a.call(a.t.libs.main, "frameBox", nil, s.frame, true); err != nil {
			return "", elemErr(ref, err)
		}
	}
	var r struct {
		Label string  `json:"label"`
		SX    float64 `json:"sx"`
		SY    float64 `json:"sy"`
	}
	if err := a.call(s, "scrollTo", &r, jsref); err != nil {
		return "", elemErr(ref, err)
	}
	return "scrolled " + refLabel(ref, r.Label) + " into view", nil
}

// Select picks options of a <select> by value or by visible label; a
// single-choice select takes the first. It fires input and change events
// and returns the labels now selected.
func (p *Page) Select(ctx context.Context, ref Ref, values ...string) ([]string, error) {
	var sel []string
	_, err := p.run(ctx, false, Action{Kind: KindAct, Op: "select", Ref: ref, Text: strings.Join(values, "\n")}, func(a *action) (string, error) {
		var err error
		var msg string
		sel, msg, err = a.selectOption(ref, values)
		return msg, err
	})
	return sel, err
}

func (a *action) selectOption(ref Ref, values []string) ([]string, string, error) {
	if len(values) == 0 {
		return nil, "", fmt.Errorf("%s: %w: no value to select", ref, ErrUnsupported)
	}
	s, jsref, err := a.route(ref)
	if err != nil {
		return nil, "", err
	}
	var r struct {
		Selected []string `json:"selected"`
		Label    string   `json:"label"`
	}
	if err := a.call(s, "selectOption", &r, jsref, values); err != nil {
		return nil, "", elemErr(ref, err)
	}
	return r.Selected, fmt.Sprintf("selected in %s:\n%s", refLabel(ref, r.Label), wrapUntrusted(strings.Join(r.Selected, "\n"))), nil
}

// SetChecked checks or unchecks a checkbox, radio button or switch with a
// trusted click, when it is not in that state already, and verifies the new
// state.
func (p *Page) SetChecked(ctx context.Context, ref Ref, checked bool) error {
	_, err := p.run(ctx, false, Action{Kind: KindAct, Op: "check", Ref: ref}, func(a *action) (string, error) { return a.setChecked(ref, checked) })
	return err
}

func (a *action) setChecked(ref Ref, checked bool) (string, error) {
	s, jsref, err := a.route(ref)
	if err != nil {
		return "", err
	}
	var st struct {
		Checked string `json:"checked"`
		Label   string `json:"label"`
		Radio   bool   `json:"radio"`
	}
	if err := a.call(s, "checkState", &st, jsref); err != nil {
		return "", elemErr(ref, err)
	}
	want := "false"
	if checked {
		want = "true"
	}
	state := map[bool]string{true: "checked", false: "unchecked"}[checked]
	if st.Checked == want {
		return refLabel(ref, st.Label) + " is already " + state, nil
	}
	if !checked && st.Radio {
		return "", &ElementError{Ref: ref, Code: "unsupported", Msg: "a radio button cannot be unchecked; check another option of its group"}
	}
	if _, err := a.click(ref, ClickOptions{}); err != nil {
		return "", err
	}
	if a.navigated() {
		return "clicked " + refLabel(ref, st.Label) + "; the page navigated", nil
	}
	if err := a.call(s, "checkState", &st, jsref); err != nil {
		return "", elemErr(ref, err)
	}
	if st.Checked != want {
		return "", &ElementError{Ref: ref, Code: "unsupported", Msg: "clicking " + st.Label + " did not make it " + state}
	}
	return refLabel(ref, st.Label) + " is now " + state, nil
}

// Drag drags the element from onto the element to with trusted mouse
// events, which also drive HTML5 drag and drop. Both must fit in the
// viewport together.
func (p *Page) Drag(ctx context.Context, from, to Ref) error {
	_, err := p.run(ctx, false, Action{Kind: KindAct, Op: "drag", Ref: from}, func(a *action) (string, error) { return a.drag(from, to) })
	return err
}

func (a *action) drag(from, to Ref) (string, error) {
	if _, err := a.point(from, pointOpts{Enabled: true}); err != nil {
		return "", err
	}
	pt, err := a.point(to, pointOpts{})
	if err != nil {
		return "", err
	}
	pf, err := a.point(from, pointOpts{Enabled: true, Scroll: new(false)})
	if err != nil {
		if errors.Is(err, ErrNotVisible) {
			return "", fmt.Errorf("%s and %s do not fit in the viewport together: %w", from, to, err)
		}
		return "", err
	}
	if err := a.pressLandsOn(from, pf); err != nil {
		return "", err
	}
	// The drop goes where the pointer is let go: a frame of another site
	// over the target would get what is dragged.
	if err := a.pressLandsOn(to, pt); err != nil {
		return "", err
	}
	if err := chromedp.Do(a.ctx, chromedp.DragAndDropXY(pf.X, pf.Y, pt.X, pt.Y)); err != nil {
		return "", err
	}
	a.settle()
	return "dragged " + refLabel(from, pf.Label) + " onto " + refLabel(to, pt.Label), nil
}
