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
	err := s.setExtensionPolicy(livetabcdp.SetPolicyParams{SharedOnly: true, Domains: domains, BlockPrivate: !s.pol.AllowPrivateNetworks, PrivateAllowed: exact, GuardsLoads: true})
	switch {
	case err == nil:
		s.lg.Info("the browser side enforces the policy too", "sharedOnly", true, "domains", domains, "blockPrivate", !s.pol.AllowPrivateNetworks)
	case livetabcdp.IsUnsupported(err):
		s.lg.Debug("no Livetab domain in this browser: nothing to push the policy to")
	default:
		s.lg.Warn("pushing the policy to the extension", "err", err)
	}
}

// noteCall shows the person a tool call and the policy's decision in the
// extension's popup, on the agent's tab. It never holds up the call; a
// browser without the Livetab domain ignores it, and a call before the
// first tab opened goes unshown (the audit log has it).
func (s *Server) noteCall(tool, decision string) {
	s.mu.Lock()
	tabCtx := s.tabCtx
	s.mu.Unlock()
	if tabCtx == nil {
		return
	}
	c := chromedp.FromContext(tabCtx)
	if c == nil || c.Target == nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(tabCtx, 2*time.Second)
		defer cancel()
		cdp.Call(ctx, c.Target, livetabcdp.NoteAction, livetabcdp.NoteActionParams{Action: tool, Decision: decision})
	}()
}

// nameClient gives the person the agent's name for its connection.
func (s *Server) nameClient() {
	ctx, cancel := context.WithTimeout(s.tabCtx, 5*time.Second)
	defer cancel()
	_, err := cdp.Call(ctx, chromedp.FromContext(s.tabCtx).Browser, livetabcdp.SetClientName, livetabcdp.SetClientNameParams{Name: s.opts.ClientName})
	if err != nil && !livetabcdp.IsUnsupported(err) {
		s.lg.Warn("naming the agent's connection for the popup", "err", err)
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
