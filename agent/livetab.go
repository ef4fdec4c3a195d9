package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/livetabcdp"
)

// The Livetab.* CDP domain: what the extension answers for itself.

// pushPolicy gives the browser side this server's rules (Livetab.setPolicy):
// the relay holds this connection, and only it, to the shared tabs and the
// domains, whatever the page package does; the extension blocks the tabs
// pages open outside the domains (and, unless private networks are
// allowed, at private addresses) before their first request. It ends with
// the connection.
func (s *Server) pushPolicy() {
	domains := s.pol.AllowDomains
	if s.pol.AnyDomain || domains == nil {
		domains = []string{}
	}
	var exact []string
	for _, d := range s.pol.AllowDomains {
		if !strings.HasPrefix(strings.TrimSpace(d), "*.") {
			exact = append(exact, d)
		}
	}
	err := s.setExtensionPolicy(livetabcdp.SetPolicyParams{SharedOnly: true, Domains: domains, BlockPrivate: !s.pol.AllowPrivateNetworks, PrivateAllowed: exact})
	switch {
	case err == nil:
		s.lg.Info("the browser side enforces the policy too", "sharedOnly", true, "domains", domains, "blockPrivate", !s.pol.AllowPrivateNetworks)
	case livetabcdp.IsUnsupported(err):
		s.lg.Debug("no Livetab domain in this browser: nothing to push the policy to")
	default:
		s.lg.Warn("pushing the policy to the extension", "err", err)
	}
}

func (s *Server) setExtensionPolicy(p livetabcdp.SetPolicyParams) error {
	ctx, cancel := context.WithTimeout(s.tabCtx, 5*time.Second)
	defer cancel()
	_, err := cdp.Call(ctx, chromedp.FromContext(s.tabCtx).Browser, livetabcdp.SetPolicy, p)
	return err
}

func (s *Server) livetabTabs(ctx context.Context) ([]livetabcdp.TabEntry, error) {
	s.mu.Lock()
	tabCtx := s.tabCtx
	s.mu.Unlock()
	if tabCtx == nil {
		return nil, errors.New("no browser yet")
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r, err := cdp.Call(cctx, chromedp.FromContext(tabCtx).Browser, livetabcdp.GetTabs, cdp.Empty{})
	if err != nil {
		if livetabcdp.IsUnsupported(err) {
			return nil, fmt.Errorf("this browser has no livetab extension, so no tab can be shared: %w", err)
		}
		return nil, fmt.Errorf("listing the shared tabs (%s): %w", livetabcdp.CommandGetTabs, err)
	}
	return r.Tabs, nil
}

// sharedTabIDs is the policy's SharedTabs hook.
func (s *Server) sharedTabIDs(ctx context.Context) ([]string, error) {
	tabs, err := s.livetabTabs(ctx)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, t := range tabs {
		if t.Shared {
			ids = append(ids, string(t.TargetID))
		}
	}
	return ids, nil
}
