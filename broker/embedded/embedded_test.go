package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/postgres"
	"github.com/revisit-sched/revisit/store/postgres/pgtest"
	"github.com/revisit-sched/revisit/store/sqlite"
	"github.com/revisit-sched/revisit/store/storetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/jackc/pgx/v5/pgxpool.(*Pool).backgroundHealthCheck"))
}

// opener returns a store on one database each time it is called (a new
// handle on the same data), closed when the test ends.
type opener func(t *testing.T) store.Store

// engines runs test on SQLite and on PostgreSQL (skipped when PostgreSQL
// is unreachable, unless CI is set).
func engines(t *testing.T, test func(t *testing.T, open opener)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "revisit.db")
		test(t, func(t *testing.T) store.Store {
			s, err := sqlite.Open(context.Background(), path, store.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		url := pgtest.URL(t)
		test(t, func(t *testing.T) store.Store {
			ctx := context.Background()
			s, err := postgres.Open(ctx, url, store.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { s.Close() })
			require.NoError(t, s.Migrate(ctx))
			return s
		})
	})
}

const queue = "swh.loader.git.tasks.UpdateGitRepository"

// message returns a visit message for url.
func message(t *testing.T, url string) celery.Message {
	t.Helper()
	m, err := celery.NewMessage(celery.Task{Name: queue, ID: uuid.NewString(), Origin: "test@host",
		Kwargs: map[string]any{"url": url, "lister_name": "github"}})
	require.NoError(t, err)
	return m
}

func publish(t *testing.T, b *embedded.Broker, msgs ...celery.Message) {
	t.Helper()
	pubs, err := b.Publish(context.Background(), queue, msgs)
	require.NoError(t, err)
	for _, p := range pubs {
		require.Equal(t, broker.Confirmed, p.Outcome, "%s: %v", p.ID, p.Err)
	}
}

func lease(t *testing.T, b *embedded.Broker, worker string, max int, leaseFor time.Duration) []embedded.Task {
	t.Helper()
	got, err := b.Lease(context.Background(), embedded.LeaseParams{Queue: queue, Worker: worker, Max: max, LeaseFor: leaseFor})
	require.NoError(t, err)
	return got
}

// events runs Events until it has delivered n events.
func events(t *testing.T, b *embedded.Broker, n int) []celery.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []celery.Event
	require.NoError(t, b.Events(ctx, func(_ context.Context, evs []celery.Event) error {
		got = append(got, evs...)
		if len(got) >= n {
			cancel()
		}
		return nil
	}))
	require.Len(t, got, n)
	return got
}

