package extcdp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"

	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/internal/wire"
	"github.com/livetab/livetab/livetabcdp"
)

// Extensions may not choose where downloads go (Browser.setDownloadBehavior
// is refused), but chrome.downloads sees every download and its file. The
// relay joins the tab's Page.download* events with the extension's
// chrome.downloads reports and gives clients that asked for download events
// the standard Browser.downloadWillBegin and Browser.downloadProgress, the
// completed one with filePath: the file in the user's Downloads folder
// (docs/decisions/2026-11-22-downloads-come-from-chrome-downloads.md).
//
// A client that names a downloadPath (allow, allowAndName) gets the
// finished file moved there, named by its guid for allowAndName, and the
// completed event says so: the extension and the relay run on one machine
// (the bridge listens on loopback only). A behavior set on a tab's session
// gets its events on that session, as from Chrome (chromedp's
// TestDownloadIntoDir reads them there).

// downloadBehavior is what a client asked of downloads with
// Browser.setDownloadBehavior (or Page.setDownloadBehavior).
type downloadBehavior struct {
	events bool   // send Browser.download* events
	dir    string // move finished downloads here; "" leaves them in Chrome's folder
	byGUID bool   // allowAndName: name the file by its guid
	// deny: the tab's downloads are canceled as they begin, and a file
	// Chrome finished first is removed (Chrome's deny writes none).
	deny bool
	// set orders the behaviors the relay was given: of two clients'
	// directories for one tab, the one set last takes its downloads, as
	// Chrome's last setDownloadBehavior does.
	set int64
}

// setDownloadBehavior answers Browser.setDownloadBehavior and
// Page.setDownloadBehavior: sid "" (or a browser session) sets the client's
// behavior, a tab's session sets that session's.
func (c *Client) setDownloadBehavior(m *cdproto.Message, sid target.SessionID) {
	var p struct {
		Behavior      string `json:"behavior"`
		DownloadPath  string `json:"downloadPath"`
		EventsEnabled bool   `json:"eventsEnabled"`
	}
	if !c.params(m, sid, &p) {
		return
	}
	b := downloadBehavior{events: p.EventsEnabled || p.Behavior == "allow" || p.Behavior == "allowAndName", deny: p.Behavior == "deny"}
	if (p.Behavior == "allow" || p.Behavior == "allowAndName") && p.DownloadPath != "" {
		if !filepath.IsAbs(p.DownloadPath) {
			c.fail(m.ID, sid, -32602, fmt.Sprintf("%s: downloadPath %q is not an absolute path: give the directory the finished downloads go to in full", m.Method, p.DownloadPath))
			return
		}
		if err := os.MkdirAll(p.DownloadPath, 0o755); err != nil {
			c.fail(m.ID, sid, -32000, fmt.Sprintf("%s: downloadPath %q: %v: livetab moves finished downloads there, so it must be a directory it can write on the machine where the browser runs", m.Method, p.DownloadPath, err))
			return
		}
		b.dir, b.byGUID = p.DownloadPath, p.Behavior == "allowAndName"
	}
	r := c.r
	r.mu.Lock()
	r.behaviorsSet++
	b.set = r.behaviorsSet
	if s := r.sessions[sid]; sid != "" && s != nil && !s.browser {
		if c.sessionDownloads == nil {
			c.sessionDownloads = map[target.SessionID]downloadBehavior{}
		}
		c.sessionDownloads[sid] = b
	} else {
		c.download = b
		c.downloadEvents = b.events
	}
	// Popups already open heed the new behavior too.
	for _, t := range r.tabs {
		if t.creator == c {
			r.watchPopupDownloads(t)
		}
	}
	r.unwatchDownloads()
	r.watchAllFrameDownloads()
	r.mu.Unlock()
	c.reply(m.ID, sid, nil)
}

// download links one download's CDP guid and its chrome.downloads id.
type download struct {
	guid     string
	chromeID int64
	// tab is where it started, when a debugged tab announced it: only the
	// clients that may see that tab hear of it.
	tab   *tab
	url   string
	begun bool // Browser.downloadWillBegin sent
	// suggested is the name Chrome suggested (Page.downloadWillBegin):
	// the name in the client's directory, as Chrome gives it there. The
	// file in the Downloads folder may have another, "report (1).bin",
	// when the folder had one of that name already.
	suggested string
	// origin is the origin an http(s) URL of Livetab.downloadBlob must
	// end at: a download redirected elsewhere is canceled and its file
	// removed, so that a client gets no other origin's bytes.
	origin string
	done   bool // the completed (or canceled) progress sent
	// denied: a client that drives its tab denies downloads; it ends
	// canceled, its file removed.
	denied bool
	// unsure: the tab's report was joined to an item chrome.downloads
	// had reported before it, which Chrome does not do for a tab's own
	// download: it may be the person's. Such a download is never
	// canceled, removed or moved (see linkItem).
	unsure bool
	// cancel: a client canceled it before chrome.downloads reported it;
	// it is canceled there as soon as it is.
	cancel bool
	info   wire.DownloadInfo
	// frame is the frame of another site that told of it, if one did: an
	// item begun from the page it shows is its (fromTab).
	frame *child
	// from is the popup the item was joined by its referrer (referredTab),
	// before any session told of it; told, once one did after all.
	from *tab
	told bool
	// held is the directory, or deny, of the clients that drove its tab
	// when it began (heldBehavior): Chrome fixes a download's path as it
	// begins, and a client that dies, or closes its tab, before the end
	// must not leave it to land in the person's Downloads folder
	// (TestRedTeamDiesMidDownload).
	held     downloadBehavior
	heldDeny bool
	seq      int64     // when the relay first heard of it
	heard    time.Time // the same, by the clock: see startedBefore
}

type downloadState struct {
	byGUID   map[string]*download
	byChrome map[int64]*download
	// finished are the downloads done, oldest first: past
	// maxFinishedDownloads the oldest are forgotten, so that a program
	// asking for downloads in a loop (Livetab.downloadBlob) does not grow
	// the relay for the life of serve (TestRedTeamDownloadFloodIsBounded).
	finished []*download
	// open counts the records of downloads not done; seq numbers them.
	open, seq int64
	// unsettled are the Livetab.downloadBlob downloads in flight or
	// failed in the last minute (blobs.go).
	unsettled []unsettled
	// closed are programs' tabs that closed in the last buriedWindow
	// with a behavior for their downloads (buryTab).
	closed []closedTab
}

// closedTab is a program's tab that closed, its page and the behavior its
// downloads had then. A download its page began just before (a click on
// a server slow to answer) begins in Chrome after the tab is gone, joined
// to no tab: it landed in the person's Downloads folder whatever the
// program asked, and a hostile page in an agent's tab escaped the deny by
// closing its own tab right after its click (TestRedTeamDiesMidDownload).
type closedTab struct {
	id   int64
	page string
	at   time.Time
	dir  downloadBehavior
	deny bool
}

