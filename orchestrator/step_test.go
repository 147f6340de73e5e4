package orchestrator

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
)

// TestStepperRunsTheLoopsRoundsOnTheCallersClock steps a visit type by
// hand with a clock the test moves: a round fills the queue in the
// configured shares, a full queue asks to drain, an empty world asks to
// be woken, a lost visit is offered again once the clock passes its
// timeout.
func TestStepperRunsTheLoopsRoundsOnTheCallersClock(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		w := newWorld(t, st, 100)
		w.add(neverVisited, 60)
		w.add(lagging, 60)
		b := newFakeBroker()
		now := time.Now().UTC()
		cfg := testConfig("stepper")
		cfg.Clock = func() time.Time { return now }
		cfg.Rand = rand.New(rand.NewPCG(1, 2))
		cfg.VisitTimeout = time.Hour
		cfg.Shares = map[string][]Share{"git": {
			{Policy: revisit.AlreadyVisitedOrderByLag, Weight: 1},
			{Policy: revisit.NeverVisitedOldestUpdateFirst, Weight: 1},
		}}
		o, err := New(st, b, cfg)
		require.NoError(t, err)
		s, err := o.Stepper(ctx, "git")
		require.NoError(t, err)
		defer s.Close(ctx)

		other, err := New(st, b, testConfig("other"))
		require.NoError(t, err)
		_, err = other.Stepper(ctx, "git")
		require.Equal(t, revisit.CodeConflict, revisit.Code(err), "one stepper a visit type")

		step, err := s.Round(ctx)
		require.NoError(t, err)
		require.Len(t, step.Visits, 100)
		byPolicy := map[revisit.Policy]int{}
		for _, v := range step.Visits {
			byPolicy[v.Policy]++
		}
		require.Equal(t, map[revisit.Policy]int{revisit.AlreadyVisitedOrderByLag: 50,
			revisit.NeverVisitedOldestUpdateFirst: 50}, byPolicy)
		require.Len(t, b.published(), 100)
		require.False(t, step.Drain)
		require.Less(t, step.Wait, cfg.RoundJitter+1)

		step, err = s.Round(ctx)
		require.NoError(t, err)
		require.True(t, step.Drain, "the queue is full")
		require.Empty(t, step.Visits)
		require.False(t, s.HasRoom(ctx))
		b.take(gitTask, 100)
		require.True(t, s.HasRoom(ctx))

		step, err = s.Round(ctx)
		require.NoError(t, err)
		require.Len(t, step.Visits, 20, "what is left of the world")
		b.take(gitTask, 100)
		step, err = s.Round(ctx)
		require.NoError(t, err)
		require.Empty(t, step.Visits)
		require.GreaterOrEqual(t, step.Wait, cfg.NoOriginsBackoff, "no origin: the long wait")
		require.Less(t, step.Wait, cfg.NoOriginsBackoff+cfg.RoundJitter)
		require.NotNil(t, step.Woken, "the store wakes the wait up")

		now = now.Add(2 * time.Hour) // every visit is lost now
		step, err = s.Round(ctx)
		require.NoError(t, err)
		require.Len(t, step.Visits, 100, "lost visits are offered again")
	})
}