func TestPublishLeaseResultEvents(t *testing.T) {
	engines(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		st := open(t)
		b := embedded.New(st, embedded.Config{})
		defer b.Close()
		m1, m2 := message(t, "https://github.com/a/1"), message(t, "https://github.com/a/2")
		pubs, err := b.Publish(ctx, queue, []celery.Message{m1, m2, m1})
		require.NoError(t, err)
		require.Equal(t, broker.Confirmed, pubs[0].Outcome)
		require.Equal(t, broker.Confirmed, pubs[1].Outcome)
		require.ErrorIs(t, pubs[2].Err, broker.ErrDuplicateID, "repeated in the batch")
		n, err := b.Depth(ctx, queue)
		require.NoError(t, err)
		require.EqualValues(t, 2, n)
		n, err = b.Depth(ctx, "nowhere")
		require.NoError(t, err)
		require.Zero(t, n, "an unknown queue is empty")

		got := lease(t, b, "w1", 10, time.Minute)
		require.Len(t, got, 2)
		require.Equal(t, m1.Properties.CorrelationID, got[0].ID)
		require.Equal(t, queue, got[0].Task)
		require.JSONEq(t, `[]`, string(got[0].Args))
		require.JSONEq(t, `{"url": "https://github.com/a/1", "lister_name": "github"}`, string(got[0].Kwargs))
		require.Equal(t, 1, got[0].Attempt)

		snap := "0123456789abcdef0123456789abcdef01234567"
		stored, err := b.Complete(ctx, embedded.Result{ID: got[0].ID, Worker: "w1", Status: celery.VisitEventful, Snapshot: snap})
		require.NoError(t, err)
		require.True(t, stored)
		stored, err = b.Complete(ctx, embedded.Result{ID: got[1].ID, Worker: "w1", Status: celery.VisitFailed, Error: "boom"})
		require.NoError(t, err)
		require.True(t, stored)
		stored, err = b.Complete(ctx, embedded.Result{ID: got[1].ID, Worker: "w1", Status: celery.VisitEventful})
		require.NoError(t, err)
		require.False(t, stored, "the first result wins")

		evs := events(t, b, 2)
		e := evs[0]
		require.Equal(t, celery.TypeResult, e.Type)
		require.Equal(t, got[0].ID, e.UUID)
		require.Equal(t, "w1", e.Hostname)
		require.False(t, e.Timestamp.IsZero())
		require.Equal(t, celery.VisitEventful, e.VisitResult.Status)
		require.True(t, *e.VisitResult.Eventful)
		require.Equal(t, snap, fmt.Sprintf("%x", e.VisitResult.SnapshotID))
		require.Equal(t, got[0].ID, e.Fields["uuid"])
		require.Equal(t, celery.VisitFailed, evs[1].VisitResult.Status)
		require.Nil(t, evs[1].VisitResult.Eventful)
		require.Equal(t, "boom", evs[1].VisitResult.Raw["error"])

		rs, err := st.QueueResultsNext(ctx, revisit.QueueResultsParams{Max: 10})
		require.NoError(t, err)
		require.Empty(t, rs, "delivered results are acknowledged")
		require.Zero(t, b.Malformed().Total())
	})
}

func TestPublishDuplicateQueued(t *testing.T) {
	engines(t, func(t *testing.T, open opener) {
		b := embedded.New(open(t), embedded.Config{})
		defer b.Close()
		m1 := message(t, "https://github.com/a/1")
		publish(t, b, m1)
		m2 := message(t, "https://github.com/a/2")
		pubs, err := b.Publish(context.Background(), queue, []celery.Message{m2, m1})
		require.NoError(t, err)
		require.Equal(t, broker.Failed, pubs[0].Outcome)
		require.ErrorIs(t, pubs[0].Err, broker.ErrNotSent, "the batch is written whole or not at all")
		require.Equal(t, broker.Failed, pubs[1].Outcome)
		require.ErrorIs(t, pubs[1].Err, broker.ErrDuplicateID)
		require.ErrorContains(t, pubs[1].Err, m1.Properties.CorrelationID)
	})
}

func TestExpiryRedeliveryHeartbeat(t *testing.T) {
	engines(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		clock := storetest.NewClock(time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC))
		b := embedded.New(open(t), embedded.Config{Clock: clock.Now})
		defer b.Close()
		publish(t, b, message(t, "https://github.com/a/1"), message(t, "https://github.com/a/2"))
		got := lease(t, b, "w1", 2, time.Minute)
		require.Len(t, got, 2)

		clock.Advance(50 * time.Second)
		until, err := b.Heartbeat(ctx, got[0].ID, "w1", time.Minute)
		require.NoError(t, err)
		require.Equal(t, clock.Now().Add(time.Minute), until)
		clock.Advance(10 * time.Second)
		again := lease(t, b, "w2", 10, time.Minute)
		require.Len(t, again, 1, "only the lease without heartbeat expired")
		require.Equal(t, got[1].ID, again[0].ID)
		require.Equal(t, 2, again[0].Attempt)
		_, err = b.Heartbeat(ctx, got[1].ID, "w1", time.Minute)
		require.ErrorIs(t, err, revisit.ErrConflict, "the lease went to w2")
		_, err = b.Heartbeat(ctx, uuid.NewString(), "w1", time.Minute)
		require.ErrorIs(t, err, revisit.ErrNotFound)
	})
}

