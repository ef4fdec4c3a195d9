package agent

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/chromedp/cdproto/runtime"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/livetab/livetab/capture"
	"github.com/livetab/livetab/page"
	"github.com/livetab/livetab/upload"
)

// Capture.

type captureArgs struct {
	Index    int    `json:"index,omitempty" jsonschema:"Element index from the latest snapshot: an image, video, audio or canvas, or a download link or button." schema:"minimum=1"`
	Selector string `json:"selector,omitempty" jsonschema:"CSS selector, instead of index."`
	URL      string `json:"url,omitempty" jsonschema:"Instead of an element: a URL the page can fetch (http, https, data:, blob:)."`
	Name     string `json:"name,omitempty" jsonschema:"File name to save as; by default the name the capture finds."`
}

type captureOutput struct {
	Path   string `json:"path"`
	Name   string `json:"name"`
	MIME   string `json:"mime"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	Source string `json:"source"`
	Method string `json:"method"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
}

// inlineImageMax is the largest captured image also returned inline.
const inlineImageMax = 1 << 20

func (s *Server) captureTool(ctx context.Context, a captureArgs, out *toolOut) (page.Result, error) {
	ref := page.Ref{Index: a.Index, Selector: a.Selector}
	if ref.IsZero() == (a.URL == "") {
		return page.Result{}, errors.New("give either an element (index or selector) or a url")
	}
	pg, err := s.page(ctx)
	if err != nil {
		return page.Result{}, err
	}
	opts := []capture.Option{capture.To(capture.Dir(s.pol.DownloadDir))}
	if a.Name != "" {
		opts = append(opts, capture.Name(filepath.Base(a.Name)))
	}
	if f := progressFunc(ctx, "capturing"); f != nil {
		opts = append(opts, capture.OnProgress(func(p capture.Progress) { f(p.Done, p.Total) }))
	}
	if s.pol.ReadOnly {
		// A download is started by a click, which read-only mode refuses,
		// and shows in the person's list; the transfer channel does neither.
		opts = append(opts, capture.Rungs(capture.RungBody, capture.RungChannel, capture.RungPage))
	}
	var res *capture.Result
	_, err = pg.Do(ctx, page.Action{Kind: page.KindCapture, Op: "capture", Ref: ref, Target: a.URL},
		func(tctx context.Context, el runtime.RemoteObjectID) (string, error) {
			c, err := capture.New(tctx, opts...)
			if err != nil {
				return "", err
			}
			defer c.Close()
			if el != "" {
				res, err = c.Element(tctx, capture.Object(el))
			} else {
				res, err = c.URL(tctx, a.URL)
			}
			return "", err
		})
	if err != nil {
		return page.Result{}, err
	}
	out.structured = captureOutput{
		Path: res.Location, Name: page.Defuse(res.Name), MIME: res.MIME, Size: res.Size, SHA256: res.SHA256,
		Source: res.Source, Method: res.Rung.String(), Width: res.Width, Height: res.Height,
	}
	out.extra = append(out.extra, &mcp.ResourceLink{
		URI: fileURI(res.Location), Name: res.Name, MIMEType: res.MIME, Size: new(res.Size),
		Description: "sha256 " + res.SHA256,
	})
	// The file's name is said once: in its path, unless it was saved
	// under another. Either is the site's or the page's words (its
	// Content-Disposition, an image's description): in a page block.
	where := "path: " + res.Location
	if filepath.Base(res.Location) != res.Name {
		where = "name: " + res.Name + "\n" + where
	}
	// How it was read is in the structured result.
	text := fmt.Sprintf("saved a file (%s, %d bytes, sha256 %s", res.MIME, res.Size, res.SHA256)
	if res.Width > 0 {
		text += fmt.Sprintf(", %dx%d", res.Width, res.Height)
	}
	text += "):\n" + page.Fence(where)
	r := page.Result{Text: text}
	if strings.HasPrefix(res.MIME, "image/") && res.Size <= inlineImageMax && res.MIME != "image/svg+xml" {
		if b, err := os.ReadFile(res.Location); err == nil {
			r.Image, r.MIME = b, res.MIME
		}
	}
	return r, nil
}

func fileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// Upload.

type uploadArgs struct {
	Index    int      `json:"index,omitempty" jsonschema:"Element index from the latest snapshot: a file input (or its label), a drop zone or a paste target." schema:"minimum=1"`
	Selector string   `json:"selector,omitempty" jsonschema:"CSS selector, instead of index."`
	Files    []string `json:"files" jsonschema:"Paths of files in the person's upload directory; relative paths are taken there." schema:"minItems=1"`
	Target   string   `json:"target,omitempty" jsonschema:"input: a file input; drop: drop onto a drop zone; paste: paste into an element." schema:"enum=input|drop|paste default=input"`
}

type uploadOutput struct {
	Mode  string         `json:"mode"`
	Files []uploadedFile `json:"files"`
}

