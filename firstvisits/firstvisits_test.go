package firstvisits_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker/amqp"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/firstvisits"
	"github.com/revisit-sched/revisit/internal/service/visitsend"
	"github.com/revisit-sched/revisit/internal/testkit/celerytest"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
)

const gitTask = "swh.loader.git.tasks.UpdateGitRepository"

// world is a store with the task type load-git and three listers of git
// origins: fresh, with a queue prefix and a finished listing; unfinished,
// with a prefix but no finished listing; own, with a finished listing but
// no prefix.
type world struct {
	t                        *testing.T
	st                       store.Store
	fresh, unfinished, owned revisit.Lister
}

func newWorld(t *testing.T, st store.Store, maxQueue, origins int) *world {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, st.TaskTypeCreate(ctx, revisit.TaskType{Type: "load-git", BackendName: gitTask,
		MaxQueueLength: maxQueue}))
	w := &world{t: t, st: st}
	finished := time.Now().UTC().Add(-time.Hour)
	var err error
	w.fresh, err = st.ListerGetOrCreateForFirstVisits(ctx, "gitea", "fresh.example", "add_forge_now")
	require.NoError(t, err)
	w.fresh.LastListingFinishedAt = &finished
	w.fresh, err = st.ListerUpdate(ctx, w.fresh)
	require.NoError(t, err)
	w.unfinished, err = st.ListerGetOrCreateForFirstVisits(ctx, "gitea", "unfinished.example", "add_forge_now")
	require.NoError(t, err)
	w.owned, err = st.ListerGetOrCreate(ctx, "gitea", "own.example")
	require.NoError(t, err)
	w.owned.LastListingFinishedAt = &finished
	w.owned, err = st.ListerUpdate(ctx, w.owned)
	require.NoError(t, err)
	for _, l := range []revisit.Lister{w.fresh, w.unfinished, w.owned} {
		w.record(l, origins)
	}
	return w
}

// record records n git origins of lister l.
func (w *world) record(l revisit.Lister, n int) {
	var os []revisit.ListedOrigin
	for i := range n {
		os = append(os, revisit.ListedOrigin{ListerID: l.ID, URL: fmt.Sprintf("https://%s/r%d", l.InstanceName, i),
			VisitType: "git", Enabled: true})
	}
	_, err := w.st.ListedOriginsRecord(context.Background(), os)
	require.NoError(w.t, err)
}

// lister reads a lister again.
func (w *world) lister(l revisit.Lister) revisit.Lister {
	got, err := w.st.ListerGet(context.Background(), l.Name, l.InstanceName)
	require.NoError(w.t, err)
	return got
}

// take leases every message of queue, as a worker would, and returns the
// url of each.
func take(t *testing.T, b *embedded.Broker, queue string) []string {
	t.Helper()
	tasks, err := b.Lease(context.Background(), embedded.LeaseParams{Queue: queue, Worker: "w", Max: 100,
		LeaseFor: time.Hour})
	require.NoError(t, err)
	var urls []string
	for _, task := range tasks {
		require.Equal(t, gitTask, task.Task)
		var kw map[string]any
		require.NoError(t, json.Unmarshal(task.Kwargs, &kw))
		urls = append(urls, kw["url"].(string))
	}
	return urls
}

// newScheduler is a scheduler over st publishing into the embedded broker
// it returns.
func newScheduler(t *testing.T, st store.Store) (*firstvisits.Scheduler, *embedded.Broker) {
	t.Helper()
	b := embedded.New(st, embedded.Config{})
	t.Cleanup(func() { b.Close() })
	s, err := firstvisits.New(st, b, firstvisits.Config{Owner: "test"})
	require.NoError(t, err)
	return s, b
}

