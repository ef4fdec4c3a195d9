//go:build linux

package chromedpsuite

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// event is one line of go tool test2json.
type event struct {
	Time    time.Time
	Action  string
	Test    string
	Elapsed float64
	Output  string
}

// state is what the runner knows of one test or subtest.
type state struct {
	name     string
	parent   *state
	open     int // children started and not ended
	running  bool
	since    time.Time // the last run, cont, or end of a child
	action   string    // pass, fail, skip; "" while it has not ended
	elapsed  float64
	note     string   // why the runner failed it: a timeout, a crash
	output   []string // the end of its output
	ranIn    int      // the process it last ran in
	children []*state
}

const keepLines = 60

func (s *state) addOutput(line string) {
	s.output = append(s.output, line)
	if len(s.output) > keepLines {
		s.output = s.output[len(s.output)-keepLines:]
	}
}

// suiteRun runs one backend's tests, in as many processes as hangs and
// crashes make necessary.
type suiteRun struct {
	bin, dir, backend, stateDir string
	run                         string        // -test.run
	skip                        []string      // -test.skip alternatives: the runner's list
	testTimeout                 time.Duration // a test that runs longer is stopped
	budget                      time.Duration // the whole backend
	deadline                    time.Time
	parallel                    int
	logf                        func(string, ...any)

	tests   map[string]*state
	order   []string // top-level names in the order they started
	procs   int
	stray   []string // output of the last process not attributed to a test
	errMsgs []string // what went wrong with the runner itself
	flaky   []string // failed beside the others, passed alone (rerunAlone)
}

func (r *suiteRun) get(name string) *state {
	if s := r.tests[name]; s != nil {
		return s
	}
	s := &state{name: name}
	if i := strings.LastIndexByte(name, '/'); i > 0 {
		s.parent = r.get(name[:i])
		s.parent.children = append(s.parent.children, s)
	} else {
		r.order = append(r.order, name)
	}
	r.tests[name] = s
	return s
}

// pattern is a -test.run/-test.skip alternative that matches the test
// name exactly, level by level.
func pattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// all runs processes until every selected test has ended, each stuck test
// is stopped, or the deadline passes.
func (r *suiteRun) all() {
	r.tests = map[string]*state{}
	r.deadline = time.Now().Add(r.budget)
	for {
		if time.Now().After(r.deadline) {
			r.failUnfinished("not finished: the backend's time budget ran out")
			return
		}
		var skip []string
		skip = append(skip, r.skip...)
		for _, name := range r.order {
			if r.tests[name].action != "" {
				skip = append(skip, pattern(name))
			}
		}
		for _, s := range r.tests {
			if s.parent != nil && s.note != "" {
				skip = append(skip, pattern(s.name)) // stopped, not again
			}
		}
		complete, progress, err := r.process(strings.Join(skip, "|"))
		if err != nil {
			r.errMsgs = append(r.errMsgs, err.Error())
			r.failUnfinished("not finished: " + err.Error())
			return
		}
		if complete {
			return
		}
		if !progress {
			r.errMsgs = append(r.errMsgs, fmt.Sprintf("process %d ended early with no test ended or stopped; its last output:\n%s", r.procs, strings.Join(r.stray, "")))
			r.failUnfinished("not finished: the test process ended early")
			return
		}
		if r.procs >= 12 {
			r.errMsgs = append(r.errMsgs, "12 processes and the tests have not finished")
			r.failUnfinished("not finished after 12 processes")
			return
		}
	}
}

func (r *suiteRun) failUnfinished(note string) {
	for _, s := range r.tests {
		if s.action == "" && s.open == 0 {
			s.action, s.note = "fail", note
		}
	}
}

