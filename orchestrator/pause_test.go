package orchestrator

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
)

// TestAPausedVisitTypeGetsNoRoundOnAnyReplica runs two orchestrators on
// one store: while git is paused, neither sends a visit, the one driving
// it says who paused it and when, and the other takes over paused; once
// resumed, the loop sends at once, long before its rest would end.
func TestAPausedVisitTypeGetsNoRoundOnAnyReplica(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		w := newWorld(t, st, 1000)
		pausedAt := time.Now().UTC().Truncate(time.Second)
		_, err := st.VisitTypePauseSet(w.ctx, revisit.Pause{VisitType: "git", By: "ops", At: pausedAt})
		require.NoError(t, err)
		w.add(neverVisited, 20)

		b := newFakeBroker()
		replica := func(owner string) (*Orchestrator, func() error) {
			cfg := testConfig(owner)
			cfg.NoOriginsBackoff, cfg.QueuePollInterval = time.Hour, 50*time.Millisecond
			// A driver that stops hands its lease back: the takeover
			// needs no short TTL, and a renewal bounded by a third of
			// the harness's 600 ms lost the lease on a busy server.
			cfg.LeaseTTL = 3 * time.Second
			return startOrchestrator(t, st, b, cfg)
		}
		a, stopA := replica("a")
		other, stopOther := replica("b")
		driver, standby, stopDriver := a, other, stopA
		require.Eventually(t, func() bool {
			sa, sb := a.LoopStates()["git"].State, other.LoopStates()["git"].State
			if sb == LoopPaused {
				driver, standby, stopDriver = other, a, stopOther
			}
			return (sa == LoopPaused && sb == LoopStandingBy) || (sb == LoopPaused && sa == LoopStandingBy)
		}, waitFor, tick, "one replica drives git, paused; the other stands by")
		s := driver.LoopStates()["git"]
		require.Equal(t, "ops", s.PausedBy)
		require.True(t, pausedAt.Equal(s.PausedAt), "paused at %s, want %s", s.PausedAt, pausedAt)
		require.Equal(t, 50*time.Millisecond, s.CheckEvery, "the store is asked every poll interval")
		require.True(t, s.NextRound.IsZero())

		time.Sleep(300 * time.Millisecond)
		require.Empty(t, b.published(), "no round while paused")
		require.Equal(t, revisit.VisitCounts{VisitType: "git"}, w.counts())

		// The driver stops: the other replica takes over, paused too.
		require.NoError(t, stopDriver())
		require.Eventually(t, func() bool { return standby.LoopStates()["git"].State == LoopPaused }, waitFor, tick)
		time.Sleep(300 * time.Millisecond)
		require.Empty(t, b.published(), "no round on the replica that took over")

		resumed, err := st.VisitTypePauseClear(w.ctx, "git")
		require.NoError(t, err)
		require.True(t, resumed)
		require.Eventually(t, func() bool { return len(b.published()) == 20 }, 3*time.Second, tick,
			"resumed, the loop sends at once")
		require.NotEqual(t, LoopPaused, standby.LoopStates()["git"].State)

		// Paused again while it runs: origins recorded meanwhile wait.
		_, err = st.VisitTypePauseSet(w.ctx, revisit.Pause{VisitType: "git", By: "anonymous", At: time.Now()})
		require.NoError(t, err)
		waitState(t, standby, "git", LoopPaused)
		require.Equal(t, "anonymous", standby.LoopStates()["git"].PausedBy)
		w.add(lagging, 5)
		time.Sleep(300 * time.Millisecond)
		require.Len(t, b.published(), 20)
	})
}
