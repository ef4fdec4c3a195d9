package bridge

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// EndpointToken is the token of the CDP endpoint that serves clients next to
// a bridge whose pairing token is pairing: HMAC-SHA256(pairing,
// "livetab-endpoint") as hex. Every CDP client holds the endpoint's token; if
// it were the pairing token, any client could pair as the extension while
// the real one is away and receive, and answer, every other client's
// commands. Derived, it pairs nothing and reveals nothing of the pairing
// token, and the serve needs no second secret on disk.
func EndpointToken(pairing string) string {
	m := hmac.New(sha256.New, []byte(pairing))
	m.Write([]byte("livetab-endpoint"))
	return hex.EncodeToString(m.Sum(nil))
}

// EndpointProof is what a serve answers to prove that it holds the endpoint
// token before a client sends it: HMAC-SHA256(token,
// "livetab-endpoint-proof|PORT|NONCE") as hex, PORT the port the serve
// accepted the request on. The endpoint token is the same for every serve
// of one pairing, so a program that took a gone serve's port must not hear
// it; the port keeps that program from asking a real serve on another port
// for the proof and passing it on (as in the pairing,
// docs/decisions/2026-11-23-pairing-by-mutual-proof.md).
func EndpointProof(token string, port int, nonce string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("livetab-endpoint-proof|" + strconv.Itoa(port) + "|" + nonce))
	return hex.EncodeToString(m.Sum(nil))
}
