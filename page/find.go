package page

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DefaultMaxFound is how many matches Find lists by default.
const DefaultMaxFound = 20

// FindOptions says what Find looks for. An element matches when it fits
// every criterion given; case does not matter.
type FindOptions struct {
	// Text: every word of it appears in the element's accessible name,
	// value, placeholder, title, link target or text.
	Text string `json:"text,omitempty"`
	// Role: the element's role (button, link, textbox, checkbox, combobox…)
	// or tag (a, input, select…).
	Role string `json:"role,omitempty"`
	// Name: the element's whole accessible name.
	Name string `json:"name,omitempty"`
	// Max caps the listed matches (in document order); 0 means
	// DefaultMaxFound.
	Max int `json:"max,omitempty"`
}

func (o FindOptions) String() string {
	var parts []string
	if o.Text != "" {
		parts = append(parts, "text "+strconv.Quote(o.Text))
	}
	if o.Role != "" {
		parts = append(parts, "role "+strconv.Quote(o.Role))
	}
	if o.Name != "" {
		parts = append(parts, "name "+strconv.Quote(o.Name))
	}
	return strings.Join(parts, ", ")
}

// Found is what Find found.
type Found struct {
	ID        string        `json:"id"` // the snapshot generation the indexes belong to
	Tab       string        `json:"tab"`
	URL       string        `json:"url"`
	Title     string        `json:"title"`
	Elements  []Element     `json:"elements"`  // the listed matches
	Matched   int           `json:"matched"`   // elements that match, listed or not
	Searched  int           `json:"searched"`  // interactive elements looked at
	Unreached int           `json:"unreached"` // cross-origin frames not searched
	Took      time.Duration `json:"took,format:units"`
	Text      string        `json:"-"` // the text form for a model
}

// Find searches every element a snapshot would list — in the whole page,
// its open shadow roots and its same- and cross-origin frames, not only
// those nearest the viewport — for the ones that fit opts, and returns
// them with indexes the actions take at once.
//
// Find adds to the last snapshot instead of replacing it: its indexes stay
// valid, an element it already listed keeps its index, and the others get
// indexes after the last one given out. After a navigation, or before any
// snapshot, Find starts a new generation of indexes as a snapshot would.
func (p *Page) Find(ctx context.Context, opts FindOptions) (*Found, error) {
	if opts.Text == "" && opts.Role == "" && opts.Name == "" {
		return nil, fmt.Errorf("%w: give text, role or name to find", ErrUnsupported)
	}
	var f *Found
	_, err := p.run(ctx, false, Action{Kind: KindRead, Op: "find"}, func(a *action) (string, error) {
		var err error
		f, err = a.find(opts)
		return "", err
	})
	return f, err
}

func (a *action) find(opts FindOptions) (*Found, error) {
	t := a.t
	start := time.Now()
	max := opts.Max
	if max <= 0 {
		max = DefaultMaxFound
	}
	a.dropStaleFrames()
	t.mu.Lock()
	prev := t.snap
	if prev != nil && prev.navSeq != t.navSeq {
		prev = nil
	}
	t.mu.Unlock()
	gen, base := newGen(), 0
	if prev != nil {
		gen, base = prev.gen, len(prev.elements)
	}
	q := opts
	q.Max = 0
	var r jsSnap
	var seq uint64
	var ready notReady
	for {
		t.mu.Lock()
		seq = t.navSeq
		t.mu.Unlock()
		if prev != nil && seq != prev.navSeq {
			return nil, fmt.Errorf("%w: the page navigated; search again", ErrNavigated)
		}
		r = jsSnap{}
		err := a.call(t.libs.main, "find", &r, jsSnapOpts{Gen: gen, Base: base, Max: max, NameLen: 80, Query: &q, Force: ready.force})
		if err != nil && !contextGone(err) {
			return nil, err
		}
		t.mu.Lock()
		same := seq == t.navSeq
		t.mu.Unlock()
		if err == nil && !r.NotReady && same {
			break
		}
		if err == nil && same && ready.giveUp(a) {
			continue
		}
		select {
		case <-time.After(pollInterval):
		case <-a.ctx.Done():
			return nil, fmt.Errorf("waiting for the page to be ready for a search: %w", context.Cause(a.ctx))
		}
	}
	state := &snapState{gen: gen, navSeq: seq, sessions: map[int]*session{}}
	if prev != nil {
		state.elements = append(state.elements, prev.elements...)
		for k, v := range prev.sessions {
			state.sessions[k] = v
		}
	}
	f := &Found{ID: gen, Tab: t.id, URL: r.URL, Title: r.Title, Matched: r.Matched, Searched: r.Total}
	add := func(els []jsElement, next int) {
		if next > len(state.elements) {
			state.elements = append(state.elements, make([]Element, next-len(state.elements))...)
		}
		for _, je := range els {
			e := je.element()
			if e.Index > base {
				state.elements[e.Index-1] = e
			}
			f.Elements = append(f.Elements, e)
		}
	}
	add(r.Elements, r.Next)
	for _, fr := range r.Frames {
		if !fr.Cross {
			continue
		}
		s, err := a.frameSession(fr.Index)
		var fres jsSnap
		if err == nil {
			clip := fr.Clip
			room := max - len(f.Elements)
			if room <= 0 {
				room = -1 // count only
			}
			err = a.call(s, "find", &fres, jsSnapOpts{
				Gen: gen, Base: len(state.elements), Max: room, NameLen: 80, Query: &q,
				FrameIndex: fr.Index, FrameBase: fr.Index * 100, OX: fr.X, OY: fr.Y, Clip: &clip, VW: r.VW, VH: r.VH,
			})
		}
		if err != nil || fres.NotReady {
			f.Unreached++
			continue
		}
		add(fres.Elements, fres.Next)
		f.Matched += fres.Matched
		f.Searched += fres.Total
		state.sessions[fr.Index] = s
		for _, nf := range fres.Frames {
			state.sessions[nf.Index] = s
			if nf.Cross {
				f.Unreached++
			}
		}
	}
	t.mu.Lock()
	if t.navSeq != seq {
		t.mu.Unlock()
		return nil, fmt.Errorf("%w: the page navigated during the search; search again", ErrNavigated)
	}
	state.issued = len(state.elements)
	if prev != nil {
		if prev.issued > state.issued {
			state.issued = prev.issued
		}
	}
	t.snap = state
	t.mu.Unlock()
	f.Took = time.Since(start)
	f.Text = f.render(opts)
	return f, nil
}

// render is the text form of a search for a model.
func (f *Found) render(opts FindOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Tab %s: %d of %d interactive elements match %s", f.Tab, f.Matched, f.Searched, opts)
	if len(f.Elements) < f.Matched {
		fmt.Fprintf(&b, "; the first %d are listed (narrow the search, or raise max)", len(f.Elements))
	}
	b.WriteString(".\n")
	if f.Unreached > 0 {
		fmt.Fprintf(&b, "%d cross-origin frame(s) could not be searched.\n", f.Unreached)
	}
	if len(f.Elements) == 0 {
		b.WriteString("Nothing matches: try fewer words, another role, or take a snapshot.\n")
	}
	id := newGen()
	fmt.Fprintf(&b, openTag+"\n", id)
	fmt.Fprintf(&b, "url: %s\ntitle: %s\n", safe(f.URL, id), quote(f.Title, id))
	for _, e := range f.Elements {
		line := e.line(f.URL, id)
		if b.Len()+len(line) > textBudget-256 {
			b.WriteString("(more matches left out of this text to keep it short; narrow the search)\n")
			break
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, closeTag, id)
	return b.String()
}
