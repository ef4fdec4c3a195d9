package wire

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
)

// FuzzDecode feeds Decode whatever the extension (or something squatting
// its socket after pairing) could send. Decode must not panic, and a frame
// it accepts must survive the trip back: the bridge re-encodes frames it
// forwards, so an accepted frame that cannot be encoded, or that changes on
// every trip, would be lost or corrupted on the way to a client.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"frames.json"} {
		var vectors []struct {
			Text string `json:"text"`
		}
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		if err := jsonv2.Unmarshal(b, &vectors); err != nil {
			f.Fatal(err)
		}
		for _, v := range vectors {
			f.Add([]byte(v.Text))
		}
	}
	for _, s := range []string{
		``, `{}`, `null`, `[]`, `"x"`, `{"id":0}`, `{"id":-1}`, `{"id":9223372036854775807}`,
		`{"id":9223372036854775808}`, `{"id":1e3}`, `{"id":1.5}`, `{"id":"7"}`,
		`{"method":"ext.ping"}`, `{"method":"ext."}`, `{"id":1,"error":null}`,
		`{"id":1,"error":{"code":"x"}}`, `{"id":1,"result":{"a":"\ud800"}}`,
		"{\"method\":\"A\xff\",\"params\":{\"s\":\"\xfe\"}}", `{"id":1,"id":2}`,
		`{"tabId":1,"sessionId":"","params":[1,2,3]}`, `{"params":}`, `{"result":1e400}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fr Frame
		if err := Decode(data, &fr); err != nil {
			return
		}
		enc1, err := Encode(&fr)
		if err != nil {
			t.Fatalf("Decode accepted %q but Encode refuses it: %v", data, err)
		}
		var again Frame
		if err := Decode(enc1, &again); err != nil {
			t.Fatalf("Decode refuses its own encoding %q (of %q): %v", enc1, data, err)
		}
		enc2, err := Encode(&again)
		if err != nil {
			t.Fatalf("second Encode of %q: %v", enc1, err)
		}
		if !bytes.Equal(enc1, enc2) {
			t.Fatalf("encoding is not stable:\n in   %q\n enc1 %q\n enc2 %q", data, enc1, enc2)
		}
		if again.ID != fr.ID || again.Method != fr.Method || again.TabID != fr.TabID ||
			again.SessionID != fr.SessionID || again.IsExt() != fr.IsExt() ||
			(again.Error == nil) != (fr.Error == nil) {
			t.Fatalf("a round trip changed the frame %q: %+v, then %+v", data, fr, again)
		}
	})
}