// maxClosedTabs bounds closed: a program opening and closing tabs in a
// loop must not grow the relay. With 256, a program that denies downloads
// and went on to open and close 280 tabs in the minutes a hostile page's
// download held its headers forgot that page's tab, and the file landed
// in the person's Downloads folder (red team, 2 of 2, 2026-12-01). A
// record past linkTabWindow keeps no page (only the exact-page path reads
// it, within that window), so each is small.
const maxClosedTabs = 8192

// buriedWindow is how long a closed tab's downloads may still begin: a
// server may send a download's headers long after the click (with a
// minute, a hostile page's download begun 70 s after it closed its tab
// escaped the deny: TestRedTeamDeniedPageWaitsOutTheMinute). The
// extension names the tabs that showed the page in as long.
const buriedWindow = 10 * time.Minute

// buryTab notes t, closing now, in closed when it is a program's own tab
// (or its popup), with the behavior of its downloads, if any: a tab of no
// behavior is noted too, so that a download its page may have begun is
// known to be no person's. It runs where a tab closes (tabGone), and
// before a leaving client's sessions end (its behavior goes with them).
// Call with r.mu held.
func (r *Relay) buryTab(t *tab) {
	if t.creator == nil || t.personsPopup() || t.info.URL == "" {
		return
	}
	dir, deny := r.heldBehavior(&download{tab: t})
	r.downloads.bury(closedTab{id: t.id, page: pageOf(t), dir: dir, deny: deny}, time.Now())
}

// bury notes g, a tab closed at now, in closed, and forgets the records
// past buriedWindow, and the pages of those past linkTabWindow. Call with
// the relay's mu held.
func (d *downloadState) bury(g closedTab, now time.Time) {
	g.at = now
	if len(g.page) > maxReferrer {
		g.page = "" // no referrer names it: Chrome sends the origin instead
	}
	kept := d.closed[:0]
	for _, o := range d.closed {
		if o.id == g.id && g.dir.dir == "" && !g.deny {
			// Noted as its client left, with the behavior the client gave;
			// now the tab is gone, and the client with it.
			g.dir, g.deny = o.dir, o.deny
		}
		if o.id != g.id && now.Sub(o.at) <= buriedWindow {
			if now.Sub(o.at) > linkTabWindow {
				o.page = ""
			}
			kept = append(kept, o)
		}
	}
	d.closed = append(kept, g)
	if len(d.closed) > maxClosedTabs {
		// The oldest of no behavior goes first: a page whose popups close
		// one after another must not push its own tab's deny out.
		i := slices.IndexFunc(d.closed, func(g closedTab) bool { return g.dir.dir == "" && !g.deny })
		if i < 0 {
			i = 0
		}
		d.closed = slices.Delete(d.closed, i, i+1)
	}
}

// closedTabOf is the closed program's tab (buryTab) whose behavior an
// item (info) of no tab takes, or nil. Chrome begins a download when its
// server answers, after the page that asked may be gone.
//
// The extension names the tabs, open or closed, that showed the item's
// page (its referrer) in the last buriedWindow, when no open tab shows it: a
// page that changed its URL before its tab closed, or clicked in a frame,
// began a download of a page its tab no longer showed
// (TestRedTeamDiesMidDownload). The item is taken only when each of them
// is a program's, and then with the strictest of their behaviors (a deny
// over a directory): two tabs of an agent's must not let its page out of
// the deny, and a person's tab among them, even closed or left, keeps the
// download the person's (TestRedTeamBuriedTakesPersonsDownload).
//
// Without that word (an older extension, or a download that no tab showed
// in the last buriedWindow), only the very page a closed tab
// showed, for linkTabWindow, and no open tab showing it. Not the origin
// alone there: a person's download of the same site, from a tab they just
// left or closed (a referrer of the origin alone, as a download from
// another origin sends), was denied or taken into the program's
// directory (red team, 2 of 2 each). An item with no referrer goes by
// the extension's word alone: the tabs that navigated to its URL (the
// person's typed in the address bar), else those that showed a page of
// its origin (a page's <a download> with referrerPolicy no-referrer,
// which escaped the deny: TestRedTeamDiesMidDownload). Call with r.mu
// held.
func (r *Relay) closedTabOf(info wire.DownloadInfo) *closedTab {
	d, tabs := &r.downloads, r.tabs
	if info.Referrer == "" && len(info.RecentTabIDs) == 0 || info.ReferrerTabID != 0 {
		return nil // no page to go by, or an open tab showed it
	}
	now := time.Now()
	if len(info.RecentTabIDs) > 0 {
		var found *closedTab
		for _, id := range info.RecentTabIDs {
			g := d.buried(id, now)
			if g == nil {
				o := tabs[id]
				if o == nil || o.closed || o.creator == nil || o.personsPopup() {
					return nil // perhaps the person's
				}
				dir, deny := r.heldBehavior(&download{tab: o})
				g = &closedTab{id: o.id, dir: dir, deny: deny}
			}
			if found == nil || stricter(g, found) {
				found = g
			}
		}
		if found == nil || found.dir.dir == "" && !found.deny {
			return nil
		}
		return found
	}
	var found *closedTab
	for i := range d.closed {
		g := &d.closed[i]
		if now.Sub(g.at) > linkTabWindow || startedBefore(info, now, g.at) || info.Referrer != g.page || g.dir.dir == "" && !g.deny {
			continue
		}
		if found == nil || g.at.After(found.at) {
			found = g
		}
	}
	if found == nil {
		return nil
	}
	for _, o := range tabs {
		if o.id != found.id && !o.closed && showsPage(o, info.Referrer) {
			return nil
		}
	}
	return found
}

// maxReferrer is the longest referrer Chrome sends: a longer page's
// downloads name its origin.
const maxReferrer = 4096

// buried is the closed program's tab id of the last buriedWindow, or nil.
// Call with r.mu held.
func (d *downloadState) buried(id int64, now time.Time) *closedTab {
	for i := range d.closed {
		if g := &d.closed[i]; g.id == id && now.Sub(g.at) <= buriedWindow {
			return g
		}
	}
	return nil
}

// stricter reports whether a's downloads are held tighter than b's: a
// deny over a directory, the latest directory over an older one.
func stricter(a, b *closedTab) bool {
	if a.deny != b.deny {
		return a.deny
	}
	return a.dir.set > b.dir.set
}

// maxFinishedDownloads is how many finished downloads the relay keeps: a
// late report of chrome.downloads about a forgotten one is taken for a
// download no client's tab announced, which reaches no client.
const maxFinishedDownloads = 256

