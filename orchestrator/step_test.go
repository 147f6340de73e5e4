package orchestrator

import (
	"context"
	"fmt"
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
		require.True(t, step.Drain, "after a round that published, the next comes as soon as the queue has room")
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

// expiryCounter is a store that counts the looks for lost visits.
type expiryCounter struct {
	store.Store
	looks int
}

func (c *expiryCounter) VisitsExpire(ctx context.Context, visitType string, before time.Time) (int, error) {
	c.looks++
	return c.Store.VisitsExpire(ctx, visitType, before)
}

// TestRoundsLookForLostVisitsEveryMinute: the rounds of a minute look for
// lost visits once (a tenth of the timeout when that is shorter), and a
// visit past its timeout is declared lost by the first round that looks.
func TestRoundsLookForLostVisitsEveryMinute(t *testing.T) {
	ctx := context.Background()
	st := &expiryCounter{Store: teststore.SQLite(t)}
	w := newWorld(t, st.Store, 10)
	w.add(neverVisited, 10)
	b := newFakeBroker()
	now := time.Now().UTC()
	cfg := testConfig("stepper")
	cfg.Clock = func() time.Time { return now }
	cfg.VisitTimeout = 5 * time.Minute // looked for every 30 s
	o, err := New(st, b, cfg)
	require.NoError(t, err)
	s, err := o.Stepper(ctx, "git")
	require.NoError(t, err)
	defer s.Close(ctx)

	round := func(after time.Duration) Step {
		now = now.Add(after)
		step, err := s.Round(ctx)
		require.NoError(t, err)
		return step
	}
	require.Len(t, round(0).Visits, 10)
	require.Equal(t, 1, st.looks)
	b.take(gitTask, 10) // taken, never answered
	round(10 * time.Second)
	round(10 * time.Second)
	require.Equal(t, 1, st.looks, "20 s after the last look")
	round(15 * time.Second)
	require.Equal(t, 2, st.looks, "35 s after")
	require.Empty(t, round(4*time.Minute+20*time.Second).Visits, "4 min 55 s after the dispatch: not lost yet")
	require.Len(t, round(10*time.Second).Visits, 0, "lost 5 s ago, but the last look was 10 s ago")
	require.Len(t, round(25*time.Second).Visits, 10, "the next look declares them lost, and they go again")
	require.Equal(t, 4, st.looks)
}

// TestKeepPolicyOrderPublishesTheGrabsInTheirOrder checks that a round
// publishes its visits in a random order, unless KeepPolicyOrder is set:
// then in the order the policy grabbed them, the oldest update first.
func TestKeepPolicyOrderPublishesTheGrabsInTheirOrder(t *testing.T) {
	ctx := context.Background()
	const n = 30
	// never-i was updated i+1 hours ago: the policy's order is never-29 … never-0.
	var grabOrder []string
	for i := n - 1; i >= 0; i-- {
		grabOrder = append(grabOrder, fmt.Sprintf("https://forge.example/%s-%d", neverVisited, i))
	}
	for _, keep := range []bool{false, true} {
		st := teststore.SQLite(t)
		w := newWorld(t, st, 100)
		w.add(neverVisited, n)
		cfg := testConfig("stepper")
		cfg.Rand, cfg.KeepPolicyOrder = rand.New(rand.NewPCG(1, 2)), keep
		cfg.Shares = map[string][]Share{"git": {{Policy: revisit.NeverVisitedOldestUpdateFirst, Weight: 1}}}
		o, err := New(st, newFakeBroker(), cfg)
		require.NoError(t, err)
		s, err := o.Stepper(ctx, "git")
		require.NoError(t, err)
		step, err := s.Round(ctx)
		require.NoError(t, err)
		require.NoError(t, s.Close(ctx))
		var urls []string
		for _, v := range step.Visits {
			urls = append(urls, v.Origin.URL)
		}
		require.ElementsMatch(t, grabOrder, urls)
		if keep {
			require.Equal(t, grabOrder, urls, "kept in the policy's order")
		} else {
			require.NotEqual(t, grabOrder, urls, "shuffled")
		}
	}
}
