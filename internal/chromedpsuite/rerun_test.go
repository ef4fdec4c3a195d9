//go:build linux

package chromedpsuite

import (
	"sort"
	"time"
)

// maxReruns bounds the failures run again alone: more than this many new
// failures is no longer load, and reruns would only hide it.
const maxReruns = 6

// rerunAlone runs each new failure of r (one not in want) again, alone in
// a fresh browser, and counts it as passed when it passes there.
//
// Some of chromedp's tests depend on the machine keeping up, not on
// livetab: TestRunResponse's page reloads an iframe every 100 ms, and its
// load event waits for an iframe load that, with 12 tests in two browsers
// on 2 cores, each reload cuts short (seen: the main frame's load 26 s
// after its start, past the test's 30 s); TestEvents counts events that
// chromedp's Events iterator delivers from another goroutine, which its
// cancel can drop (chromedp's doc of Listen says so). A test that failed
// beside the others and passes alone is logged with its first failure, so
// that a race of livetab's own still shows in the output.
func (r *suiteRun) rerunAlone(want map[string]expectation) (passed []string) {
	var names []string
	for name := range r.failedLeaves() {
		if _, ok := want[name]; !ok {
			names = append(names, name)
		}
	}
	if len(names) == 0 || len(names) > maxReruns {
		return nil
	}
	sort.Strings(names)
	stop := time.Now().Add(rerunBudget)
	for _, name := range names {
		first := r.tests[name]
		if !r.passesAlone(name, stop) {
			continue
		}
		r.logf("%-8s FLAKY %s: failed beside the other tests, passed alone; its first failure:\n%s", r.backend, name, lastLines(first.output, 8))
		for s := first; s != nil; s = s.parent {
			if s != first && r.anyFailedBut(s, first) {
				break
			}
			s.action, s.note = "pass", ""
		}
		passed = append(passed, name)
	}
	r.flaky = passed
	return passed
}

// aloneTries is how many times a new failure runs alone before it counts
// as failed: a CI machine once ran TestRunResponse/NavigateNonHTML past its
// 30 s alone, where it takes 4 s here.
const aloneTries = 2

// rerunBudget bounds the second tries of all new failures together, so
// that the suite ends within scripts/chromedp-suite.sh's -timeout.
const rerunBudget = 5 * time.Minute

// passesAlone runs the test name alone up to aloneTries times, logging each
// failure, and reports whether it passed once.
func (r *suiteRun) passesAlone(name string, stop time.Time) bool {
	for try := 1; try <= aloneTries; try++ {
		if try > 1 && time.Now().After(stop) {
			r.logf("%-8s %s: no second try, the reruns have taken %s", r.backend, name, rerunBudget)
			return false
		}
		again := &suiteRun{
			bin: r.bin, dir: r.dir, backend: r.backend, stateDir: r.stateDir,
			run: pattern(name), skip: r.skip,
			testTimeout: r.testTimeout,
			budget:      2*r.testTimeout + time.Minute,
			parallel:    1,
			logf:        r.logf,
		}
		again.all()
		s := again.tests[name]
		if s != nil && s.action == "pass" {
			return true
		}
		out, action := "(it did not run)", "none"
		if s != nil {
			out, action = lastLines(s.output, 8), s.action
		}
		r.logf("%-8s %s failed alone too (try %d of %d, %s):\n%s", r.backend, name, try, aloneTries, action, out)
	}
	return false
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
