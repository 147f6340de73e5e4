package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// qid returns the id of the i-th queue fixture message; ids sort as i does.
func qid(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }

// qmsg returns the i-th queue fixture message.
func qmsg(i int) revisit.QueueMessage {
	return revisit.QueueMessage{ID: qid(i), Task: "swh.loader.git.tasks.UpdateGitRepository",
		Headers: []byte(`{"task": "swh.loader.git.tasks.UpdateGitRepository", "id": "` + qid(i) + `"}`),
		Body:    []byte(fmt.Sprintf(`[[], {"url": %q}, {"callbacks": null}]`, url(fmt.Sprint(i))))}
}

// qmsgs returns the fixture messages from..to-1.
func qmsgs(from, to int) []revisit.QueueMessage {
	var out []revisit.QueueMessage
	for i := from; i < to; i++ {
		out = append(out, qmsg(i))
	}
	return out
}

// enqueue queues msgs into queue at now and requires success.
func (f *fixture) enqueue(queue string, now time.Time, msgs ...revisit.QueueMessage) {
	f.t.Helper()
	dups, err := f.s.QueueMessagesEnqueue(f.ctx, queue, msgs, now)
	require.NoError(f.t, err)
	require.Empty(f.t, dups)
}

// lease leases from queue and requires success.
func (f *fixture) lease(queue, worker string, max int, leaseFor time.Duration, now time.Time) []revisit.QueueMessage {
	f.t.Helper()
	got, err := f.s.QueueMessagesLease(f.ctx, revisit.QueueLeaseParams{Queue: queue, Worker: worker, Max: max,
		LeaseFor: leaseFor, Now: now})
	require.NoError(f.t, err)
	return got
}

// depth returns the depth of queue at now.
func (f *fixture) depth(queue string, now time.Time) int64 {
	f.t.Helper()
	n, err := f.s.QueueDepth(f.ctx, queue, now)
	require.NoError(f.t, err)
	return n
}

// complete completes a message and returns whether the result was stored.
func (f *fixture) complete(id, worker, result string, now time.Time) bool {
	f.t.Helper()
	stored, err := f.s.QueueMessageComplete(f.ctx, revisit.QueueCompleteParams{ID: id, Worker: worker,
		Result: []byte(result), Now: now})
	require.NoError(f.t, err)
	return stored
}

// results reads the unacknowledged results.
func (f *fixture) results(max int) []revisit.QueueResult {
	f.t.Helper()
	got, err := f.s.QueueResultsNext(f.ctx, revisit.QueueResultsParams{Max: max})
	require.NoError(f.t, err)
	return got
}

// visitMessage returns a queue message whose id is the visit's, as the
// embedded broker publishes it.
func visitMessage(v revisit.Visit) revisit.QueueMessage {
	return revisit.QueueMessage{ID: v.ID, Task: "swh.loader.git.tasks.UpdateGitRepository",
		Headers: []byte(`{"task": "swh.loader.git.tasks.UpdateGitRepository", "id": "` + v.ID + `"}`),
		Body:    []byte(fmt.Sprintf(`[[], {"url": %q}, {"callbacks": null}]`, v.Origin.URL))}
}

func ids(msgs []revisit.QueueMessage) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID
	}
	return out
}

