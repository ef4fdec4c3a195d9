package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
)

// The vectors in testdata are shared with the extension's node tests
// (extension/test), so both sides agree on the bytes of every frame.

func readVectors(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := jsonv2.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func TestFrameVectorsRoundTrip(t *testing.T) {
	var vectors []struct {
		Name string `json:"name"`
		Text string `json:"text"`
		Type string `json:"type"`
	}
	readVectors(t, "frames.json", &vectors)
	if len(vectors) == 0 {
		t.Fatal("no frame vectors")
	}
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			var f Frame
			if err := Decode([]byte(v.Text), &f); err != nil {
				t.Fatal(err)
			}
			got, err := Encode(&f)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != v.Text {
				t.Errorf("Encode(Decode(x)) = %s\nwant %s", got, v.Text)
			}
			if v.Type == "" {
				return
			}
			raw := f.Params
			if f.ID != 0 {
				raw = f.Result
			}
			typed := map[string]any{
				"HelloParams":      new(HelloParams),
				"TabInfo":          new(TabInfo),
				"TabParams":        new(TabParams),
				"DetachedParams":   new(DetachedParams),
				"CreateTabParams":  new(CreateTabParams),
				"TargetsResult":    new(TargetsResult),
				"AttachResult":     new(AttachResult),
				"FileAccessResult": new(FileAccessResult),
				"ChallengeParams":  new(ChallengeParams),
				"ProofParams":      new(ProofParams),
			}[v.Type]
			if typed == nil {
				t.Fatalf("unknown type %q", v.Type)
			}
			if err := jsonv2.Unmarshal(raw, typed, Options); err != nil {
				t.Fatal(err)
			}
			again, err := jsonv2.Marshal(typed, Options)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, raw) {
				t.Errorf("%s round trip = %s\nwant %s", v.Type, again, raw)
			}
		})
	}
}

func TestFrameIsExt(t *testing.T) {
	for method, want := range map[string]bool{
		"ext.attach": true, "ext.": false, "Runtime.evaluate": false, "": false, "extension.x": false,
	} {
		f := Frame{Method: method}
		if got := f.IsExt(); got != want {
			t.Errorf("IsExt(%q) = %v, want %v", method, got, want)
		}
	}
}

func TestErrorVectorsDecode(t *testing.T) {
	var vectors []struct {
		Name    string       `json:"name"`
		Code    int64        `json:"code"`
		Message string       `json:"message"`
		Data    jsonv2.Value `json:"data"`
	}
	readVectors(t, "errors.json", &vectors)
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			// The reply the extension sends for this error; Frame drops data.
			e := map[string]any{"code": v.Code, "message": v.Message}
			if len(v.Data) > 0 {
				e["data"] = v.Data
			}
			b, err := jsonv2.Marshal(map[string]any{"id": 3, "error": e})
			if err != nil {
				t.Fatal(err)
			}
			var f Frame
			if err := Decode(b, &f); err != nil {
				t.Fatal(err)
			}
			if f.Error == nil || f.Error.Code != v.Code || f.Error.Message != v.Message {
				t.Errorf("Decode(%s).Error = %+v", b, f.Error)
			}
		})
	}
}

type chunkVectors struct {
	ChunkSize   int `json:"chunkSize"`
	ChunkHeader int `json:"chunkHeader"`
	ChunkLast   int `json:"chunkLast"`
	Send        []struct {
		Name      string `json:"name"`
		Repeat    string `json:"repeat"`
		Count     int    `json:"count"`
		Stream    uint32 `json:"stream"`
		UTF8Bytes int    `json:"utf8Bytes"`
		Text      bool   `json:"text"`
		Chunks    []struct {
			Header string `json:"header"`
			Length int    `json:"length"`
		} `json:"chunks"`
	} `json:"send"`
	Receive []struct {
		Name      string   `json:"name"`
		ChunksHex []string `json:"chunksHex"`
		Texts     []string `json:"texts"`
	} `json:"receive"`
}

// split is the reference chunker of the package comment.
func split(text []byte, stream uint32) [][]byte {
	var out [][]byte
	for off := 0; ; {
		n := min(ChunkSize, len(text)-off)
		msg := make([]byte, ChunkHeader, ChunkHeader+n)
		if off+n >= len(text) {
			msg[0] = ChunkLast
		}
		binary.BigEndian.PutUint32(msg[1:], stream)
		out = append(out, append(msg, text[off:off+n]...))
		if off += n; off >= len(text) {
			return out
		}
	}
}

func TestChunkVectors(t *testing.T) {
	var cv chunkVectors
	readVectors(t, "chunks.json", &cv)
	if cv.ChunkSize != ChunkSize || cv.ChunkHeader != ChunkHeader || cv.ChunkLast != ChunkLast {
		t.Fatalf("vector constants %d/%d/%d differ from the package's", cv.ChunkSize, cv.ChunkHeader, cv.ChunkLast)
	}
	for _, v := range cv.Send {
		t.Run("send/"+v.Name, func(t *testing.T) {
			text := []byte(strings.Repeat(v.Repeat, v.Count))
			if len(text) != v.UTF8Bytes {
				t.Fatalf("%d bytes, vector says %d", len(text), v.UTF8Bytes)
			}
			if v.Text != (len(text) <= ChunkSize) {
				t.Fatalf("text=%v for %d bytes", v.Text, len(text))
			}
			if v.Text {
				return
			}
			chunks := split(text, v.Stream)
			if len(chunks) != len(v.Chunks) {
				t.Fatalf("%d chunks, want %d", len(chunks), len(v.Chunks))
			}
			for i, c := range chunks {
				if h := hex.EncodeToString(c[:ChunkHeader]); h != v.Chunks[i].Header || len(c)-ChunkHeader != v.Chunks[i].Length {
					t.Errorf("chunk %d: header %s, %d bytes; want %s, %d", i, h, len(c)-ChunkHeader, v.Chunks[i].Header, v.Chunks[i].Length)
				}
			}
		})
	}
	for _, v := range cv.Receive {
		t.Run("receive/"+v.Name, func(t *testing.T) {
			pending := map[uint32][]byte{}
			var texts []string
			for _, h := range v.ChunksHex {
				msg, err := hex.DecodeString(h)
				if err != nil || len(msg) < ChunkHeader {
					t.Fatalf("bad chunk %q: %v", h, err)
				}
				stream := binary.BigEndian.Uint32(msg[1:ChunkHeader])
				pending[stream] = append(pending[stream], msg[ChunkHeader:]...)
				if msg[0]&ChunkLast != 0 {
					texts = append(texts, string(pending[stream]))
					delete(pending, stream)
				}
			}
			if strings.Join(texts, "\x00") != strings.Join(v.Texts, "\x00") {
				t.Errorf("texts %q, want %q", texts, v.Texts)
			}
		})
	}
}