func TestLeaseLongPoll(t *testing.T) {
	engines(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		st := open(t)
		require.NoError(t, st.TaskTypeCreate(ctx, revisit.TaskType{Type: "load-git", BackendName: queue}))
		b := embedded.New(st, embedded.Config{PollInterval: time.Hour})
		defer b.Close()

		start := time.Now()
		got, err := b.Lease(ctx, embedded.LeaseParams{Queue: queue, Worker: "w", Max: 1, LeaseFor: time.Minute,
			Wait: 50 * time.Millisecond})
		require.NoError(t, err)
		require.Empty(t, got)
		require.Less(t, time.Since(start), 5*time.Second, "the wait ends at its deadline, before the poll")

		done := make(chan []embedded.Task)
		go func() {
			got, _ := b.Lease(ctx, embedded.LeaseParams{Queue: queue, Worker: "w", Max: 1, LeaseFor: time.Minute,
				Wait: 30 * time.Second})
			done <- got
		}()
		time.Sleep(100 * time.Millisecond)
		m := message(t, "https://github.com/a/1")
		publish(t, b, m)
		select {
		case got := <-done:
			require.Len(t, got, 1)
			require.Equal(t, m.Properties.CorrelationID, got[0].ID)
		case <-time.After(10 * time.Second):
			t.Fatal("the waiting lease was not woken up by the publication")
		}

		cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		_, err = b.Lease(cctx, embedded.LeaseParams{Queue: queue, Worker: "w", Max: 1, LeaseFor: time.Minute, Wait: time.Minute})
		require.ErrorIs(t, err, context.DeadlineExceeded, "returns early when ctx ends")
		b.Close()
		_, err = b.Lease(ctx, embedded.LeaseParams{Queue: queue, Worker: "w", Max: 1, LeaseFor: time.Minute, Wait: time.Minute})
		require.ErrorIs(t, err, broker.ErrClosed)
	})
}

func TestLeaseUnknownQueue(t *testing.T) {
	engines(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		st := open(t)
		b := embedded.New(st, embedded.Config{})
		defer b.Close()
		leaseFrom := func(q string) error {
			_, err := b.Lease(ctx, embedded.LeaseParams{Queue: q, Worker: "w", Max: 1, LeaseFor: time.Minute})
			return err
		}

		err := leaseFrom("git")
		require.ErrorIs(t, err, revisit.ErrNotFound)
		require.ErrorContains(t, err, `queue "git" does not exist, nor does any other`)

		require.NoError(t, st.TaskTypeCreate(ctx, revisit.TaskType{Type: "load-git", BackendName: queue}))
		require.NoError(t, leaseFrom(queue), "a task type's queue exists before anything is published to it")
		require.NoError(t, leaseFrom("save_code_now:"+queue), "and so does its high-priority queue")
		other := "swh.loader.svn.tasks.LoadSvnRepository"
		pubs, err := b.Publish(ctx, other, []celery.Message{message(t, "https://svn.example.org/r")})
		require.NoError(t, err)
		require.Equal(t, broker.Confirmed, pubs[0].Outcome)
		_, err = b.Lease(ctx, embedded.LeaseParams{Queue: other, Worker: "w", Max: 1, LeaseFor: time.Minute})
		require.NoError(t, err)
		require.NoError(t, leaseFrom(other), "a queue published to exists once empty")

		err = leaseFrom("git")
		require.ErrorIs(t, err, revisit.ErrNotFound)
		require.ErrorContains(t, err, `queue "git" does not exist; the queues are `+queue+", "+other)
		require.NoError(t, b.DeleteQueue(ctx, other))
		require.ErrorIs(t, leaseFrom(other), revisit.ErrNotFound, "a deleted queue no longer exists")
	})
}

