package extcdp_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSharedTabLoadNetworkResourceStream: a client on a person's tab that
// another client uses reads the stream of its own Network.loadNetworkResource
// (the handle is in the reply's resource): it was refused as another's
// ("Invalid stream handle"), not having been noted as the client's.
func TestSharedTabLoadNetworkResourceStream(t *testing.T) {
	a, b, sa, _ := sharedTab(t, "/form?shared-load-resource")
	_ = b
	var tree struct {
		FrameTree struct {
			Frame struct {
				ID string `json:"id"`
			} `json:"frame"`
		} `json:"frameTree"`
	}
	json.Unmarshal(a.must(sa, "Page.getFrameTree", nil), &tree)
	frame := tree.FrameTree.Frame.ID
	res := a.must(sa, "Network.loadNetworkResource", map[string]any{
		"frameId": frame, "url": site.URL + "/form?loaded",
		"options": map[string]any{"disableCache": true, "includeCredentials": false},
	})
	var r struct {
		Resource struct {
			Stream string `json:"stream"`
		} `json:"resource"`
	}
	json.Unmarshal(res, &r)
	handle := r.Resource.Stream
	if handle == "" {
		t.Fatalf("Network.loadNetworkResource gave no stream: %s", res)
	}
	if got := string(readStream(a, sa, handle)); !strings.Contains(got, "form page") {
		t.Errorf("the client read %q from its own stream, want the page", got)
	}
}