// retire notes that dl is done, and forgets the oldest finished ones past
// the bound. Call with r.mu held.
func (d *downloadState) retire(dl *download) {
	if !dl.done && dl.seq != 0 {
		d.open--
	}
	dl.done = true
	d.finished = append(d.finished, dl)
	for len(d.finished) > maxFinishedDownloads {
		old := d.finished[0]
		d.finished = append(d.finished[:0], d.finished[1:]...)
		if d.byGUID[old.guid] == old {
			delete(d.byGUID, old.guid)
		}
		if d.byChrome[old.chromeID] == old {
			delete(d.byChrome, old.chromeID)
		}
	}
}

// maxOpenDownloads is how many downloads not done yet the relay keeps:
// Chrome never reports some done (a response that never ends, a blob URL
// that does not exist), and past the bound the oldest are forgotten as
// the finished ones are.
const maxOpenDownloads = 512

// track counts dl among the downloads not done, forgetting the oldest past
// the bound. Call with r.mu held.
func (d *downloadState) track(dl *download) {
	if dl.seq != 0 {
		return
	}
	d.seq++
	dl.seq, dl.heard = d.seq, time.Now()
	d.open++
	for d.open > maxOpenDownloads {
		var old *download
		older := func(x *download) {
			if !x.done && x.seq != 0 && (old == nil || x.seq < old.seq) {
				old = x
			}
		}
		for _, x := range d.byGUID {
			older(x)
		}
		for _, x := range d.byChrome {
			older(x)
		}
		if old == nil {
			d.open = 0
			return
		}
		old.done = true
		d.open--
		if d.byGUID[old.guid] == old {
			delete(d.byGUID, old.guid)
		}
		if d.byChrome[old.chromeID] == old {
			delete(d.byChrome, old.chromeID)
		}
	}
}

func (d *downloadState) init() {
	if d.byGUID == nil {
		d.byGUID = map[string]*download{}
		d.byChrome = map[int64]*download{}
	}
}

// There is no id both sides of a download know: the relay joins a tab's
// Page.downloadWillBegin and chrome.downloads' item by their URL, by when
// Chrome began the item, and by the page it began from. Chrome tells the
// tab before it makes the item, so a tab's report waits a while for the
// item, and an item that Chrome began well before the tab told of its
// download is another download of the same URL: the person's own, in a
// tab no client drives, which a program must neither be given (its file
// moved into the program's directory) nor cancel
// (TestRedTeamDownloadOfTheSameURLStaysThePersons).
const (
	linkTabWindow  = 10 * time.Second // a tab's report waits for the item
	linkItemBefore = time.Second      // an item begun this long before the tab's report is another's
)

// startedBefore reports whether Chrome began the item info more than
// linkItemBefore before at; an item of an older extension, with no start
// time, by when the relay heard of it (heard).
func startedBefore(info wire.DownloadInfo, heard, at time.Time) bool {
	if info.StartTime > 0 {
		return time.UnixMilli(int64(info.StartTime)).Before(at.Add(-linkItemBefore))
	}
	return heard.Before(at.Add(-linkItemBefore))
}

// linkTab finds the tab's report of a download that item info (heard now)
// is the chrome.downloads side of: one of its URL not linked yet, heard
// within linkTabWindow, that Chrome did not begin the item well before,
// whose tab shows the page the item was begun from (fromTab: an item of
// the person's tab of the same URL, made while the tab's own is on its
// way, is not the tab's); the latest of several. Call with r.mu held.
func (d *downloadState) linkTab(info wire.DownloadInfo, tabs map[int64]*tab) *download {
	var found *download
	now := time.Now()
	for _, dl := range d.byGUID {
		if dl.chromeID != 0 || dl.url != info.URL || now.Sub(dl.heard) > linkTabWindow || startedBefore(info, now, dl.heard) ||
			!fromTab(dl.tab, dl.frame, info, tabs) {
			continue
		}
		if found == nil || dl.seq > found.seq {
			found = dl
		}
	}
	return found
}

// linkItem finds the chrome.downloads item of the download a tab (t)
// tells of now, in case chrome.downloads told of it first: Chrome tells
// the tab first, so an item already reported is most likely another
// download of the URL, the person's own (TestRedTeamDenyLeavesThePersonsDownload).
// Only an item not linked yet, begun from the page t shows (or its
// origin), not well before now, is taken; the caller marks the link
// unsure. Call with r.mu
// held.
func (d *downloadState) linkItem(t *tab, frame *child, url string, tabs map[int64]*tab) *download {
	var found *download
	now := time.Now()
	for _, dl := range d.byChrome {
		if dl.guid != "" || dl.url != url || startedBefore(dl.info, dl.heard, now) ||
			dl.info.Referrer == "" || !fromTab(t, frame, dl.info, tabs) {
			continue
		}
		if found == nil || dl.seq > found.seq {
			found = dl
		}
	}
	return found
}

// fromTab reports whether an item (info) may be of a download t told of
// (in its frame of another site frame, when that frame told): its referrer
// is the page t shows or its origin (what a request to another origin
// sends), or of frame's origin, or there is none to tell; or it names
// neither the page nor (an origin alone) the origin of another tab, and
// the extension did not find it begun from another tab. A frame's
// download is told by t, or by the frame's session, and the item's
// referrer is the frame's document: taken for another's, such downloads
// escaped the program's deny into the person's Downloads folder
// (TestRedTeamFrameDownloadsHeedTheBehavior), also when the person had a
// tab open on the frame's site (TestRedTeamHostileFrameDownloadBesideThePersonsTab).
// The same URL begun at the same time by the page of the person's tab
// stays the person's (TestRedTeamDownloadOfTheSameURLStaysThePersons,
// TestRedTeamPersonsCrossSiteDownloadStaysThePersons).
func fromTab(t *tab, frame *child, info wire.DownloadInfo, tabs map[int64]*tab) bool {
	referrer := info.Referrer
	if referrer == "" {
		return true
	}
	if t == nil {
		return false
	}
	names := func(page string) bool {
		page, _, _ = strings.Cut(page, "#") // a referrer has no fragment
		return page != "" && (referrer == page || strings.TrimSuffix(referrer, "/") == originOf(page))
	}
	// The relay may know only a frame's origin (from its execution
	// context), and a frame told of this very download.
	if names(t.info.URL) || frame != nil && frame.info.URL != "" && originOf(referrer) == originOf(frame.info.URL) {
		return true
	}
	if info.ReferrerTabID != 0 && info.ReferrerTabID != t.id {
		return false
	}
	origin := originOnly(referrer)
	for _, o := range tabs {
		if o != t && (showsPage(o, referrer) || origin != "" && originOf(pageOf(o)) == origin) {
			return false
		}
	}
	return true
}