type uploadedFile struct {
	Name   string `json:"name"`
	MIME   string `json:"mime"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

func (s *Server) uploadTool(ctx context.Context, a uploadArgs, out *toolOut) (page.Result, error) {
	ref := page.Ref{Index: a.Index, Selector: a.Selector}
	if ref.IsZero() {
		return page.Result{}, errors.New("give the element's index from the snapshot, or a CSS selector")
	}
	if len(a.Files) == 0 {
		return page.Result{}, errors.New("give the files to upload")
	}
	put := upload.Files
	switch a.Target {
	case "", "input":
	case "drop":
		put = upload.Drop
	case "paste":
		put = upload.Paste
	default:
		return page.Result{}, fmt.Errorf("unknown target %q; use input, drop or paste", a.Target)
	}
	paths := s.uploadPaths(a.Files)
	files := make([]upload.File, len(paths))
	for i, p := range paths {
		files[i] = upload.Path(p)
	}
	pg, err := s.page(ctx)
	if err != nil {
		return page.Result{}, err
	}
	var res *upload.Result
	settled, err := pg.Do(ctx, page.Action{Kind: page.KindUpload, Op: "upload", Ref: ref, Files: paths},
		func(tctx context.Context, el runtime.RemoteObjectID) (string, error) {
			var err error
			// The page's reaction after the files went in counts toward
			// the settling. Files put into an input settle the page there
			// and then, and the check for a rejection follows at once:
			// the one wait ends as soon as the page is quiet, where a
			// fixed wait for a rejection came first. With settling off, that
			// fixed wait stays.
			uopts := []upload.Option{upload.OnSet(func() { page.InputDone(tctx) })}
			if (a.Target == "" || a.Target == "input") && s.opts.Settle >= 0 {
				uopts = []upload.Option{upload.OnSet(func() {
					page.InputDone(tctx)
					page.SettleNow(tctx)
				}), upload.Settle(0)}
			}
			if f := progressFunc(ctx, "uploading"); f != nil {
				uopts = append(uopts, upload.OnProgress(func(p upload.Progress) { f(p.Done, p.Total) }))
			}
			// The policy checked the paths; upload checks again the file
			// it opens and gives the browser (a link swapped in between
			// reached the page).
			if dir := s.uploadDir(); dir != "" {
				uopts = append(uopts, upload.Within(dir))
			}
			res, err = put(tctx, upload.Object(el), files, uopts...)
			return "", err
		})
	if err != nil {
		return page.Result{}, err
	}
	var b strings.Builder
	list := []uploadedFile{}
	for _, f := range res.Files {
		fmt.Fprintf(&b, "\n- %s (%s, %d bytes, sha256 %s)", f.Name, f.MIME, f.Size, f.SHA256)
		list = append(list, uploadedFile{Name: f.Name, MIME: f.MIME, Size: f.Size, SHA256: f.SHA256})
	}
	out.structured = uploadOutput{Mode: res.Mode.String(), Files: list}
	if settled == "" { // settling is off
		settled = "Take a snapshot to see what the page made of them."
	}
	return page.Result{Text: fmt.Sprintf("uploaded %d file(s) (%s):%s\n%s", len(res.Files), res.Mode, b.String(), settled)}, nil
}

// uploadDir is the directory uploads come from: the upload directory,
// else the download directory.
func (s *Server) uploadDir() string {
	if s.pol.UploadDir != "" {
		return s.pol.UploadDir
	}
	return s.pol.DownloadDir
}

// uploadPaths takes relative paths in the upload directory (else the
// download directory), as the person's files are named there.
func (s *Server) uploadPaths(files []string) []string {
	dir := s.uploadDir()
	paths := make([]string, len(files))
	for i, f := range files {
		if !filepath.IsAbs(f) && dir != "" {
			f = filepath.Join(dir, f)
		}
		paths[i] = filepath.Clean(f)
	}
	return paths
}

// setFiles puts files into a file input for browser_fill_form as
// browser_upload does: natively when the browser may read them, else by
// streaming their bytes.
func (s *Server) setFiles(ctx context.Context, el runtime.RemoteObjectID, paths []string) error {
	files := make([]upload.File, len(paths))
	for i, p := range paths {
		files[i] = upload.Path(p)
	}
	if dir := s.uploadDir(); dir != "" {
		_, err := upload.Files(ctx, upload.Object(el), files, upload.Settle(0), upload.Within(dir))
		return err
	}
	// The form settles once, after its submit: a field's own wait for the
	// page to reject its file would hold up every file field. A page that
	// marks the file invalid as it takes it is still seen, and one that
	// does so later keeps the form from submitting.
	_, err := upload.Files(ctx, upload.Object(el), files, upload.Settle(0))
	return err
}

// Fill form.

func (s *Server) fillFormTool(ctx context.Context, a page.FillFormArgs, _ *toolOut) (page.Result, error) {
	fields := slices.Clone(a.Fields)
	for i := range fields {
		if fields[i].Files != nil {
			fields[i].Files = s.uploadPaths(fields[i].Files)
		}
	}
	a.Fields = fields
	pg, err := s.page(ctx)
	if err != nil {
		return page.Result{}, err
	}
	return pg.Run(ctx, a)
}
