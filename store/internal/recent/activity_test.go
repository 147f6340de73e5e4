package recent

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// TestActivityCountsTheLastVisitOfUndecodableResults: a row whose stored
// results do not decode still recalls its schedule and its last visit.
func TestActivityCountsTheLastVisitOfUndecodableResults(t *testing.T) {
	start := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	scheduled, visited := start.Add(90*time.Second), start.Add(150*time.Second)
	failed := revisit.VisitFailed
	a := NewActivity(start, start.Add(time.Hour))
	a.Add("git", &scheduled, &visited, &failed, []byte{1, 2, 3})
	require.Equal(t, []revisit.MinuteCount{
		{VisitType: "git", Kind: revisit.ActivityResult, Label: "failed", Minute: start.Add(2 * time.Minute), Count: 1},
		{VisitType: "git", Kind: revisit.ActivityScheduled, Minute: start.Add(time.Minute), Count: 1},
	}, a.Counts(nil))
}
