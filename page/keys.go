package page

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// chord is one key press with modifiers held, such as Control+A.
type chord struct {
	mods []rune // modifier keys, in the order they go down
	mask int64
	key  rune
}

var modNames = map[string]struct {
	key rune
	bit kb.Modifier
}{
	"control": {[]rune(kb.Control)[0], kb.ModifierCtrl},
	"ctrl":    {[]rune(kb.Control)[0], kb.ModifierCtrl},
	"shift":   {[]rune(kb.Shift)[0], kb.ModifierShift},
	"alt":     {[]rune(kb.Alt)[0], kb.ModifierAlt},
	"option":  {[]rune(kb.Alt)[0], kb.ModifierAlt},
	"meta":    {[]rune(kb.Meta)[0], kb.ModifierMeta},
	"cmd":     {[]rune(kb.Meta)[0], kb.ModifierMeta},
	"command": {[]rune(kb.Meta)[0], kb.ModifierMeta},
}

var keyAliases = map[string]string{
	"esc": "escape", "return": "enter", "del": "delete", "space": " ", "spacebar": " ",
	"up": "arrowup", "down": "arrowdown", "left": "arrowleft", "right": "arrowright",
	"pgup": "pageup", "pgdn": "pagedown", "plus": "+",
}

var (
	namedOnce sync.Once
	namedKeys map[string]rune // lower-case KeyboardEvent.key -> rune of package kb
)

func named(name string) (rune, bool) {
	namedOnce.Do(func() {
		namedKeys = map[string]rune{}
		for r, k := range kb.Keys {
			if utf8.RuneCountInString(k.Key) > 1 {
				namedKeys[strings.ToLower(k.Key)] = r
			}
		}
	})
	r, ok := namedKeys[name]
	return r, ok
}

// parseKeys parses chords separated by spaces: "Control+A Backspace".
func parseKeys(s string) ([]chord, error) {
	var out []chord
	for _, f := range strings.Fields(s) {
		c, err := parseChord(f)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no keys given; pass a chord such as \"Enter\" or \"Control+A\"", ErrUnsupported)
	}
	return out, nil
}

func parseChord(s string) (chord, error) {
	var c chord
	parts := strings.Split(s, "+")
	if strings.HasSuffix(s, "++") || s == "+" {
		// "Control++" presses the plus key.
		parts = append(strings.Split(strings.TrimSuffix(s, "++"), "+"), "+")
		if s == "+" {
			parts = []string{"+"}
		}
	}
	shift := false
	for _, m := range parts[:len(parts)-1] {
		mod, ok := modNames[strings.ToLower(m)]
		if !ok {
			return c, fmt.Errorf("%w: unknown modifier %q in %q; use Control, Shift, Alt or Meta", ErrUnsupported, m, s)
		}
		c.mods = append(c.mods, mod.key)
		c.mask |= int64(mod.bit)
		shift = shift || mod.bit == kb.ModifierShift
	}
	name := parts[len(parts)-1]
	if utf8.RuneCountInString(name) == 1 {
		r, _ := utf8.DecodeRuneInString(name)
		if unicode.IsLetter(r) {
			// Control+A means the A key: lower case unless Shift is held,
			// as a keyboard sends it.
			if shift {
				r = unicode.ToUpper(r)
			} else {
				r = unicode.ToLower(r)
			}
		}
		c.key = r
		return c, nil
	}
	low := strings.ToLower(name)
	if a, ok := keyAliases[low]; ok {
		low = a
		if utf8.RuneCountInString(a) == 1 {
			c.key, _ = utf8.DecodeRuneInString(a)
			return c, nil
		}
	}
	r, ok := named(low)
	if !ok {
		return c, fmt.Errorf("%w: unknown key %q in %q; use a KeyboardEvent.key name such as Enter, Tab, Escape, ArrowDown, PageDown, F5, or one character", ErrUnsupported, name, s)
	}
	c.key = r
	return c, nil
}

// dispatch sends the chord: modifiers down, the key, modifiers up. check,
// when not nil, runs before each event but the first, and stops the chord
// when it fails (see sendKey).
func (c chord) dispatch(ctx context.Context, check func() error) error {
	var mask int64
	first := true
	send := func(r rune, typ input.DispatchKeyEventType, m int64) error {
		for _, ev := range kb.Encode(r) {
			if ev.Type != typ {
				continue
			}
			if !first && check != nil {
				if err := check(); err != nil {
					return err
				}
			}
			first = false
			ev.Modifiers = m
			if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, *ev); err != nil {
				return err
			}
		}
		return nil
	}
	for _, m := range c.mods {
		mask |= modBit(m)
		if err := send(m, kb.KeyDown, mask); err != nil {
			return err
		}
	}
	if check != nil && !first {
		if err := check(); err != nil {
			return err
		}
	}
	if err := sendKey(ctx, c.key, c.mask, check); err != nil {
		return err
	}
	for i := len(c.mods) - 1; i >= 0; i-- {
		mask &^= modBit(c.mods[i])
		if err := send(c.mods[i], kb.KeyUp, mask); err != nil {
			return err
		}
	}
	return nil
}

// sendKey sends the events of key r as chromedp.KeyEvent does (keyDown,
// char, keyUp), with the modifiers mods, and runs check, when not nil,
// between them: a page that moves the focus in its keydown handler gets
// the char of that very key in the frame it moved it to, an Enter's
// submit among them (red team, 2026-11-30). A key cut short that way
// gets no keyUp either, which would go there too.
func sendKey(ctx context.Context, r rune, mods int64, check func() error) error {
	for i, ev := range kb.Encode(r) {
		if i > 0 && check != nil {
			if err := check(); err != nil {
				return err
			}
		}
		ev.Modifiers |= mods
		if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, *ev); err != nil {
			return err
		}
	}
	return nil
}

func modBit(r rune) int64 {
	for _, m := range modNames {
		if m.key == r {
			return int64(m.bit)
		}
	}
	return 0
}

// modifierMask turns modifier names into the bit mask of input events.
func modifierMask(names []string) (int64, error) {
	var mask int64
	for _, n := range names {
		m, ok := modNames[strings.ToLower(n)]
		if !ok {
			return 0, fmt.Errorf("%w: unknown modifier %q; use Control, Shift, Alt or Meta", ErrUnsupported, n)
		}
		mask |= int64(m.bit)
	}
	return mask, nil
}
