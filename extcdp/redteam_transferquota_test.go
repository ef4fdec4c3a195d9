package extcdp_test

import (
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/extension"
	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamTransferReservationStarvesOthers: one client declared a
// transfer from the page as large as the relay's whole budget (64 GiB, or
// what the disk has free less its reserve) and wrote nothing. The declared
// size counted against every client's transfers for as long as that client
// stayed connected, even once the transfer's token had expired and it could
// never be served again: another client's 1 MiB transfer was refused. Now
// one connection holds at most half, and a transfer whose token expired
// unclaimed holds nothing.
func TestRedTeamTransferReservationStarvesOthers(t *testing.T) {
	srv, tok := endpoint(t)
	a := dialRawTo(t, srv, tok)
	b := dialRawTo(t, srv, tok)

	// Half of the room, less a margin for what others hold meanwhile.
	room := int64(64 << 30)
	var st syscall.Statfs_t
	if syscall.Statfs(os.TempDir(), &st) == nil {
		room = min(room, int64(st.Bavail)*int64(st.Bsize)-(1<<30))
	}
	size := room/2 - 64<<20
	if _, err := a.call("", livetabcdp.CommandOpenTransfer, map[string]any{"direction": livetabcdp.TransferFromPage, "size": size + 128<<20}); err == nil || !strings.Contains(err.Error(), "one connection") {
		t.Errorf("client A's transfer past half of the room: %v, want a refusal that says one connection holds at most half", err)
	}
	restore := extcdp.SetTransferTTL(300 * time.Millisecond)
	res, err := a.call("", livetabcdp.CommandOpenTransfer, map[string]any{"direction": livetabcdp.TransferFromPage, "size": size})
	restore()
	if err != nil {
		t.Fatalf("client A's big transfer: %v", err)
	}
	frame := field(res, "frameUrl")
	loop := strings.TrimPrefix(frame, "chrome-extension://"+extension.ID+"/transfer.html#")

	// A's transfer is dead: its token expired unclaimed, nothing can post to it.
	time.Sleep(time.Second)
	if code, _ := get(t, "POST", loop, "null", []byte("x")); code != http.StatusNotFound {
		t.Fatalf("a post to the expired transfer: %d, want 404", code)
	}

	// B, another program, wants 1 MiB; A wants its share again.
	if _, err := b.call("", livetabcdp.CommandOpenTransfer, map[string]any{"direction": livetabcdp.TransferToPage, "size": 1 << 20}); err != nil {
		t.Errorf("client B's 1 MiB transfer was refused because client A declared (and never wrote) %d bytes in a transfer that expired: %v", size, err)
	}
	if _, err := a.call("", livetabcdp.CommandOpenTransfer, map[string]any{"direction": livetabcdp.TransferFromPage, "size": size}); err != nil {
		t.Errorf("client A's transfer, its expired one aside: %v", err)
	}
}
