package page

import (
	"errors"
	"fmt"
	"strings"

	"github.com/livetab/livetab/internal/inpage"
)

// Errors that actions return, wrapped with details. Test them with errors.Is.
var (
	// ErrStaleElement: the index is from an older snapshot, the page navigated
	// since the snapshot, or the element left the page. Take a new snapshot.
	ErrStaleElement = errors.New("stale element index")
	// ErrNoSnapshot: an index was used before any snapshot of this tab.
	ErrNoSnapshot = errors.New("no snapshot yet")
	// ErrNotFound: a CSS selector matched nothing, or an index was never
	// given out by the tab's last snapshot (or the searches since).
	ErrNotFound = errors.New("element not found")
	// ErrNotVisible: the element is hidden or cannot be scrolled into view.
	ErrNotVisible = errors.New("element not visible")
	// ErrCovered: another element lies on top of the element, so a click would
	// land on that one.
	ErrCovered = errors.New("element covered by another element")
	// ErrInputDiverted: the page changed as the input arrived (the element
	// left the pointer, or the keyboard focus moved away), so the click or
	// the rest of the keys were not sent. Take a new snapshot.
	ErrInputDiverted = errors.New("the page changed as the input arrived")
	// ErrDisabled: the element is disabled or read-only.
	ErrDisabled = errors.New("element disabled")
	// ErrUnsupported: the element cannot do what was asked (typing into a
	// button, selecting in a non-<select>, unchecking a radio button...).
	ErrUnsupported = errors.New("action not supported by this element")
	// ErrDialogOpen: a JavaScript dialog (alert, confirm, prompt,
	// beforeunload) is open and the dialog policy leaves it to the caller.
	// Close it with HandleDialog. A *DialogOpenError carries the dialog.
	ErrDialogOpen = errors.New("a JavaScript dialog is open")
	// ErrNavigated: the page navigated while the action ran, so the action
	// stopped; take a new snapshot.
	ErrNavigated = errors.New("page navigated during the action")
	// ErrTabClosed: the tab is gone.
	ErrTabClosed = errors.New("tab closed")
	// ErrTimeout: the action or the wait took longer than its timeout.
	ErrTimeout = errors.New("timed out")
	// ErrClosed: the Page was closed.
	ErrClosed = errors.New("page closed")
)

// ElementError is the error of an action on one element. It matches one of
// the sentinel errors above with errors.Is.
type ElementError struct {
	Ref  Ref    // the element, as the caller named it
	Code string // what went wrong: stale, detached, notfound, hidden, covered, ...
	Msg  string // what the page side saw
}

func (e *ElementError) sentinel() error {
	switch e.Code {
	case "stale", "detached":
		return ErrStaleElement
	case "nosnapshot":
		return ErrNoSnapshot
	case "notfound", "unknown":
		return ErrNotFound
	case "hidden", "offscreen":
		return ErrNotVisible
	case "covered":
		return ErrCovered
	case "disabled", "readonly":
		return ErrDisabled
	case "moved", "focus":
		return ErrInputDiverted
	default:
		return ErrUnsupported
	}
}

// Is reports whether target is the sentinel error of e's code.
func (e *ElementError) Is(target error) bool { return target == e.sentinel() }

func (e *ElementError) Error() string {
	var hint string
	switch e.Code {
	case "stale", "detached", "nosnapshot":
		hint = "take a new snapshot and use its indexes"
	case "notfound":
		hint = "check the selector, or take a snapshot and use an element index"
	case "unknown":
		hint = "use an index the snapshot listed, or find the element with browser_find"
	case "badselector":
		hint = "fix the CSS selector"
	case "hidden", "offscreen":
		hint = "it may appear after scrolling, opening a menu or waiting; take a new snapshot"
	case "disabled", "readonly":
		hint = "wait until it is enabled, or complete what it depends on first"
	}
	msg := fmt.Sprintf("%s: %s", e.Ref, e.sentinel())
	if e.Msg != "" {
		msg += ": " + e.Msg
	}
	if hint != "" {
		msg += " (" + hint + ")"
	}
	return msg
}

// DialogOpenError is the error of an action that met an open JavaScript
// dialog. It matches ErrDialogOpen.
type DialogOpenError struct {
	Dialog Dialog
}

func (e *DialogOpenError) Error() string {
	return fmt.Sprintf("%v: %s; accept or dismiss it with HandleDialog (the browser_dialog tool), then retry; the page's message:\n%s",
		ErrDialogOpen, e.Dialog.Type, wrapUntrusted(e.Dialog.Message))
}

// Is reports whether target is ErrDialogOpen.
func (e *DialogOpenError) Is(target error) bool { return target == ErrDialogOpen }

// contextGone reports whether a CDP error says that the JavaScript context or
// object the call used is gone, which happens when the document was
// replaced; page also reloads its library after a value too deep to return.
//
// A script's exception is not: its words are the page's, which can say
// "Execution context was destroyed" as well as Chrome.
func contextGone(err error) bool {
	if inpage.WordsOf(err) != "" {
		return false
	}
	return inpage.Navigated(err) || err != nil && strings.Contains(err.Error(), "Object reference chain is too long")
}
