package extcdp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/coder/websocket"

	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/internal/fakeext"
	"github.com/livetab/livetab/internal/wire"
)

// fuzzBound is how long one command may take to be answered: the
// fake extension answers at once, so anything near it is a hang.
const fuzzBound = 5 * time.Second

// fuzzEnv is one bridge, fake extension and relay shared by every input of
// a fuzz worker (and by the seed tests).
type fuzzEnv struct {
	b     *bridge.Bridge
	r     *Relay
	ext   *fakeext.Ext
	goros int // goroutines once the environment runs
}

var (
	fuzzOnce sync.Once
	fuzzE    *fuzzEnv
	fuzzErr  error
)

func getFuzzEnv(t testing.TB) *fuzzEnv {
	t.Helper()
	fuzzOnce.Do(func() { fuzzE, fuzzErr = startFuzzEnv() })
	if fuzzErr != nil {
		t.Fatal(fuzzErr)
	}
	return fuzzE
}

func startFuzzEnv() (*fuzzEnv, error) {
	ctx := context.Background()
	b, err := bridge.Listen(ctx, bridge.Options{Addr: "127.0.0.1:0", Token: "fuzz-token", ReconnectWait: 2 * time.Second})
	if err != nil {
		return nil, err
	}
	r, err := NewRelay(b, RelayOptions{})
	if err != nil {
		return nil, err
	}
	e, _, err := fakeext.Dial(ctx, b.URL(), fakeext.Options{Token: b.Token()})
	if err != nil {
		return nil, err
	}
	e.Handle("Fake.fail", func(*wire.Frame) (jsonv2.Value, *cdproto.Error) {
		return nil, &cdproto.Error{Code: -32000, Message: "fake failure"}
	})
	e.Handle("ext.closeTab", func(*wire.Frame) (jsonv2.Value, *cdproto.Error) {
		return nil, &cdproto.Error{Code: -32000, Message: "the fake keeps its tab"}
	})
	go e.Serve(ctx)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := b.WaitConnected(wctx); err != nil {
		return nil, err
	}
	// Let the relay's reconcile after the hello settle.
	time.Sleep(100 * time.Millisecond)
	return &fuzzEnv{b: b, r: r, ext: e, goros: runtime.NumGoroutine()}, nil
}

