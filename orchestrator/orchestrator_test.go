package orchestrator

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/revisit-sched/revisit/internal/testkit/teststore"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/store"
)

const (
	waitFor = 10 * time.Second
	tick    = 10 * time.Millisecond
)

func TestFillsTheQueueInPolicySharesWithoutFlooding(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		w := newWorld(t, st, 100)
		w.add(neverVisited, 150)
		w.add(lagging, 150)
		w.add(noUpdate, 150)
		b := newFakeBroker()
		start(t, st, b, testConfig("a"))

		require.Eventually(t, func() bool { return w.counts().Sent == 100 }, waitFor, tick)
		time.Sleep(100 * time.Millisecond) // more rounds: the queue is full, nothing more goes
		msgs := b.published()
		require.Len(t, msgs, 100)
		require.Equal(t, int64(100), b.maxDepth, "the queue never exceeds max_queue_length")
		require.Equal(t, map[string]int{neverVisited: 49, lagging: 49, noUpdate: 2}, kinds(t, msgs),
			"git's default shares 49/49/2")

		kw := kwargs(t, msgs[0])
		require.Equal(t, "gitlab", kw["lister_name"])
		require.Equal(t, "gitlab.com", kw["lister_instance_name"])
		require.EqualValues(t, 1, kw["depth"], "extra loader arguments travel with the visit")
		require.Equal(t, gitTask, msgs[0].Headers.Task)

		// Workers take 50: the next round fills the 50 free slots.
		taken := b.take(gitTask, 50)
		require.Eventually(t, func() bool { return len(b.published()) == 150 }, waitFor, tick)
		time.Sleep(50 * time.Millisecond)
		require.Len(t, b.published(), 150)
		urls := map[string]bool{}
		for _, m := range b.published() {
			u := kwargs(t, m)["url"].(string)
			require.False(t, urls[u], "%s published twice", u)
			urls[u] = true
		}
		ids := make([]string, len(taken))
		for i, m := range taken {
			ids[i] = m.Properties.CorrelationID
		}
		closed, err := st.VisitsClose(w.ctx, ids)
		require.NoError(t, err)
		require.Len(t, closed, 50, "every message id is an in-flight record")
		require.Equal(t, revisit.VisitCounts{VisitType: "git", Sent: 100}, w.counts())
	})
}

func TestSparesSlotsGoToPoliciesWithOrigins(t *testing.T) {
	st := teststore.SQLite(t)
	w := newWorld(t, st, 100)
	w.add(neverVisited, 10)
	w.add(noUpdate, 200)
	b := newFakeBroker()
	start(t, st, b, testConfig("a"))
	require.Eventually(t, func() bool { return len(b.published()) == 100 }, waitFor, tick)
	require.Equal(t, map[string]int{neverVisited: 10, noUpdate: 90}, kinds(t, b.published()))
}

func TestWeightZeroDisablesAPolicy(t *testing.T) {
	st := teststore.SQLite(t)
	w := newWorld(t, st, 100)
	w.add(lagging, 20)
	w.add(neverVisited, 20)
	b := newFakeBroker()
	cfg := testConfig("a")
	cfg.Shares = map[string][]Share{"git": {
		{Policy: revisit.AlreadyVisitedOrderByLag, Weight: 0},
		{Policy: revisit.NeverVisitedOldestUpdateFirst, Weight: 1},
	}}
	start(t, st, b, cfg)
	require.Eventually(t, func() bool { return len(b.published()) == 20 }, waitFor, tick)
	time.Sleep(100 * time.Millisecond)
	require.Equal(t, map[string]int{neverVisited: 20}, kinds(t, b.published()))
}

func TestUnconfirmedMessagesReleaseTheirOrigins(t *testing.T) {
	st := teststore.SQLite(t)
	w := newWorld(t, st, 100)
	w.add(neverVisited, 30)
	b := newFakeBroker()
	b.set(func(b *fakeBroker) { b.failAll = true })
	start(t, st, b, testConfig("a"))
	require.Eventually(t, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.publishes >= 1
	}, waitFor, tick)
	require.Eventually(t, func() bool { return w.counts() == revisit.VisitCounts{VisitType: "git"} }, waitFor, tick,
		"failed messages leave no in-flight record")
	stats, err := st.VisitStatsGet(w.ctx, []revisit.OriginKey{{URL: "https://forge.example/never-0", VisitType: "git"}})
	require.NoError(t, err)
	if len(stats) == 1 {
		require.Nil(t, stats[0].LastScheduled, "the origin is eligible again")
	}
	b.set(func(b *fakeBroker) { b.failAll = false })
	require.Eventually(t, func() bool { return len(b.published()) == 30 }, waitFor, tick,
		"once the broker confirms, every origin goes")
}

