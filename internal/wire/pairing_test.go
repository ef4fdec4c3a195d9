package wire

import (
	"strings"
	"testing"
)

type pairingVectors struct {
	BridgeLabel    string `json:"bridgeLabel"`
	ExtensionLabel string `json:"extensionLabel"`
	NonceBytes     int    `json:"nonceBytes"`
	Proofs         []struct {
		Name           string `json:"name"`
		Token          string `json:"token"`
		URL            string `json:"url"`
		Port           int    `json:"port"`
		ExtensionNonce string `json:"extensionNonce"`
		BridgeNonce    string `json:"bridgeNonce"`
		BridgeProof    string `json:"bridgeProof"`
		ExtensionProof string `json:"extensionProof"`
	} `json:"proofs"`
	Nonces struct {
		Valid   []string `json:"valid"`
		Invalid []string `json:"invalid"`
	} `json:"nonces"`
}

// The same vectors are checked by extension/test/pairing.test.js, so the
// worker's crypto.subtle and Go's crypto/hmac agree on every byte.
func TestPairingVectors(t *testing.T) {
	var v pairingVectors
	readVectors(t, "pairing.json", &v)
	if v.BridgeLabel != BridgeLabel || v.ExtensionLabel != ExtensionLabel || v.NonceBytes != NonceSize {
		t.Fatalf("vector constants %q/%q/%d differ from the package's", v.BridgeLabel, v.ExtensionLabel, v.NonceBytes)
	}
	if len(v.Proofs) == 0 {
		t.Fatal("no proof vectors")
	}
	for _, p := range v.Proofs {
		t.Run(p.Name, func(t *testing.T) {
			if !ValidNonce(p.ExtensionNonce) || !ValidNonce(p.BridgeNonce) {
				t.Fatal("a vector's nonce is not a valid nonce")
			}
			if got := BridgeProof(p.Token, p.Port, p.ExtensionNonce, p.BridgeNonce); got != p.BridgeProof {
				t.Errorf("BridgeProof = %s, want %s", got, p.BridgeProof)
			}
			if got := ExtensionProof(p.Token, p.Port, p.ExtensionNonce, p.BridgeNonce); got != p.ExtensionProof {
				t.Errorf("ExtensionProof = %s, want %s", got, p.ExtensionProof)
			}
			if got, err := URLPort(p.URL); err != nil || got != p.Port {
				t.Errorf("URLPort(%s) = %d, %v; want %d", p.URL, got, err, p.Port)
			}
			// Another port, another proof: a bridge elsewhere is no oracle.
			if BridgeProof(p.Token, p.Port+1, p.ExtensionNonce, p.BridgeNonce) == p.BridgeProof {
				t.Error("the proof does not depend on the port")
			}
			// Neither proof gives the token away, nor may one stand for the other.
			if strings.Contains(p.BridgeProof, p.Token) || strings.Contains(p.ExtensionProof, p.Token) || p.BridgeProof == p.ExtensionProof {
				t.Error("a proof contains the token or equals the other side's")
			}
		})
	}
	for _, n := range v.Nonces.Valid {
		if !ValidNonce(n) {
			t.Errorf("ValidNonce(%q) = false", n)
		}
	}
	for _, n := range v.Nonces.Invalid {
		if ValidNonce(n) {
			t.Errorf("ValidNonce(%q) = true", n)
		}
	}
}

func TestNewNonce(t *testing.T) {
	a, b := NewNonce(), NewNonce()
	if !ValidNonce(a) || !ValidNonce(b) || a == b {
		t.Errorf("NewNonce gave %q and %q", a, b)
	}
}

func TestProofEqual(t *testing.T) {
	p := BridgeProof("t", 9339, NewNonce(), NewNonce())
	if !ProofEqual(p, p) || ProofEqual(p, p[:63]) || ProofEqual("", p) || ProofEqual(strings.ToUpper(p), p) {
		t.Error("ProofEqual disagrees with ==")
	}
}
