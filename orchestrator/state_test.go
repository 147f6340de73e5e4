package orchestrator

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
)

// waitState waits until the loop of git is in state want, and returns
// that state.
func waitState(t *testing.T, o *Orchestrator, visitType string, want LoopStateName) LoopState {
	t.Helper()
	var got LoopState
	require.Eventually(t, func() bool {
		got = o.LoopStates()[visitType]
		return got.State == want
	}, waitFor, tick, "want %s, last state %+v", want, &got)
	return got
}

// requireAbout requires when to be d from now, give or take a second.
func requireAbout(t *testing.T, d time.Duration, when time.Time, what string) {
	t.Helper()
	require.InDelta(t, d.Seconds(), time.Until(when).Seconds(), 1, what)
}

func TestLoopStateNoOriginsAndItsNextCheck(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		newWorld(t, st, 100)
		cfg := testConfig("a")
		cfg.NoOriginsBackoff = 20 * time.Minute
		o, _ := startOrchestrator(t, st, newFakeBroker(), cfg)
		s := waitState(t, o, "git", LoopNoOrigins)
		requireAbout(t, 20*time.Minute, s.NextRound, "the next check is the no-origins backoff away")
		require.WithinDuration(t, time.Now(), s.Since, waitFor)
	})
}

func TestLoopStateFillingThenQueueFullAndItsChecks(t *testing.T) {
	st := teststore.SQLite(t)
	w := newWorld(t, st, 10)
	w.add(neverVisited, 30)
	b, block := newBlockedBroker()
	cfg := testConfig("a")
	cfg.QueueFullBackoff, cfg.QueuePollInterval = time.Minute, 200*time.Millisecond
	o, _ := startOrchestrator(t, st, b, cfg)

	// The first batch is being published: the loop fills the queue and
	// waits for it.
	waitState(t, o, "git", LoopFilling)
	time.Sleep(100 * time.Millisecond)
	require.Equal(t, LoopFilling, o.LoopStates()["git"].State, "still filling while the broker confirms")
	close(block)

	s := waitState(t, o, "git", LoopQueueFull)
	require.Equal(t, 200*time.Millisecond, s.CheckEvery, "the queue is measured every poll interval")
	requireAbout(t, time.Minute, s.NextRound, "the next round is the queue-full backoff away at the latest")

	// Workers take messages: the next check finds room, and the loop
	// fills the queue again.
	b.take(gitTask, 10)
	require.Eventually(t, func() bool { return len(b.published()) == 20 }, waitFor, tick)
	waitState(t, o, "git", LoopQueueFull)
}

func TestLoopStateStandingByNamesTheDriver(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		w := newWorld(t, st, 100)
		w.add(neverVisited, 5)
		b := newFakeBroker()
		// A TTL whose third, which bounds each renewal, outlasts a busy
		// shared server's slow moments: with the harness's 600 ms, a
		// renewal slower than 200 ms handed the lease to b, and the test
		// is about standing by, not about taking over.
		config := func(owner string) Config {
			cfg := testConfig(owner)
			cfg.LeaseTTL = 3 * time.Second
			return cfg
		}
		a, _ := startOrchestrator(t, st, b, config("a"))
		require.Eventually(t, func() bool { return len(b.published()) == 5 }, waitFor, tick)
		other, _ := startOrchestrator(t, st, b, config("b"))
		s := waitState(t, other, "git", LoopStandingBy)
		require.Equal(t, "a", s.Holder)
		requireAbout(t, time.Second, s.NextRound, "the lease is asked for again within a third of its TTL")
		require.NotEqual(t, LoopStandingBy, a.LoopStates()["git"].State)
	})
}

func TestLoopStateWaitingAndUnhealthy(t *testing.T) {
	st := teststore.SQLite(t)
	w := newWorld(t, st, 100)
	w.add(neverVisited, 5)
	b := newFakeBroker()
	b.set(func(b *fakeBroker) { b.depthErr = broker.ErrDepthUnknown })
	cfg := testConfig("a")
	cfg.VisitTypes = []string{"git", "nope"}
	cfg.UnhealthyAfter = 2
	o, _ := startOrchestrator(t, st, b, cfg)

	s := waitState(t, o, "git", LoopWaiting)
	require.Equal(t, "depth_unknown", s.Reason)
	require.NotEmpty(t, s.Error)
	require.False(t, s.NextRound.IsZero(), "the next try is known")

	s = waitState(t, o, "nope", LoopUnhealthy)
	require.Contains(t, s.Error, "load-nope", "the last failure")

	b.set(func(b *fakeBroker) { b.depthErr = nil })
	waitState(t, o, "git", LoopNoOrigins)
	require.Len(t, b.published(), 5)
}