// TestUnconfirmedMessagesKeepTheirVisits: a message whose confirm never
// came may be in the queue; its visit is kept (lost, its origin offered
// again), so that its result is one of a known visit.
func TestUnconfirmedMessagesKeepTheirVisits(t *testing.T) {
	st := teststore.SQLite(t)
	w := newWorld(t, st, 100)
	w.add(neverVisited, 30)
	b := newFakeBroker()
	b.set(func(b *fakeBroker) { b.unconfirmAll = true })
	start(t, st, b, testConfig("a"))
	require.Eventually(t, func() bool { return len(b.published()) >= 30 }, waitFor, tick)
	b.set(func(b *fakeBroker) { b.unconfirmAll = false })
	require.Eventually(t, func() bool { return w.counts().Sent == 30 }, waitFor, tick,
		"the origins are offered again and published")
	msgs := b.published()
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.Properties.CorrelationID
	}
	got, err := st.VisitsGet(w.ctx, ids)
	require.NoError(t, err)
	require.Equal(t, len(ids), len(got), "every message in the queue has its visit, the unconfirmed ones lost")
	require.Equal(t, revisit.VisitCounts{VisitType: "git", Sent: 30, Lost: int64(len(ids) - 30)}, w.counts())
}

// TestASlowQueueDelaysNoOtherVisitType blocks every publish to git's queue:
// hg's loop goes on publishing its visits all the same.
func TestASlowQueueDelaysNoOtherVisitType(t *testing.T) {
	st := teststore.SQLite(t)
	w := newWorld(t, st, 100)
	w.add(neverVisited, 5)
	const hgTask = "swh.loader.mercurial.tasks.LoadMercurial"
	require.NoError(t, st.TaskTypeCreate(w.ctx, revisit.TaskType{Type: "load-hg", BackendName: hgTask, MaxQueueLength: 100}))
	var hg []revisit.ListedOrigin
	for i := range 5 {
		hg = append(hg, revisit.ListedOrigin{ListerID: w.lister.ID, URL: fmt.Sprintf("https://forge.example/hg-%d", i),
			VisitType: "hg", Enabled: true})
	}
	_, err := st.ListedOriginsRecord(w.ctx, hg)
	require.NoError(t, err)

	b, block := newBlockedBroker()
	b.set(func(b *fakeBroker) { b.slowQueue = gitTask })
	start(t, st, b, testConfig("a"))
	depth := func(queue string) int64 {
		d, err := b.Depth(w.ctx, queue)
		require.NoError(t, err)
		return d
	}
	require.Eventually(t, func() bool { return depth(hgTask) == 5 }, waitFor, tick,
		"hg's visits are published while git's publish waits")
	require.Zero(t, depth(gitTask))
	close(block)
	require.Eventually(t, func() bool { return depth(gitTask) == 5 }, waitFor, tick,
		"git's visits are published once its queue takes them")
}

func TestUnknownDepthPublishesNothing(t *testing.T) {
	st := teststore.SQLite(t)
	w := newWorld(t, st, 100)
	w.add(neverVisited, 5)
	b := newFakeBroker()
	b.set(func(b *fakeBroker) { b.depthErr = broker.ErrDepthUnknown })
	start(t, st, b, testConfig("a"))
	time.Sleep(300 * time.Millisecond)
	require.Empty(t, b.published(), "an unknown depth is never taken for an empty queue")
	require.Equal(t, revisit.VisitCounts{VisitType: "git"}, w.counts())
	b.set(func(b *fakeBroker) { b.depthErr = nil })
	require.Eventually(t, func() bool { return len(b.published()) == 5 }, waitFor, tick, "the loop recovers by itself")
}

func TestLostVisitsAreOfferedAgain(t *testing.T) {
	st := teststore.SQLite(t)
	w := newWorld(t, st, 100)
	w.add(neverVisited, 10)
	b := newFakeBroker()
	cfg := testConfig("a")
	cfg.VisitTimeouts = map[string]time.Duration{"git": 500 * time.Millisecond}
	start(t, st, b, cfg)
	require.Eventually(t, func() bool { return len(b.published()) == 10 }, waitFor, tick)
	b.take(gitTask, 10) // the worker takes them and never answers
	require.Eventually(t, func() bool { return len(b.published()) >= 20 }, waitFor, tick,
		"after the timeout the origins go again")
	// Each published visit has its record, lost or sent (a slow machine
	// may see the second batch expire too). The round marks its visits sent
	// once the broker has confirmed them, just after they show as published.
	var c revisit.VisitCounts
	require.Eventually(t, func() bool { c = w.counts(); return c.Lost >= 10 && c.Lost+c.Sent >= 20 }, waitFor, tick,
		"want at least 10 lost and 20 lost or sent: %+v", &c)
}

