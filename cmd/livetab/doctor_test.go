package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/livetab/livetab"
)

// doctor runs `livetab doctor` and checks that it fails (or not) and that
// its report holds each of the lines in want.
func doctor(t *testing.T, h *home, wantOK bool, want ...string) string {
	t.Helper()
	out, errOut, code := h.run(t, "doctor")
	return checkDoctor(t, out, errOut, code, wantOK, want...)
}

func checkDoctor(t *testing.T, out, errOut string, code int, wantOK bool, want ...string) string {
	t.Helper()
	if (code == 0) != wantOK {
		t.Errorf("livetab doctor: exit %d, want success %v\n%s%s", code, wantOK, out, errOut)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("livetab doctor does not say %q:\n%s%s", w, out, errOut)
		}
	}
	return out
}

func TestDoctorHealthy(t *testing.T) {
	s := needShared(t)
	doctor(t, s.home, true,
		"ok    chromium", "ok    token file", "ok    port       "+strings.TrimPrefix(s.ep.HTTP, "http://")+" is held by livetab serve",
		"ok    serve", "ok    token      accepted", "ok    extension  connected",
		"ok    files      the extension may read local files", "all good")
}

func TestDoctorNoChromium(t *testing.T) {
	h := newHome(t, "LIVETAB_CHROME=/nonexistent", "PATH="+t.TempDir())
	doctor(t, h, false, "FAIL  chromium", "fix: install Chromium")
}

func TestDoctorNoServe(t *testing.T) {
	h := newHome(t)
	h.run(t, "pair") // a token file, so that only the serve is missing
	out := doctor(t, h, false, "ok    token file", "FAIL  serve", "fix: run `livetab serve`", "skip  extension")
	if strings.Contains(out, "FAIL  token file") {
		t.Errorf("doctor blames the token file:\n%s", out)
	}
}

func TestDoctorTokenFileMode(t *testing.T) {
	h := newHome(t)
	h.run(t, "pair")
	if err := os.Chmod(h.tokenFile(), 0o644); err != nil {
		t.Fatal(err)
	}
	doctor(t, h, false, "FAIL  token file", "fix: chmod 600 "+h.tokenFile())
}

// A serve without --launch: nothing connects to it.
func TestDoctorNoExtension(t *testing.T) {
	h := newHome(t)
	s := startServe(t, h, "--addr", "127.0.0.1:0")
	doctor(t, h, false, "ok    serve", "ok    token      accepted", "FAIL  extension  not connected",
		"chrome://extensions", "livetab pair", s.ep.BridgeURL())
	if err := s.interrupt(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(h.endpointFile()); !os.IsNotExist(err) {
		t.Errorf("serve left its endpoint file after SIGINT: %v", err)
	}
}

func TestDoctorWrongToken(t *testing.T) {
	s := needShared(t)
	h := newHome(t)
	h.run(t, "pair")
	wrong := s.ep
	wrong.URL = strings.Replace(wrong.URL, "token=", "token=x", 1)
	if err := livetab.WriteEndpoint(h.endpointFile(), wrong); err != nil {
		t.Fatal(err)
	}
	doctor(t, h, false, "ok    serve", "FAIL  token", "holds another token", "run `livetab pair` and paste the token")
}

func TestDoctorPortTaken(t *testing.T) {
	other := httptest.NewServer(http.NotFoundHandler())
	defer other.Close()
	addr := other.Listener.Addr().String()
	h := newHome(t)
	h.run(t, "pair")
	out, errOut, code := h.run(t, "doctor", "--addr", addr)
	checkDoctor(t, out, errOut, code, false, "FAIL  port       "+addr+" is in use by another program", "fix: stop that program, or run `livetab serve --addr")

	_, errOut, code = h.run(t, "serve", "--addr", addr)
	if code == 0 || !strings.Contains(errOut, "another livetab") {
		t.Errorf("serve on a taken port: exit %d: %s", code, errOut)
	}
}
