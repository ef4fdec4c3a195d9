package extcdp

import (
	"strconv"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
)

// Extensions may not choose where downloads go (Browser.setDownloadBehavior
// is refused), but chrome.downloads sees every download and its file. The
// relay joins the tab's Page.download* events with the extension's
// chrome.downloads reports and gives clients that asked for download events
// the standard Browser.downloadWillBegin and Browser.downloadProgress, the
// completed one with filePath: the file in the user's Downloads folder
// (docs/decisions/2026-11-22-downloads-come-from-chrome-downloads.md).

// download links one download's CDP guid and its chrome.downloads id.
type download struct {
	guid     string
	chromeID int64
	// tab is where it started, when a debugged tab announced it: only the
	// clients that may see that tab hear of it.
	tab   *tab
	url   string
	begun bool // Browser.downloadWillBegin sent
	done  bool // the completed (or canceled) progress sent
	info  wire.DownloadInfo
}

type downloadState struct {
	byGUID   map[string]*download
	byChrome map[int64]*download
}

func (d *downloadState) init() {
	if d.byGUID == nil {
		d.byGUID = map[string]*download{}
		d.byChrome = map[int64]*download{}
	}
}

// unlinked finds a download of url that one side reported and the other
// not yet. Call with r.mu held.
func (d *downloadState) unlinked(url string, wantGUID bool) *download {
	for _, dl := range d.byGUID {
		if dl.url == url && wantGUID && dl.chromeID == 0 {
			return dl
		}
	}
	for _, dl := range d.byChrome {
		if dl.url == url && !wantGUID && dl.guid == "" {
			return dl
		}
	}
	return nil
}

// broadcastDownload sends a Browser.* download event to the clients that
// enabled download events and may see the tab it started in. Call with
// r.mu held.
func (r *Relay) broadcastDownload(dl *download, method cdproto.MethodType, params any) {
	p, err := jsonv2.Marshal(params, wire.Options)
	if err != nil {
		return
	}
	for c := range r.clients {
		if c.downloadEvents && (dl.tab == nil || c.sees(dl.tab)) {
			c.deliver(&cdproto.Message{Method: method, Params: p})
		}
	}
}

func (r *Relay) beginDownload(dl *download, frameID, name string) {
	if dl.begun {
		return
	}
	dl.begun = true
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
		if jsonv2.Unmarshal(params, &p, wire.Options) != nil {
			return
		}
		dl := r.downloads.unlinked(p.URL, false)
		if dl == nil {
			dl = &download{url: p.URL}
		}
		dl.guid, dl.tab = p.GUID, t
		r.downloads.byGUID[p.GUID] = dl
		r.beginDownload(dl, p.FrameID, p.SuggestedFilename)
		if dl.info.State == "complete" || dl.info.State == "interrupted" {
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
			dl.done = true
		}
		r.broadcastDownload(dl, cdproto.EventBrowserDownloadProgress, map[string]any{
			"guid": p.GUID, "totalBytes": p.TotalBytes, "receivedBytes": p.ReceivedBytes, "state": p.State,
		})
	}
}

// onExtDownload handles the extension's report of a chrome.downloads item.
// Call with r.mu held.
func (r *Relay) onExtDownload(info wire.DownloadInfo) {
	r.downloads.init()
	dl := r.downloads.byChrome[info.ID]
	if dl == nil {
		if dl = r.downloads.unlinked(info.URL, true); dl == nil && info.FinalURL != "" {
			dl = r.downloads.unlinked(info.FinalURL, true)
		}
		if dl == nil {
			dl = &download{url: info.URL}
		}
		dl.chromeID = info.ID
		r.downloads.byChrome[info.ID] = dl
	}
	dl.info = info
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

func (r *Relay) finishDownload(dl *download) {
	if dl.done || dl.info.State == "" || dl.info.State == "in_progress" {
		return
	}
	dl.done = true
	p := map[string]any{
		"guid": dl.guid, "totalBytes": dl.info.TotalBytes, "receivedBytes": dl.info.BytesReceived, "state": "completed",
	}
	if dl.info.State == "complete" {
		p["filePath"] = dl.info.Filename
	} else {
		p["state"] = "canceled"
	}
	r.broadcastDownload(dl, cdproto.EventBrowserDownloadProgress, p)
}

func baseName(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' || path[i] == '\\' {
			return path[i+1:]
		}
	}
	return path
}

// The tab-level download events, deprecated in CDP (and gone from cdproto)
// but still what Chrome sends on a tab session.
const (
	eventPageDownloadWillBegin cdproto.MethodType = "Page.downloadWillBegin"
	eventPageDownloadProgress  cdproto.MethodType = "Page.downloadProgress"
)
