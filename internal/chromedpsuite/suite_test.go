//go:build linux

package chromedpsuite

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/livetab/livetab/internal/browsertest"
)

var (
	flagBackends = flag.String("suite.backends", "inproc,endpoint", "the backends to run chromedp's suite on, comma-separated: inproc (extcdp.NewAllocator), endpoint (the CDP endpoint of livetab serve, with chromedp's remote.NewAllocator)")
	flagRun      = flag.String("suite.run", "", "run only chromedp's tests that match this -test.run pattern; the expected list is then checked only for the tests that ran")
	flagTimeout  = flag.Duration("suite.testtimeout", 90*time.Second, "stop a test of chromedp's suite that runs longer than this, and count it as failed")
	flagBudget   = flag.Duration("suite.budget", 10*time.Minute, "the longest one backend may take; what has not finished by then fails")
	flagParallel = flag.Int("suite.parallel", 6, "chromedp's -test.parallel")
	flagSerial   = flag.Bool("suite.serial", false, "run the backends one after the other, not at the same time (each has its own browser; at once is about twice as fast, the tests mostly wait)")
)

// skipped are chromedp's tests that do not run against livetab, and why.
// They start a browser of their own (and so test chromedp's ExecAllocator,
// not livetab), kill the browser process, or test nothing but chromedp's
// own code. Each name is a top-level test or example.
var skipped = []struct{ name, why string }{
	{"TestExecAllocator", "starts its own browser (NewExecAllocator)"},
	{"TestExecAllocatorCancelParent", "starts its own browser (NewExecAllocator)"},
	{"TestExecAllocatorCombinedOutputPanic", "starts its own browser (NewExecAllocator)"},
	{"TestExecAllocatorKillBrowser", "kills the browser process of an ExecAllocator"},
	{"TestExitErrorAfterKill", "starts its own browser and kills it"},
	{"TestNoExitErrorAfterCancel", "starts its own browser (NewExecAllocator)"},
	{"TestSkipNewContext", "starts its own browser (NewExecAllocator)"},
	{"TestExecAllocatorMissingWebsocketAddr", "starts a fake browser (ExecAllocator)"},
	{"TestCombinedOutput", "starts its own browser (NewExecAllocator)"},
	{"TestCombinedOutputError", "starts a fake browser (ExecAllocator)"},
	{"TestEnv", "starts its own browser (NewExecAllocator)"},
	{"TestModifyCmdFunc", "starts its own browser (NewExecAllocator)"},
	{"TestStartsWithNonBlankTab", "starts its own browser (NewExecAllocator)"},
	{"TestNoInheritEnv", "starts a fake browser (ExecAllocator)"},
	{"TestStartFromLockedThread", "starts its own browser (NewExecAllocator)"},
	{"TestKeepOpenOptions", "keep-open: starts its own browser"},
	{"TestKeptOpenWithoutBrowser", "keep-open: starts its own browser"},
	{"TestKillLeftoversSkipsKeepOpen", "keep-open: starts its own browser"},
	{"TestExecAllocatorPipe", "pipe: starts its own browser"},
	{"TestExecAllocatorPipeKillBrowser", "pipe: kills the browser process"},
	{"TestExecAllocatorPipeStartFailure", "pipe: starts a fake browser"},
	{"TestExecAllocatorNeedsDialer", "pipe: starts its own browser"},
	{"TestExecAllocatorDialer", "pipe: starts its own browser"},
	{"TestNewContextVisibleWindow", "visible window: checks the ExecAllocator that NewContext makes"},
	{"TestWithVisibleWindowKeepsCallerAllocator", "visible window: starts its own browser"},
	{"TestErrNoDisplay", "visible window: starts its own browser"},
	{"TestVisibleWindow", "visible window: starts its own browser"},
	{"TestEvaluateLargeResult", "starts its own browser to test the pipe's message size"},
	{"TestGracefulBrowserShutdown", "starts its own browser, with a user data dir"},
	{"ExampleExecAllocator", "starts its own browser (NewExecAllocator)"},
	{"ExampleFullScreenshot", "navigates to https://google.com: livetab's tests reach loopback addresses only"},
}

