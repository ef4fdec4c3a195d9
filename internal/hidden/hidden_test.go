package hidden

import (
	"testing"
	"time"
)

func TestTabs(t *testing.T) {
	h := Tabs{}
	now := time.Now()
	h.Hide("A", now)
	h.Hide("B", now.Add(-For/2))
	if !h.Hidden("A", now) || !h.Hidden("B", now) || h.Hidden("C", now) {
		t.Fatal("a tab just spared is listed")
	}
	later := now.Add(For * 3 / 4)
	if !h.Hidden("A", later) || h.Hidden("B", later) {
		t.Error("B stays hidden past its moment, or A left early")
	}
	if _, ok := h["B"]; ok {
		t.Error("B is remembered after its moment")
	}
	if !h.Any(later) || h.Any(now.Add(For)) || len(h) != 0 {
		t.Errorf("Any: %v", h)
	}
	h.Hide("A", now)
	h.Show("A")
	if h.Hidden("A", now) {
		t.Error("a tab attached anew stays hidden")
	}
}
