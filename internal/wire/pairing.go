package wire

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
)

// Pairing by mutual proof. Neither end ever sends the pairing token: each
// proves it knows it with an HMAC over both ends' fresh nonces, so a
// program that squats the bridge's port learns nothing it can reuse, and
// the extension obeys no one who has not proved first.
//
//	extension → {"method":"ext.hello","params":{"nonce":NE, ...}}
//	bridge    → {"method":"ext.challenge","params":{"nonce":NB,"proof":BridgeProof(T,PORT,NE,NB)}}
//	extension → {"method":"ext.proof","params":{"proof":ExtensionProof(T,PORT,NE,NB)}}
//	bridge    → {"method":"ext.welcome","params":{"version":V}}
//
// A nonce is 32 random bytes as 64 lowercase hex digits. A proof is the
// lowercase hex of HMAC-SHA256 keyed with the token's UTF-8 bytes over the
// ASCII text LABEL|PORT|NE|NB, where LABEL is "livetab-bridge" for the
// bridge's proof and "livetab-extension" for the extension's (so that one
// side's proof never stands for the other's), and PORT is the decimal TCP
// port of the bridge: the one it listens on, the one the extension dials.
// The port keeps a squatter on one port from using a real bridge on another
// port with the same token as an oracle for the bridge's proof. The shared
// vectors in testdata/pairing.json pin the bytes for both ends
// (docs/decisions/2026-11-23-pairing-by-mutual-proof.md).

// Method names of the pairing handshake.
const (
	Challenge = "ext.challenge"
	Proof     = "ext.proof"
)

// Labels that separate the two proofs.
const (
	BridgeLabel    = "livetab-bridge"
	ExtensionLabel = "livetab-extension"
)

// NonceSize is the number of random bytes in a nonce.
const NonceSize = 32

// ChallengeParams is the bridge's answer to a hello.
type ChallengeParams struct {
	Nonce string `json:"nonce"`
	Proof string `json:"proof"`
}

// ProofParams is the extension's answer to a challenge.
type ProofParams struct {
	Proof string `json:"proof"`
}

// NewNonce returns a fresh nonce.
func NewNonce() string {
	var b [NonceSize]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ValidNonce reports whether s has the form of a nonce: 64 lowercase hex
// digits. Anything else is refused before it reaches an HMAC.
func ValidNonce(s string) bool {
	if len(s) != 2*NonceSize {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// BridgeProof is what the bridge listening on port sends to prove it holds
// token.
func BridgeProof(token string, port int, extNonce, bridgeNonce string) string {
	return proof(token, BridgeLabel, port, extNonce, bridgeNonce)
}

// ExtensionProof is what the extension that dialed port sends to prove it
// holds token.
func ExtensionProof(token string, port int, extNonce, bridgeNonce string) string {
	return proof(token, ExtensionLabel, port, extNonce, bridgeNonce)
}

func proof(token, label string, port int, extNonce, bridgeNonce string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(label + "|" + strconv.Itoa(port) + "|" + extNonce + "|" + bridgeNonce))
	return hex.EncodeToString(m.Sum(nil))
}

// ProofEqual compares a received proof with the expected one in constant
// time, so the time of a refusal says nothing about how much was right.
func ProofEqual(got, want string) bool {
	return hmac.Equal([]byte(got), []byte(want))
}

// URLPort is the port the extension dials for a bridge URL: the explicit
// one, else 80 for ws: and 443 for wss:, as a WebSocket client does.
func URLPort(bridgeURL string) (int, error) {
	u, err := url.Parse(bridgeURL)
	if err != nil {
		return 0, fmt.Errorf("wire: bad bridge URL: %w", err)
	}
	if p := u.Port(); p != "" {
		return strconv.Atoi(p)
	}
	switch u.Scheme {
	case "ws", "http":
		return 80, nil
	case "wss", "https":
		return 443, nil
	}
	return 0, fmt.Errorf("wire: bridge URL %q has no port", bridgeURL)
}