// cdpSeeds are CDP inputs for the fuzz targets: one message per line; $0
// to $9 stand for the session ids the client learned so far, $b for the
// last browser context id.
var cdpSeeds = []string{
	`{"id":1,"method":"Browser.getVersion"}`,
	`{"id":1,"method":"Target.setDiscoverTargets","params":{"discover":true}}` + "\n" + `{"id":2,"method":"Target.getTargets"}`,
	`{"id":1,"method":"Target.setAutoAttach","params":{"autoAttach":true,"flatten":true,"waitForDebuggerOnStart":true}}` + "\n" +
		`{"id":2,"sessionId":"$0","method":"Runtime.evaluate","params":{"expression":"1+1"}}`,
	`{"id":1,"method":"Target.setAutoAttach","params":{"autoAttach":true}}`,
	`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"T1","flatten":true}}` + "\n" +
		`{"id":2,"sessionId":"$0","method":"Runtime.enable"}` + "\n" +
		`{"id":3,"sessionId":"$0","method":"DOM.getDocument","params":{"depth":-1}}` + "\n" +
		`{"id":4,"sessionId":"$0","method":"Target.setDiscoverTargets","params":{"discover":true}}` + "\n" +
		`{"id":5,"sessionId":"$0","method":"Runtime.disable"}` + "\n" +
		`{"id":6,"sessionId":"$0","method":"Page.setDownloadBehavior","params":{"behavior":"deny"}}` + "\n" +
		`{"id":7,"sessionId":"$0","method":"Browser.getVersion"}` + "\n" +
		`{"id":8,"method":"Target.detachFromTarget","params":{"sessionId":"$0"}}`,
	`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"T1","flatten":true}}` + "\n" +
		`{"id":2,"method":"Target.attachToTarget","params":{"targetId":"T1","flatten":true}}` + "\n" +
		`{"id":3,"sessionId":"$1","method":"Runtime.enable"}` + "\n" + `{"id":4,"sessionId":"$0","method":"Runtime.enable"}` + "\n" +
		`{"id":5,"sessionId":"$0","method":"DOM.getDocument"}` + "\n" + `{"id":6,"sessionId":"$1","method":"DOM.getDocument"}` + "\n" +
		`{"id":7,"sessionId":"$1","method":"Fake.fail"}`,
	`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"T1"}}`,
	// Frames of the extension (lines that start with !) between commands.
	`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"T1","flatten":true}}` + "\n" +
		`{"id":2,"method":"Target.attachToTarget","params":{"targetId":"T1","flatten":true}}` + "\n" +
		`{"id":3,"sessionId":"$0","method":"Runtime.enable"}` + "\n" +
		`!{"method":"Runtime.executionContextCreated","tabId":1,"params":{"context":{"id":1,"uniqueId":"u1","origin":"http://127.0.0.1"}}}` + "\n" +
		`{"id":4,"sessionId":"$1","method":"Runtime.enable"}` + "\n" +
		`!{"method":"Runtime.executionContextDestroyed","tabId":1,"params":{"executionContextId":1,"executionContextUniqueId":"u1"}}` + "\n" +
		`!{"method":"DOM.documentUpdated","tabId":1,"params":{}}` + "\n" +
		`!{"method":"Runtime.executionContextsCleared","tabId":1}`,
	`{"id":1,"method":"Target.setAutoAttach","params":{"autoAttach":true,"flatten":true}}` + "\n" +
		`{"id":2,"sessionId":"$0","method":"Runtime.enable"}` + "\n" +
		`!{"method":"Target.attachedToTarget","tabId":1,"params":{"sessionId":"CHILD","targetInfo":{"targetId":"F1","type":"iframe","url":"http://127.0.0.2/"}}}` + "\n" +
		`{"id":3,"sessionId":"CHILD","method":"Runtime.evaluate","params":{"expression":"1"}}` + "\n" +
		`!{"method":"Runtime.consoleAPICalled","tabId":1,"sessionId":"CHILD","params":{"type":"log","args":[]}}` + "\n" +
		`{"id":4,"method":"Target.getTargets"}` + "\n" +
		`{"id":5,"method":"Target.attachToTarget","params":{"targetId":"F1","flatten":true}}` + "\n" +
		`{"id":6,"sessionId":"$1","method":"DOM.getDocument"}` + "\n" +
		`{"id":7,"method":"Target.getTargetInfo","params":{"targetId":"F1"}}` + "\n" +
		`!{"method":"Target.detachedFromTarget","tabId":1,"params":{"sessionId":"CHILD"}}` + "\n" +
		`{"id":8,"sessionId":"CHILD","method":"Runtime.evaluate"}`,
	`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"T1","flatten":true}}` + "\n" +
		`!{"method":"ext.detached","params":{"tabId":1,"reason":"canceled_by_user"}}` + "\n" +
		`{"id":2,"sessionId":"$0","method":"Runtime.evaluate"}`,
	`{"id":1,"method":"Target.setDiscoverTargets","params":{"discover":true}}` + "\n" +
		`!{"method":"ext.tabCreated","params":{"tabId":2,"targetId":"T2","windowId":1,"url":"http://127.0.0.1/","openerTabId":1}}` + "\n" +
		`!{"method":"ext.tabUpdated","params":{"tabId":2,"targetId":"T3","url":"chrome://settings"}}` + "\n" +
		`{"id":2,"method":"Target.attachToTarget","params":{"targetId":"T3","flatten":true}}` + "\n" +
		`!{"method":"ext.tabRemoved","params":{"tabId":2}}` + "\n" +
		`!{"method":"ext.tabRemoved","params":{"tabId":1}}` + "\n" +
		`{"id":3,"method":"Target.getTargets"}`,
	`{"id":1,"method":"Browser.setDownloadBehavior","params":{"behavior":"allow","eventsEnabled":true}}` + "\n" +
		`{"id":2,"method":"Target.attachToTarget","params":{"targetId":"T1","flatten":true}}` + "\n" +
		`!{"method":"Page.downloadWillBegin","tabId":1,"params":{"frameId":"F","guid":"g1","url":"http://127.0.0.1/f.bin","suggestedFilename":"f.bin"}}` + "\n" +
		`!{"method":"ext.download","params":{"id":7,"url":"http://127.0.0.1/f.bin","finalUrl":"http://127.0.0.1/f.bin","filename":"/tmp/f.bin","state":"in_progress","bytesReceived":1,"totalBytes":2}}` + "\n" +
		`!{"method":"Page.downloadProgress","tabId":1,"params":{"guid":"g1","state":"completed","receivedBytes":2,"totalBytes":2}}` + "\n" +
		`!{"method":"ext.download","params":{"id":7,"url":"http://127.0.0.1/f.bin","state":"complete","bytesReceived":2,"totalBytes":2}}`,
	`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"T1","flatten":true}}` + "\n" +
		`!{"method":"ext.hello","params":{"attached":[1,2,3]}}` + "\n" +
		`!{"method":"\u0000\ud800Weird","tabId":1,"params":{"x":"\u2028"}}` + "\n" +
		`!{"tabId":1,"params":{}}` + "\n" + `!{"id":5,"method":"ext.evil"}` + "\n" + `!{"id":1,"result":{}}` + "\n" +
		`!not json` + "\n" + `!{"method":"ext.ping"}` + "\n" + `!{"method":"bridge.disconnected"}` + "\n" +
		`{"id":2,"sessionId":"$0","method":"Runtime.evaluate"}`,
	`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"nope","flatten":true}}`,
	`{"id":1,"method":"Target.attachToBrowserTarget"}` + "\n" + `{"id":2,"sessionId":"$0","method":"Target.getTargets"}` + "\n" +
		`{"id":3,"sessionId":"$0","method":"Runtime.evaluate"}`,
	`{"id":1,"method":"Target.createBrowserContext"}` + "\n" + `{"id":2,"method":"Target.createTarget","params":{"url":"about:blank","browserContextId":"$b"}}` + "\n" +
		`{"id":3,"method":"Target.getBrowserContexts"}` + "\n" + `{"id":4,"method":"Target.disposeBrowserContext","params":{"browserContextId":"$b"}}`,
	`{"id":1,"method":"Target.disposeBrowserContext","params":{"browserContextId":"X"}}`,
	`{"id":1,"method":"Target.createTarget","params":{"url":"http://127.0.0.1:1/","newWindow":true,"background":true}}` + "\n" +
		`{"id":2,"method":"Target.closeTarget","params":{"targetId":"T1"}}`,
	`{"id":1,"method":"Target.closeTarget","params":{"targetId":"T1"}}` + "\n" + `{"id":2,"method":"Target.getTargets"}`,
	`{"id":1,"method":"Target.activateTarget","params":{"targetId":"T1"}}`,
	`{"id":1,"method":"Target.getTargetInfo","params":{"targetId":"T1"}}` + "\n" + `{"id":2,"method":"Target.getTargetInfo"}`,
	`{"id":1,"method":"Target.detachFromTarget","params":{"targetId":"T1"}}`,
	`{"id":1,"method":"Livetab.getInfo"}` + "\n" + `{"id":2,"method":"Livetab.getActiveTab"}` + "\n" + `{"id":3,"method":"Livetab.getTabs"}`,
	`{"id":1,"method":"Livetab.closeTab","params":{"targetId":"T1"}}`,
	`{"id":1,"method":"Livetab.setPolicy","params":{"sharedOnly":true,"domains":["127.0.0.1"]}}`,
	`{"id":1,"method":"Livetab.setPolicy","params":{"domains":7}}`,
	`{"id":1,"method":"Livetab.openTransfer","params":{"direction":"fromPage","size":9223372036854775807}}` + "\n" +
		`{"id":2,"method":"Livetab.readTransfer","params":{"transfer":"","size":9223372036854775807}}`,
	`{"id":1,"method":"Livetab.openTransfer","params":{"direction":"sideways","size":-5}}` + "\n" +
		`{"id":2,"method":"Livetab.closeTransfer","params":{"transfer":7}}`,
	`{"id":1,"method":"Livetab.openTransfer","params":{"direction":"fromPage","size":3,"path":"/etc/passwd"}}` + "\n" +
		`{"id":2,"method":"Livetab.transferFile","params":{"transfer":"../x","offset":-1}}`,
	`{"id":1,"method":"Browser.setDownloadBehavior","params":{"behavior":"allow","downloadPath":"/tmp"}}`,
	`{"id":1,"method":"Browser.close"}`,
	`{"id":1,"method":"Foo.bar","params":{"a":[1,2,{"b":null}]}}`,
	`{"id":1,"method":"Target.getTargets","params":[1,2]}`,
	`{"id":1,"method":"Target.getTargets","params":null}`,
	`{"id":1,"sessionId":"NOPE","method":"Runtime.evaluate"}`,
	`{"id":1,"sessionId":"\u0000\u001f\"\\","method":"Runtime.evaluate"}`,
	"{\"id\":1,\"sessionId\":\"\xff\xfe\",\"method\":\"Runtime.evaluate\"}",
	`{"id":1,"method":"\u0000Weird.\u2028method\ud800"}`,
	`{"id":0,"method":"Browser.getVersion"}`,
	`{"method":"Browser.getVersion"}`,
	`{"id":-1,"method":"Browser.getVersion"}`,
	`{"id":9223372036854775807,"method":"Browser.getVersion"}`,
	`{"id":9223372036854775808,"method":"Browser.getVersion"}`,
	`{"id":1.5,"method":"Browser.getVersion"}`,
	`{"id":"1","method":"Browser.getVersion"}`,
	`{"id":1}`,
	`{"id":1,"method":""}`,
	`{"id":1,"result":{}}`,
	`{"id":1,"method":"Browser.getVersion","method":"Browser.close"}`,
	`{"id":1,"method":"Browser.getVersion"`,
	`not json`,
	``,
	`null`,
	`[]`,
	`{}`,
}

