package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/livetab/livetab/page"
)

// toolNotes add to page's descriptions what a model needs over MCP.
var toolNotes = map[string]string{
	"browser_snapshot":   " Indexes stay valid until the next snapshot or navigation of the tab.",
	"browser_click":      " Takes an index from the latest browser_snapshot; snapshot again afterwards if the page changed.",
	"browser_type":       " Takes an index from the latest browser_snapshot.",
	"browser_select":     " Takes an index from the latest browser_snapshot.",
	"browser_check":      " Takes an index from the latest browser_snapshot.",
	"browser_hover":      " Takes an index from the latest browser_snapshot.",
	"browser_drag":       " Takes indexes from the latest browser_snapshot.",
	"browser_fill_form":  " Takes indexes from the latest browser_snapshot or browser_find. Files are taken in the person's upload directory, as browser_upload takes them.",
	"browser_navigate":   " Only the domains the person allowed can be loaded; take a snapshot afterwards.",
	"browser_eval":       " Prefer the snapshot, find, read and action tools.",
	"browser_screenshot": " The image comes back as image content.",
}

// readOnlyTools change nothing in the page.
var readOnlyTools = map[string]bool{
	"browser_snapshot": true, "browser_find": true, "browser_read": true, "browser_screenshot": true, "browser_wait": true, "browser_scroll": true,
	"browser_console": true, "browser_network": true, "browser_storage": true,
}

// AddTools adds livetab's tools to srv, a program's own MCP server. They
// are named browser_*; their calls go through the Server's policy and act
// in its tab. It also adds a receiving middleware to srv that turns
// "arguments": null of a browser_* call into {} (see nullArguments).
func (s *Server) AddTools(srv *mcp.Server) {
	srv.AddReceivingMiddleware(nullArguments)
	desc := map[string]string{}
	for _, t := range page.Tools() {
		desc[t.Name] = t.Description
	}
	// page's tools but browser_tabs, which is the server's own: it sees
	// only the tabs the agent opened and the person shared.
	ro := s.pol.ReadOnly
	addPageTool[page.SnapshotArgs](s, srv, desc)
	addPageTool[page.FindArgs](s, srv, desc)
	if !ro {
		addPageTool[page.NavigateArgs](s, srv, desc)
		addPageTool[page.ClickArgs](s, srv, desc)
		addPageTool[page.ClickXYArgs](s, srv, desc)
		addPageTool[page.TypeArgs](s, srv, desc)
		addPageTool[page.PressArgs](s, srv, desc)
		addPageTool[page.HoverArgs](s, srv, desc)
	}
	addPageTool[page.ScrollArgs](s, srv, desc)
	if !ro {
		addPageTool[page.SelectArgs](s, srv, desc)
		addPageTool[page.CheckArgs](s, srv, desc)
		addPageTool[page.DragArgs](s, srv, desc)
		addTool(s, srv, &mcp.Tool{
			Name:        "browser_fill_form",
			Description: desc["browser_fill_form"] + toolNotes["browser_fill_form"],
			Annotations: &mcp.ToolAnnotations{OpenWorldHint: new(true)},
		}, nil, s.fillFormTool)
		addPageTool[page.ViewportArgs](s, srv, desc)
	}
	addPageTool[page.WaitArgs](s, srv, desc)
	addPageTool[page.ConsoleArgs](s, srv, desc)
	addPageTool[page.NetworkArgs](s, srv, desc)
	addPageTool[page.StorageArgs](s, srv, desc)
	if s.pol.DownloadDir != "" {
		addPageTool[page.PDFArgs](s, srv, desc)
	}
	addTool(s, srv, &mcp.Tool{
		Name:        "browser_read",
		Description: desc["browser_read"] + s.readNote(),
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: new(true), ReadOnlyHint: true},
		Meta:        s.readMeta(),
	}, nil, s.readTool)
	if s.pol.AllowEval {
		// Off, it is not listed: a model should not plan with it.
		addPageTool[page.EvalArgs](s, srv, desc)
	}
	addPageTool[page.DialogArgs](s, srv, desc)
	addPageTool[page.ScreenshotArgs](s, srv, desc)
	addTool(s, srv, &mcp.Tool{
		Name: "browser_tabs",
		Description: "List, open, switch to or close tabs. The agent sees only the tabs it opened and the tabs the person shared in the livetab extension's popup; ask the person to share a tab you need. " +
			"Take a snapshot after switching. Closing a shared tab only lets go of it; it stays open for the person.",
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: new(true)},
	}, reflect.TypeFor[tabsOutput](), s.tabsTool)
	addTool(s, srv, &mcp.Tool{
		Name: "browser_capture",
		Description: "Save the media behind an element (an image, video, audio or canvas; a download link or button) or a URL the page can fetch, into the person's download directory. " +
			"Returns the file's path, MIME type, size and SHA-256, and the image itself when it is small. Takes an index from the latest browser_snapshot.",
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: new(true)},
	}, reflect.TypeFor[captureOutput](), s.captureTool)
	if ro {
		return
	}
	addTool(s, srv, &mcp.Tool{
		Name: "browser_upload",
		Description: "Put files into a file input (or drop them onto a drop zone, or paste them) as a person choosing files would. Only files in the person's upload directory can be sent; " +
			"a relative path is taken in that directory, so a file browser_capture saved can be uploaded by its name. Takes an index from the latest browser_snapshot.",
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: new(true)},
	}, reflect.TypeFor[uploadOutput](), s.uploadTool)
}

