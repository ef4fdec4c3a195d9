package page

import (
	"context"
	"fmt"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// DialogPolicy says what happens when a page opens a JavaScript dialog
// (alert, confirm, prompt, beforeunload). Under every policy a dialog never
// wedges the tab: a dialog blocks the page's JavaScript, so an action that
// waits on the page would otherwise wait for ever.
type DialogPolicy int

const (
	// DialogAsk leaves the dialog open for the caller: the action that met
	// it stops with a *DialogOpenError, and so does every later action until
	// HandleDialog closes it. This is the default: an agent sees "Delete
	// everything?" before anything answers it.
	DialogAsk DialogPolicy = iota
	// DialogAccept accepts every dialog at once (OK; the prompt text of
	// WithDialogPolicy for a prompt) and reports it in the next result.
	DialogAccept
	// DialogDismiss dismisses every dialog at once (Cancel) and reports it in
	// the next result.
	DialogDismiss
)

// Dialog is a JavaScript dialog a page opened.
type Dialog struct {
	Type          string `json:"type"` // alert, confirm, prompt or beforeunload
	Message       string `json:"message"`
	DefaultPrompt string `json:"defaultPrompt,omitempty"`
	URL           string `json:"url"`
}

func (p *Page) policy() DialogPolicy {
	p.cfgMu.Lock()
	defer p.cfgMu.Unlock()
	return p.cfg.dialogPolicy
}

// SetDialogPolicy changes the dialog policy of all tabs. promptText answers
// prompt() under DialogAccept.
func (p *Page) SetDialogPolicy(policy DialogPolicy, promptText string) {
	p.cfgMu.Lock()
	defer p.cfgMu.Unlock()
	p.cfg.dialogPolicy, p.cfg.promptText = policy, promptText
}

// PendingDialog returns the dialog that waits for HandleDialog in the current
// tab, or nil.
func (p *Page) PendingDialog() *Dialog {
	t, err := p.current()
	if err != nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dialog == nil {
		return nil
	}
	d := *t.dialog
	return &d
}

// HandleDialog accepts or dismisses the open dialog of the current tab;
// promptText answers a prompt().
func (p *Page) HandleDialog(ctx context.Context, accept bool, promptText string) error {
	_, err := p.run(ctx, true, dialogAction(accept), func(a *action) (string, error) { return a.handleDialog(accept, promptText) })
	return err
}

// dialogAction is the guard's view of answering a dialog.
func dialogAction(accept bool) Action {
	answer := "dismiss"
	if accept {
		answer = "accept"
	}
	return Action{Kind: KindAct, Op: "dialog", Text: answer}
}

func (a *action) handleDialog(accept bool, promptText string) (string, error) {
	t := a.t
	t.mu.Lock()
	d := t.dialog
	t.mu.Unlock()
	if d == nil {
		return "", fmt.Errorf("%w: no JavaScript dialog is open in this tab", ErrUnsupported)
	}
	if _, err := chromedp.Call(a.ctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{
		Accept: accept, PromptText: promptText,
	}); err != nil {
		return "", fmt.Errorf("closing the %s dialog: %w", d.Type, err)
	}
	t.mu.Lock()
	if t.dialog == d {
		t.dialog = nil
	}
	t.mu.Unlock()
	verb := "dismissed"
	if accept {
		verb = "accepted"
	}
	return fmt.Sprintf("%s the %s dialog", verb, d.Type), nil
}

// dialogJob is a dialog to answer, and the answer the policy gave when it
// opened.
type dialogJob struct {
	dialog Dialog
	accept bool
}

// dialogLoop answers dialogs under DialogAccept and DialogDismiss. It runs
// apart from the event loop, which must not send commands.
func (t *tab) dialogLoop() {
	for {
		select {
		case <-t.life.Done():
			return
		case job := <-t.dialogs:
			d := job.dialog
			t.p.cfgMu.Lock()
			text := t.p.cfg.promptText
			t.p.cfgMu.Unlock()
			ctx, cancel := context.WithTimeout(t.ctx, 10*time.Second)
			_, err := chromedp.Call(ctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{
				Accept: job.accept, PromptText: text,
			})
			cancel()
			if err != nil {
				t.mu.Lock()
				t.handled = append(t.handled, fmt.Sprintf("%s %q could not be closed: %v", d.Type, Defuse(d.Message), err))
				t.mu.Unlock()
			}
		}
	}
}
