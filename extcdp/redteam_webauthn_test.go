package extcdp_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestRedTeamLeftAuthenticatorTakesNoPasskey: client A gives the person's
// tab, which B uses too, a virtual authenticator that says yes to
// everything (WebAuthn.enable, addVirtualAuthenticator with user presence
// and verification simulated), then dies. While B stays, the person's
// passkey sign-ups and sign-ins on that tab go to an authenticator that
// lives in memory and that no one answers for: a new passkey is made
// without any prompt and is lost with the detach. A's authenticator must
// go with A.
func TestRedTeamLeftAuthenticatorTakesNoPasskey(t *testing.T) {
	if env == nil {
		t.Skip("no test browser")
	}
	srv, tok := endpoint(t)
	// WebAuthn needs a domain for its relying party: localhost.
	id := userTab(t, site.CrossURL+"/form?left-webauthn")
	t.Cleanup(func() {
		if u, err := env.User(context.Background()); err == nil {
			u.CloseTab(context.Background(), id)
			u.Close()
		}
	})
	a, b := dialRawTo(t, srv, tok), dialRawTo(t, srv, tok)
	sa, sb := a.attach(id), b.attach(id)
	a.eval(sa, "1")
	b.eval(sb, "1")
	a.must(sa, "WebAuthn.enable", nil)
	a.must(sa, "WebAuthn.addVirtualAuthenticator", map[string]any{"options": map[string]any{
		"protocol": "ctap2", "transport": "internal", "hasResidentKey": true,
		"hasUserVerification": true, "isUserVerified": true, "automaticPresenceSimulation": true,
	}})
	a.ws.CloseNow()
	<-a.closed
	time.Sleep(500 * time.Millisecond)
	b.bound = 15 * time.Second
	got, err := b.call(sb, "Runtime.evaluate", map[string]any{
		// Without an authenticator headless Chrome never answers: a person
		// would see Chrome's prompt.
		"expression": `Promise.race([new Promise(ok => setTimeout(() => ok('no answer without the person'), 3000)), navigator.credentials.create({publicKey: {
			rp: {name: "the person's bank"},
			user: {id: new Uint8Array([1, 2, 3]), name: "person", displayName: "Person"},
			challenge: new Uint8Array(16),
			pubKeyCredParams: [{type: "public-key", alg: -7}],
			authenticatorSelection: {userVerification: "required"},
			timeout: 2000,
		}}).then(c => 'made a passkey ' + c.id, e => 'refused: ' + e.name)])`,
		"awaitPromise": true, "returnByValue": true,
	})
	if err != nil {
		t.Fatalf("the person's page after A left: %v", err)
	}
	if strings.Contains(string(got), "made a passkey") {
		t.Fatalf("after A left, the person's tab made a passkey in A's virtual authenticator without a prompt: %s", got)
	}
	t.Logf("the person's passkey request after A left: %s", got)
}
