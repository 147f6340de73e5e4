package simulate_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/orchestrator"
	"github.com/revisit-sched/revisit/simulate"
	"github.com/revisit-sched/revisit/simulate/world"
)

// firstVisitsInGrabOrder returns how many first visits of the world's
// first n git origins end within d of start, computed from the world
// model alone: every origin is queued at start, the oldest last update
// first (never_visited_oldest_update_first's order), and each of workers
// workers takes the next one from the queue as soon as it is free.
func firstVisitsInGrabOrder(n, workers int, start time.Time, d time.Duration) int64 {
	origins := make([]world.Origin, n)
	for i := range origins {
		origins[i] = world.NewOrigin(fmt.Sprintf("https://example.com/%06d.git", i+1), "git")
	}
	slices.SortStableFunc(origins, func(a, b world.Origin) int {
		return a.LastUpdate(start).Compare(b.LastUpdate(start))
	})
	free := make([]time.Time, workers) // when each worker is free
	for i := range free {
		free[i] = start
	}
	end, ended := start.Add(d), int64(0)
	for _, o := range origins {
		w := slices.IndexFunc(free, func(t time.Time) bool { return t.Equal(slices.MinFunc(free, time.Time.Compare)) })
		if free[w].After(end) {
			break
		}
		free[w] = free[w].Add(o.Visit(free[w], time.Time{}).Duration)
		if !free[w].After(end) {
			ended++
		}
	}
	return ended
}

// TestUpstreamQueuesEachGrabInPolicyOrder runs upstream's settings on a
// world smaller than the queue, so that the first round queues every
// origin: its visits are those of the origins taken in the policy's order
// by 48 workers, as the world model alone computes them. The same run
// with the rounds shuffled, as in production, visits fewer: the cheap
// first visits of the quiet origins, which the policy puts first, are
// spread over the day.
func TestUpstreamQueuesEachGrabInPolicyOrder(t *testing.T) {
	const origins, d = 1500, 3 * time.Hour
	cfg := simulate.Config{Origins: origins, Duration: d}
	sc := simulate.Scenario{Name: "never visited", Orchestrator: orchestrator.Config{
		Shares: map[string][]orchestrator.Share{"git": {{Policy: revisit.NeverVisitedOldestUpdateFirst, Weight: 1}}}}}
	cfg, sc.Orchestrator = simulate.Upstream(cfg, sc.Orchestrator)
	require.True(t, sc.Orchestrator.KeepPolicyOrder)

	want := firstVisitsInGrabOrder(origins, simulate.DefaultWorkers, simulate.Defaults.Start, d)
	require.Greater(t, want, int64(origins/3), "the test needs a world where the order matters")
	require.Less(t, want, int64(origins))
	kept := run(t, cfg, sc)
	require.Equal(t, want, kept.Counters.Total)
	t.Logf("first visits in 3 h: %d in the policy's order, as the model computes", want)

	sc.Orchestrator.KeepPolicyOrder = false
	shuffled := run(t, cfg, sc)
	t.Logf("shuffled: %d", shuffled.Counters.Total)
	require.Less(t, float64(shuffled.Counters.Total), 0.8*float64(want))
}

// TestUpstreamListerListsTheFirstOriginsAgain checks upstream's lister on
// a world of 250 origins listing 100 an hour: it finds no new origin
// until its count passes the world's, at the third hour (300 origins),
// then 100 an hour; with a rate of 0 it lists nothing.
func TestUpstreamListerListsTheFirstOriginsAgain(t *testing.T) {
	cfg, _ := simulate.Upstream(simulate.Config{Origins: 250, Duration: 4 * time.Hour}, orchestrator.Config{})
	res := run(t, cfg, simulate.Scenario{Name: "upstream lister"})
	var known []int64
	for _, s := range res.Samples {
		known = append(known, s.Known)
	}
	// Samples at 0 h to 4 h, each after the lister's run: 100, 200, 300, 400 and 500 origins.
	require.Equal(t, []int64{250, 250, 300, 400, 500}, known)

	cfg.ListerRate = 0
	res = run(t, cfg, simulate.Scenario{Name: "no lister"})
	require.Equal(t, int64(250), res.Samples[len(res.Samples)-1].Known)
}
