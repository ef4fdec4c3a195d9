//go:build linux

package chromedpsuite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// chromedpModule is the chromedp whose suite runs: the version in go.mod.
const chromedpModule = "github.com/chromedp/chromedp"

// repoRoot is the livetab checkout: two levels up from this package.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("livetab's go.mod not found two levels up from the test: %v", err)
	}
	return root
}

// goTool is the go command that runs the test: go test puts its GOROOT/bin
// first on the PATH of the tests it runs.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "go"
}

// chromedpVersion is the version of chromedp that livetab's go.mod requires.
func chromedpVersion(t testing.TB, root string) string {
	t.Helper()
	cmd := exec.Command(goTool(), "list", "-m", "-f", "{{.Version}}", chromedpModule)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -m %s: %v: %s", chromedpModule, err, out)
	}
	return strings.TrimSpace(string(out))
}

// moduleDir is the module cache directory of chromedp at version, downloaded
// when missing (the module proxy must be reachable then).
func moduleDir(t testing.TB, root, version string) string {
	t.Helper()
	cmd := exec.Command(goTool(), "mod", "download", "-json", chromedpModule+"@"+version)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download %s@%s: %v: %s: check the network or GOPROXY, or run go mod download in %s", chromedpModule, version, err, out, root)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("go mod download %s@%s said %s (%v)", chromedpModule, version, out, err)
	}
	return m.Dir
}

// rewrite is one change to chromedp's test files, done exactly count times
// (a chromedp whose files differ fails here instead of testing something
// else).
type rewrite struct {
	file     string // a file, or "*" for every *_test.go of package chromedp
	old, new string
	count    int // -1: any number, at least one in all
	// unless: a match followed by one of these stays as it is
	unless []string
}

// rewrites are all the changes made to chromedp's suite; the glue files in
// testdata/glue are added. README.md explains each.
var rewrites = []rewrite{
	// chromedp's TestMain starts an ExecAllocator; livetab_main_test.go
	// has the suite's TestMain. The renamed function stays, unused, so that
	// the file's imports stay used.
	{file: "chromedp_test.go", old: "func TestMain(m *testing.M) {", new: "func chromedpTestMain(m *testing.M) {", count: 1},
	// Tests and examples that start a browser of their own with
	// NewContext(context.Background()) run in livetab's instead. The
	// subtests of TestBrowserContext that check the panic of
	// With*BrowserContext "before Browser is initialized" keep theirs:
	// they need a context with no allocator.
	{file: "*", old: "NewContext(context.Background()", new: "NewContext(LivetabAllocator()", count: -1,
		unless: []string{", WithNewBrowserContext(", ", WithExistingBrowserContext("}},
	{file: "example_test.go", old: "chromedp.NewContext(context.Background()", new: "chromedp.NewContext(chromedp.LivetabAllocator()", count: -1},
	// TestCancelTabDuringAttach opens 150 tabs in a browser of its own, as
	// each new tab takes the focus and a tab without it gets no animation
	// frames (chromedp's Poll waits on them). livetab has one browser, the
	// person's: the tabs open in the background instead, or the polling
	// tests running beside it time out (seen: TestPollTimeout, TestPollNull).
	{file: "chromedp_test.go", old: `target.CreateTargetParams{URL: "about:blank"})
		if err != nil {
			t.Fatal(err)
		}
		ctx2, cancel := NewContext(ctx1, WithTargetID(res.TargetID))`, new: `target.CreateTargetParams{URL: "about:blank", Background: &[]bool{true}[0]})
		if err != nil {
			t.Fatal(err)
		}
		ctx2, cancel := NewContext(ctx1, WithTargetID(res.TargetID))`, count: 1},
}

// prepare copies chromedp's module into a new directory, rewrites its test
// files, adds the glue and a go.mod that requires livetab from root, and
// builds the test binary. It returns the directory and the binary.
func prepare(t testing.TB, root string) (dir, bin string) {
	t.Helper()
	version := chromedpVersion(t, root)
	src := moduleDir(t, root, version)
	dir = t.TempDir()
	copyTree(t, src, filepath.Join(dir, "chromedp"))
	dir = filepath.Join(dir, "chromedp")
	for _, rw := range rewrites {
		applyRewrite(t, dir, rw)
	}
	glue, err := filepath.Glob("testdata/glue/*_test.go")
	if err != nil || len(glue) == 0 {
		t.Fatalf("no glue files in testdata/glue (%v)", err)
	}
	for _, g := range glue {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(g)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeGoMod(t, root, dir)

	bin = filepath.Join(dir, "chromedp.test")
	cmd := exec.Command(goTool(), "test", "-c", "-o", bin, ".")
	cmd.Dir = dir
	// -mod=mod: the copy's go.mod lists livetab's requirements; go may
	// add what the module graph needs. GOWORK=off: never a workspace of
	// the machine.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building chromedp's suite against livetab: %v\n%s", err, out)
	}
	return dir, bin
}

func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644) // the module cache is read-only
	})
	if err != nil {
		t.Fatalf("copying %s: %v", src, err)
	}
}

func applyRewrite(t testing.TB, dir string, rw rewrite) {
	t.Helper()
	files := []string{filepath.Join(dir, rw.file)}
	if rw.file == "*" {
		all, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
		files = files[:0]
		for _, f := range all {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte("\npackage chromedp\n")) || bytes.HasPrefix(b, []byte("package chromedp\n")) {
				files = append(files, f)
			}
		}
	}
	total := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("rewrite of %s: %v", rw.file, err)
		}
		s := string(b)
		var out strings.Builder
		n := 0
		for {
			i := strings.Index(s, rw.old)
			if i < 0 {
				out.WriteString(s)
				break
			}
			rest := s[i+len(rw.old):]
			keep := false
			for _, u := range rw.unless {
				if strings.HasPrefix(rest, u) {
					keep = true
				}
			}
			out.WriteString(s[:i])
			if keep {
				out.WriteString(rw.old)
			} else {
				out.WriteString(rw.new)
				n++
			}
			s = rest
		}
		if n > 0 {
			if err := os.WriteFile(f, []byte(out.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		total += n
	}
	if (rw.count >= 0 && total != rw.count) || (rw.count < 0 && total == 0) {
		t.Fatalf("rewrite %q → %q in %s: %d matches, want %d (-1: at least one): chromedp's tests changed; update rewrites and README.md", rw.old, rw.new, rw.file, total, rw.count)
	}
}

// writeGoMod makes the copy a module that requires livetab from root, with
// livetab's own requirements and checksums, so that nothing new is fetched.
func writeGoMod(t testing.TB, root, dir string) {
	t.Helper()
	cmd := exec.Command(goTool(), "mod", "edit", "-json")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod edit -json in %s: %v", root, err)
	}
	var mod struct {
		Go      string
		Require []struct {
			Path, Version string
			Indirect      bool
		}
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "module %s\n\ngo %s\n\nrequire (\n\tgithub.com/livetab/livetab v0.0.0-00010101000000-000000000000\n", chromedpModule, mod.Go)
	for _, r := range mod.Require {
		if r.Path == chromedpModule {
			continue
		}
		fmt.Fprintf(&b, "\t%s %s\n", r.Path, r.Version)
	}
	fmt.Fprintf(&b, ")\n\nreplace github.com/livetab/livetab => %s\n", root)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	own, _ := os.ReadFile(filepath.Join(dir, "go.sum"))
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), append(own, sums...), 0o644); err != nil {
		t.Fatal(err)
	}
}
