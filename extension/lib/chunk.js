// @ts-check
// Chunking of large frames, as wire.go specifies: a frame whose UTF-8 text is
// longer than CHUNK_SIZE travels as binary messages of a 5-byte header
// (flags, big-endian stream number) and at most CHUNK_SIZE bytes of text.

/** Largest payload of one binary chunk (wire.ChunkSize). */
export const CHUNK_SIZE = 1 << 20;
/** Bytes in front of each chunk's payload (wire.ChunkHeader). */
export const CHUNK_HEADER = 5;
/** Flag of the final chunk of a stream (wire.ChunkLast). */
export const CHUNK_LAST = 1;
/**
 * Strings of at most this many UTF-16 code units are at most 3 bytes per unit
 * in UTF-8, so below CHUNK_SIZE: they go out as text without being encoded.
 */
export const FAST_TEXT = 256 * 1024;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: false });

/**
 * Returns what to put on the socket for one frame's text: the text itself
 * when it fits in one message, else the binary chunks of its UTF-8 bytes.
 * @param {string} text
 * @param {number} stream the sender's stream number, 0 … 2³²-1
 * @returns {string | Uint8Array<ArrayBuffer>[]}
 */
export function encodeFrame(text, stream) {
  if (text.length <= FAST_TEXT) return text;
  const bytes = encoder.encode(text);
  if (bytes.length <= CHUNK_SIZE) return text;
  return splitChunks(bytes, stream);
}

/**
 * Splits bytes into chunk messages of one stream. The cut may fall inside a
 * UTF-8 sequence: the receiver joins bytes before decoding.
 * @param {Uint8Array} bytes
 * @param {number} stream
 * @returns {Uint8Array<ArrayBuffer>[]}
 */
export function splitChunks(bytes, stream) {
  /** @type {Uint8Array<ArrayBuffer>[]} */
  const out = [];
  let off = 0;
  do {
    const n = Math.min(CHUNK_SIZE, bytes.length - off);
    const msg = new Uint8Array(CHUNK_HEADER + n);
    msg[0] = off + n >= bytes.length ? CHUNK_LAST : 0;
    new DataView(msg.buffer).setUint32(1, stream >>> 0, false);
    msg.set(bytes.subarray(off, off + n), CHUNK_HEADER);
    out.push(msg);
    off += n;
  } while (off < bytes.length);
  return out;
}

/**
 * Joins binary chunk messages back into frame texts, one pending buffer per
 * stream so that interleaved streams work.
 */
export class Reassembler {
  constructor() {
    /** @type {Map<number, Uint8Array[]>} */
    this.pending = new Map();
  }

  /**
   * Takes one binary message. Returns the frame text when it completes a
   * stream, else null.
   * @param {ArrayBuffer | Uint8Array} data
   * @returns {string | null}
   */
  push(data) {
    const msg = data instanceof Uint8Array ? data : new Uint8Array(data);
    if (msg.length < CHUNK_HEADER) {
      throw new Error(`livetab: binary message of ${msg.length} bytes is shorter than a chunk header`);
    }
    const flags = msg[0];
    const stream = new DataView(msg.buffer, msg.byteOffset, msg.byteLength).getUint32(1, false);
    const piece = msg.subarray(CHUNK_HEADER);
    let parts = this.pending.get(stream);
    if (!(flags & CHUNK_LAST)) {
      if (!parts) this.pending.set(stream, (parts = []));
      parts.push(piece);
      return null;
    }
    this.pending.delete(stream);
    if (!parts) return decoder.decode(piece);
    parts.push(piece);
    let total = 0;
    for (const p of parts) total += p.length;
    const all = new Uint8Array(total);
    let off = 0;
    for (const p of parts) {
      all.set(p, off);
      off += p.length;
    }
    return decoder.decode(all);
  }

  /** Drops unfinished streams, e.g. when the socket closes. */
  reset() {
    this.pending.clear();
  }
}
