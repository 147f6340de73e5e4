package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/revisit-sched/revisit"
)

// TestExpiryTakesEveryChunk makes expiry and forgetting take several chunks:
// every visit sent before the deadline is lost, its origin eligible again,
// and every lost visit is forgotten.
func TestExpiryTakesEveryChunk(t *testing.T) {
	defer func(n int) { visitChunk = n }(visitChunk)
	visitChunk = 2
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := OpenMigrated(t, func() time.Time { return t0 })
	const n = 7
	recordGitOrigins(t, s, n)
	grab := revisit.GrabParams{VisitType: "git", Count: n + 1, Policy: revisit.OldestScheduledFirst, Now: t0}
	visits, err := s.VisitsDispatch(ctx, revisit.DispatchParams{Grab: grab, Owner: "test"})
	if err != nil || len(visits) != n {
		t.Fatalf("dispatch: %d visits, %v; want %d", len(visits), err, n)
	}
	ids := make([]string, len(visits))
	for i, v := range visits {
		ids[i] = v.ID
	}
	if _, err := s.VisitsSent(ctx, ids, t0); err != nil {
		t.Fatal(err)
	}
	deadline := t0.Add(time.Hour)
	if got, err := s.VisitsExpire(ctx, "git", deadline); err != nil || got != n {
		t.Fatalf("expire: %d visits, %v; want %d", got, err, n)
	}
	grab.Now, grab.DryRun = deadline, true
	if eligible, err := s.GrabNextVisits(ctx, grab); err != nil || len(eligible) != n {
		t.Errorf("after expiry: %d eligible origins, %v; want %d", len(eligible), err, n)
	}
	if got, err := s.VisitsForgetLost(ctx, "git", deadline); err != nil || got != n {
		t.Errorf("forget: %d visits, %v; want %d", got, err, n)
	}
	if left, err := s.VisitsGet(ctx, ids); err != nil || len(left) != 0 {
		t.Errorf("after forgetting: %d visits left, %v", len(left), err)
	}
}
