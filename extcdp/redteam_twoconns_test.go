package extcdp_test

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamTwoConnectionsTakeAllRoom: "one connection holds at most
// half of what there is: it cannot leave the others no room". A program
// with the endpoint's token opens a second connection and declares its
// half again, in transfers to the page that it never writes (those are
// never swept: only transfers from the page whose token expired are). No
// room is left: another program's 1 MiB transfer is refused for as long
// as the two connections stay.
func TestRedTeamTwoConnectionsTakeAllRoom(t *testing.T) {
	srv, tok := endpoint(t)
	a1 := dialRawTo(t, srv, tok)
	a2 := dialRawTo(t, srv, tok)
	b := dialRawTo(t, srv, tok)
	free := func() int64 {
		var st syscall.Statfs_t
		if err := syscall.Statfs(os.TempDir(), &st); err != nil {
			t.Skip(err)
		}
		return int64(st.Bavail) * int64(st.Bsize)
	}
	const maxBytes, reserve = int64(64 << 30), int64(1 << 30)
	var held int64
	for i, a := range []*rawClient{a1, a2} {
		// Each connection takes the most it may: half of what the others
		// leave. All of it is refused.
		left := min(maxBytes, free()-reserve) - held
		if _, err := a.call("", livetabcdp.CommandOpenTransfer, map[string]any{"direction": livetabcdp.TransferToPage, "size": left - 64<<20}); err == nil || !strings.Contains(err.Error(), "one connection") {
			t.Errorf("connection %d asking for all the room left: %v, want a refusal that says one connection holds at most half", i+1, err)
		}
		size := left/2 - 64<<20
		if _, err := a.call("", livetabcdp.CommandOpenTransfer, map[string]any{"direction": livetabcdp.TransferToPage, "size": size}); err != nil {
			t.Fatalf("connection %d's share (%d bytes): %v", i+1, size, err)
		}
		held += size
	}
	if _, err := b.call("", livetabcdp.CommandOpenTransfer, map[string]any{"direction": livetabcdp.TransferToPage, "size": 1 << 20}); err != nil {
		t.Errorf("another program's 1 MiB transfer, after one program's two connections declared (and never wrote) %d bytes: %v", held, err)
	}
}