// originOnly is the origin a referrer names when it is an origin alone,
// else "".
func originOnly(referrer string) string {
	u, err := url.Parse(referrer)
	if err != nil || (u.Path != "/" && u.Path != "") || u.RawQuery != "" {
		return ""
	}
	return originOf(referrer)
}

// pageOf is the URL of the page t shows as a referrer names it: without
// its fragment.
func pageOf(t *tab) string {
	page, _, _ := strings.Cut(t.info.URL, "#")
	// Chrome sends no user name or password in a referrer: a page at
	// http://x:y@host/ is the referrer http://host/ (red team).
	if u, err := url.Parse(page); err == nil && u.User != nil {
		u.User = nil
		page = u.String()
	}
	return page
}

func showsPage(t *tab, referrer string) bool { return pageOf(t) == referrer }

// broadcastDownload sends a Browser.* download event to the clients that
// enabled download events and may see the tab it started in, at the
// browser level or on the session that asked. A download no attached tab
// announced (the person's own) goes to no client: its URL and path are the
// person's business. Call with r.mu held.
func (r *Relay) broadcastDownload(dl *download, method cdproto.MethodType, params any) {
	if dl.tab == nil {
		return
	}
	p, err := jsonv2.Marshal(params, wire.Options)
	if err != nil {
		return
	}
	for c := range r.clients {
		if !c.lists(dl.tab) {
			continue
		}
		if c.downloadEvents {
			c.deliver(&cdproto.Message{Method: method, Params: p})
		}
		for sid, b := range c.sessionDownloads {
			s := r.sessions[sid]
			if s == nil {
				delete(c.sessionDownloads, sid) // the session ended
				continue
			}
			if b.events && s.tab == dl.tab {
				c.deliver(&cdproto.Message{SessionID: sid, Method: method, Params: p})
			}
		}
	}
}

// downloadDest is where the finished download goes: the directory a
// session on its tab asked for, else one asked for by a client that opened
// or drives the tab; "" when none did. A download from a tab no client
// opened or drives (the person's own, or one with no known tab) stays where
// Chrome put it: a program's downloadPath takes only its own downloads.
// Call with r.mu held.
func (r *Relay) downloadDest(dl *download) string {
	if dl.unsure {
		return ""
	}
	name := baseName(dl.suggested)
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, 0) {
		name = unnumbered(dl.info.Filename)
	}
	dest := func(b downloadBehavior) string {
		if b.byGUID {
			return filepath.Join(b.dir, dl.guid)
		}
		return filepath.Join(b.dir, name)
	}
	last, _ := r.heldBehavior(dl)
	if last.dir == "" {
		last = dl.held
	}
	if last.dir == "" {
		return ""
	}
	return dest(last)
}

// heldBehavior is what the clients that drive dl's tab ask of its
// downloads now: dir is the directory a session on its tab asked for,
// else one a client that opened or drives the tab asked for, of several
// the last set (a deny does not hide it: see downloadDenied); deny, a
// deny at the first of those levels that asks for anything, where a
// directory at the same level wins over it. Call with r.mu held.
func (r *Relay) heldBehavior(dl *download) (dir downloadBehavior, deny bool) {
	if dl.tab == nil || dl.unsure {
		return downloadBehavior{}, false
	}
	var drivers []*Client
	for c := range r.clients {
		if c.sees(dl.tab) && (dl.tab.creator == c || c.hasSessionOn(dl.tab)) {
			drivers = append(drivers, c)
		}
	}
	var sessionDir, sessionDeny bool
	bt := r.behaviorTab(dl.tab)
	for _, c := range drivers {
		for sid, b := range c.sessionDownloads {
			if s := r.sessions[sid]; s != nil && s.tab == bt {
				sessionDir, sessionDeny = sessionDir || b.dir != "", sessionDeny || b.deny
				if b.dir != "" && b.set > dir.set {
					dir = b
				}
			}
		}
	}
	if sessionDir || sessionDeny {
		deny = !sessionDir
	}
	clientDir, clientDeny := false, false
	for _, c := range drivers {
		clientDir, clientDeny = clientDir || c.download.dir != "", clientDeny || c.download.deny
		if !sessionDir && c.download.dir != "" && c.download.set > dir.set {
			dir = c.download
		}
	}
	if !sessionDir && !sessionDeny {
		deny = clientDeny && !clientDir
	}
	return dir, deny
}

// downloadDenied reports whether the clients that drive dl's tab deny
// its downloads (Browser.setDownloadBehavior {behavior: deny}): on a
// session on the tab, else for the whole client, as downloadDest reads
// them; a directory asked for at the same level wins over a deny. A
// denied download must not land in the person's Downloads folder: a
// hostile page an agent looks at would leave files there no one chose
// (TestRedTeamDriveByDownloads). Call with r.mu held.
func (r *Relay) downloadDenied(dl *download) bool {
	if dl.unsure {
		return false
	}
	dir, deny := r.heldBehavior(dl)
	if dir.dir == "" && !deny {
		return dl.heldDeny
	}
	return deny
}

// deny cancels dl, which a client that drives its tab denies: in Chrome
// once chrome.downloads has reported it, and its file is removed if
// Chrome finished it first (a small file can finish before the tab's
// event reaches the relay). Call with r.mu held.
func (r *Relay) deny(dl *download) {
	dl.denied = true
	switch {
	case dl.chromeID == 0:
		dl.cancel = true // canceled when chrome.downloads reports it
	case dl.info.State == "in_progress":
		r.cancelChromeDownload(dl.chromeID)
	}
	r.finishDownload(dl)
}

// moveFile moves src to dst, or, when dst exists, to "name (N).ext" beside
// it as Chrome names a download whose name is taken, and returns the path
// it used. It never replaces a file: the name comes from the page (its
// Content-Disposition, its <a download>), and a hostile page must not
// overwrite what the program downloaded or keeps there.
func moveFile(src, dst string) (string, error) {
	ext := filepath.Ext(dst)
	stem := strings.TrimSuffix(dst, ext)
	for i := 0; i < 100; i++ {
		to := dst
		if i > 0 {
			to = fmt.Sprintf("%s (%d)%s", stem, i, ext)
		}
		err := moveNew(src, to)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return to, err
	}
	return "", fmt.Errorf("%s and 99 more of its name exist: %w", dst, fs.ErrExist)
}