func TestRestartDurability(t *testing.T) {
	engines(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		st := open(t)
		b := embedded.New(st, embedded.Config{})
		m1, m2 := message(t, "https://github.com/a/1"), message(t, "https://github.com/a/2")
		publish(t, b, m1, m2)
		got := lease(t, b, "w1", 1, time.Minute)
		_, err := b.Complete(ctx, embedded.Result{ID: got[0].ID, Worker: "w1", Status: celery.VisitUneventful})
		require.NoError(t, err)
		require.NoError(t, b.Close())
		require.NoError(t, st.Close())

		b = embedded.New(open(t), embedded.Config{})
		defer b.Close()
		got = lease(t, b, "w2", 10, time.Minute)
		require.Len(t, got, 1, "the queued message survived")
		require.Equal(t, m2.Properties.CorrelationID, got[0].ID)
		evs := events(t, b, 1)
		require.Equal(t, m1.Properties.CorrelationID, evs[0].UUID, "the unconsumed result survived")
	})
}

func TestConcurrentLeasers(t *testing.T) {
	engines(t, func(t *testing.T, open opener) {
		b := embedded.New(open(t), embedded.Config{})
		defer b.Close()
		const n = 100
		msgs := make([]celery.Message, n)
		for i := range msgs {
			msgs[i] = message(t, fmt.Sprintf("https://github.com/a/%d", i))
		}
		publish(t, b, msgs...)
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			seen = map[string]int{}
			errs []error
		)
		for w := range 8 {
			wg.Go(func() {
				for {
					got, err := b.Lease(context.Background(), embedded.LeaseParams{Queue: queue,
						Worker: fmt.Sprint("w", w), Max: 3, LeaseFor: time.Minute})
					mu.Lock()
					for _, m := range got {
						seen[m.ID]++
					}
					if err != nil {
						errs = append(errs, err)
					}
					mu.Unlock()
					if err != nil || len(got) == 0 {
						return
					}
				}
			})
		}
		wg.Wait()
		require.Empty(t, errs)
		require.Len(t, seen, n)
		for id, c := range seen {
			require.Equal(t, 1, c, "message %s leased %d times", id, c)
		}
	})
}

func TestCompleteValidation(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "v.db"), store.Options{})
	require.NoError(t, err)
	defer st.Close()
	b := embedded.New(st, embedded.Config{})
	defer b.Close()
	for _, c := range []struct {
		r     embedded.Result
		field string
	}{
		{embedded.Result{ID: "x", Worker: "w", Status: "success"}, "status"},
		{embedded.Result{ID: "x", Worker: "w"}, "status"},
		{embedded.Result{ID: "x", Worker: "w", Status: celery.VisitEventful, Snapshot: "xyz"}, "snapshot"},
		{embedded.Result{ID: "x", Worker: "w", Status: celery.VisitEventful, Snapshot: "abc"}, "snapshot"},
		{embedded.Result{ID: "x", Worker: "w", Status: celery.VisitEventful, Snapshot: "00"}, "snapshot"},
		{embedded.Result{ID: "x", Worker: "w", Status: celery.VisitFailed, Error: "bad \xff"}, "error"},
		{embedded.Result{ID: "x", Status: celery.VisitEventful}, "worker"},
	} {
		_, err := b.Complete(context.Background(), c.r)
		var e *revisit.Error
		require.True(t, errors.As(err, &e), "%+v: %v", c.r, err)
		require.Equal(t, revisit.CodeInvalid, e.Code)
		require.Equal(t, c.field, e.Field, "%+v: %v", c.r, err)
	}
}

// doneIDs returns the ids of the done messages in the store, their results
// acknowledged or not, in completion order.
func doneIDs(t *testing.T, st store.Store) []string {
	t.Helper()
	rs, err := st.QueueResultsNext(context.Background(), revisit.QueueResultsParams{Max: 100, After: &revisit.QueueResultCursor{}})
	require.NoError(t, err)
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	return ids
}

// eventsUntil runs Events with handle until cond holds (or fails the test
// after 10 s), then stops it.
func eventsUntil(t *testing.T, b *embedded.Broker, handle func(context.Context, []celery.Event) error, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Events(ctx, handle) }()
	require.Eventually(t, cond, 10*time.Second, 10*time.Millisecond)
	cancel()
	require.NoError(t, <-done)
}

