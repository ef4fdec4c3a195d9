package extcdp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// (a) The person's tab shows the shop page at an address with credentials
// (http://x:y@host/page?shop, as an intranet link may give): Chrome's
// referrer drops them, so RecentPages' record of the person's tab (with
// them) does not show the referrer, and the program's closed tab on
// http://host/page?shop alone does: the person's download, begun as they
// move on, is denied. "control-no-credentials" is the same without them.
// Denied 2 of 2 (red team, stop 42); pages are now kept without their
// credentials, in the extension and the relay.
func TestRedTeamPersonCredentialsURL(t *testing.T) {
	t.Parallel() // a download test: its own servers and files; it waits on them beside the others
	for _, tc := range []struct{ name, creds string }{{"control-no-credentials", ""}, {"person-tab-with-credentials", "x:y@"}} {
		t.Run(tc.name, func(t *testing.T) {
			s := &buriedSite{}
			base := recentServe(t, s, nil)
			stem := fmt.Sprintf("rt-pcreds-%s-%d", tc.name, time.Now().UnixNano())
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			u, err := env.User(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer u.Close()
			srv, tok := endpoint(t)
			b := dialRawTo(t, srv, tok)
			b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny", "eventsEnabled": true})
			tid, sid := b.open(base + "/page?shop")
			b.eval(sid, "document.readyState === 'complete' || new Promise(r => onload = r)")
			person, err := u.OpenTab(ctx, strings.Replace(base, "http://", "http://"+tc.creds, 1)+"/page?shop")
			if err != nil {
				t.Fatal(err)
			}
			closeUserTab(t, person)
			if _, err := u.Eval(ctx, person, `document.readyState === 'complete' || new Promise(r => onload = r)`); err != nil {
				t.Fatal(err)
			}
			time.Sleep(500 * time.Millisecond)
			b.must("", "Target.closeTarget", map[string]any{"targetId": tid})
			time.Sleep(300 * time.Millisecond)
			if _, err := u.Eval(ctx, person, fmt.Sprintf(clickDownload, fmt.Sprintf("/file/%s.bin?hdr=2500", stem))); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
			u.Eval(ctx, person, fmt.Sprintf("location.href = %q, 1", base+"/page?elsewhere"))
			if landed, ok := personGotFile(t, s, stem, 7*time.Second); !ok {
				t.Errorf("%s: the person's own download is not in their Downloads folder: %q", tc.name, landed)
			}
		})
	}
}
