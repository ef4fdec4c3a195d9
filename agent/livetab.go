package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
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
	p := map[string]any{"sharedOnly": true, "domains": domains, "blockPrivate": !s.pol.AllowPrivateNetworks, "privateAllowed": exact}
	err := s.setExtensionPolicy(p)
	switch {
	case err == nil:
		s.lg.Info("the browser side enforces the policy too", "sharedOnly", true, "domains", domains, "blockPrivate", !s.pol.AllowPrivateNetworks)
	case noLivetabDomain(err):
		s.lg.Debug("no Livetab domain in this browser: nothing to push the policy to")
	default:
		s.lg.Warn("pushing the policy to the extension", "err", err)
	}
}

func (s *Server) setExtensionPolicy(p map[string]any) error {
	ctx, cancel := context.WithTimeout(s.tabCtx, 5*time.Second)
	defer cancel()
	_, err := cdp.Call(ctx, chromedp.FromContext(s.tabCtx).Browser, cdp.Command[map[string]any, struct{}]{Method: "Livetab.setPolicy"}, p)
	return err
}

// noLivetabDomain reports the answer of a browser without livetab's
// extension behind it.
func noLivetabDomain(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "-32601") || strings.Contains(err.Error(), "wasn't found"))
}

// livetabTab is one tab in Livetab.getTabs.
type livetabTab struct {
	TargetID string `json:"targetId"`
	TabID    int64  `json:"tabId"`
	URL      string `json:"url"`
	Title    string `json:"title"`
	Active   bool   `json:"active"`
	Shared   bool   `json:"shared"`
	Created  bool   `json:"createdByLivetab"`
}

func (s *Server) livetabTabs(ctx context.Context) ([]livetabTab, error) {
	s.mu.Lock()
	tabCtx := s.tabCtx
	s.mu.Unlock()
	if tabCtx == nil {
		return nil, errors.New("no browser yet")
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r, err := cdp.Call(cctx, chromedp.FromContext(tabCtx).Browser, cdp.Command[struct{}, struct {
		Tabs []livetabTab `json:"tabs"`
	}]{Method: "Livetab.getTabs"}, struct{}{})
	if err != nil {
		if noLivetabDomain(err) {
			return nil, fmt.Errorf("this browser has no livetab extension, so no tab can be shared: %w", err)
		}
		return nil, fmt.Errorf("listing the shared tabs (Livetab.getTabs): %w", err)
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
			ids = append(ids, t.TargetID)
		}
	}
	return ids, nil
}