func TestEventsTrimsOldAcknowledgedMessages(t *testing.T) {
	engines(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		st := open(t)
		t0 := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
		clock := storetest.NewClock(t0)
		b := embedded.New(st, embedded.Config{Clock: clock.Now, PollInterval: 10 * time.Millisecond})
		defer b.Close()
		msgs := []celery.Message{message(t, "https://github.com/a/1"), message(t, "https://github.com/a/2"),
			message(t, "https://github.com/a/3"), message(t, "https://github.com/a/4"), message(t, "https://github.com/a/5")}
		publish(t, b, msgs...)
		got := lease(t, b, "w", len(msgs), 24*time.Hour)
		require.Len(t, got, len(msgs))
		id := func(i int) string { return got[i].ID }
		complete := func(i int) {
			stored, err := b.Complete(ctx, embedded.Result{ID: id(i), Worker: "w", Status: celery.VisitUneventful})
			require.NoError(t, err)
			require.True(t, stored)
		}

		complete(0)
		complete(1)
		events(t, b, 2)
		require.ElementsMatch(t, []string{id(0), id(1)}, doneIDs(t, st), "acknowledged but recent: kept")

		clock.Set(t0.Add(time.Second))
		complete(2) // its result will not be consumed in time
		clock.Set(t0.Add(2 * time.Hour))
		failing := func(context.Context, []celery.Event) error { return errors.New("handler down") }
		eventsUntil(t, b, failing, func() bool { return len(doneIDs(t, st)) == 1 })
		require.Equal(t, []string{id(2)}, doneIDs(t, st), "old and acknowledged: deleted; old but unacknowledged: kept")

		complete(3) // recent
		ok := func(context.Context, []celery.Event) error { return nil }
		eventsUntil(t, b, ok, func() bool { return len(doneIDs(t, st)) == 1 && doneIDs(t, st)[0] == id(3) })
		rs, err := st.QueueResultsNext(ctx, revisit.QueueResultsParams{Max: 10})
		require.NoError(t, err)
		require.Empty(t, rs, "every result was consumed")
		n, err := b.Depth(ctx, queue)
		require.NoError(t, err)
		require.Zero(t, n)
		require.Len(t, lease(t, b, "w2", 10, time.Minute), 0, "the leased message is untouched")
		stored, err := b.Complete(ctx, embedded.Result{ID: id(4), Worker: "w", Status: celery.VisitEventful})
		require.NoError(t, err)
		require.True(t, stored, "the message still leased was not deleted")
	})
}

func TestEventsObserverTrimsNothing(t *testing.T) {
	engines(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		st := open(t)
		t0 := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
		clock := storetest.NewClock(t0)
		b := embedded.New(st, embedded.Config{Clock: clock.Now, PollInterval: 10 * time.Millisecond, KeepDone: time.Minute})
		defer b.Close()
		publish(t, b, message(t, "https://github.com/a/1"))
		got := lease(t, b, "w", 1, time.Hour)
		_, err := b.Complete(ctx, embedded.Result{ID: got[0].ID, Worker: "w", Status: celery.VisitUneventful})
		require.NoError(t, err)
		events(t, b, 1)
		clock.Set(t0.Add(10 * time.Minute))

		observer := embedded.New(st, embedded.Config{Clock: clock.Now, PollInterval: 10 * time.Millisecond,
			KeepDone: time.Minute, EventsObserve: true})
		defer observer.Close()
		polls := 0
		eventsUntil(t, observer, func(context.Context, []celery.Event) error { return nil },
			func() bool { polls++; return polls > 20 })
		require.Equal(t, []string{got[0].ID}, doneIDs(t, st), "an observer deletes nothing")

		eventsUntil(t, b, func(context.Context, []celery.Event) error { return nil },
			func() bool { return len(doneIDs(t, st)) == 0 })
	})
}