// process runs the test binary once. complete: it ran to its end.
// progress: some test ended or was stopped in it.
func (r *suiteRun) process(skip string) (complete, progress bool, err error) {
	r.procs++
	proc := r.procs
	pstart := time.Now()
	defer func() {
		r.logf("%-8s process %d ended after %s (complete %v)", r.backend, proc, time.Since(pstart).Round(time.Millisecond), complete)
	}()
	args := []string{"-test.v=test2json", "-test.paniconexit0", "-test.count=1",
		"-test.parallel=" + strconv.Itoa(r.parallel),
		// The runner stops stuck tests itself; this only ends a test binary
		// that lost its runner.
		"-test.timeout=" + (time.Until(r.deadline) + time.Minute).Round(time.Second).String(),
	}
	if r.run != "" {
		args = append(args, "-test.run="+r.run)
	}
	if skip != "" {
		args = append(args, "-test.skip="+skip)
	}
	cmd := exec.Command(r.bin, args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "LIVETAB_SUITE_BACKEND="+r.backend, "LIVETAB_SUITE_STATE="+r.stateDir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pr, pw, err := os.Pipe()
	if err != nil {
		return false, false, err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	conv := exec.Command(goTool(), "tool", "test2json", "-t", "-p", "chromedp")
	conv.Stdin = pr
	convOut, err := conv.StdoutPipe()
	if err != nil {
		return false, false, err
	}
	if err := conv.Start(); err != nil {
		return false, false, fmt.Errorf("go tool test2json: %w", err)
	}
	if err := cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		conv.Wait()
		return false, false, fmt.Errorf("starting the suite: %w", err)
	}
	pw.Close()
	pr.Close()
	var waitErr error
	done := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(done) }()

	events := make(chan event)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(convOut)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var e event
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				events <- e
			}
		}
		io.Copy(io.Discard, convOut)
	}()

	r.stray = nil
	var stopped []*state
	stopping := false
	failedHere := false
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for events != nil {
		select {
		case e, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if e.Test == "" {
				switch e.Action {
				case "output":
					r.stray = append(r.stray, e.Output)
					if len(r.stray) > keepLines {
						r.stray = r.stray[1:]
					}
				case "pass", "fail":
					complete = !stopping
				}
				continue
			}
			s := r.get(e.Test)
			switch e.Action {
			case "run":
				if s.ranIn != proc { // a test run again after a restart starts over
					*s = state{name: s.name, parent: s.parent, children: s.children}
				}
				s.ranIn = proc
				s.running, s.since = true, time.Now()
				if s.parent != nil {
					s.parent.open++
				}
			case "pause":
				s.running = false
			case "cont":
				s.running, s.since = true, time.Now()
			case "output":
				s.addOutput(e.Output)
			case "pass", "fail", "skip":
				if s.note != "" || stopping {
					// Stopped by the runner: keep that. While the process
					// is being stopped, an end is the stop's doing: the test
					// runs again in the next process.
					continue
				}
				s.action, s.elapsed, s.running = e.Action, e.Elapsed, false
				progress = true
				if e.Action == "fail" {
					failedHere = true
				}
				if s.parent != nil {
					s.parent.open--
					s.parent.since = time.Now()
				}
				r.logf("%-8s %-4s %s (%.2fs)", r.backend, e.Action, e.Test, e.Elapsed)
			}
		case <-tick.C:
			if stopping {
				continue
			}
			now := time.Now()
			for _, s := range r.tests {
				if s.ranIn == proc && s.action == "" && s.running && s.open == 0 && now.Sub(s.since) > r.testTimeout {
					stopped = append(stopped, s)
				}
			}
			over := now.After(r.deadline)
			if len(stopped) == 0 && !over {
				continue
			}
			stopping = true
			for _, s := range stopped {
				s.action, s.note = "fail", fmt.Sprintf("stopped: still running after %s", r.testTimeout)
				r.logf("%-8s STOP %s: still running after %s", r.backend, s.name, r.testTimeout)
				progress = true
			}
			if over {
				r.logf("%-8s STOP the backend's time budget ran out", r.backend)
			}
			go terminate(cmd.Process.Pid, done)
		}
	}
	<-done
	err = waitErr
	conv.Wait()
	r.killChromium()
	if complete {
		return true, true, nil
	}
	if !stopping && !failedHere {
		// The process ended in the middle (os.Exit, log.Fatal): the
		// tests that were running get the blame, once.
		for _, s := range r.tests {
			if s.ranIn == proc && s.action == "" && s.running && s.open == 0 {
				s.action = "fail"
				out := lastLines(s.output, 5)
				if out == "" {
					out = lastLines(r.stray, 5)
				}
				s.note = fmt.Sprintf("the test process exited while it ran (%v); its last output: %s", err, out)
				r.logf("%-8s fail %s: %s", r.backend, s.name, s.note)
				progress = true
			}
		}
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return false, progress, err
	}
	return false, progress, nil
}

func lastLines(lines []string, n int) string {
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, ""))
}

// terminate stops the test process: SIGTERM first, so that its TestMain
// closes the browser, then SIGKILL to its process group.
func terminate(pgid int, done <-chan struct{}) {
	syscall.Kill(-pgid, syscall.SIGTERM)
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
}

// killChromium ends the Chromium of the last test process when that
// process died without closing it: the glue wrote its pid and profile to
// chromium.pid; it runs in its own process group.
func (r *suiteRun) killChromium() {
	b, err := os.ReadFile(filepath.Join(r.stateDir, "chromium.pid"))
	if err != nil {
		return
	}
	os.Remove(filepath.Join(r.stateDir, "chromium.pid"))
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 1 {
		return
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(string(cmdline), "--user-data-dir="+f[1]) {
		return // gone, or the pid is another process's now
	}
	syscall.Kill(-pid, syscall.SIGKILL)
	for range 100 {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	os.RemoveAll(f[1])
}

// leaves are the failed tests none of whose subtests failed: the names the
// expected list holds.
func (r *suiteRun) failedLeaves() map[string]*state {
	out := map[string]*state{}
	for name, s := range r.tests {
		if s.action != "fail" {
			continue
		}
		childFailed := false
		for _, c := range s.children {
			if r.anyFailed(c) {
				childFailed = true
			}
		}
		if !childFailed {
			out[name] = s
		}
	}
	return out
}

func (r *suiteRun) anyFailed(s *state) bool {
	if s.action == "fail" {
		return true
	}
	for _, c := range s.children {
		if r.anyFailed(c) {
			return true
		}
	}
	return false
}

// topResult is a top-level test's result: a parent whose stopped subtest
// was skipped in a later process may have passed there, yet it failed.
func (r *suiteRun) topResult(name string) string {
	s := r.tests[name]
	if r.anyFailed(s) {
		return "fail"
	}
	return s.action
}

func (r *suiteRun) sortedTop() []string {
	names := append([]string(nil), r.order...)
	sort.Strings(names)
	return names
}