// TestChromedpSuite runs chromedp's own test suite, at the version in
// go.mod, against livetab: in process (extcdp.NewAllocator) and through
// the CDP endpoint of livetab serve (chromedp's remote.NewAllocator), and
// holds the failures to expected-failures.txt. See README.md.
func TestChromedpSuite(t *testing.T) {
	browsertest.RequireChromium(t)
	if testing.Short() {
		t.Skip("-short: chromedp's suite takes minutes")
	}
	// Not in go test ./...: scripts/test.sh runs it as a step of its own
	// after it (scripts/chromedp-suite.sh). Beside the project's other
	// browser tests on 2 cores, chromedp's timing-sensitive tests failed
	// where they pass alone (TestCancelTabDuringAttach ran past 90 s in
	// process, 11 s alone). A few need the machine to keep up even alone:
	// see rerunAlone.
	if os.Getenv("LIVETAB_CHROMEDP_SUITE") == "" {
		t.Skip("chromedp's suite runs with LIVETAB_CHROMEDP_SUITE=1: use scripts/chromedp-suite.sh")
	}
	start := time.Now()
	root := repoRoot(t)
	expected := readExpected(t, "expected-failures.txt")

	dir, bin := prepare(t, root)
	t.Logf("chromedp's suite built in %s (%s)", time.Since(start).Round(time.Millisecond), dir)

	listed := listTests(t, dir, bin)
	var skip []string
	for _, s := range skipped {
		if !listed[s.name] {
			t.Errorf("the runner skips %s, which chromedp's suite does not have: update skipped", s.name)
		}
		skip = append(skip, pattern(s.name))
		t.Logf("skip     %s: %s", s.name, s.why)
	}
	backends := strings.Split(*flagBackends, ",")
	runs := make([]*suiteRun, len(backends))
	took := make([]time.Duration, len(backends))
	var wg sync.WaitGroup
	for i, backend := range backends {
		runs[i] = &suiteRun{
			bin: bin, dir: dir, backend: backend, stateDir: t.TempDir(),
			run: *flagRun, skip: skip,
			testTimeout: *flagTimeout,
			budget:      *flagBudget,
			parallel:    *flagParallel,
			logf: func(format string, args ...any) {
				t.Logf("[%5.1fs] "+format, append([]any{time.Since(start).Seconds()}, args...)...)
			},
		}
		run := func() {
			bstart := time.Now()
			runs[i].all()
			took[i] = time.Since(bstart)
		}
		if *flagSerial {
			run()
		} else {
			wg.Go(run)
		}
	}
	wg.Wait()
	stop := time.Now().Add(rerunTime)
	for _, r := range runs {
		for _, name := range r.rerunAlone(expected[r.backend], stop) {
			t.Logf("%-8s flaky under load, passed alone: %s", r.backend, name)
		}
	}
	var totals []string
	for i, r := range runs {
		for _, e := range r.errMsgs {
			t.Errorf("%s: %s", r.backend, e)
		}
		totals = append(totals, r.summary(t, took[i]))
		compare(t, r.backend, r, expected[r.backend])
	}
	for _, line := range totals {
		t.Log(line)
	}
	t.Logf("runner wall time %s", time.Since(start).Round(time.Second))
}

// summary logs the result of each top-level test and returns the totals.
func (r *suiteRun) summary(t *testing.T, took time.Duration) string {
	var pass, fail, skip int
	for _, name := range r.sortedTop() {
		res := r.topResult(name)
		switch res {
		case "pass":
			pass++
		case "fail":
			fail++
		case "skip":
			skip++
		}
	}
	return fmt.Sprintf("%-8s totals: %d pass (%d of them alone on a rerun), %d fail, %d skipped by the test, %d skipped by the runner; %d processes, %s",
		r.backend, pass, len(r.flaky), fail, skip, len(skipped), r.procs, took.Round(time.Second))
}

