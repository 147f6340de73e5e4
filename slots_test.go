package revisit_test

import (
	"testing"

	"github.com/revisit-sched/revisit"
)

func TestSlotRule(t *testing.T) {
	for _, c := range []struct {
		name   string
		rule   revisit.SlotRule
		maxLen int
		depth  int64
		want   int
	}{
		{"empty queue, no threshold", revisit.SlotRule{}, 1000, 0, 1000},
		{"one slot free is enough without threshold", revisit.SlotRule{}, 1000, 999, 1},
		{"full", revisit.SlotRule{}, 1000, 1000, 0},
		{"beyond full", revisit.SlotRule{}, 1000, 1500, 0},
		{"below the threshold", revisit.SlotRule{MinFreeRatio: 0.05}, 1000, 951, 0},
		{"at the threshold", revisit.SlotRule{MinFreeRatio: 0.05}, 1000, 950, 50},
		{"above the threshold", revisit.SlotRule{MinFreeRatio: 0.2}, 10, 7, 3},
		{"a fifth free is a fifth", revisit.SlotRule{MinFreeRatio: 0.2}, 10, 8, 2},
		{"less than a fifth free", revisit.SlotRule{MinFreeRatio: 0.2}, 10, 9, 0},
		{"threshold of the whole queue, not of one send", revisit.SlotRule{MinFreeRatio: 0.5, PerSend: 10}, 1000, 600, 0},
		{"capped by PerSend", revisit.SlotRule{MinFreeRatio: 0.05, PerSend: 100}, 1000, 0, 100},
		{"capped by MaxGrabCount", revisit.SlotRule{}, 1_000_000, 0, revisit.MaxGrabCount},
		{"PerSend above MaxGrabCount", revisit.SlotRule{PerSend: 500_000}, 1_000_000, 0, revisit.MaxGrabCount},
		{"ratio 1: only an empty queue", revisit.SlotRule{MinFreeRatio: 1}, 10, 1, 0},
		{"ratio 1, empty queue", revisit.SlotRule{MinFreeRatio: 1}, 10, 0, 10},
	} {
		if got := c.rule.Slots(c.maxLen, c.depth); got != c.want {
			t.Errorf("%s: %+v.Slots(%d, %d) = %d, want %d", c.name, c.rule, c.maxLen, c.depth, got, c.want)
		}
	}
	if got := revisit.FreeSlots(10, 12); got != 0 {
		t.Errorf("FreeSlots of a queue beyond full = %d, want 0", got)
	}
	if got := revisit.FreeSlots(10, 4); got != 6 {
		t.Errorf("FreeSlots(10, 4) = %d, want 6", got)
	}
}
