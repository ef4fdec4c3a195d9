package page

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// FormField is one field of FillForm: the element, by index or selector,
// and exactly one of what it should hold.
type FormField struct {
	RefArgs
	Text    *string  `json:"text,omitempty" jsonschema:"For a text field or text area: the text it should hold (replaces its content; put in at once as a paste does: input events, no key events; browser_type types key by key)."`
	Values  []string `json:"values,omitempty" jsonschema:"For a <select>: the options to choose, by value or visible label."`
	Checked *bool    `json:"checked,omitempty" jsonschema:"For a checkbox, radio button or switch: whether it should be checked."`
	Files   []string `json:"files,omitempty" jsonschema:"For a file input: paths of files in the person's upload directory."`
}

// FieldResult is what FillForm did with one field.
type FieldResult struct {
	Ref     Ref
	Label   string // role and name, as the page labels the element
	Value   string // what the field holds afterwards (a password as dots, a file input its file names)
	Checked string // "true", "false" or "mixed" for a checkable field
	Err     error  // why the field was not set; nil when it was
}

// FormResult is what FillForm did.
type FormResult struct {
	Fields    []FieldResult
	Failed    int    // fields not set
	Submit    string // what the submit click did; empty when none was asked or it was skipped
	SubmitErr error  // why the submit click failed, or was skipped
	Text      string // the report for a model
}

// WithFileSetter sets how FillForm puts files into a file input: f gets
// the action's context (bound to the tab), the input as a Runtime object
// of the tab's main target, and the paths. The default is
// DOM.setFileInputFiles, which needs a browser that may read the files
// (a livetab extension with file access, or a local Chrome); package
// agent gives the upload package's, which streams the bytes when it may
// not.
func WithFileSetter(f func(ctx context.Context, el runtime.RemoteObjectID, paths []string) error) Option {
	return func(c *config) { c.setFiles = f }
}

// FillForm fills many fields in one go, each as its own action under the
// Page's guard (typing, selecting, checking, uploading), in order. Text
// goes in as Playwright's fill puts it, at once with input events and no
// key events (TypeOptions.Insert); use Type for a field that listens to
// keys. The
// guard sees every field's action, and the submit click, before any runs,
// so that one confirmation can cover the whole form. A field that fails,
// or that the guard refuses, does not stop the others; the result lists
// what each field holds afterwards, or why it was not set. When every field
// was set and submit names an element, FillForm clicks it. The error is
// non-nil only when ctx ended or the Page is closed.
func (p *Page) FillForm(ctx context.Context, fields []FormField, submit Ref) (*FormResult, error) {
	if len(fields) == 0 {
		return nil, fmt.Errorf("%w: no fields to fill", ErrUnsupported)
	}
	t, err := p.current()
	if err != nil {
		return nil, err
	}
	res := &FormResult{Fields: make([]FieldResult, len(fields))}
	plans := make([]fieldPlan, len(fields))
	fatal := func(err error) bool { return ctx.Err() != nil || errors.Is(err, ErrClosed) }
	for i, f := range fields {
		plans[i], res.Fields[i].Err = planField(f)
		res.Fields[i].Ref = f.Ref()
		if res.Fields[i].Err == nil {
			res.Fields[i].Err = p.check(ctx, t, plans[i].act)
		}
	}
	var submitAct Action
	if !submit.IsZero() {
		submitAct = Action{Kind: KindAct, Op: "click", Ref: submit}
		res.SubmitErr = p.check(ctx, t, submitAct)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	for i := range fields {
		fr := &res.Fields[i]
		if fr.Err == nil {
			p.fillField(ctx, plans[i], fr)
		}
		if fr.Err != nil {
			if fatal(fr.Err) {
				return nil, fr.Err
			}
			res.Failed++
		}
	}
	switch {
	case submit.IsZero():
	case res.Failed > 0:
		res.SubmitErr = fmt.Errorf("not clicked, since %d field(s) failed", res.Failed)
	case res.SubmitErr != nil:
	default:
		res.Submit, res.SubmitErr = p.run(ctx, false, submitAct, func(x *action) (string, error) {
			return x.click(submit, ClickOptions{})
		})
		if res.SubmitErr != nil && fatal(res.SubmitErr) {
			return nil, res.SubmitErr
		}
	}
	res.Text = res.render(fields, submit)
	return res, nil
}

// fieldPlan is what FillForm does with one field: the action the guard
// sees, and the work.
type fieldPlan struct {
	act Action
	do  func(x *action) error
}

func planField(f FormField) (fieldPlan, error) {
	ref := f.Ref()
	if ref.IsZero() {
		return fieldPlan{}, errNoRef
	}
	n := 0
	for _, set := range []bool{f.Text != nil, f.Values != nil, f.Checked != nil, f.Files != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fieldPlan{}, fmt.Errorf("%w: give exactly one of text, values, checked or files for each field", ErrUnsupported)
	}
	switch {
	case f.Text != nil:
		return fieldPlan{Action{Kind: KindAct, Op: "type", Ref: ref, Text: *f.Text}, func(x *action) error {
			_, err := x.typeText(ref, *f.Text, TypeOptions{Clear: true, Insert: true})
			return err
		}}, nil
	case f.Values != nil:
		return fieldPlan{Action{Kind: KindAct, Op: "select", Ref: ref, Text: strings.Join(f.Values, "\n")}, func(x *action) error {
			_, _, err := x.selectOption(ref, f.Values)
			return err
		}}, nil
	case f.Checked != nil:
		return fieldPlan{Action{Kind: KindAct, Op: "check", Ref: ref}, func(x *action) error {
			_, err := x.setChecked(ref, *f.Checked)
			return err
		}}, nil
	}
	if len(f.Files) == 0 {
		return fieldPlan{}, fmt.Errorf("%w: no files to put into %s", ErrUnsupported, ref)
	}
	return fieldPlan{Action{Kind: KindUpload, Op: "upload", Ref: ref, Files: f.Files}, func(x *action) error {
		return x.setFiles(ref, f.Files)
	}}, nil
}

// fillField runs one field's action (the guard looks again) and reads
// what the field holds afterwards.
func (p *Page) fillField(ctx context.Context, pl fieldPlan, fr *FieldResult) {
	ref := pl.act.Ref
	_, fr.Err = p.runWith(ctx, false, pl.act, false, func(x *action) (string, error) {
		if err := pl.do(x); err != nil {
			return "", err
		}
		if x.navigated() {
			fr.Value = "(the page navigated)"
			return "", nil
		}
		s, jsref, err := x.route(ref)
		if err != nil {
			return "", nil
		}
		var st struct {
			Label   string `json:"label"`
			Value   string `json:"value"`
			Checked string `json:"checked"`
		}
		if x.call(s, "fieldState", &st, jsref) == nil {
			fr.Label, fr.Value, fr.Checked = st.Label, st.Value, st.Checked
		}
		return "", nil
	})
}

// setFiles puts files into the file input ref names.
func (a *action) setFiles(ref Ref, paths []string) error {
	el, err := a.elementObject(ref)
	if err != nil {
		return err
	}
	defer chromedp.Call(a.ctx, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: el}) //nolint:errcheck // best effort
	if f := a.t.p.cfg.setFiles; f != nil {
		return f(a.ctx, el, paths)
	}
	abs := make([]string, len(paths))
	for i, p := range paths {
		var err error
		if abs[i], err = filepath.Abs(p); err != nil {
			return err
		}
	}
	if _, err := chromedp.Call(a.ctx, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: abs, ObjectID: el}); err != nil {
		return fmt.Errorf("%s: putting files in: %w", ref, err)
	}
	return nil
}