func TestOnePassSendsTheFirstVisitsOfFinishedListings(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		w := newWorld(t, st, 100, 3)
		s, b := newScheduler(t, st)

		pass, err := s.Once(ctx)
		require.NoError(t, err)
		queue := "add_forge_now:" + gitTask
		require.Len(t, pass.Sent, 1, "only the lister with a prefix and a finished listing")
		sent := pass.Sent[0]
		require.Equal(t, w.fresh.ID, sent.Lister.ID)
		require.Equal(t, "git", sent.VisitType)
		require.Equal(t, queue, sent.Queue)
		require.Equal(t, 100, sent.Slots)
		require.Equal(t, 3, sent.Sent)
		require.Zero(t, sent.NotSent())
		require.Len(t, pass.Done, 1)
		require.Equal(t, w.fresh.ID, pass.Done[0].ID)

		require.ElementsMatch(t, []string{"https://fresh.example/r0", "https://fresh.example/r1", "https://fresh.example/r2"},
			take(t, b, queue))
		depth, err := b.Depth(ctx, gitTask)
		require.NoError(t, err)
		require.Zero(t, depth, "nothing goes to the visit type's own queue")
		counts, err := st.VisitsCount(ctx)
		require.NoError(t, err)
		require.Equal(t, []revisit.VisitCounts{{VisitType: "git", Sent: 3}}, counts, "the visits are in flight")

		fresh := w.lister(w.fresh)
		require.NotNil(t, fresh.FirstVisitsScheduledAt)
		require.False(t, fresh.FirstVisitsScheduledAt.Before(*fresh.LastListingFinishedAt))
		require.Nil(t, w.lister(w.unfinished).FirstVisitsScheduledAt)
		require.Nil(t, w.lister(w.owned).FirstVisitsScheduledAt)

		pass, err = s.Once(ctx)
		require.NoError(t, err)
		require.Empty(t, pass.Sent, "a second pass sends nothing new")
		require.Empty(t, pass.Done)
		require.Empty(t, take(t, b, queue))

		// A new listing brings the lister back: the origin it found is sent;
		// those sent a moment ago are in their absolute cooldown, so that the
		// lister's first visits are not all scheduled yet.
		w.record(w.fresh, 4)
		finished := time.Now().UTC()
		fresh.LastListingFinishedAt = &finished
		_, err = st.ListerUpdate(ctx, fresh)
		require.NoError(t, err)
		pass, err = s.Once(ctx)
		require.NoError(t, err)
		require.Len(t, pass.Sent, 1)
		require.Equal(t, 1, pass.Sent[0].Sent)
		require.Equal(t, []string{"https://fresh.example/r3"}, take(t, b, queue))
		require.Empty(t, pass.Done)
	})
}

func TestTheQueueBoundsEachPass(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		w := newWorld(t, st, 2, 3)
		s, b := newScheduler(t, st)
		queue := "add_forge_now:" + gitTask

		pass, err := s.Once(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, pass.Sent[0].Sent, "as many as the queue has free slots")
		require.Empty(t, pass.Done, "one origin is left")

		pass, err = s.Once(ctx)
		require.NoError(t, err)
		require.Zero(t, pass.Sent[0].Slots, "the queue is full")
		require.Zero(t, pass.Sent[0].Sent)
		require.Empty(t, pass.Done)
		require.Nil(t, w.lister(w.fresh).FirstVisitsScheduledAt)

		require.Len(t, take(t, b, queue), 2)
		pass, err = s.Once(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, pass.Sent[0].Sent)
		require.Len(t, pass.Done, 1, "the last one sent, the lister is done")
	})
}

func TestAVisitTypeWithoutTaskTypeKeepsTheListerDue(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		w := newWorld(t, st, 100, 1)
		_, err := st.ListedOriginsRecord(ctx, []revisit.ListedOrigin{{ListerID: w.fresh.ID,
			URL: "https://fresh.example/hg", VisitType: "hg", Enabled: true}})
		require.NoError(t, err)
		s, _ := newScheduler(t, st)
		pass, err := s.Once(ctx)
		require.NoError(t, err)
		require.Len(t, pass.Sent, 2)
		bySkip := map[string]string{}
		for _, sent := range pass.Sent {
			bySkip[sent.VisitType] = sent.Skipped
		}
		require.Equal(t, map[string]string{"git": "", "hg": "no task type load-hg"}, bySkip)
		require.Empty(t, pass.Done, "the hg origin is still to be scheduled")
	})
}

