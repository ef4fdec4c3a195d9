package bridge

import (
	"errors"
	"fmt"

	"github.com/livetab/livetab/internal/wire"
)

// errShortChunk is a binary message too short to hold a chunk header; the
// connection survives it.
var errShortChunk = errors.New("a binary message shorter than a chunk header")

// errFrameTooBig ends the connection: the extension sent more than the
// bridge is willing to hold.
var errFrameTooBig = errors.New("a frame over the limit")

// reassembler joins the binary chunks of large frames (see package wire).
// Its limit bounds the bytes held across all open streams, not per stream:
// the extension sends the chunks of one frame back to back, so it never
// has two large frames open at once, and a per-stream bound alone would let
// a misbehaving peer hold a limit's worth of memory on each of 2³² streams.
type reassembler struct {
	max     int64
	held    int64
	streams map[uint32][]byte
}

// add takes one binary message. It returns the frame's text when the
// message was the last chunk of its stream, nil while the stream goes on.
func (r *reassembler) add(data []byte) ([]byte, error) {
	if len(data) < wire.ChunkHeader {
		return nil, errShortChunk
	}
	stream := uint32(data[1])<<24 | uint32(data[2])<<16 | uint32(data[3])<<8 | uint32(data[4])
	payload := data[wire.ChunkHeader:]
	if r.held+int64(len(payload)) > r.max {
		r.streams, r.held = nil, 0
		return nil, fmt.Errorf("%w of %d bytes", errFrameTooBig, r.max)
	}
	if r.streams == nil {
		r.streams = make(map[uint32][]byte)
	}
	buf := append(r.streams[stream], payload...)
	if data[0]&wire.ChunkLast == 0 {
		r.streams[stream] = buf
		r.held += int64(len(payload))
		return nil, nil
	}
	r.held -= int64(len(buf) - len(payload))
	delete(r.streams, stream)
	if buf == nil {
		buf = []byte{}
	}
	return buf, nil
}