// shown is what a field holds, for the report.
func (f FieldResult) shown() string {
	switch f.Checked {
	case "true":
		return "checked"
	case "false":
		return "unchecked"
	case "":
		return strconv.Quote(f.Value)
	}
	return f.Checked
}

// holdsAsked says whether a field that was set holds what was asked: the
// text (a password as as many dots, up to 12), the options by label, the check, the
// files by name.
func holdsAsked(a FormField, f FieldResult) bool {
	switch {
	case a.Text != nil:
		masked := f.Value != "" && strings.Trim(f.Value, "•") == ""
		// The page library shows a password as up to 12 dots.
		return f.Value == *a.Text || masked && utf8.RuneCountInString(f.Value) == min(utf8.RuneCountInString(*a.Text), 12)
	case a.Values != nil:
		return f.Value == strings.Join(a.Values, ", ")
	case a.Checked != nil:
		return f.Checked == strconv.FormatBool(*a.Checked)
	case a.Files != nil:
		names := make([]string, len(a.Files))
		for i, p := range a.Files {
			names[i] = filepath.Base(p)
		}
		return f.Value == strings.Join(names, ", ")
	}
	return false
}

// render is the report for a model: the counts outside, what the page
// shows inside a page block: each field's label, so that a wrong
// index shows, and its value where it is not what was asked.
func (r *FormResult) render(asked []FormField, submit Ref) string {
	var b strings.Builder
	var body strings.Builder
	differ := 0
	for i, f := range r.Fields {
		name := f.Ref.String()
		if f.Ref.Index > 0 {
			name = "[" + strconv.Itoa(f.Ref.Index) + "]"
		}
		as := f.Err == nil && i < len(asked) && holdsAsked(asked[i], f)
		if l := f.Label; l != "" {
			if _, quoted, ok := strings.Cut(l, " \""); ok && as {
				// Its name is enough to show which field the index hit.
				l = "\"" + quoted
			}
			name += " " + l
		}
		switch {
		case f.Err != nil:
			fmt.Fprintf(&body, "%s: FAILED: %v\n", name, f.Err)
		case as:
			body.WriteString(name + "\n")
		default:
			differ++
			body.WriteString(name + ": " + f.shown() + "\n")
		}
	}
	fmt.Fprintf(&b, "Set %d of %d fields", len(r.Fields)-r.Failed, len(r.Fields))
	if differ == 0 && r.Failed == 0 {
		b.WriteString(", each to what was asked")
	} else if differ > 0 {
		b.WriteString("; a value is shown where it is not what was asked")
	}
	if r.Failed > 0 {
		fmt.Fprintf(&b, "; %d failed (marked FAILED), the others were set", r.Failed)
	}
	switch {
	case submit.IsZero():
	case r.SubmitErr != nil:
		fmt.Fprintf(&b, ". Submit %s: %v", submit, r.SubmitErr)
	default:
		b.WriteString(". Then " + r.Submit)
	}
	b.WriteString(".\n")
	b.WriteString(wrapUntrusted(body.String()))
	return b.String()
}
