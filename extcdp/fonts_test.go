package extcdp_test

import (
	"strings"
	"testing"
)

// textWidth is the width of a text whose letters are as wide as each
// other in a monospace font only.
const textWidth = `(() => { const s = document.createElement("span"); s.textContent = "iiiiiiiiiiWWWWWWWWWW"; document.body.append(s); const w = s.getBoundingClientRect().width; s.remove(); return String(w) })()`

var monospace = map[string]any{"fontFamilies": map[string]any{"standard": "monospace", "serif": "monospace", "sansSerif": "monospace"}}

// TestPersonsFontsAreKept: Page.setFontFamilies on a tab the person opened
// is answered and not applied (Chrome gives the fonts back only when the
// debugger leaves, which another client may hold off). A refusal failed
// Playwright's setup of the page, which then never answered a binding call
// (page.exposeFunction; TestClientsCompat). On a client's own tab the fonts
// are set.
func TestPersonsFontsAreKept(t *testing.T) {
	a, b, sa, sb := sharedTab(t, "/form?persons-fonts")
	before := b.eval(sb, textWidth)
	if _, err := a.call(sa, "Page.setFontFamilies", monospace); err != nil {
		t.Fatalf("Page.setFontFamilies on the person's tab: %v, want an answer (Playwright fails the page's setup on an error)", err)
	}
	if now := b.eval(sb, textWidth); now != before {
		t.Errorf("the person's page measures its text %s wide, %s before: the person's fonts changed", now, before)
	}
	if _, err := a.call(sa, "Page.setFontFamilies", map[string]any{"fontFamilies": "monospace"}); err == nil || !strings.Contains(err.Error(), "fontFamilies") {
		t.Errorf("Page.setFontFamilies with a string: %v, want Chrome's invalid parameters", err)
	}

	c := dialRaw(t)
	_, sid := c.open(site.URL + "/form?own-fonts")
	mine := c.eval(sid, textWidth)
	c.must(sid, "Page.setFontFamilies", monospace)
	if now := c.eval(sid, textWidth); now == mine {
		t.Errorf("the client's own tab measures its text %s wide before and after monospace fonts", now)
	}
}