func TestOneOwnerPerVisitTypeAndTakeover(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		w := newWorld(t, st, 1000)
		w.add(neverVisited, 50)
		// A dead owner: it holds the lease and left visits pending.
		_, err := st.LeaseAcquire(w.ctx, "orchestrator:git", "ghost", 700*time.Millisecond)
		require.NoError(t, err)
		left, err := st.VisitsDispatch(w.ctx, revisit.DispatchParams{Owner: "ghost",
			Grab: revisit.GrabParams{VisitType: "git", Count: 5, Policy: revisit.NeverVisitedOldestUpdateFirst}})
		require.NoError(t, err)
		require.Len(t, left, 5)

		b := newFakeBroker()
		startedAt := time.Now()
		start(t, st, b, testConfig("a"))
		start(t, st, b, testConfig("b"))
		require.Eventually(t, func() bool { return len(b.published()) == 50 }, waitFor, tick,
			"the ghost's lease expires, one replica takes over and recovers its pending visits")
		require.Less(t, time.Since(startedAt), 5*time.Second)
		owners := map[string]bool{}
		ids := make([]string, 0, 50)
		for _, m := range b.published() {
			ids = append(ids, m.Properties.CorrelationID)
		}
		closed, err := st.VisitsClose(w.ctx, ids)
		require.NoError(t, err)
		for _, v := range closed {
			owners[v.Owner] = true
		}
		require.Len(t, owners, 1, "one process drives git: %v", owners)
	})
}

// TestALongRoundKeepsTheLease checks that the owner renews its lease while
// a round waits for the broker longer than the lease's TTL: a standby
// replica must not take over and release the visits still being
// published, which both would then send.
func TestALongRoundKeepsTheLease(t *testing.T) {
	st := teststore.SQLite(t)
	w := newWorld(t, st, 15)
	w.add(neverVisited, 40)
	b, block := newBlockedBroker()
	owner, standby := testConfig("a"), testConfig("b")
	owner.MaxPerRound, standby.MaxPerRound = 10, 10
	start(t, st, b, owner)
	require.Eventually(t, func() bool { return w.counts().Pending == 15 }, waitFor, tick,
		"the owner's round waits for its first batch")
	start(t, st, b, standby)
	time.Sleep(3 * owner.LeaseTTL)

	b.set(func(b *fakeBroker) { b.block = nil })
	close(block)
	require.Eventually(t, func() bool { return w.counts().Sent == 15 }, waitFor, tick)
	time.Sleep(100 * time.Millisecond)
	seen := map[string]int{}
	for _, m := range b.published() {
		u := kwargs(t, m)["url"].(string)
		seen[u]++
		require.Equal(t, 1, seen[u], "%s published twice", u)
	}
	require.Len(t, seen, 15)
}

// TestNextRoundGrabsWhileTheBatchPublishes checks the pipeline: while a
// round's batch waits for the broker, the next round grabs its own, with
// the unconfirmed messages counted against the queue's free space, and
// publishes only once the first batch is settled.
func TestNextRoundGrabsWhileTheBatchPublishes(t *testing.T) {
	st := teststore.SQLite(t)
	w := newWorld(t, st, 15)
	w.add(neverVisited, 40)
	b, block := newBlockedBroker()
	cfg := testConfig("a")
	cfg.MaxPerRound = 10
	start(t, st, b, cfg)

	require.Eventually(t, func() bool { return w.counts().Pending == 15 }, waitFor, tick,
		"10 publishing, and the next round grabbed the 5 slots they leave")
	time.Sleep(100 * time.Millisecond)
	require.Equal(t, revisit.VisitCounts{VisitType: "git", Pending: 15}, w.counts(),
		"nothing more until the first batch is settled")
	require.Empty(t, b.published())

	b.set(func(b *fakeBroker) { b.block = nil })
	close(block)
	require.Eventually(t, func() bool { return w.counts().Sent == 15 }, waitFor, tick)
	time.Sleep(100 * time.Millisecond)
	require.Len(t, b.published(), 15, "the queue is full")
	require.Equal(t, int64(15), b.maxDepth, "the queue never exceeds max_queue_length")
	require.Equal(t, revisit.VisitCounts{VisitType: "git", Sent: 15}, w.counts())
}

