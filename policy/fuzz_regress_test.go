package policy

import (
	"context"
	"net/netip"
	"testing"

	"github.com/livetab/livetab/page"
)

// publicDNS resolves every name to one public address.
type publicDNS struct{}

func (publicDNS) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
}

// Found by FuzzPolicyURL: canonicalHost dropped one trailing dot of
// "100..", giving "100.", a name, whose canonical form is the address
// 0.0.0.100. The confirm check canonicalizes the host once more, so
// "bank.example.com.." passed as "bank.example.com." and skipped the
// confirmation that bank.example.com needs.
func TestHostWithEmptyLabels(t *testing.T) {
	for _, h := range []string{"100..", "bank.example.com..", "a..b", ".example.com", "..", "127.0.0.1.."} {
		if c, ip, err := canonicalHost(h); err == nil {
			if c2, ip2, err := canonicalHost(c); err != nil || c2 != c || ip2 != ip {
				t.Errorf("canonicalHost(%q) = %q %v, then %q %v %v", h, c, ip, c2, ip2, err)
			}
		}
	}
	p := &Policy{AnyDomain: true, ConfirmDomains: []string{"bank.example.com"}, Resolver: publicDNS{}}
	for _, u := range []string{"http://bank.example.com../", "http://bank.example.com./", "http://bank.example.com/"} {
		err := p.CheckAction(context.Background(), page.Action{Kind: page.KindNavigate, Op: "navigate", Target: u})
		if err == nil {
			t.Errorf("%s: navigated without the confirmation bank.example.com needs", u)
		}
	}
}