// staleOnce makes the first ListerUpdate fail as if another process had
// changed the lister.
type staleOnce struct {
	store.Store
	once sync.Once
}

func (s *staleOnce) ListerUpdate(ctx context.Context, l revisit.Lister) (revisit.Lister, error) {
	stale := false
	s.once.Do(func() { stale = true })
	if stale {
		return revisit.Lister{}, revisit.Errorf(revisit.CodeStaleData, "stale")
	}
	return s.Store.ListerUpdate(ctx, l)
}

func TestAStaleListerIsDoneAtTheNextPass(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		w := newWorld(t, st, 100, 2)
		b := embedded.New(st, embedded.Config{})
		defer b.Close()
		s, err := firstvisits.New(&staleOnce{Store: st}, b, firstvisits.Config{Owner: "test"})
		require.NoError(t, err)
		pass, err := s.Once(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, pass.Sent[0].Sent)
		require.Empty(t, pass.Done)
		require.Nil(t, w.lister(w.fresh).FirstVisitsScheduledAt)

		pass, err = s.Once(ctx)
		require.NoError(t, err)
		require.Zero(t, pass.Sent[0].Sent)
		require.Len(t, pass.Done, 1)
		require.NotNil(t, w.lister(w.fresh).FirstVisitsScheduledAt)
	})
}

func TestRunHoldsTheLease(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		w := newWorld(t, st, 100, 2)
		b := embedded.New(st, embedded.Config{})
		defer b.Close()
		s, err := firstvisits.New(st, b, firstvisits.Config{Owner: "runner-1", Interval: 20 * time.Millisecond,
			LeaseTTL: 3 * time.Second, Jitter: time.Millisecond})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()
		require.Eventually(t, func() bool { return w.lister(w.fresh).FirstVisitsScheduledAt != nil },
			10*time.Second, 20*time.Millisecond)
		lease, err := st.LeaseAcquire(context.Background(), firstvisits.LeaseName, "runner-2", time.Second)
		require.NoError(t, err)
		require.Equal(t, "runner-1", lease.Owner, "one process at a time passes over the listers")
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not stop")
		}
		lease, err = st.LeaseAcquire(context.Background(), firstvisits.LeaseName, "runner-2", time.Second)
		require.NoError(t, err)
		require.Equal(t, "runner-2", lease.Owner, "the lease is handed over on stop")
		require.Len(t, take(t, b, "add_forge_now:"+gitTask), 2)
	})
}

func TestRabbitMQ(t *testing.T) {
	st := teststore.SQLite(t)
	ctx := context.Background()
	w := newWorld(t, st, 100, 2)
	prefix := celerytest.Queue(t)
	queue := prefix + ":" + gitTask
	celerytest.RequireRabbitMQ(t)
	t.Cleanup(func() { celerytest.DeleteQueue(t, queue) })
	fresh := w.lister(w.fresh)
	fresh.FirstVisitsQueuePrefix = &prefix
	_, err := st.ListerUpdate(ctx, fresh)
	require.NoError(t, err)
	b := celerytest.OpenBroker(t, amqp.Config{})
	s, err := firstvisits.New(st, b, firstvisits.Config{Owner: "test"})
	require.NoError(t, err)

	pass, err := s.Once(ctx)
	require.NoError(t, err)
	require.Equal(t, "queue "+queue+" does not exist", pass.Sent[0].Skipped, "no worker declared the queue yet")
	require.Empty(t, pass.Done)

	require.NoError(t, b.DeclareQueue(ctx, queue))
	pass, err = s.Once(ctx)
	require.NoError(t, err)
	require.Equal(t, visitsend.Outcome{Sent: 2}, pass.Sent[0].Outcome)
	require.Len(t, pass.Done, 1)
	celerytest.WaitFor(t, 10*time.Second, "two messages in "+queue, func() bool {
		n, err := b.Depth(ctx, queue)
		return err == nil && n == 2
	})
}