// expired is a context that has ended, for reading a client's queue
// without waiting.
var expired = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// fuzzClient runs one input through a fresh client, as the endpoint would
// (its message handling is mirrored from endpoint.serveClient), and checks
// the invariants: Handle returns within the bound, every command with an id
// gets exactly one reply with that id within the bound, every message the
// client gets encodes to valid JSON, and closing the client leaves no
// session and no goroutine behind.
func fuzzClient(t testing.TB, env *fuzzEnv, input []byte) {
	c := env.r.NewClient()
	ep := &endpoint{r: env.r}
	var (
		learned  []string
		contexts []string
		sent     = map[int64]int{}
		got      = map[int64]int{}
		buf      []byte
	)
	take := func(m *cdproto.Message) {
		var err error
		buf, err = appendMessage(buf[:0], m)
		if err != nil {
			t.Fatalf("encoding %+v: %v", m, err)
		}
		var v any
		if err := jsonv2.Unmarshal(buf, &v); err != nil {
			t.Fatalf("the endpoint would send invalid JSON %q (input %q): %v", buf, input, err)
		}
		if m.Method == "" {
			got[m.ID]++
		}
		var p struct {
			SessionID        string `json:"sessionId"`
			BrowserContextID string `json:"browserContextId"`
		}
		raw := m.Result
		if m.Method == cdproto.EventTargetAttachedToTarget {
			raw = m.Params
		}
		if raw != nil && jsonv2.Unmarshal(raw, &p, wire.Options) == nil {
			if p.SessionID != "" {
				learned = append(learned, p.SessionID)
			}
			if p.BrowserContextID != "" {
				contexts = append(contexts, p.BrowserContextID)
			}
		}
	}
	// drain takes what is queued; with want != 0 it waits for that reply.
	drain := func(want int64, n int) {
		deadline := time.Now().Add(fuzzBound)
		for {
			if n == 0 || got[want] >= n {
				m, err := c.Next(expired) // what is queued, without waiting
				if err != nil {
					return
				}
				take(m)
				continue
			}
			ctx, cancel := context.WithDeadline(context.Background(), deadline)
			m, err := c.Next(ctx)
			cancel()
			if err != nil {
				t.Fatalf("no reply to id %d within %v (input %q)", want, fuzzBound, input)
			}
			take(m)
		}
	}
	lines := bytes.Split(input, []byte("\n"))
	if len(lines) > 12 {
		lines = lines[:12]
	}
	for _, line := range lines {
		for i, sid := range learned[:min(len(learned), 10)] {
			line = bytes.ReplaceAll(line, []byte("$"+strconv.Itoa(i)), []byte(sid))
		}
		if len(contexts) > 0 {
			line = bytes.ReplaceAll(line, []byte("$b"), []byte(contexts[len(contexts)-1]))
		}
		if frame, ok := bytes.CutPrefix(line, []byte("!")); ok {
			// A frame of the extension: an event of the tab (a page
			// shapes their content) or of the extension itself.
			sendExtFrame(t, env, frame, input)
			drain(0, 0)
			continue
		}
		// The endpoint's own handling of one message: every message,
		// whatever it is, gets exactly one reply (id 0 travels as zeroID).
		var probe struct {
			ID *int64 `json:"id"`
		}
		id := int64(0)
		// As the endpoint reads an id: jsonv2 first, then encoding/json,
		// which takes a name given twice.
		if (jsonv2.Unmarshal(line, &probe, wire.Options) == nil || json.Valid(line) && json.Unmarshal(line, &probe) == nil) && probe.ID != nil {
			if id = *probe.ID; id == 0 {
				id = zeroID
			}
		}
		sent[id]++
		done := make(chan struct{})
		go func() {
			defer close(done)
			ep.handle(c, websocket.MessageText, line, func() {})
		}()
		select {
		case <-done:
		case <-time.After(fuzzBound):
			t.Fatalf("handling %q did not return within %v (input %q)", line, fuzzBound, input)
		}
		drain(id, sent[id])
	}
	// Replies the extension sent before this round trip are delivered by
	// now: the bridge reads in order. A late second reply shows here.
	sctx, cancel := context.WithTimeout(context.Background(), fuzzBound)
	env.b.Call(sctx, "Fake.sync", 0, nil)
	cancel()
	drain(0, 0)
	for id, n := range got {
		if n > sent[id] {
			t.Fatalf("%d replies with id %d to %d commands (input %q)", n, id, sent[id], input)
		}
	}
	c.Close()
	env.r.mu.Lock()
	leftSessions := 0
	for _, s := range env.r.sessions {
		if s.client == c {
			leftSessions++
		}
	}
	_, leftClient := env.r.clients[c]
	env.r.mu.Unlock()
	if leftSessions > 0 || leftClient {
		t.Fatalf("a closed client left %d sessions (still registered: %v) (input %q)", leftSessions, leftClient, input)
	}
	checkGoroutines(t, env, input)
}

