package grabsql

import (
	"fmt"
	"testing"
	"time"

	"github.com/revisit-sched/revisit"
)

var testDialect = Dialect{Time: func(t time.Time) any { return t }}

// TestWalksFindWhatRecordKept checks that a grab finds the walk of the
// last grab of the same parameters only: not another policy's, lister's
// or cooldowns', not one recorded later than its time, and none once a
// grab found fewer than it asked for.
func TestWalksFindWhatRecordKept(t *testing.T) {
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	p := Params{VisitType: "git", Policy: revisit.OldestScheduledFirst, Now: now, Cooldowns: revisit.DefaultCooldowns()}
	g := revisit.GrabParams{VisitType: "git", Count: 2}
	picked := []Candidate{{ID: 6}, {ID: 7}}
	var w Walks
	Record(&w, testDialect, g, p, picked, int64(3))
	walk, ok := w.Find(g, p)
	if !ok || walk.Writes != int64(3) || !walk.At.Equal(now) || walk.After[len(walk.After)-1] != int64(7) {
		t.Fatalf("found %+v, %t", walk, ok)
	}
	other := p
	other.Policy = revisit.StopAfterSuccess
	if _, ok := w.Find(g, other); ok {
		t.Error("another policy found the walk")
	}
	filtered := g
	filtered.ListerName, filtered.ListerInstanceName = "a", "b"
	if _, ok := w.Find(filtered, p); ok {
		t.Error("a grab filtered by lister found the walk of one that was not")
	}
	dry := g
	dry.DryRun = true
	if _, ok := w.Find(dry, p); ok {
		t.Error("a dry run found the walk")
	}
	other = p
	other.Cooldowns.Failed = time.Hour
	if _, ok := w.Find(g, other); ok {
		t.Error("other cooldowns found the walk")
	}
	earlier := p
	earlier.Now = now.Add(-time.Second)
	if _, ok := w.Find(g, earlier); ok {
		t.Error("a grab earlier than the walk found it")
	}
	Record(&w, testDialect, g, p, picked[:1], int64(3))
	if _, ok := w.Find(g, p); ok {
		t.Error("a short grab did not end the walk")
	}
}

// TestWalksAreBounded checks that callers who vary the parameters of
// every grab cannot make a store remember more than maxWalks walks.
func TestWalksAreBounded(t *testing.T) {
	var w Walks
	p := Params{VisitType: "git", Policy: revisit.OldestScheduledFirst, Now: time.Now()}
	g := revisit.GrabParams{VisitType: "git", Count: 1}
	for i := range 3 * maxWalks {
		p.Cooldowns.Failed = time.Duration(i) * time.Second
		g.ListerName = fmt.Sprint(i % 7)
		Record(&w, testDialect, g, p, []Candidate{{ID: int64(i)}}, int64(0))
	}
	if n := len(w.walks); n > maxWalks {
		t.Fatalf("%d walks kept, more than %d", n, maxWalks)
	}
	if _, ok := w.Find(g, p); !ok {
		t.Error("the last walk recorded is not found")
	}
}