// nullArguments makes "arguments": null of a browser_* call an empty
// object, as the spec's optional arguments mean: go-sdk v1.8.0 panics
// (nil map) filling in the defaults of null arguments, and the panic takes
// the whole server down (jsonschema-go's ApplyDefaults writes into the nil
// map; modelcontextprotocol/go-sdk#1062 is the same fault reached through
// elicitation).
func nullArguments(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil && strings.HasPrefix(r.Params.Name, "browser_") &&
			strings.TrimSpace(string(r.Params.Arguments)) == "null" {
			r.Params.Arguments = json.RawMessage("{}")
		}
		return next(ctx, method, req)
	}
}

// addPageTool publishes one of page's tools, run in the server's tab.
func addPageTool[A page.ToolArgs](s *Server, srv *mcp.Server, desc map[string]string) {
	var zero A
	name := zero.ToolName()
	ann := &mcp.ToolAnnotations{OpenWorldHint: new(true)}
	if readOnlyTools[name] {
		ann.ReadOnlyHint = true
	}
	addTool(s, srv, &mcp.Tool{Name: name, Description: desc[name] + toolNotes[name], Annotations: ann}, nil,
		func(ctx context.Context, a A, _ *toolOut) (page.Result, error) {
			pg, err := s.page(ctx)
			if err != nil {
				return page.Result{}, err
			}
			return pg.Run(ctx, a)
		})
}

// toolOut is what a tool returns besides page's Result.
type toolOut struct {
	structured any // a value of the tool's output struct
	extra      []mcp.Content
}

