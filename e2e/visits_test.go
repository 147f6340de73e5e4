package e2e

import (
	"context"
	"crypto/sha1"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/revisit-sched/revisit/internal/testkit/teststore"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker/amqp"
	"github.com/revisit-sched/revisit/internal/testkit/celerytest"
	"github.com/revisit-sched/revisit/listener"
	"github.com/revisit-sched/revisit/orchestrator"
)

// TestVisitsEndToEnd runs the whole loop against its real peers: origins
// in PostgreSQL, the orchestrator publishing to RabbitMQ, a Celery worker
// visiting, its events coming back through the listener into the stats.
func TestVisitsEndToEnd(t *testing.T) {
	t.Parallel()
	st, _ := teststore.Postgres(t)
	queue, eventsQueue := celerytest.Queue(t), celerytest.Queue(t)
	b := celerytest.OpenBroker(t, amqp.Config{EventsQueue: eventsQueue, Logger: testLogger(t)})
	const maxQueue = 20
	w := newWorld(t, st, queue, maxQueue)
	lagging := names("lag", 15)
	never := append(names("ok", 20), append(names("fail", 2), names("gone", 2)...)...)
	w.addLagging(lagging...)
	w.addNeverVisited(never...)

	// The listener first, so that its queue catches every event.
	l := listener.New(st, b, listener.Config{Logger: testLogger(t)})
	run(t, "listener", l.Run)
	celerytest.WaitQueue(t, eventsQueue, 30*time.Second)
	worker := celerytest.StartWorker(t, celerytest.WorkerOptions{Module: loaderModule, Queues: []string{queue},
		Pool: "prefork", Concurrency: 2, Env: []string{"TEST_TASK=" + queue}})
	celerytest.WaitQueue(t, queue, 60*time.Second)

	// Failed and not-found origins come back once their result is in, so
	// that three visits disable them within the test.
	revisitAfterResult := &revisit.Cooldowns{Scheduled: time.Hour}
	shares := orchestrator.DefaultShares("git")
	for i := range shares {
		shares[i].Grab.Cooldowns = revisitAfterResult
	}
	o, err := orchestrator.New(st, b, orchestrator.Config{Logger: testLogger(t),
		Shares:           map[string][]orchestrator.Share{"git": shares},
		QueueFullBackoff: 50 * time.Millisecond, NoOriginsBackoff: 100 * time.Millisecond,
		RoundJitter: time.Millisecond})
	require.NoError(t, err)
	var maxDepth atomic.Int64
	run(t, "depth sampler", func(ctx context.Context) error {
		for ctx.Err() == nil {
			if d, err := b.Depth(ctx, queue); err == nil && d > maxDepth.Load() {
				maxDepth.Store(d)
			}
			time.Sleep(5 * time.Millisecond)
		}
		return nil
	})
	run(t, "orchestrator", o.Run)

	all := append(slices.Clone(lagging), never...)
	celerytest.WaitFor(t, 90*time.Second, "every origin visited, failures three times", func() bool {
		s := w.stats(all...)
		for _, n := range all {
			if s[n].LastVisit == nil {
				return false
			}
		}
		for _, n := range append(names("fail", 2), names("gone", 2)...) {
			if s[n].SuccessiveVisits < 3 {
				return false
			}
		}
		return w.inFlight() == revisit.VisitCounts{VisitType: "git"}
	})

	// The first round is the top 10 of each policy (49/49/2 of 20, the
	// spare slots by weight). Two worker processes may swap the order in
	// which the 20th and 21st visits start, not more.
	records := worker.Records(t)
	want := map[string]bool{}
	for _, n := range append(lagging[:10], never[:10]...) {
		want[url(n)] = true
	}
	for i, r := range records[:maxQueue-1] {
		require.True(t, want[r["url"].(string)], "visit %d, %s, is not of the first round", i, r["url"])
	}
	require.LessOrEqual(t, maxDepth.Load(), int64(maxQueue), "the queue never exceeds max_queue_length")
	kw := records[0]["kwargs"].(map[string]any)
	require.Equal(t, "gitlab", kw["lister_name"])
	require.Equal(t, "gitlab.com", kw["lister_instance_name"])

	s := w.stats(all...)
	for _, n := range append(slices.Clone(lagging), names("ok", 20)...) {
		sum := sha1.Sum([]byte(url(n)))
		require.Equal(t, revisit.VisitSuccessful, *s[n].LastVisitStatus, n)
		require.Equal(t, sum[:], s[n].LastSnapshot, n)
		require.Equal(t, *s[n].LastVisit, *s[n].LastSuccessful, n)
		require.True(t, w.enabled(n), n)
	}
	for _, n := range names("fail", 2) {
		require.Equal(t, revisit.VisitFailed, *s[n].LastVisitStatus, n)
		require.False(t, w.enabled(n), "%s disabled after three failures", n)
	}
	for _, n := range names("gone", 2) {
		require.Equal(t, revisit.VisitNotFound, *s[n].LastVisitStatus, n)
		require.False(t, w.enabled(n), "%s disabled after three not-found", n)
	}
	visits := map[string]int{}
	for _, r := range records {
		visits[r["url"].(string)]++
	}
	require.Equal(t, 3, visits[url("fail-00")], "no fourth visit of a disabled origin")
	require.Equal(t, 1, visits[url("ok-00")])

	// A new listing re-enables a disabled origin.
	w.addNeverVisited("fail-00")
	require.True(t, w.enabled("fail-00"))
}