func TestStopFinishesTheRoundInFlight(t *testing.T) {
	st := teststore.SQLite(t)
	w := newWorld(t, st, 100)
	w.add(neverVisited, 10)
	b, block := newBlockedBroker()
	stop := start(t, st, b, testConfig("a"))
	require.Eventually(t, func() bool { return w.counts().Pending == 10 }, waitFor, tick, "a round is publishing")
	go func() {
		time.Sleep(200 * time.Millisecond)
		close(block)
	}()
	began := time.Now()
	require.NoError(t, stop())
	require.Less(t, time.Since(began), 2*time.Second)
	require.Len(t, b.published(), 10, "the round in flight finished")
	require.Equal(t, revisit.VisitCounts{VisitType: "git", Sent: 10}, w.counts())
	lease, err := st.LeaseAcquire(w.ctx, "orchestrator:git", "next", time.Second)
	require.NoError(t, err)
	require.Equal(t, "next", lease.Owner, "the lease was released on the way out")
}

func TestStopRollsBackARoundPastTheGracePeriod(t *testing.T) {
	st := teststore.SQLite(t)
	w := newWorld(t, st, 100)
	w.add(neverVisited, 10)
	b := newFakeBroker()
	b.set(func(b *fakeBroker) { b.block = make(chan struct{}) }) // never confirms
	cfg := testConfig("a")
	cfg.GracePeriod = 300 * time.Millisecond
	stop := start(t, st, b, cfg)
	require.Eventually(t, func() bool { return w.counts().Pending == 10 }, waitFor, tick)
	began := time.Now()
	require.NoError(t, stop())
	require.Less(t, time.Since(began), 2*time.Second)
	require.Equal(t, revisit.VisitCounts{VisitType: "git"}, w.counts(), "the unconfirmed round was rolled back")
	got, err := st.GrabNextVisits(w.ctx, revisit.GrabParams{VisitType: "git", Count: 100,
		Policy: revisit.NeverVisitedOldestUpdateFirst, DryRun: true})
	require.NoError(t, err)
	require.Len(t, got, 10, "its origins are eligible again")
}

func TestEveryLoopDownEndsRun(t *testing.T) {
	st := teststore.SQLite(t)
	cfg := testConfig("a")
	cfg.VisitTypes = []string{"nope", "neither"}
	cfg.UnhealthyAfter = 2
	o, err := New(st, newFakeBroker(), cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.ErrorIs(t, o.Run(ctx), ErrAllLoopsDown)
	h := o.Health()
	require.False(t, h["nope"].Healthy)
	require.Contains(t, h["nope"].LastError, "load-nope")
}

func TestNoVisitTypeIsAClearError(t *testing.T) {
	o, err := New(teststore.SQLite(t), newFakeBroker(), testConfig("a"))
	require.NoError(t, err)
	require.ErrorContains(t, o.Run(context.Background()), "no visit type to drive")
}

func TestConfigValidationNamesTheSetting(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{VisitTypes: []string{"Bad Type"}}, `visit type "Bad Type"`},
		{Config{Shares: map[string][]Share{"git": {{Policy: revisit.StopAfterSuccess, Weight: 0}}}},
			"scheduling_policy.git: no policy has a positive weight"},
		{Config{Shares: map[string][]Share{"Git Hub": {{Policy: revisit.StopAfterSuccess, Weight: 1}}}},
			"scheduling_policy.Git Hub: not a visit type"},
		{Config{MaxPerRound: -1}, "max_per_round: must be between 1 and 100000, not -1"},
		{Config{MaxPerRound: revisit.MaxGrabCount + 1}, "max_per_round: must be between 1 and 100000, not 100001"},
		{Config{MinFreeRatio: 2}, "min_free_ratio: 2 is not between 0 and 1"},
		{Config{MinFreeRatio: -0.5}, "min_free_ratio: -0.5 is not between 0 and 1"},
		{Config{MinFreeRatio: math.NaN()}, "min_free_ratio: NaN is not between 0 and 1"},
		{Config{LeaseTTL: -time.Second}, "lease_ttl: -1s is not positive"},
		{Config{RoundJitter: -time.Second}, "round_jitter: -1s is not positive"},
		{Config{VisitTimeouts: map[string]time.Duration{"git": 0}}, "visit_timeouts.git: 0s is not positive"},
	} {
		_, err := New(nil, nil, c.cfg)
		require.ErrorContains(t, err, c.want, "%+v", c.cfg)
	}
}

