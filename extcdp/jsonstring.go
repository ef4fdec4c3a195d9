package extcdp

import (
	"strconv"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
)

// appendJSONString appends s as a JSON string. strconv.Quote is not JSON
// for control characters, invalid UTF-8 and some non-ASCII runes (\x00,
// \xff, \U0001f600), and session ids and methods come from clients and
// the extension: found by FuzzClientHandle.
func appendJSONString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			b, err := jsonv2.Marshal(s, wire.Options)
			if err != nil { // not with AllowInvalidUTF8; keep the output JSON anyway
				return append(buf, `""`...)
			}
			return append(buf, b...)
		}
	}
	return strconv.AppendQuote(buf, s) // printable ASCII: the same as JSON
}