// expectation is one line of expected-failures.txt.
type expectation struct {
	line   int
	reason string
	// flaky: a reason that starts with "flaky:" accepts a pass too; for a
	// known race that has no fix yet, so that it cannot fail every run at
	// random. Each such line names what is left to do.
	flaky bool
}

// readExpected reads lines "backend test reason…"; backend is inproc,
// endpoint, or all; # starts a comment.
// maxExpected is how many of chromedp's tests may be listed as failing
// (a test listed for both backends counts once). A flaky line is not a
// failure and does not count: it is a known race, and says what is left.
const maxExpected = 4

func entries(out map[string]map[string]expectation) int {
	lines := map[int]bool{}
	for _, m := range out {
		for _, e := range m {
			if !e.flaky {
				lines[e.line] = true
			}
		}
	}
	return len(lines)
}

func readExpected(t *testing.T, file string) map[string]map[string]expectation {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]map[string]expectation{"inproc": {}, "endpoint": {}}
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 3 {
			t.Fatalf("%s:%d: want \"backend test reason\", got %q", file, n, line)
		}
		backend, name := fields[0], fields[1]
		reason := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(line, backend), " "))
		reason = strings.TrimSpace(strings.TrimPrefix(reason, name))
		backends := []string{backend}
		if backend == "all" {
			backends = []string{"inproc", "endpoint"}
		}
		for _, b := range backends {
			m, ok := out[b]
			if !ok {
				t.Fatalf("%s:%d: backend %q: want inproc, endpoint or all", file, n, backend)
			}
			if _, dup := m[name]; dup {
				t.Fatalf("%s:%d: %s %s is listed twice", file, n, b, name)
			}
			m[name] = expectation{line: n, reason: reason, flaky: strings.HasPrefix(reason, "flaky:")}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if lines := entries(out); lines > maxExpected {
		t.Errorf("%s lists %d failures: at most %d, each for a reason that lies in Chrome (issue 12); fix the others", file, lines, maxExpected)
	}
	return out
}

// compare fails the test for each failure that is not listed, and for each
// listed failure that passed or did not run.
func compare(t *testing.T, backend string, r *suiteRun, want map[string]expectation) {
	t.Helper()
	got := r.failedLeaves()
	var names []string
	for name := range got {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := got[name]
		if _, ok := want[name]; ok {
			t.Logf("%-8s expected failure %s", backend, name)
			continue
		}
		why := s.note
		if why == "" {
			why = lastLines(s.output, 15)
		}
		t.Errorf("%s: NEW FAILURE %s: add it to expected-failures.txt with the reason, or fix it:\n%s", backend, name, why)
	}
	var listed []string
	for name := range want {
		listed = append(listed, name)
	}
	sort.Strings(listed)
	for _, name := range listed {
		if _, ok := got[name]; ok {
			continue
		}
		s := r.tests[name]
		switch {
		case s == nil && *flagRun != "":
			// not selected
		case s == nil:
			t.Errorf("%s: %s is in expected-failures.txt (line %d) but did not run: remove it, or check its name", backend, name, want[name].line)
		case s.action == "pass" && want[name].flaky:
			t.Logf("%-8s flaky, passed this time: %s", backend, name)
		case s.action == "pass":
			t.Errorf("%s: NEW PASS %s: remove line %d of expected-failures.txt", backend, name, want[name].line)
		default:
			t.Errorf("%s: %s is in expected-failures.txt (line %d) but its result is %q, not a failure of its own", backend, name, want[name].line, r.anyResult(s))
		}
	}
}

func (r *suiteRun) anyResult(s *state) string {
	if s.action == "" {
		return "unfinished"
	}
	return s.action
}

// listTests is the set of chromedp's top-level tests and examples.
func listTests(t *testing.T, dir, bin string) map[string]bool {
	t.Helper()
	cmd := exec.Command(bin, "-test.list", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LIVETAB_SUITE_BACKEND=list", "LIVETAB_SUITE_STATE="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("listing chromedp's tests: %v", err)
	}
	names := map[string]bool{}
	for _, l := range strings.Fields(string(out)) {
		names[l] = true
	}
	return names
}