// moveNew moves src to dst, which must not exist: a hard link (which fails
// on an existing dst in one step), else a copy into a file created new.
func moveNew(src, dst string) error {
	err := os.Link(src, dst)
	if err == nil {
		return os.Remove(src)
	}
	if errors.Is(err, fs.ErrExist) {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	if err := out.Close(); err != nil {
		os.Remove(dst)
		return err
	}
	in.Close()
	return os.Remove(src)
}

func (r *Relay) beginDownload(dl *download, frameID, name string) {
	if dl.begun {
		return
	}
	dl.begun = true
	if dl.tab != nil && dl.tab.creator != nil && !dl.tab.personsPopup() {
		// A program's own tab (or its popup): the behavior holds to the
		// end. One of the person's tabs a program drives for a while
		// keeps none: once the program is gone, the person's stay theirs.
		dl.held, dl.heldDeny = r.heldBehavior(dl)
	}
	r.broadcastDownload(dl, cdproto.EventBrowserDownloadWillBegin, map[string]string{
		"frameId": frameID, "guid": dl.guid, "url": dl.url, "suggestedFilename": name,
	})
}

// onPageDownload handles a tab's Page.downloadWillBegin/downloadProgress.
// Call with r.mu held.
func (r *Relay) onPageDownload(t *tab, method cdproto.MethodType, params jsonv2.Value) {
	r.downloads.init()
	switch method {
	case eventPageDownloadWillBegin:
		var p struct {
			FrameID           string `json:"frameId"`
			GUID              string `json:"guid"`
			URL               string `json:"url"`
			SuggestedFilename string `json:"suggestedFilename"`
		}
		if jsonv2.Unmarshal(params, &p, wire.Options) != nil || r.downloads.byGUID[p.GUID] != nil {
			return // told by the tab and by a frame's own session
		}
		if dl := r.downloads.joinedByReferrer(t, p.URL); dl != nil {
			dl.suggested = p.SuggestedFilename
			return // begun and handled already: one download, not two
		}
		frame := r.frameOf(t, p.FrameID)
		dl := r.downloads.linkItem(t, frame, p.URL, r.tabs)
		if dl == nil {
			dl = &download{url: p.URL}
		} else {
			dl.unsure = true
		}
		dl.guid, dl.tab, dl.frame, dl.suggested = p.GUID, t, frame, p.SuggestedFilename
		r.downloads.byGUID[p.GUID] = dl
		r.downloads.track(dl)
		r.beginDownload(dl, p.FrameID, p.SuggestedFilename)
		if r.downloadDenied(dl) {
			r.deny(dl)
		} else if dl.info.State == "complete" || dl.info.State == "interrupted" {
			r.finishDownload(dl)
		}
	case eventPageDownloadProgress:
		var p struct {
			GUID          string  `json:"guid"`
			TotalBytes    float64 `json:"totalBytes"`
			ReceivedBytes float64 `json:"receivedBytes"`
			State         string  `json:"state"`
		}
		if jsonv2.Unmarshal(params, &p, wire.Options) != nil {
			return
		}
		dl := r.downloads.byGUID[p.GUID]
		if dl == nil || dl.done || p.State == "completed" {
			// The completed event waits for chrome.downloads, which knows
			// the file's path.
			return
		}
		if p.State == "canceled" {
			r.downloads.retire(dl)
		}
		r.broadcastDownload(dl, cdproto.EventBrowserDownloadProgress, map[string]any{
			"guid": p.GUID, "totalBytes": p.TotalBytes, "receivedBytes": p.ReceivedBytes, "state": p.State,
		})
	}
}

// frameOf is t's frame of another site whose frame id is id, nil for
// another frame; where the relay does not know what page it shows yet (it
// attached before the frame's first load, and Page came on after that), it
// asks Chrome, for the item that comes next (fromTab). Call with r.mu held.
func (r *Relay) frameOf(t *tab, id string) *child {
	for _, ch := range r.children {
		if ch.tab == t && string(ch.targetID) == id {
			if ch.info.URL == "" {
				r.goWork(frameCheckTimeout, func(ctx context.Context) { r.frameURL(ctx, t, ch.sid) })
			}
			return ch
		}
	}
	return nil
}

// onExtDownload handles the extension's report of a chrome.downloads item.
// Call with r.mu held.
func (r *Relay) onExtDownload(info wire.DownloadInfo) {
	r.downloads.init()
	dl := r.downloads.byChrome[info.ID]
	if dl == nil {
		if dl = r.downloads.linkTab(info, r.tabs); dl == nil && info.FinalURL != "" {
			fin := info
			fin.URL = info.FinalURL
			dl = r.downloads.linkTab(fin, r.tabs)
		}
		if dl == nil {
			dl = &download{url: info.URL}
			dl.tab = r.popupDownloadTab(info.SourceTabID)
			if dl.tab == nil {
				dl.from = r.referredTab(info.ReferrerTabID)
				dl.tab = dl.from
				if dl.from != nil {
					dl.tab = r.popupDownloadTab(dl.from.id)
				}
			}
			if dl.tab == nil {
				if g := r.closedTabOf(info); g != nil {
					dl.held, dl.heldDeny = g.dir, g.deny
				}
			}
		}
		dl.chromeID = info.ID
		r.downloads.byChrome[info.ID] = dl
		r.downloads.track(dl)
		if dl.guid == "" && dl.tab != nil {
			// A download of a new tab a page of dl.tab opened: the tab's,
			// told now, since no session on the new tab tells of it.
			dl.info = info
			dl.guid = "livetab-download-" + strconv.FormatInt(info.ID, 10)
			r.downloads.byGUID[dl.guid] = dl
			// The name it is told by is the one it gets in the client's
			// directory (downloadDest).
			if info.Filename != "" {
				dl.suggested = unnumbered(info.Filename)
			}
			r.beginDownload(dl, "", dl.suggested)
			if r.downloadDenied(dl) {
				r.deny(dl)
			}
		}
	}
	dl.info = info
	if dl.tab == nil && dl.heldDeny && !dl.denied {
		r.deny(dl)
	}
	if dl.cancel && info.State == "in_progress" {
		dl.cancel = false
		r.cancelChromeDownload(info.ID)
	}
	if (info.State == "complete" || info.State == "interrupted") && dl.guid == "" {
		// A download no attached tab announced (started by the user, or
		// in a tab livetab does not debug): give it an id of its own.
		dl.guid = "livetab-download-" + strconv.FormatInt(info.ID, 10)
		r.downloads.byGUID[dl.guid] = dl
		r.beginDownload(dl, "", baseName(info.Filename))
	}
	if dl.guid != "" {
		r.finishDownload(dl)
	}
}

// popupDownloadTab is the tab whose download one begun in a new tab that
// a page of tab source opened counts as: source, or, when no client
// drives source (a popup of a popup), the tab that opened it, and so on.
// nil when there is none. Call with r.mu held.
func (r *Relay) popupDownloadTab(source int64) *tab {
	for range 8 {
		t := r.tabs[source]
		if source == 0 || t == nil {
			return nil
		}
		for c := range r.clients {
			if c.sees(t) && (t.creator == c || c.hasSessionOn(t)) {
				return t
			}
		}
		source = t.info.OpenerTabID
	}
	return nil
}

// referredTab is the tab (id) that the extension found showing the page,
// or the frame, that a download no session told of was begun from, when a
// client that drives it denies or moves downloads, or the relay watches it
// as such a client's popup: the popup's page began the download before
// the watch's attach landed (TestRedTeamPopupDownloadsAtOnce), a frame of
// another site that no one turned Page on in, or nested in one, did
// (TestRedTeamFrameDownloadsHeedTheBehavior). nil otherwise: a tab the
// person opened behind a program's (a Ctrl+click) stays theirs. Call with
// r.mu held.
func (r *Relay) referredTab(id int64) *tab {
	t := r.tabs[id]
	if id == 0 || t == nil || t.closed || t.behind && t.info.OpenerTabID != 0 {
		return nil
	}
	if t.downloadWatch || r.watchable(t) || r.deniesOrMoves(t) {
		return t
	}
	return nil
}

// joinedByReferrer reports whether a download of url that t tells of now
// is one the relay joined to t by its referrer before (referredTab), and
// notes that it was told. Call with r.mu held.
func (d *downloadState) joinedByReferrer(t *tab, url string) *download {
	now := time.Now()
	for _, dl := range d.byChrome {
		if dl.from == t && !dl.told && dl.url == url && now.Sub(dl.heard) <= linkTabWindow {
			dl.told = true
			return dl
		}
	}
	return nil
}

// A page of a client's tab can open a popup, which is the client's too
// (inherit), and no client need ever attach to it: chromedp and page do
// not, until asked. No session then tells of the downloads the popup's
// page begins (an <a download>, a frame of an attachment, a later one),
// and the client's deny or directory did not hold them: they landed in
// the person's Downloads folder (TestRedTeamPopupDownloadsDenied).
// Chrome's own Browser.setDownloadBehavior holds in every tab of the
// browser context, popups included; so the relay attaches to such a popup
// itself, with Page on, for as long as the client's behavior asks for it.
// A download the page begins before the attach lands is caught only when
// it is the popup's first load (lib/loads.js). A tab opened behind the
// program's (the person's Ctrl+click on one of its links) is not watched:
// the downloads the person makes there are the person's
// (TestRedTeamPersonsCtrlClickTabDownloadNotDenied).

// behaviorTab is the tab whose sessions' download behaviors (chromedp and
// page set theirs on the tab's session) hold for t's downloads: t, or for a
// tab a page opened (a popup) no session on which set one, the tab that
// opened it, and so on.
// Call with r.mu held.
func (r *Relay) behaviorTab(t *tab) *tab {
	for range 8 {
		for c := range r.clients {
			for sid := range c.sessionDownloads {
				if s := r.sessions[sid]; s != nil && s.tab == t {
					return t
				}
			}
		}
		o := r.tabs[t.info.OpenerTabID]
		if t.info.OpenerTabID == 0 || o == nil || o == t {
			return t
		}
		t = o
	}
	return t
}

// caresForDownloads reports whether the downloads of t, a tab of its
// creator's, are denied or moved (downloadDenied, downloadDest), so that
// the relay must hear of them. Call with r.mu held.
func (r *Relay) caresForDownloads(t *tab) bool {
	c := t.creator
	if c == nil || !c.sees(t) {
		return false
	}
	if c.download.deny || c.download.dir != "" {
		return true
	}
	bt := r.behaviorTab(t)
	for sid, b := range c.sessionDownloads {
		if s := r.sessions[sid]; s != nil && s.tab == bt && (b.deny || b.dir != "") {
			return true
		}
	}
	return false
}

// watchable reports whether t is a popup whose downloads the relay
// watches (watchPopupDownloads). Call with r.mu held.
func (r *Relay) watchable(t *tab) bool {
	return !t.closed && !t.kept && !t.behind && t.info.OpenerTabID != 0 && r.caresForDownloads(t)
}

// keepsForDownloads reports whether the relay keeps its debugger on t,
// with no session there, to hear of its downloads. Call with r.mu held.
func (r *Relay) keepsForDownloads(t *tab) bool {
	return t.downloadWatch && !t.closed && r.caresForDownloads(t)
}

// unwatchDownloads lets go of the popups the relay watched for clients whose
// downloads are no longer denied or moved, or whose session that asked it
// ended: nothing else releases them, and the person would see the
// debugging bar for as long as they live. Call with r.mu held.
func (r *Relay) unwatchDownloads() {
	for _, t := range r.tabs {
		if t.downloadWatch && !r.keepsForDownloads(t) {
			t.downloadWatch = false
			r.releaseIfUnused(t)
		}
	}
}

// watchPopupDownloads attaches, in the background, to t when it is a popup
// of a tab of a client whose downloads are denied or moved. Call with r.mu
// held.
func (r *Relay) watchPopupDownloads(t *tab) {
	if t.downloadWatch || r.paused || !r.watchable(t) {
		return
	}
	t.downloadWatch = true
	t.watchGen++
	gen := t.watchGen
	r.goWork(clientTimeout, func(ctx context.Context) {
		err := r.watchPopup(ctx, t)
		if workerAway(err) {
			// The service worker stopped on the way: once it is back,
			// once more (refreshTabs may have listed the popup already),
			// if a client still cares.
			if err = r.b.WaitConnected(ctx); err == nil {
				r.mu.Lock()
				cares := r.keepsForDownloads(t)
				r.mu.Unlock()
				if cares {
					err = r.watchPopup(ctx, t)
				}
			}
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if t.watchGen != gen {
			return // a later watch (after reconcile) is the tab's now
		}
		if err != nil {
			r.log.Info("could not watch a popup's downloads", "tab", t.id, "err", err)
			t.downloadWatch = false
		}
		// The client may have stopped caring while the attach waited for
		// the extension: nothing else lets go of the popup then, and the
		// person saw the debugging bar on it for as long as it lived (red
		// team, 3 of 3).
		if !r.keepsForDownloads(t) {
			t.downloadWatch = false
			r.releaseIfUnused(t)
		}
	})
}

// workerAway reports whether err says the extension went away under a
// command: its socket closed, or chrome.debugger's "No SW".
func workerAway(err error) bool {
	return errors.Is(err, bridge.ErrExtensionGone) || errors.Is(err, bridge.ErrNotConnected) || err != nil && err.Error() == "No SW"
}

// watchPopup attaches to the popup t, turns on what tells of its downloads
// and notes where it is.
func (r *Relay) watchPopup(ctx context.Context, t *tab) error {
	if err := r.ensureAttached(ctx, t); err != nil {
		return err
	}
	if _, err := r.ask(ctx, t, "", cdproto.CommandPageEnable, emptyObject); err != nil {
		return err
	}
	// A frame of another site tells of its downloads on its own session
	// only (watchFrameDownloads).
	if _, err := r.ask(ctx, t, "", cdproto.CommandTargetSetAutoAttach, jsonv2.Value(watchAutoAttach)); err != nil {
		return err
	}
	// Where the popup is now: a download is joined to it by the page it
	// shows (fromTab), and the extension's report of its load can come
	// late.
	res, err := r.ask(ctx, t, "", cdproto.CommandTargetGetTargetInfo, emptyObject)
	if err != nil {
		return err
	}
	var info target.GetTargetInfoResult
	if err := jsonv2.Unmarshal(res, &info, wire.Options); err != nil {
		return err
	}
	if info.TargetInfo != nil {
		r.mu.Lock()
		if u := info.TargetInfo.URL; u != "" && u != t.info.URL {
			r.moveTo(t, u)
		}
		r.mu.Unlock()
	}
	return nil
}

// watchAutoAttach is the relay's auto-attach on a popup it watches.
const watchAutoAttach = `{"autoAttach":true,"waitForDebuggerOnStart":false,"flatten":true}`

// watchFrameDownloads turns Page on in ch, a frame that Chrome attached
// (a frame of another site, in a process of its own) in tab t whose
// downloads a client denies or moves, so that the frame's downloads reach
// the relay: they are told on the frame's own session only, and chromedp
// (so page and livetab mcp) never turns anything on there, nor does any
// client in a popup the relay watches. A hostile page's frame downloaded
// into the person's Downloads folder despite the program's deny
// (TestRedTeamFrameDownloadsHeedTheBehavior, TestRedTeamDriveByDownloads).
// Call with r.mu held.
func (r *Relay) watchFrameDownloads(t *tab, ch *child) {
	if ch.pageOn || !t.downloadWatch && !r.deniesOrMoves(t) {
		return
	}
	ch.pageOn = true
	r.goWork(clientTimeout, func(ctx context.Context) {
		_, err := r.ask(ctx, t, ch.sid, cdproto.CommandPageEnable, emptyObject)
		if err == nil {
			// The page it shows now: its downloads' referrer (fromTab).
			// Page's events tell of its later navigations.
			_, err = r.frameURL(ctx, t, ch.sid)
		}
		if err == nil {
			// Its own frames of other sites (a frame nested in another
			// site's), whose downloads are told on their sessions alone.
			_, err = r.ask(ctx, t, ch.sid, cdproto.CommandTargetSetAutoAttach, jsonv2.Value(watchAutoAttach))
		}
		if err != nil {
			r.log.Info("could not watch the downloads of a frame", "tab", t.id, "err", err)
		}
	})
}

// watchesFrames reports whether the relay auto-attaches in the attachment
// sid of t itself: a popup it watches, or a frame it turned Page on in.
// Call with r.mu held.
func (r *Relay) watchesFrames(t *tab, sid string) bool {
	if sid == "" {
		return t.downloadWatch
	}
	ch := r.children[sid]
	return ch != nil && ch.tab == t && ch.pageOn
}

// watchAllFrameDownloads runs watchFrameDownloads on every frame the
// relay knows, after a client changed what it does with downloads. Call
// with r.mu held.
func (r *Relay) watchAllFrameDownloads() {
	for _, ch := range r.children {
		r.watchFrameDownloads(ch.tab, ch)
	}
}

// deniesOrMoves reports whether a client that drives t denies or moves its
// downloads, as downloadDenied and downloadDest read it. Call with r.mu
// held.
func (r *Relay) deniesOrMoves(t *tab) bool {
	bt := r.behaviorTab(t)
	for c := range r.clients {
		if !c.sees(t) || t.creator != c && !c.hasSessionOn(t) {
			continue
		}
		if c.download.deny || c.download.dir != "" {
			return true
		}
		for sid, b := range c.sessionDownloads {
			if s := r.sessions[sid]; s != nil && s.tab == bt && (b.deny || b.dir != "") {
				return true
			}
		}
	}
	return false
}

func (r *Relay) finishDownload(dl *download) {
	if dl.done || dl.info.State == "" || dl.info.State == "in_progress" {
		return
	}
	r.downloads.retire(dl)
	p := map[string]any{
		"guid": dl.guid, "totalBytes": dl.info.TotalBytes, "receivedBytes": dl.info.BytesReceived, "state": "completed",
	}
	if dl.denied {
		p["state"] = "canceled"
		r.broadcastDownload(dl, cdproto.EventBrowserDownloadProgress, p)
		if f := dl.info.Filename; f != "" && dl.info.State == "complete" {
			go os.Remove(f)
		}
		return
	}
	if dl.info.State != "complete" {
		p["state"] = "canceled"
		r.broadcastDownload(dl, cdproto.EventBrowserDownloadProgress, p)
		return
	}
	if dl.origin != "" && dl.info.FinalURL != "" && originOf(dl.info.FinalURL) != dl.origin {
		p["state"] = "canceled"
		r.broadcastDownload(dl, cdproto.EventBrowserDownloadProgress, p)
		if f := dl.info.Filename; f != "" {
			go os.Remove(f)
		}
		r.log.Warn("removed a Livetab.downloadBlob download redirected to another origin", "url", dl.url, "final", dl.info.FinalURL)
		return
	}
	p["filePath"] = dl.info.Filename
	dest := r.downloadDest(dl)
	if dest == "" || dl.info.Filename == "" {
		r.broadcastDownload(dl, cdproto.EventBrowserDownloadProgress, p)
		return
	}
	// Off the relay's lock: a copy across file systems takes a while.
	src := dl.info.Filename
	go func() {
		to, err := moveFile(src, dest)
		r.mu.Lock()
		defer r.mu.Unlock()
		if err != nil {
			// The file stays where Chrome put it, and the event says where.
			r.log.Warn("moving a finished download to the directory the client asked for", "from", src, "to", dest, "err", err)
		} else {
			p["filePath"] = to
		}
		r.broadcastDownload(dl, cdproto.EventBrowserDownloadProgress, p)
	}()
}

// originOf is the origin of an http(s) URL, "" for any other.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + strings.ToLower(u.Host)
}

func baseName(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' || path[i] == '\\' {
			return path[i+1:]
		}
	}
	return path
}

