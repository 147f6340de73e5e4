package inflight

import (
	"context"
	"testing"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
)

// countStore answers VisitsCount with one git visit per call so far.
type countStore struct {
	store.Store
	calls int
}

func (s *countStore) VisitsCount(context.Context) ([]revisit.VisitCounts, error) {
	s.calls++
	return []revisit.VisitCounts{{VisitType: "git", Sent: int64(s.calls)}}, nil
}

func TestCountsServeForMinAge(t *testing.T) {
	ctx, st := context.Background(), &countStore{}
	c := Counts{MinAge: time.Minute}
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for _, step := range []struct {
		at   time.Time
		sent int64
	}{
		{t0, 1},
		{t0.Add(59 * time.Second), 1}, // within MinAge: the same count
		{t0.Add(time.Minute), 2},      // stale: counted again
		{t0.Add(-time.Hour), 3},       // a clock set back: counted again
		{t0.Add(-time.Hour + time.Second), 3},
	} {
		got, err := c.Get(ctx, st, step.at)
		if err != nil {
			t.Fatal(err)
		}
		if got["git"].Sent != step.sent {
			t.Fatalf("at %s: sent %d, want %d", step.at, got["git"].Sent, step.sent)
		}
	}
	if _, err := (&Counts{}).Get(ctx, st, t0); err != nil || st.calls != 4 {
		t.Fatalf("the zero value counts at once: %d calls, %v", st.calls, err)
	}
}
