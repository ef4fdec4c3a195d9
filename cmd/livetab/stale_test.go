package main

import (
	"net"
	"os"
	"strings"
	"testing"

	"github.com/livetab/livetab"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

const anotherServe = "another livetab serve runs"

// A serve killed with -9 leaves its endpoint file. The next serve on the
// same port answers its own probe with the same token: it must see that
// the file is stale and replace it silently, not warn about itself.
func TestServeReplacesItsStaleEndpointFile(t *testing.T) {
	h := newHome(t)
	addr := freeAddr(t)
	first := startServe(t, h, "--addr", addr)
	first.cmd.Process.Kill() // SIGKILL: no cleanup
	<-first.done
	if e, err := livetab.ReadEndpoint(h.endpointFile()); err != nil || e.PID != first.cmd.Process.Pid {
		t.Fatalf("the killed serve's endpoint file: %+v %v", e, err)
	}

	second := startServe(t, h, "--addr", addr)
	if strings.Contains(second.log(), anotherServe) {
		t.Errorf("the restarted serve warns about its own stale file:\n%s", second.log())
	}
	if err := second.interrupt(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(h.endpointFile()); !os.IsNotExist(err) {
		t.Errorf("the endpoint file outlived the serve: %v", err)
	}
}

// A file that names a gone process at an address where nothing answers is
// stale too; a serve that runs and answers with the token is not.
func TestServeWarnsOnlyAboutALiveServe(t *testing.T) {
	h := newHome(t)
	gone := freeAddr(t)
	if err := livetab.WriteEndpoint(h.endpointFile(), livetab.Endpoint{URL: "ws://" + gone + "/devtools/browser/x?token=t", HTTP: "http://" + gone, PID: deadPID(t)}); err != nil {
		t.Fatal(err)
	}
	first := startServe(t, h, "--addr", freeAddr(t))
	if strings.Contains(first.log(), anotherServe) {
		t.Errorf("a serve warns about a stale file:\n%s", first.log())
	}

	second := startServe(t, h, "--addr", freeAddr(t))
	if !strings.Contains(second.log(), anotherServe) {
		t.Errorf("a serve replaced the file of a live one without a word:\n%s", second.log())
	}
	second.interrupt()
	first.interrupt()
}

// deadPID returns the id of a process that has ended.
func deadPID(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess(bin, []string{bin, "version"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	p.Wait()
	return p.Pid
}