// unnumbered is the name of the file at path without the " (N)" Chrome
// adds to a name taken in its Downloads folder, when the file of that name
// is there beside it: the name Chrome suggested, for a download no
// session told of (only chrome.downloads did, with the path it wrote). A
// page that named its file "x (1).bin" itself, beside the person's x.bin,
// is taken for Chrome's numbering: the relay cannot tell the two apart
// without Page.downloadWillBegin, which a client that turns Page on in its
// tab (chromedp, Playwright and Puppeteer all do) gets the name from.
func unnumbered(path string) string {
	name := baseName(path)
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	i := strings.LastIndex(stem, " (")
	if i <= 0 || !strings.HasSuffix(stem, ")") {
		return name
	}
	if _, err := strconv.Atoi(stem[i+2 : len(stem)-1]); err != nil {
		return name
	}
	orig := stem[:i] + ext
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), orig)); err != nil {
		return name
	}
	return orig
}

// The tab-level download events, deprecated in CDP (and gone from cdproto)
// but still what Chrome sends on a tab session.
const (
	eventPageDownloadWillBegin cdproto.MethodType = "Page.downloadWillBegin"
	eventPageDownloadProgress  cdproto.MethodType = "Page.downloadProgress"
)

// safeFilename is what a Livetab.downloadBlob filename may be: a plain
// name, which chrome.downloads takes relative to the Downloads folder.
var safeFilename = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._ -]{0,99}$`)

// downloadBlob answers Livetab.downloadBlob: the extension downloads a
// blob: URL, or an http(s) URL, of the session's tab's origin with
// chrome.downloads, which Chrome does not hold to one automatic download
// per page as it does the page's own <a download>, and which, unlike the
// page's fetch, sends no Network event per chunk across the extension. The
// download is the tab's: its events and its file go as for any download
// the tab announced. The extension checks that the URL's origin is the
// tab's, so a client reaches no other page's blobs and no other site with
// the person's cookies; an http(s) download redirected to another origin
// is canceled and its file removed (finishDownload).
func (c *Client) downloadBlob(ctx context.Context, m *cdproto.Message, sid target.SessionID) {
	var p livetabcdp.DownloadBlobParams
	if !c.params(m, sid, &p) {
		return
	}
	r := c.r
	r.mu.Lock()
	var t *tab
	if s := r.sessions[sid]; sid != "" && s != nil && !s.browser && s.child == nil && s.client == c {
		t = s.tab
	}
	offPrivate := c.pol.set && c.pol.params.BlockPrivate
	r.mu.Unlock()
	switch {
	case t == nil:
		c.fail(m.ID, sid, -32000, fmt.Sprintf("%s needs a tab's session: send it with the sessionId of the tab whose page made the blob", m.Method))
		return
	case !strings.HasPrefix(p.URL, "blob:") && originOf(p.URL) == "":
		c.fail(m.ID, sid, -32602, fmt.Sprintf("%s: %.80q is neither a blob: URL nor an http(s) URL; other URLs download through the page (a link, a navigation)", m.Method, p.URL))
		return
	case offPrivate && !strings.HasPrefix(p.URL, "blob:"):
		// chrome.downloads follows redirects where no rule of the
		// extension reaches (declarativeNetRequest does not see the
		// extension's downloads): a server of the client's site could
		// send the download to a private address
		// (TestRedTeamCaptureStaysOffPrivateAddresses).
		c.fail(m.ID, sid, -32000, fmt.Sprintf("%s: this connection's policy keeps it off private addresses, and a download the extension makes follows redirects no rule holds: read %.80q in the page (fetch) and download the blob instead", m.Method, p.URL))
		return
	}
	if strings.HasPrefix(p.URL, "blob:") {
		if err := c.checkBlob(t, p.URL); err != nil {
			c.failErr(m.ID, sid, err)
			return
		}
	}
	name := p.Filename
	if !safeFilename.MatchString(name) {
		name = ""
	}
	var id [16]byte
	rand.Read(id[:])
	dl := &download{guid: "livetab-blob-" + hex.EncodeToString(id[:]), url: p.URL, tab: t, origin: originOf(p.URL), suggested: name}
	r.mu.Lock()
	r.downloads.init()
	if wait, ok := r.downloads.admit(dl, time.Now()); !ok {
		r.mu.Unlock()
		c.fail(m.ID, sid, -32000, fmt.Sprintf("livetab: %d Livetab.downloadBlob downloads are in flight or failed in the last minute, the most livetab lets Chrome have (failed downloads by the hundred crash the extension): retry in %s, and download only URLs that exist", maxUnsettled, wait.Round(time.Second)))
		return
	}
	r.downloads.byGUID[dl.guid] = dl
	r.downloads.track(dl)
	// Announced before the extension starts it, so that no report of
	// chrome.downloads (linked by URL) precedes the announcement.
	r.beginDownload(dl, "", name)
	r.mu.Unlock()
	_, err := r.b.Call(ctx, wire.DownloadBlob, 0, wire.DownloadBlobParams{TabID: t.id, URL: p.URL, Filename: name})
	if err != nil {
		r.mu.Lock()
		if !dl.done {
			r.downloads.retire(dl)
			r.broadcastDownload(dl, cdproto.EventBrowserDownloadProgress, map[string]any{
				"guid": dl.guid, "totalBytes": 0, "receivedBytes": 0, "state": "canceled",
			})
		}
		if dl.chromeID == 0 {
			delete(r.downloads.byGUID, dl.guid)
		}
		r.mu.Unlock()
		c.failErr(m.ID, sid, fmt.Errorf("livetab: downloading the blob: %w", err))
		return
	}
	c.reply(m.ID, sid, livetabcdp.DownloadBlobResult{GUID: dl.guid})
}

// cancelDownload answers Browser.cancelDownload, which Playwright's
// download.cancel() and capture's cancellation send: chrome.downloads
// cancels the download, which removes its partial file, and the client
// hears it canceled. Only a download of a tab the client drives, as only
// those are moved to its directory (downloadDest); one that is done already
// is left as it is, as Chrome does.
func (c *Client) cancelDownload(m *cdproto.Message, sid target.SessionID) {
	var p struct {
		GUID string `json:"guid"`
	}
	if !c.params(m, sid, &p) {
		return
	}
	r := c.r
	r.mu.Lock()
	defer r.mu.Unlock()
	r.downloads.init()
	dl := r.downloads.byGUID[p.GUID]
	if dl == nil || dl.tab == nil || !c.sees(dl.tab) || !(dl.tab.creator == c || c.hasSessionOn(dl.tab)) {
		c.fail(m.ID, sid, -32602, fmt.Sprintf("Browser.cancelDownload: no download with guid %q of a tab this client drives (Browser.downloadWillBegin names them)", p.GUID))
		return
	}
	switch {
	case dl.done:
	case dl.chromeID != 0:
		r.cancelChromeDownload(dl.chromeID)
	default:
		dl.cancel = true
	}
	c.reply(m.ID, sid, nil)
}

// cancelChromeDownload asks the extension to cancel chrome.downloads item
// id, in the background. Call with r.mu held.
func (r *Relay) cancelChromeDownload(id int64) {
	r.goWork(clientTimeout, func(ctx context.Context) {
		if _, err := r.b.Call(ctx, wire.CancelDownload, 0, map[string]int64{"id": id}); err != nil {
			r.log.Warn("canceling a download", "id", id, "err", err)
		}
	})
}