// sendExtFrame sends a frame as the extension and waits until the bridge
// has handed it to the relay: the bridge reads the socket in order, so the
// answer to a call sent after the frame comes after it.
func sendExtFrame(t testing.TB, env *fuzzEnv, frame, input []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), fuzzBound)
	defer cancel()
	// The extension's frames come from JSON.stringify: always UTF-8 (lone
	// surrogates are escaped). Raw invalid bytes from it would reach the
	// clients as they are, since params are never decoded on the way.
	frame = []byte(strings.ToValidUTF8(string(frame), "\uFFFD"))
	if err := env.ext.Send(ctx, websocket.MessageText, frame); err != nil {
		t.Fatalf("the fake extension could not send %q: %v", frame, err)
	}
	// An injected frame may answer this call in the fake's place; any
	// answer will do, only its coming matters.
	if _, err := env.b.Call(ctx, "Fake.sync", 0, nil); err != nil && ctx.Err() != nil {
		t.Fatalf("the bridge did not answer after the extension sent %q (input %q): %v", frame, input, err)
	}
}

// checkGoroutines fails when goroutines pile up across inputs: a few are
// in flight (the fake's replies, detaches), hundreds are a leak.
func checkGoroutines(t testing.TB, env *fuzzEnv, input []byte) {
	const slack = 50
	deadline := time.Now().Add(fuzzBound)
	for {
		n := runtime.NumGoroutine()
		if n <= env.goros+slack {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines, %d when the fuzzing started (input %q):\n%s", n, env.goros, input, buf)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// FuzzClientHandle feeds a client arbitrary CDP messages, one per line:
// commands with random methods, params, session ids and ids, and junk, as
// a program on the endpoint may send them. No Chromium: the fake extension
// answers for the tab.
func FuzzClientHandle(f *testing.F) {
	for _, s := range cdpSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		fuzzClient(t, getFuzzEnv(t), input)
	})
}

// FuzzClientCommand builds one well-formed CDP command from its parts, so
// that the fuzzer spends its time on methods, params, session ids and ids
// rather than on JSON syntax. setup's bits first attach to the fake's tab,
// attach to the browser target, turn on auto-attach and target discovery;
// a session id "$0" names the first session the client got.
func FuzzClientCommand(f *testing.F) {
	f.Add(uint8(1), int64(1), "Runtime.evaluate", "$0", []byte(`{"expression":"1"}`))
	f.Add(uint8(2), int64(7), "Target.getTargets", "$0", []byte(`{}`))
	f.Add(uint8(4), int64(-3), "Target.detachFromTarget", "", []byte(`{"sessionId":"$0"}`))
	f.Add(uint8(8), int64(0), "Target.closeTarget", "", []byte(`{"targetId":"T1"}`))
	f.Add(uint8(1), int64(9223372036854775807), "DOM.getDocument", "$0", []byte(`{"depth":-1,"pierce":true}`))
	f.Add(uint8(3), int64(2), "Target.attachToTarget", "$1", []byte(`{"targetId":"T1","flatten":true}`))
	f.Add(uint8(0), int64(5), "Target.createTarget", "", []byte(`{"url":"about:blank","browserContextId":"nope"}`))
	f.Add(uint8(0), int64(5), "Livetab.setPolicy", "", []byte(`{"sharedOnly":true,"domains":["*.example.com"]}`))
	f.Add(uint8(1), int64(5), "Livetab.openTransfer", "$0", []byte(`{"direction":"toPage","size":3}`))
	f.Add(uint8(1), int64(5), "Livetab.writeTransfer", "$0", []byte(`{"transfer":"x","offset":-1,"data":"AAAA"}`))
	f.Add(uint8(1), int64(5), "Livetab.readTransfer", "$0", []byte(`{"transfer":"x","offset":9223372036854775807,"size":-1}`))
	f.Add(uint8(1), int64(5), "Livetab.transferFile", "$0", []byte(`{"transfer":"x","offset":9223372036854775807}`))
	f.Add(uint8(1), int64(6), "Runtime.enable", "NOPE", []byte(`null`))
	f.Add(uint8(15), int64(1), "Browser.close", "$0", []byte(``))
	f.Fuzz(func(t *testing.T, setup uint8, id int64, method, sid string, params []byte) {
		var lines []string
		for bit, line := range []string{
			`{"id":1001,"method":"Target.attachToTarget","params":{"targetId":"T1","flatten":true}}`,
			`{"id":1002,"method":"Target.attachToBrowserTarget"}`,
			`{"id":1003,"method":"Target.setAutoAttach","params":{"autoAttach":true,"flatten":true}}`,
			`{"id":1004,"method":"Target.setDiscoverTargets","params":{"discover":true}}`,
		} {
			if setup&(1<<bit) != 0 {
				lines = append(lines, line)
			}
		}
		cmd := []byte(`{"method":`)
		cmd = appendJSONString(cmd, method)
		if id != 0 {
			cmd = append(cmd, `,"id":`...)
			cmd = strconv.AppendInt(cmd, id, 10)
		}
		if sid != "" {
			cmd = append(cmd, `,"sessionId":`...)
			cmd = appendJSONString(cmd, sid)
		}
		if p := jsonv2.Value(bytes.Clone(params)); p.Compact() == nil {
			cmd = append(cmd, `,"params":`...)
			cmd = append(cmd, p...)
		}
		lines = append(lines, string(append(cmd, '}')))
		fuzzClient(t, getFuzzEnv(t), []byte(strings.Join(lines, "\n")))
	})
}

// fuzzCorpus returns the seeds and the inputs the fuzzer kept.
func fuzzCorpus(t *testing.T, name string, seeds []string) [][]byte {
	var out [][]byte
	for _, s := range seeds {
		out = append(out, []byte(s))
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", name, "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, lit, ok := strings.Cut(strings.TrimSpace(string(b)), "\n")
		lit, ok2 := strings.CutPrefix(strings.TrimSpace(lit), "[]byte(")
		lit, ok3 := strings.CutSuffix(lit, ")")
		s, err := strconv.Unquote(lit)
		if !ok || !ok2 || !ok3 || err != nil {
			t.Fatalf("%s: not a []byte corpus entry", f)
		}
		out = append(out, []byte(s))
	}
	return out
}

// The fuzz inputs through the real WebSocket endpoint, slower than the fuzz
// loop but the whole path: each input on its own connection, every message
// read back must be JSON, and every command with an id answered within the
// bound. Binary frames are also sent; that the endpoint ignores them is a
// known issue, logged rather than failed.
func TestEndpointFuzzInputsOverWebSocket(t *testing.T) {
	env := getFuzzEnv(t)
	const tok = "ws-fuzz-token"
	srv := httptest.NewServer(env.r.Handler(HandlerOptions{Token: tok}))
	defer srv.Close()
	url := env.r.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok)
	for i, input := range fuzzCorpus(t, "FuzzClientHandle", cdpSeeds) {
		ctx, cancel := context.WithTimeout(context.Background(), 4*fuzzBound)
		ws, _, err := websocket.Dial(ctx, url, nil)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		ws.SetReadLimit(-1)
		msgs := make(chan *cdproto.Message, 1000)
		go func() {
			defer close(msgs)
			for {
				_, data, err := ws.Read(ctx)
				if err != nil {
					return
				}
				m := new(cdproto.Message)
				if err := jsonv2.Unmarshal(data, m, wire.Options); err != nil {
					t.Errorf("input %d: the endpoint sent invalid JSON %q: %v", i, data, err)
					continue
				}
				msgs <- m
			}
		}()
		var learned []string
		wait := func(id int64) bool {
			timer := time.NewTimer(fuzzBound)
			defer timer.Stop()
			for {
				select {
				case m, ok := <-msgs:
					if !ok {
						return false
					}
					var p struct {
						SessionID string `json:"sessionId"`
					}
					if raw := m.Result; m.Method == cdproto.EventTargetAttachedToTarget || raw != nil {
						if raw == nil {
							raw = m.Params
						}
						if jsonv2.Unmarshal(raw, &p, wire.Options) == nil && p.SessionID != "" {
							learned = append(learned, p.SessionID)
						}
					}
					if m.Method == "" && m.ID == id {
						return true
					}
				case <-timer.C:
					return false
				}
			}
		}
		closed := false
		for j, line := range bytes.Split(input, []byte("\n")) {
			for k, sid := range learned[:min(len(learned), 10)] {
				line = bytes.ReplaceAll(line, []byte("$"+strconv.Itoa(k)), []byte(sid))
			}
			if frame, ok := bytes.CutPrefix(line, []byte("!")); ok {
				sendExtFrame(t, env, frame, input)
				continue
			}
			var m cdproto.Message
			if jsonv2.Unmarshal(line, &m, wire.Options) == nil && m.Method == cdproto.CommandBrowserClose {
				closed = true // the endpoint ends the connection
			}
			if err := ws.Write(ctx, websocket.MessageText, line); err != nil {
				if closed {
					break
				}
				t.Fatalf("input %d line %d: %v", i, j, err)
			}
			probe := int64(1<<40 + j)
			ws.Write(ctx, websocket.MessageText, []byte(fmt.Sprintf(`{"id":%d,"method":"Browser.getVersion"}`, probe)))
			if !wait(probe) && !closed {
				t.Fatalf("input %d line %d %q: no answer to a command sent after it within %v", i, j, line, fuzzBound)
			}
		}
		if !closed {
			bin := int64(1 << 41)
			ws.Write(ctx, websocket.MessageBinary, []byte(fmt.Sprintf(`{"id":%d,"method":"Browser.getVersion"}`, bin)))
			ws.Write(ctx, websocket.MessageText, []byte(fmt.Sprintf(`{"id":%d,"method":"Browser.getVersion"}`, bin+1)))
			got := false
			timer := time.NewTimer(fuzzBound)
		read:
			for {
				select {
				case m, ok := <-msgs:
					if !ok {
						break read
					}
					if m.ID == bin {
						got = true
					}
					if m.ID == bin+1 {
						break read
					}
				case <-timer.C:
					t.Fatalf("input %d: no answer after a binary frame", i)
				}
			}
			timer.Stop()
			if !got && i == 0 {
				t.Log("known issue: a command in a binary WebSocket frame gets no answer")
			}
		}
		ws.Close(websocket.StatusNormalClosure, "")
		cancel()
	}
	checkGoroutines(t, env, nil)
}