func TestZeroFieldsTakeDefaultConfig(t *testing.T) {
	o, err := New(nil, nil, Config{})
	require.NoError(t, err)
	got := o.cfg
	got.Owner, got.Origin, got.Logger, got.Metrics = "", "", nil, nil
	require.Equal(t, DefaultConfig(), got)
	require.NoError(t, DefaultConfig().Validate(), "the defaults are valid")

	o, err = New(nil, nil, Config{MinFreeRatio: AnyFreeSlot, MaxPerRound: 7})
	require.NoError(t, err)
	require.Equal(t, AnyFreeSlot, o.cfg.MinFreeRatio, "AnyFreeSlot is kept, not defaulted")
	require.Equal(t, 7, o.cfg.MaxPerRound, "a setting given is kept")
}

func TestAnyFreeSlotPublishesIntoOneFreeSlot(t *testing.T) {
	st := teststore.SQLite(t)
	w := newWorld(t, st, 100)
	w.add(neverVisited, 200)
	b := newFakeBroker()
	cfg := testConfig("a")
	cfg.MinFreeRatio = AnyFreeSlot
	start(t, st, b, cfg)
	require.Eventually(t, func() bool { return len(b.published()) == 100 }, waitFor, tick)
	b.take(gitTask, 1) // one slot of 100 free: below the default 5 %, a round with AnyFreeSlot
	require.Eventually(t, func() bool { return len(b.published()) == 101 }, waitFor, tick)
	time.Sleep(50 * time.Millisecond)
	require.Len(t, b.published(), 101, "the queue is full again")
}

func TestDefaultFreeRatioWaitsForFivePercent(t *testing.T) {
	st := teststore.SQLite(t)
	w := newWorld(t, st, 100)
	w.add(neverVisited, 200)
	b := newFakeBroker()
	start(t, st, b, testConfig("a"))
	require.Eventually(t, func() bool { return len(b.published()) == 100 }, waitFor, tick)
	b.take(gitTask, 4)
	time.Sleep(200 * time.Millisecond)
	require.Len(t, b.published(), 100, "4 free slots of 100: below 5 %, no round")
	b.take(gitTask, 1)
	require.Eventually(t, func() bool { return len(b.published()) == 105 }, waitFor, tick)
}

func TestPerRoundCapBelowTheFreeThresholdStillFills(t *testing.T) {
	st := teststore.SQLite(t)
	w := newWorld(t, st, 100_000)
	w.add(neverVisited, 50)
	b := newFakeBroker()
	cfg := testConfig("a")
	cfg.MaxPerRound = 10 // far below 5 % of 100,000
	start(t, st, b, cfg)
	require.Eventually(t, func() bool { return len(b.published()) == 50 }, waitFor, tick)
	b.mu.Lock()
	defer b.mu.Unlock()
	require.GreaterOrEqual(t, b.publishes, 5, "ten per round")
}

func TestLostVisitsAreForgottenAfterTheRetention(t *testing.T) {
	st := teststore.SQLite(t)
	w := newWorld(t, st, 1000)
	w.add(neverVisited, 10)
	b := newFakeBroker()
	cfg := testConfig("a")
	cfg.VisitTimeouts = map[string]time.Duration{"git": 200 * time.Millisecond}
	cfg.LostRetention = 200 * time.Millisecond
	start(t, st, b, cfg)
	// Nobody answers: the ten origins are lost and sent again and again.
	require.Eventually(t, func() bool { return len(b.published()) >= 60 }, waitFor, tick)
	c := w.counts()
	require.Less(t, c.Pending+c.Sent+c.Lost, int64(45), "old lost records are deleted, not piled up: %+v", c)
}

// TestVisitsAgeOnTheStoresClock runs the orchestrator on a store whose
// clock is a year behind: visits are sent and lost on that clock, so a
// visit is lost once that clock passes its timeout, whatever the real time.
func TestVisitsAgeOnTheStoresClock(t *testing.T) {
	var (
		mu  sync.Mutex
		now = time.Now().UTC().AddDate(-1, 0, 0)
	)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	st := teststore.SQLiteWith(t, store.Options{Clock: clock})
	w := newWorld(t, st, 1000)
	w.add(neverVisited, 10)
	b := newFakeBroker()
	cfg := testConfig("a")
	cfg.Clock = clock
	start(t, st, b, cfg)

	require.Eventually(t, func() bool { return w.counts().Sent == 10 }, waitFor, tick)
	time.Sleep(100 * time.Millisecond)
	require.Equal(t, revisit.VisitCounts{VisitType: "git", Sent: 10}, w.counts(), "not lost within the timeout")
	mu.Lock()
	now = now.Add(25 * time.Hour)
	mu.Unlock()
	require.Eventually(t, func() bool { return len(b.published()) == 20 }, waitFor, tick,
		"lost after the 24 h timeout on the store's clock, and sent again")
}