// addTool publishes a tool whose input schema is generated from In and
// whose output schema, when out is set, from out. The SDK validates the
// arguments against the schema and fills in its defaults; the call then
// runs under the policy: audit, budget, confirmation through MCP
// elicitation.
func addTool[In any](s *Server, srv *mcp.Server, t *mcp.Tool, out reflect.Type, f func(ctx context.Context, in In, out *toolOut) (page.Result, error)) {
	in, err := schemaFor(reflect.TypeFor[In]())
	if err != nil {
		panic(fmt.Sprintf("agent: tool %s: %v", t.Name, err)) // the structs are this module's own
	}
	tt := *t
	tt.InputSchema = in
	if out != nil {
		outSchema, err := schemaFor(out)
		if err != nil {
			panic(fmt.Sprintf("agent: tool %s: %v", t.Name, err))
		}
		tt.OutputSchema = outSchema
	}
	s.mu.Lock()
	s.types[tt.Name] = [2]reflect.Type{reflect.TypeFor[In](), out}
	s.mu.Unlock()
	name := tt.Name
	// The output is any, so that the SDK adds structured content only
	// when a call succeeded, and checks it against the schema.
	mcp.AddTool(srv, &tt, func(ctx context.Context, req *mcp.CallToolRequest, a In) (*mcp.CallToolResult, any, error) {
		c := &confirmer{req: req}
		ctx = context.WithValue(ctx, confirmerKey{}, c)
		ctx, stopProgress := context.WithCancel(ctx)
		defer stopProgress()
		ctx = withProgress(ctx, req)
		var o toolOut
		res, err := s.pol.Call(ctx, name, []byte(req.Params.Arguments), func(ctx context.Context) (page.Result, error) {
			return f(ctx, a, &o)
		})
		if c.pending != nil {
			// Ask the person, then the client calls again with the answer.
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{confirmKey: c.pending},
				RequestState:  c.state,
			}, nil, nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			if errors.Is(err, page.ErrClosed) {
				s.reset()
			}
			res = page.Result{Text: page.ErrorText(err), IsError: true}
		}
		r := &mcp.CallToolResult{IsError: res.IsError}
		if res.Text != "" {
			r.Content = append(r.Content, &mcp.TextContent{Text: res.Text})
		}
		if len(res.Image) > 0 {
			r.Content = append(r.Content, &mcp.ImageContent{Data: res.Image, MIMEType: res.MIME})
		}
		var structured any
		if !res.IsError {
			r.Content = append(r.Content, o.extra...)
			structured = o.structured
		}
		if len(r.Content) == 0 {
			r.Content = []mcp.Content{&mcp.TextContent{Text: "done"}}
		}
		return r, structured, nil
	})
}

// ReadMargin is what browser_read leaves of the policy's MaxPageText for
// the lines around the content (the URL, the title, the paging note): a
// page of content is at most MaxPageText - ReadMargin characters, so that
// the policy's cut never takes the note that says where to read on.
const ReadMargin = 2000

// readMax is the most characters one browser_read returns under the
// policy; 0 when there is no cap.
func (s *Server) readMax() int {
	if s.pol.MaxPageText <= 0 {
		return 0
	}
	return max(s.pol.MaxPageText-ReadMargin, 100)
}

func (s *Server) readNote() string {
	if m := s.readMax(); m > 0 {
		return fmt.Sprintf(" Here at most %d characters a call (the person's --max-page-text is %d); read on with the offset.", m, s.pol.MaxPageText)
	}
	return ""
}

// readMeta tells Claude Code that a browser_read result may be as long as
// the policy lets it be: past 50,000 characters it would otherwise write
// the result to a file and show the model only the file's name, so the
// article a read returns whole would take the model another call.
func (s *Server) readMeta() mcp.Meta {
	if s.pol.MaxPageText <= 0 {
		return nil
	}
	return mcp.Meta{"anthropic/maxResultSizeChars": s.pol.MaxPageText}
}

func (s *Server) readTool(ctx context.Context, a page.ReadArgs, _ *toolOut) (page.Result, error) {
	pg, err := s.page(ctx)
	if err != nil {
		return page.Result{}, err
	}
	want := a.MaxChars // the schema's default when not given
	if want <= 0 {
		want = page.DefaultMaxChars
	}
	m := s.readMax()
	if m > 0 && want > m {
		a.MaxChars = m
	}
	res, err := pg.Run(ctx, a)
	// Said only when the cap cut this page short: the model then knows
	// why it got less and not to ask for more at once.
	if err == nil && !res.IsError && a.MaxChars != want && a.MaxChars > 0 && strings.Contains(res.Text, "; read on with offset=") {
		res.Text += fmt.Sprintf("\n(max_chars %d was lowered to %d: the person's --max-page-text caps a result at %d characters)", want, a.MaxChars, s.pol.MaxPageText)
	}
	return res, err
}
