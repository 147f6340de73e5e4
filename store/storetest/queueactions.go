package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// prioritized returns the i-th queue fixture message with a priority.
func prioritized(i, priority int) revisit.QueueMessage {
	m := qmsg(i)
	m.Priority = priority
	return m
}

// heartbeat extends w's lease of message id at now.
func (f *fixture) heartbeat(id, worker string, now time.Time) error {
	_, err := f.s.QueueMessageHeartbeat(f.ctx, revisit.QueueHeartbeatParams{ID: id, Worker: worker,
		LeaseFor: time.Minute, Now: now})
	return err
}

func exerciseQueueActions(t *testing.T, newStore NewStore) {
	const q, minute = "swh.loader.git.tasks.UpdateGitRepository", time.Minute
	waiting := revisit.QueueListWaiting

	parallel(t, "Queue/PriorityLeasedFirst", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.enqueue(q, at(0), qmsgs(0, 300)...)
		f.enqueue(q, at(time.Second), prioritized(300, 9))
		got := f.lease(q, "w1", 1, minute, at(2*time.Second))
		require.Equal(t, []string{qid(300)}, ids(got), "enqueued after 300 others, leased first")
		require.Equal(t, 9, got[0].Priority)

		f.enqueue(q, at(3*time.Second), prioritized(301, 5), prioritized(302, 9), prioritized(303, 5))
		order := []string{qid(302), qid(301), qid(303), qid(0), qid(1)}
		require.Equal(t, order, ids(f.listAll(q, waiting, 100, at(3*time.Second))[:5]),
			"the waiting list shows the order of the leases")
		paged := f.listAll(q, waiting, 2, at(3*time.Second))
		require.Len(t, paged, 303, "pages of two cross the priority levels")
		require.Equal(t, order, ids(paged[:5]))
		require.Equal(t, qid(299), paged[302].ID)

		got = f.lease(q, "w1", 4, minute, at(4*time.Second))
		require.Equal(t, []string{qid(302), qid(301), qid(303), qid(0)}, ids(got),
			"highest priority first, then in enqueue order")

		// w1's leases expire: they are taken again before the ready messages.
		later := at(4*time.Second + minute)
		order = []string{qid(300), qid(0), qid(301), qid(302), qid(303), qid(1)}
		require.Equal(t, order, ids(f.listAll(q, waiting, 100, later)[:6]), "expired leases first, by expiry then Seq")
		require.Equal(t, order, ids(f.listAll(q, waiting, 1, later)[:6]),
			"pages of one cross from the expired leases to the ready messages")
		require.ElementsMatch(t, order[:5], ids(f.lease(q, "w2", 5, minute, later)), "as leases take them")

		_, err := f.s.QueueMessagesEnqueue(f.ctx, q, []revisit.QueueMessage{prioritized(400, 256)}, at(0))
		requireInvalid(t, err, "msgs[0].priority")
		_, err = f.s.QueueMessagesList(f.ctx, revisit.QueueMessageFilter{Queue: q, Listing: waiting, Now: later,
			PageToken: "bm90IGEgdG9rZW4"})
		requireInvalid(t, err, "page_token")
	})

	parallel(t, "Queue/PurgeWaitingLosesTheirVisits", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.gitOrigins(3)
		vs := f.dispatch(3, nil)
		f.enqueue(q, at(time.Minute), visitMessage(vs[0]), visitMessage(vs[1]), visitMessage(vs[2]), qmsg(0))
		f.enqueue("other", at(time.Minute), qmsg(1))
		f.lease(q, "w1", 1, minute, at(time.Minute))              // vs[0], held
		f.lease(q, "w2", 1, time.Second, at(time.Minute))         // vs[1], its lease expires
		require.EqualValues(t, 3, f.depth(q, at(90*time.Second))) // vs[1], vs[2], qmsg(0)

		purged, lost, err := f.s.QueueMessagesPurge(f.ctx, q, at(90*time.Second))
		require.NoError(t, err)
		require.EqualValues(t, 3, purged, "ready messages and the expired lease")
		require.Equal(t, 2, lost, "the visits of vs[1] and vs[2]; qmsg(0) has none")
		require.Zero(t, f.depth(q, at(90*time.Second)))
		require.Equal(t, []string{vs[0].ID}, ids(f.listAll(q, revisit.QueueListLeased, 10, at(90*time.Second))),
			"the message a worker holds stays")
		require.Equal(t, revisit.VisitCounts{VisitType: "git", Sent: 1, Lost: 2}, f.counts()["git"])
		got, err := f.s.VisitsGet(f.ctx, visitIDs(vs))
		require.NoError(t, err)
		for _, v := range got {
			want := revisit.VisitLost
			if v.ID == vs[0].ID {
				want = revisit.VisitSent
			}
			require.Equal(t, want, v.State, "visit %s", v.ID)
		}
		eligible := 0
		for _, name := range []string{"o0", "o1", "o2"} {
			if f.stats(name, "git").LastScheduled == nil {
				eligible++
			}
		}
		require.Equal(t, 2, eligible, "the origins of the lost visits are eligible again")
		require.EqualValues(t, 1, f.depth("other", at(2*time.Minute)), "other queues are untouched")
		require.NoError(t, f.heartbeat(vs[0].ID, "w1", at(100*time.Second)), "the held lease goes on")
		requireCode(t, f.heartbeat(vs[1].ID, "w2", at(100*time.Second)), revisit.ErrNotFound, "")

		purged, lost, err = f.s.QueueMessagesPurge(f.ctx, "nowhere", at(0))
		require.NoError(t, err)
		require.Zero(t, purged)
		require.Zero(t, lost)
		_, _, err = f.s.QueueMessagesPurge(f.ctx, "", at(0))
		requireInvalid(t, err, "queue")
	})

	parallel(t, "Queue/DropAndRequeueOneMessage", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.gitOrigins(2)
		vs := f.dispatch(2, nil)
		f.enqueue(q, at(time.Minute), visitMessage(vs[0]), visitMessage(vs[1]), qmsg(0), qmsg(1), qmsg(2))
		f.lease(q, "w1", 2, minute, at(time.Minute)) // vs[0], vs[1]

		drop, err := f.s.QueueMessageDrop(f.ctx, vs[0].ID, at(90*time.Second))
		require.NoError(t, err)
		require.True(t, drop.VisitLost)
		require.Equal(t, vs[0].ID, drop.Message.ID)
		require.Equal(t, revisit.QueueLeased, drop.Message.State, "as it was")
		require.Equal(t, "w1", drop.Message.Worker)
		require.Equal(t, revisit.VisitCounts{VisitType: "git", Sent: 1, Lost: 1}, f.counts()["git"])
		requireCode(t, f.heartbeat(vs[0].ID, "w1", at(100*time.Second)), revisit.ErrNotFound, "",
			"its worker's heartbeat")
		_, err = f.s.QueueMessageComplete(f.ctx, revisit.QueueCompleteParams{ID: vs[0].ID, Worker: "w1",
			Result: []byte(`{"status": "eventful"}`), Now: at(100 * time.Second)})
		requireCode(t, err, revisit.ErrNotFound, "", "its worker's result")

		drop, err = f.s.QueueMessageDrop(f.ctx, qid(1), at(90*time.Second))
		require.NoError(t, err)
		require.False(t, drop.VisitLost, "a message without a visit in flight")
		require.Equal(t, revisit.QueueReady, drop.Message.State)
		_, err = f.s.QueueMessageDrop(f.ctx, qid(1), at(90*time.Second))
		requireCode(t, err, revisit.ErrNotFound, "", "dropped already")

		// Requeue: vs[1] back to waiting, in its place, its lease ended.
		m, err := f.s.QueueMessageRequeue(f.ctx, vs[1].ID, at(100*time.Second))
		require.NoError(t, err)
		require.Equal(t, revisit.QueueReady, m.State)
		require.Equal(t, "w1", m.Worker, "the worker that last held it")
		requireTime(t, at(100*time.Second), m.LeaseExpiresAt)
		require.Equal(t, []string{vs[1].ID, qid(0), qid(2)}, ids(f.listAll(q, waiting, 10, at(100*time.Second))),
			"in its place")
		require.Empty(t, f.listAll(q, revisit.QueueListLeased, 10, at(100*time.Second)))
		require.Equal(t, revisit.VisitCounts{VisitType: "git", Sent: 1, Lost: 1}, f.counts()["git"],
			"its visit stays in flight")
		requireCode(t, f.heartbeat(vs[1].ID, "w1", at(100*time.Second)), revisit.ErrConflict, "",
			"its former worker no longer extends the lease")
		_, err = f.s.QueueMessageRequeue(f.ctx, vs[1].ID, at(100*time.Second))
		requireCode(t, err, revisit.ErrConflict, "", "not leased")
		got := f.lease(q, "w2", 1, minute, at(110*time.Second))
		require.Equal(t, []string{vs[1].ID}, ids(got), "leased first again")
		require.Equal(t, 2, got[0].Attempt)

		require.True(t, f.complete(vs[1].ID, "w2", `{"status": "eventful"}`, at(120*time.Second)))
		_, err = f.s.QueueMessageDrop(f.ctx, vs[1].ID, at(120*time.Second))
		requireCode(t, err, revisit.ErrConflict, "", "done")
		_, err = f.s.QueueMessageRequeue(f.ctx, vs[1].ID, at(120*time.Second))
		requireCode(t, err, revisit.ErrConflict, "", "done")
		_, err = f.s.QueueMessageRequeue(f.ctx, qid(9), at(120*time.Second))
		requireCode(t, err, revisit.ErrNotFound, "")
		_, err = f.s.QueueMessageDrop(f.ctx, "", at(120*time.Second))
		requireInvalid(t, err, "id")
	})

	parallel(t, "Queue/RequeuedMessageTakesItsWorkersLateResult", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.enqueue(q, at(0), qmsg(0))
		f.lease(q, "w1", 1, minute, at(0))
		_, err := f.s.QueueMessageRequeue(f.ctx, qid(0), at(time.Second))
		require.NoError(t, err)
		require.True(t, f.complete(qid(0), "w1", `{"status": "uneventful"}`, at(2*time.Second)),
			"as after an expired lease, nobody leased it since")
		require.Empty(t, f.listAll(q, waiting, 10, at(2*time.Second)))
	})
}
