package bridge

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/livetab/livetab/internal/wire"
)

func chunk(flags byte, stream uint32, payload []byte) []byte {
	m := make([]byte, wire.ChunkHeader, wire.ChunkHeader+len(payload))
	m[0] = flags
	binary.BigEndian.PutUint32(m[1:], stream)
	return append(m, payload...)
}

// FuzzChunks drives the reassembler with arbitrary binary messages and
// checks it against the spec of package wire: pieces of one stream are
// concatenated, a chunk with the last flag ends its stream, and no more
// than the limit is ever held across streams. A second part splits two
// frames into random chunks on two interleaved streams and wants them back
// byte for byte.
func FuzzChunks(f *testing.F) {
	f.Add([]byte{}, []byte(`{"method":"ext.ping"}`), uint64(0))
	f.Add([]byte{6, 0, 0, 0, 0, 1, 'x', 6, 1, 0, 0, 0, 1, 'y'}, []byte(`{"id":1,"result":{}}`), uint64(0x0102030405))
	f.Add([]byte{3, 1, 0, 0}, []byte{}, uint64(1))
	f.Add(append([]byte{255, 0, 0, 0, 0, 9}, bytes.Repeat([]byte{'a'}, 250)...), bytes.Repeat([]byte("ab"), 300), uint64(0xffffffffffffffff))
	f.Fuzz(func(t *testing.T, msgs, frame []byte, split uint64) {
		const max = 300
		r := reassembler{max: max}
		model := map[uint32][]byte{}
		held := 0
		for len(msgs) > 0 {
			n := int(msgs[0])
			msgs = msgs[1:]
			n = min(n, len(msgs))
			m := msgs[:n]
			msgs = msgs[n:]
			got, err := r.add(m)
			switch {
			case len(m) < wire.ChunkHeader:
				if !errors.Is(err, errShortChunk) || got != nil {
					t.Fatalf("short message %x: %q, %v", m, got, err)
				}
				continue
			case held+len(m)-wire.ChunkHeader > max:
				if !errors.Is(err, errFrameTooBig) {
					t.Fatalf("holding %d+%d bytes over a limit of %d: got %q, %v", held, len(m)-wire.ChunkHeader, max, got, err)
				}
				// The connection ends here.
				return
			case err != nil:
				t.Fatalf("chunk %x: %v", m, err)
			}
			stream := binary.BigEndian.Uint32(m[1:])
			want := append(model[stream], m[wire.ChunkHeader:]...)
			if m[0]&wire.ChunkLast == 0 {
				if got != nil {
					t.Fatalf("a chunk without the last flag returned a frame %q", got)
				}
				model[stream] = want
				held += len(m) - wire.ChunkHeader
			} else {
				if got == nil || !bytes.Equal(got, want) {
					t.Fatalf("stream %d: got %q, want %q", stream, got, want)
				}
				held -= len(model[stream])
				delete(model, stream)
			}
			if r.held != int64(held) || r.held > max || r.held < 0 {
				t.Fatalf("reassembler holds %d bytes, model %d, limit %d", r.held, held, max)
			}
		}

		// Round trip of two interleaved frames.
		other := bytes.ToUpper(frame)
		r = reassembler{max: int64(len(frame) + len(other) + 1)} // ToUpper may change the length
		rnd := split | 1
		next := func() int { // xorshift: chunk sizes from the input
			rnd ^= rnd << 13
			rnd ^= rnd >> 7
			rnd ^= rnd << 17
			return int(rnd%16) + 1
		}
		in := [2][]byte{frame, other}
		out := [2][]byte{}
		done := [2]bool{}
		for turn := 0; !done[0] || !done[1]; turn++ {
			i := turn % 2
			if done[i] {
				continue
			}
			n := min(next(), len(in[i]))
			flags := byte(0)
			if n == len(in[i]) {
				flags = wire.ChunkLast | 0xfe // other flag bits are ignored
			}
			got, err := r.add(chunk(flags, uint32(i)<<31|7, in[i][:n]))
			if err != nil {
				t.Fatal(err)
			}
			in[i] = in[i][n:]
			if flags&wire.ChunkLast != 0 {
				if got == nil {
					t.Fatalf("stream %d: the last chunk gave no frame", i)
				}
				out[i], done[i] = got, true
			} else if got != nil {
				t.Fatalf("stream %d: a frame before the last chunk", i)
			}
		}
		if !bytes.Equal(out[0], frame) || !bytes.Equal(out[1], other) {
			t.Fatalf("round trip: got %q and %q, want %q and %q", out[0], out[1], frame, other)
		}
		if r.held != 0 {
			t.Fatalf("%d bytes held after both frames ended", r.held)
		}
	})
}
