package extcdp

import (
	"testing"

	"github.com/chromedp/cdproto"
)

// What recording a command for the popup costs on each command's way,
// next to a round trip through the extension (hundreds of µs).
func BenchmarkNoteCommand(b *testing.B) {
	r := &Relay{closed: true} // its reports go nowhere
	c := &Client{r: r, id: "1", name: "bench"}
	m := &cdproto.Message{Method: cdproto.CommandRuntimeEvaluate}
	for b.Loop() {
		c.noteCommand(m, 7)
	}
}