func resultIDs(rs []revisit.QueueResult) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func exerciseQueue(t *testing.T, newStore NewStore) {
	const q, minute = "swh.loader.git.tasks.UpdateGitRepository", time.Minute

	parallel(t, "Queue/EnqueueLeaseOrder", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.enqueue(q, at(0), qmsg(2), qmsg(0), qmsg(1))
		f.enqueue("other", at(0), qmsg(9))
		f.enqueue(q, at(time.Second), qmsgs(3, 5)...)

		got := f.lease(q, "w1", 2, minute, at(2*time.Second))
		require.Equal(t, []string{qid(2), qid(0)}, ids(got), "in enqueue order, batch order included")
		require.Less(t, got[0].Seq, got[1].Seq)
		m := got[0]
		require.Equal(t, q, m.Queue)
		require.Equal(t, qmsg(2).Task, m.Task)
		require.JSONEq(t, string(qmsg(2).Headers), string(m.Headers))
		require.JSONEq(t, string(qmsg(2).Body), string(m.Body))
		require.Equal(t, revisit.QueueLeased, m.State)
		require.Equal(t, 1, m.Attempt)
		require.Equal(t, "w1", m.Worker)
		requireTime(t, at(0), m.EnqueuedAt)
		requireTime(t, at(2*time.Second+minute), m.LeaseExpiresAt)
		require.Nil(t, m.Result)
		require.True(t, m.CompletedAt.IsZero())

		got = f.lease(q, "w2", 10, minute, at(2*time.Second))
		require.Equal(t, []string{qid(1), qid(3), qid(4)}, ids(got))
		require.Empty(t, f.lease(q, "w2", 10, minute, at(3*time.Second)), "the queue is empty")
		require.Equal(t, []string{qid(9)}, ids(f.lease("other", "w2", 10, minute, at(3*time.Second))), "queues are separate")
	})

	parallel(t, "Queue/ExpiryRedelivery", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.enqueue(q, at(0), qmsgs(0, 2)...)
		require.Len(t, f.lease(q, "w1", 10, minute, at(0)), 2)
		require.Empty(t, f.lease(q, "w2", 10, minute, at(minute-time.Microsecond)), "leases still held")
		require.Zero(t, f.depth(q, at(minute-time.Microsecond)))
		require.EqualValues(t, 2, f.depth(q, at(minute)), "expired leases count as ready")

		got := f.lease(q, "w2", 10, minute, at(minute))
		require.Equal(t, []string{qid(0), qid(1)}, ids(got), "redelivered")
		for _, m := range got {
			require.Equal(t, 2, m.Attempt)
			require.Equal(t, "w2", m.Worker)
			requireTime(t, at(2*minute), m.LeaseExpiresAt)
		}
		_, err := f.s.QueueMessageHeartbeat(f.ctx, revisit.QueueHeartbeatParams{ID: qid(0), Worker: "w1",
			LeaseFor: minute, Now: at(minute)})
		requireCode(t, err, revisit.ErrConflict, "", "the lease went to w2")
		require.ErrorContains(t, err, qid(0))
	})

	parallel(t, "Queue/HeartbeatExtends", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.enqueue(q, at(0), qmsg(0))
		f.lease(q, "w1", 1, minute, at(0))
		until, err := f.s.QueueMessageHeartbeat(f.ctx, revisit.QueueHeartbeatParams{ID: qid(0), Worker: "w1",
			LeaseFor: minute, Now: at(50 * time.Second)})
		require.NoError(t, err)
		requireTime(t, at(110*time.Second), until)
		require.Empty(t, f.lease(q, "w2", 1, minute, at(90*time.Second)), "the heartbeat kept the lease")
		got := f.lease(q, "w2", 1, minute, at(110*time.Second))
		require.Equal(t, []string{qid(0)}, ids(got), "expired at the new time")

		_, err = f.s.QueueMessageHeartbeat(f.ctx, revisit.QueueHeartbeatParams{ID: qid(7), Worker: "w1",
			LeaseFor: minute, Now: at(0)})
		requireCode(t, err, revisit.ErrNotFound, "")
		require.True(t, f.complete(qid(0), "w2", `{"status": "failed"}`, at(2*minute)))
		_, err = f.s.QueueMessageHeartbeat(f.ctx, revisit.QueueHeartbeatParams{ID: qid(0), Worker: "w2",
			LeaseFor: minute, Now: at(2 * minute)})
		requireCode(t, err, revisit.ErrConflict, "", "done")
		f.enqueue(q, at(0), qmsg(1))
		_, err = f.s.QueueMessageHeartbeat(f.ctx, revisit.QueueHeartbeatParams{ID: qid(1), Worker: "w2",
			LeaseFor: minute, Now: at(2 * minute)})
		requireCode(t, err, revisit.ErrConflict, "", "never leased")
	})

	parallel(t, "Queue/CompleteResultsOnce", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.enqueue(q, at(0), qmsgs(0, 3)...)
		f.lease(q, "w1", 3, minute, at(0))
		require.True(t, f.complete(qid(1), "w1", `{"status": "eventful", "snapshot": "0a0b"}`, at(time.Second)))
		require.True(t, f.complete(qid(0), "w1", `{"status": "uneventful"}`, at(2*time.Second)))
		require.False(t, f.complete(qid(1), "w1", `{"status": "failed"}`, at(3*time.Second)), "second completion ignored")

		got := f.results(10)
		require.Equal(t, []string{qid(1), qid(0)}, resultIDs(got), "completion order")
		r := got[0]
		require.JSONEq(t, `{"status": "eventful", "snapshot": "0a0b"}`, string(r.Result), "the first result stays")
		require.Equal(t, q, r.Queue)
		require.Equal(t, qmsg(1).Task, r.Task)
		require.Equal(t, "w1", r.Worker)
		require.Equal(t, 1, r.Attempt)
		requireTime(t, at(time.Second), r.CompletedAt)
		require.Equal(t, []string{qid(1)}, resultIDs(f.results(1)), "max")

		require.NoError(t, f.s.QueueResultsAck(f.ctx, []string{qid(1), qid(2), "unknown"}))
		require.Equal(t, []string{qid(0)}, resultIDs(f.results(10)), "acked results are not read again")
		require.NoError(t, f.s.QueueResultsAck(f.ctx, []string{qid(0), qid(1)}))
		require.Empty(t, f.results(10))
		require.NoError(t, f.s.QueueResultsAck(f.ctx, nil))

		after := got[0].Cursor()
		observed, err := f.s.QueueResultsNext(f.ctx, revisit.QueueResultsParams{Max: 10, After: &after})
		require.NoError(t, err)
		require.Equal(t, []string{qid(0)}, resultIDs(observed), "observers read after a cursor, acked or not")

		n, err := f.s.QueueMessagesDeleteDone(f.ctx, at(2*time.Second))
		require.NoError(t, err)
		require.EqualValues(t, 1, n, "completed strictly before")
		n, err = f.s.QueueMessagesDeleteDone(f.ctx, at(time.Hour))
		require.NoError(t, err)
		require.EqualValues(t, 1, n, "the leased message stays")
		require.Equal(t, []string{qid(2)}, ids(f.lease(q, "w2", 10, minute, at(time.Hour))))
	})

	parallel(t, "Queue/CompleteOnlyByLeaseHolder", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.enqueue(q, at(0), qmsg(0), qmsg(1))
		f.lease(q, "w1", 2, minute, at(0))
		f.lease(q, "w2", 1, minute, at(minute))
		_, err := f.s.QueueMessageComplete(f.ctx, revisit.QueueCompleteParams{ID: qid(0), Worker: "w1",
			Result: []byte(`{"status": "eventful"}`), Now: at(minute + time.Second)})
		requireCode(t, err, revisit.ErrConflict, "", "not leased to worker")
		_, err = f.s.QueueMessageComplete(f.ctx, revisit.QueueCompleteParams{ID: qid(1), Worker: "intruder",
			Result: []byte(`{"status": "eventful"}`), Now: at(minute + time.Second)})
		requireCode(t, err, revisit.ErrConflict, "", "not leased to worker")
		require.True(t, f.complete(qid(1), "w1", `{"status": "uneventful"}`, at(minute+2*time.Second)),
			"a worker whose lease expired posts its result while nobody leased the message since")
		require.True(t, f.complete(qid(0), "w2", `{"status": "eventful"}`, at(minute+3*time.Second)))
		require.False(t, f.complete(qid(0), "w2", `{"status": "failed"}`, at(minute+4*time.Second)))
		_, err = f.s.QueueMessageComplete(f.ctx, revisit.QueueCompleteParams{ID: qid(0), Worker: "w1",
			Result: []byte(`{"status": "failed"}`), Now: at(minute + 5*time.Second)})
		requireCode(t, err, revisit.ErrConflict, "", "not leased to worker")
		got := f.results(10)
		require.Len(t, got, 2)
		require.Equal(t, []string{"w1", "w2"}, []string{got[0].Worker, got[1].Worker})
		require.Equal(t, 2, got[1].Attempt)
		require.JSONEq(t, `{"status": "eventful"}`, string(got[1].Result))

		_, err = f.s.QueueMessageComplete(f.ctx, revisit.QueueCompleteParams{ID: qid(8), Worker: "w1",
			Result: []byte(`{}`), Now: at(0)})
		requireCode(t, err, revisit.ErrNotFound, "")
		require.ErrorContains(t, err, qid(8))
		f.enqueue(q, at(0), qmsg(2))
		_, err = f.s.QueueMessageComplete(f.ctx, revisit.QueueCompleteParams{ID: qid(2), Worker: "w1",
			Result: []byte(`{}`), Now: at(0)})
		requireCode(t, err, revisit.ErrConflict, "", "never leased")
	})

	parallel(t, "Queue/Names", func(t *testing.T) {
		f := newFixture(t, newStore)
		names := func() []string {
			t.Helper()
			got, err := f.s.QueueNames(f.ctx)
			require.NoError(t, err)
			return got
		}
		require.Empty(t, names())
		f.enqueue("z.queue", at(0), qmsg(0))
		f.enqueue(q, at(0), qmsg(1))
		f.enqueue(q, at(0), qmsg(2))
		require.Equal(t, []string{q, "z.queue"}, names(), "created by an enqueue, sorted")
		f.lease("z.queue", "w", 1, minute, at(0))
		f.complete(qid(0), "w", `{"status": "eventful"}`, at(time.Second))
		require.Equal(t, []string{q, "z.queue"}, names(), "an empty queue still exists")
		_, err := f.s.QueueMessagesDelete(f.ctx, "z.queue")
		require.NoError(t, err)
		require.Equal(t, []string{q}, names(), "deleting a queue removes it")
	})

	parallel(t, "Queue/Depth", func(t *testing.T) {
		f := newFixture(t, newStore)
		require.Zero(t, f.depth("nowhere", at(0)), "an unknown queue is empty")
		f.enqueue(q, at(0), qmsgs(0, 3)...)
		require.EqualValues(t, 3, f.depth(q, at(0)))
		f.lease(q, "w1", 1, minute, at(0))
		require.EqualValues(t, 2, f.depth(q, at(0)), "leased messages are not counted")
		f.complete(qid(0), "w1", `{"status": "eventful"}`, at(0))
		require.EqualValues(t, 2, f.depth(q, at(2*minute)), "done messages are not counted")
	})

	parallel(t, "Queue/DeleteQueue", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.enqueue(q, at(0), qmsgs(0, 3)...)
		f.enqueue("other", at(0), qmsg(3))
		f.lease(q, "w1", 1, minute, at(0))
		f.complete(qid(0), "w1", `{"status": "eventful"}`, at(0))
		f.lease(q, "w1", 1, minute, at(0))
		n, err := f.s.QueueMessagesDelete(f.ctx, q)
		require.NoError(t, err)
		require.EqualValues(t, 3, n, "ready, leased and done")
		require.Zero(t, f.depth(q, at(time.Hour)))
		require.Empty(t, f.results(10))
		require.EqualValues(t, 1, f.depth("other", at(0)), "other queues stay")
		_, err = f.s.QueueMessagesDelete(f.ctx, "")
		requireInvalid(t, err, "queue")
	})

	parallel(t, "Queue/EnqueueDuplicate", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.enqueue(q, at(0), qmsg(0))
		dups, err := f.s.QueueMessagesEnqueue(f.ctx, q, []revisit.QueueMessage{qmsg(1), qmsg(0)}, at(0))
		requireCode(t, err, revisit.ErrConflict, "")
		require.ErrorContains(t, err, qid(0))
		require.Equal(t, []string{qid(0)}, dups)
		require.EqualValues(t, 1, f.depth(q, at(0)), "nothing written")

		dups, err = f.s.QueueMessagesEnqueue(f.ctx, "other", []revisit.QueueMessage{qmsg(2), qmsg(2)}, at(0))
		requireCode(t, err, revisit.ErrConflict, "", "repeated in the batch")
		require.Equal(t, []string{qid(2)}, dups)
		require.Zero(t, f.depth("other", at(0)))
		dups, err = f.s.QueueMessagesEnqueue(f.ctx, q, nil, at(0))
		require.NoError(t, err)
		require.Empty(t, dups)
	})

	parallel(t, "Queue/EnqueueMarksItsVisitsSent", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.gitOrigins(3)
		vs := f.dispatch(3, nil)
		f.enqueue(q, at(time.Minute), visitMessage(vs[0]), qmsg(0), visitMessage(vs[1]))
		require.Equal(t, revisit.VisitCounts{VisitType: "git", Pending: 1, Sent: 2}, f.counts()["git"],
			"the visits of the queued messages are sent, in the enqueue's transaction")
		got, err := f.s.VisitsGet(f.ctx, visitIDs(vs[:2]))
		require.NoError(t, err)
		for _, v := range got {
			requireTimePtr(t, atp(time.Minute), v.SentAt, "sent when enqueued")
		}

		_, err = f.s.QueueMessagesEnqueue(f.ctx, q, []revisit.QueueMessage{visitMessage(vs[2]), qmsg(0)}, at(time.Hour))
		requireCode(t, err, revisit.ErrConflict, "")
		require.Equal(t, revisit.VisitCounts{VisitType: "git", Pending: 1, Sent: 2}, f.counts()["git"],
			"a refused batch marks nothing")

		n, err := f.s.VisitsSent(f.ctx, visitIDs(vs[:2]), at(time.Hour))
		require.NoError(t, err)
		require.Zero(t, n, "recording the confirms afterwards changes nothing")
		n, err = f.s.VisitsRelease(f.ctx, visitIDs(vs[:2]), false)
		require.NoError(t, err)
		require.Zero(t, n, "a visit whose message is queued is not released")
		n, err = f.s.VisitsRecover(f.ctx, "git", false)
		require.NoError(t, err)
		require.Equal(t, 1, n, "recovery releases only the visit whose message is not queued")
		require.Equal(t, revisit.VisitCounts{VisitType: "git", Sent: 2}, f.counts()["git"])
		require.EqualValues(t, 3, f.depth(q, at(time.Hour)))
	})

	parallel(t, "Queue/ConcurrentLeasers", func(t *testing.T) {
		f := newFixture(t, newStore)
		const n, leasers = 200, 8
		f.enqueue(q, at(0), qmsgs(0, n)...)
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			seen = map[string]string{}
			errs []error
		)
		for w := range leasers {
			wg.Go(func() {
				worker := fmt.Sprintf("w%d", w)
				for {
					got, err := f.s.QueueMessagesLease(f.ctx, revisit.QueueLeaseParams{Queue: q, Worker: worker,
						Max: 7, LeaseFor: minute, Now: at(0)})
					mu.Lock()
					if err != nil {
						errs = append(errs, err)
					}
					for _, m := range got {
						if prev, dup := seen[m.ID]; dup {
							errs = append(errs, fmt.Errorf("%s leased to %s and %s", m.ID, prev, worker))
						}
						seen[m.ID] = worker
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
		require.Len(t, seen, n, "every message leased exactly once")
	})

	parallel(t, "Queue/BadInput", func(t *testing.T) {
		f := newFixture(t, newStore)
		lease := func(p revisit.QueueLeaseParams) error {
			_, err := f.s.QueueMessagesLease(f.ctx, p)
			return err
		}
		good := revisit.QueueLeaseParams{Queue: q, Worker: "w", Max: 1, LeaseFor: minute, Now: at(0)}
		p := good
		p.Queue = ""
		requireInvalid(t, lease(p), "queue")
		p = good
		p.Worker = ""
		requireInvalid(t, lease(p), "worker")
		p = good
		p.Max = 0
		requireInvalid(t, lease(p), "max")
		p = good
		p.LeaseFor = -time.Second
		requireInvalid(t, lease(p), "lease")

		_, err := f.s.QueueMessageHeartbeat(f.ctx, revisit.QueueHeartbeatParams{ID: qid(0), Worker: "w", Now: at(0)})
		requireInvalid(t, err, "lease")
		_, err = f.s.QueueMessageComplete(f.ctx, revisit.QueueCompleteParams{ID: qid(0), Worker: "w",
			Result: []byte(`"eventful"`), Now: at(0)})
		requireInvalid(t, err, "result")
		_, err = f.s.QueueMessageComplete(f.ctx, revisit.QueueCompleteParams{ID: qid(0), Result: []byte(`{}`), Now: at(0)})
		requireInvalid(t, err, "worker")
		_, err = f.s.QueueDepth(f.ctx, "", at(0))
		requireInvalid(t, err, "queue")
		_, err = f.s.QueueResultsNext(f.ctx, revisit.QueueResultsParams{})
		requireInvalid(t, err, "max")

		_, err = f.s.QueueMessagesEnqueue(f.ctx, "", qmsgs(0, 1), at(0))
		requireInvalid(t, err, "queue")
		bad := qmsgs(0, 2)
		bad[1].Task = ""
		_, err = f.s.QueueMessagesEnqueue(f.ctx, q, bad, at(0))
		requireInvalid(t, err, "msgs[1].task")
		bad = qmsgs(0, 1)
		bad[0].Headers = []byte(`[]`)
		_, err = f.s.QueueMessagesEnqueue(f.ctx, q, bad, at(0))
		requireInvalid(t, err, "msgs[0].headers")
		bad = qmsgs(0, 1)
		bad[0].Body = []byte(`[`)
		_, err = f.s.QueueMessagesEnqueue(f.ctx, q, bad, at(0))
		requireInvalid(t, err, "msgs[0].body")
		require.Zero(t, f.depth(q, at(0)), "nothing written")
	})
}
