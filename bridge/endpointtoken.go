package bridge

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
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
