//go:build linux

package chromedpsuite

import (
	"regexp"
	"sort"
	"strings"
	"time"
)

// rerunAlone runs the new failures of r (those not in want) again, with no
// other test beside them in a fresh browser, and counts each that passes
// there as passed. It starts no run after stop.
//
// Some of chromedp's tests depend on the machine keeping up, not on
// livetab: TestRunResponse's page reloads an iframe every 100 ms, and its
// load event waits for an iframe load that, with 12 tests in two browsers
// on 2 cores, each reload cuts short (seen: the main frame's load 26 s
// after its start, past the test's 30 s). Plain Chromium fails it too
// under that load: two chromedp processes running TestRunResponse at
// -parallel 6 on 2 cores failed one subtest each, where livetab's two
// backends failed 9 (the relay's extra hops cost CPU: the extension's
// renderer and the network service carry every event). TestEvents counts
// events that chromedp's Events iterator delivers from another goroutine,
// which its cancel can drop (chromedp's doc of Listen says so). A test that
// failed beside the others and passes alone is logged with its first
// failure, so that a race of livetab's own still shows in the output.
//
// The failures of one parent run again in one process, one at a time
// (-parallel 1): a loaded CI machine once failed more than half of
// TestRunResponse's 24 subtests, and a process each would have cost a
// browser start each. A failure runs alone up to aloneTries times.
func (r *suiteRun) rerunAlone(want map[string]expectation, stop time.Time) (passed []string) {
	var left []string
	for name := range r.failedLeaves() {
		if _, ok := want[name]; !ok {
			left = append(left, name)
		}
	}
	sort.Strings(left)
	first := map[string]*state{}
	for _, name := range left {
		first[name] = r.tests[name]
	}
	for try := 1; try <= aloneTries && len(left) > 0; try++ {
		var still []string
		for _, group := range groups(left) {
			if time.Now().After(stop) {
				r.logf("%-8s no try %d for %s: the reruns reached the end of their time", r.backend, try, strings.Join(group, ", "))
				still = append(still, group...)
				continue
			}
			budget := 2*r.testTimeout + time.Minute
			if rest := time.Until(stop) + r.testTimeout; rest < budget {
				budget = rest
			}
			again := &suiteRun{
				bin: r.bin, dir: r.dir, backend: r.backend, stateDir: r.stateDir,
				run: groupPattern(group), skip: r.skip,
				testTimeout: r.testTimeout,
				budget:      budget,
				parallel:    1,
				logf:        r.logf,
			}
			again.all()
			for _, name := range group {
				s := again.tests[name]
				if s != nil && s.action == "pass" {
					r.passAlone(name, first[name])
					passed = append(passed, name)
					continue
				}
				out, action := "(it did not run)", "none"
				if s != nil {
					out, action = lastLines(s.output, 8), s.action
				}
				r.logf("%-8s %s failed alone too (try %d of %d, %s):\n%s", r.backend, name, try, aloneTries, action, out)
				still = append(still, name)
			}
		}
		left = still
	}
	sort.Strings(passed)
	r.flaky = passed
	return passed
}

// aloneTries is how many times a new failure runs alone before it counts
// as failed: a CI machine once ran TestRunResponse/NavigateNonHTML past its
// 30 s alone, where it takes 4 s here.
const aloneTries = 2

// rerunTime is how long the reruns of both backends may start new runs,
// after the suite's own: the step must end within scripts/chromedp-suite.sh's
// -timeout (20 minutes), the suite taking up to -suite.budget (10).
const rerunTime = 6 * time.Minute

// passAlone counts name as passed, and each of its parents whose other
// subtests passed too, logging its first failure.
func (r *suiteRun) passAlone(name string, first *state) {
	r.logf("%-8s FLAKY %s: failed beside the other tests, passed alone; its first failure:\n%s", r.backend, name, lastLines(first.output, 8))
	for s := first; s != nil; s = s.parent {
		if s != first && r.anyFailedBut(s, first) {
			break
		}
		s.action, s.note = "pass", ""
	}
}

// groups splits names (sorted) into the runs that rerun them: the
// subtests of one top-level test together, any other name on its own.
func groups(names []string) [][]string {
	var out [][]string
	byTop := map[string]int{}
	for _, name := range names {
		top, sub, ok := strings.Cut(name, "/")
		if !ok || strings.Contains(sub, "/") {
			out = append(out, []string{name})
			continue
		}
		i, seen := byTop[top]
		if !seen {
			i = len(out)
			byTop[top] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], name)
	}
	return out
}

// groupPattern is the -test.run pattern that selects exactly the tests of
// a group from groups.
func groupPattern(group []string) string {
	if len(group) == 1 {
		return pattern(group[0])
	}
	top, _, _ := strings.Cut(group[0], "/")
	subs := make([]string, len(group))
	for i, name := range group {
		_, sub, _ := strings.Cut(name, "/")
		subs[i] = regexp.QuoteMeta(sub)
	}
	return "^" + regexp.QuoteMeta(top) + "$/^(" + strings.Join(subs, "|") + ")$"
}

// anyFailedBut reports whether a subtest of s other than the one in
// except's line failed.
func (r *suiteRun) anyFailedBut(s, except *state) bool {
	for _, c := range s.children {
		if c == except || isAncestor(c, except) {
			continue
		}
		if r.anyFailed(c) {
			return true
		}
	}
	return false
}

func isAncestor(a, s *state) bool {
	for p := s.parent; p != nil; p = p.parent {
		if p == a {
			return true
		}
	}
	return false
}
