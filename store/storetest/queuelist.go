package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// list returns a page of a queue's messages and requires success.
func (f *fixture) list(flt revisit.QueueMessageFilter) revisit.QueueMessagePage {
	f.t.Helper()
	page, err := f.s.QueueMessagesList(f.ctx, flt)
	require.NoError(f.t, err)
	return page
}

// listAll reads every page of a queue's messages, limit at a time.
func (f *fixture) listAll(queue string, listing revisit.QueueListing, limit int, now time.Time) []revisit.QueueMessage {
	f.t.Helper()
	var out []revisit.QueueMessage
	flt := revisit.QueueMessageFilter{Queue: queue, Listing: listing, Now: now, Limit: limit}
	for {
		page := f.list(flt)
		require.LessOrEqual(f.t, len(page.Messages), limit)
		out = append(out, page.Messages...)
		if page.NextPageToken == "" {
			return out
		}
		require.Len(f.t, page.Messages, limit, "a page with a next one is full")
		flt.PageToken = page.NextPageToken
	}
}

func exerciseQueueList(t *testing.T, newStore NewStore) {
	const q, minute = "swh.loader.git.tasks.UpdateGitRepository", time.Minute
	waiting, leased := revisit.QueueListWaiting, revisit.QueueListLeased

	parallel(t, "Queue/ListWaitingAndLeased", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.enqueue(q, at(0), qmsgs(0, 5)...)
		f.enqueue("other", at(0), qmsg(9))
		f.lease(q, "w1", 1, minute, at(0))
		f.lease(q, "w2", 1, 2*minute, at(0))

		now := at(30 * time.Second)
		require.Equal(t, []string{qid(2), qid(3), qid(4)}, ids(f.listAll(q, waiting, 100, now)))
		held := f.listAll(q, leased, 100, now)
		require.Equal(t, []string{qid(0), qid(1)}, ids(held))
		require.Equal(t, "w1", held[0].Worker)
		require.Equal(t, 1, held[0].Attempt)
		requireTime(t, at(minute), held[0].LeaseExpiresAt)
		require.Equal(t, "w2", held[1].Worker)
		requireTime(t, at(2*minute), held[1].LeaseExpiresAt)
		require.JSONEq(t, string(qmsg(0).Body), string(held[0].Body), "the body names the origin")
		requireTime(t, at(0), held[0].EnqueuedAt)

		// w1's lease expires: its message waits again, in enqueue order.
		now = at(minute)
		require.Equal(t, []string{qid(0), qid(2), qid(3), qid(4)}, ids(f.listAll(q, waiting, 100, now)))
		require.Equal(t, []string{qid(0), qid(2), qid(3), qid(4)}, ids(f.listAll(q, waiting, 1, now)),
			"pages of one merge the expired lease in its place")
		require.Equal(t, []string{qid(1)}, ids(f.listAll(q, leased, 100, now)))
		require.EqualValues(t, len(f.listAll(q, waiting, 100, now)), f.depth(q, now), "waiting is what the depth counts")

		// A result takes the message out of both listings.
		require.True(t, f.complete(qid(1), "w2", `{"status": "eventful"}`, now))
		require.Empty(t, f.listAll(q, leased, 100, now))
		require.Equal(t, []string{qid(9)}, ids(f.listAll("other", waiting, 100, now)), "queues are separate")
		require.Empty(t, f.listAll("nowhere", waiting, 100, now), "an unknown queue has no message")
	})

	parallel(t, "Queue/ListPages", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.enqueue(q, at(0), qmsgs(0, 7)...)
		page := f.list(revisit.QueueMessageFilter{Queue: q, Listing: waiting, Now: at(0), Limit: 3})
		require.Equal(t, []string{qid(0), qid(1), qid(2)}, ids(page.Messages))
		require.NotEmpty(t, page.NextPageToken)
		page = f.list(revisit.QueueMessageFilter{Queue: q, Listing: waiting, Now: at(0), Limit: 3, PageToken: page.NextPageToken})
		require.Equal(t, []string{qid(3), qid(4), qid(5)}, ids(page.Messages))
		page = f.list(revisit.QueueMessageFilter{Queue: q, Listing: waiting, Now: at(0), Limit: 3, PageToken: page.NextPageToken})
		require.Equal(t, []string{qid(6)}, ids(page.Messages))
		require.Empty(t, page.NextPageToken, "the last page has no token")
		page = f.list(revisit.QueueMessageFilter{Queue: q, Listing: waiting, Now: at(0), Limit: 7})
		require.Len(t, page.Messages, 7)
		require.Empty(t, page.NextPageToken, "an exact page has no token")
		require.Len(t, f.list(revisit.QueueMessageFilter{Queue: q, Listing: waiting, Now: at(0)}).Messages, 7,
			"no limit: the default page size")
	})

	parallel(t, "Queue/ListInvalid", func(t *testing.T) {
		f := newFixture(t, newStore)
		for field, flt := range map[string]revisit.QueueMessageFilter{
			"queue":      {Listing: waiting},
			"state":      {Queue: q, Listing: "done"},
			"limit":      {Queue: q, Listing: leased, Limit: revisit.QueueMessagePageSize.Max + 1},
			"page_token": {Queue: q, Listing: leased, PageToken: "nonsense"},
		} {
			_, err := f.s.QueueMessagesList(f.ctx, flt)
			requireInvalid(t, err, field)
		}
	})

	parallel(t, "Queue/Leases", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.enqueue(q, at(0), qmsgs(0, 6)...)
		f.enqueue("other", at(0), qmsg(9))
		f.lease(q, "w1", 2, minute, at(0))
		f.lease(q, "w1", 1, 2*minute, at(10*time.Second))
		f.lease(q, "w2", 1, minute, at(0))
		f.lease("other", "w2", 1, 3*minute, at(0))
		require.True(t, f.complete(qid(3), "w2", `{"status": "failed"}`, at(0)))
		f.lease(q, "w3", 1, time.Second, at(0))

		counts, err := f.s.QueueLeases(f.ctx, at(30*time.Second))
		require.NoError(t, err)
		require.Len(t, counts, 2, "done messages and expired leases hold nothing: %+v", counts)
		require.Equal(t, "other", counts[0].Queue)
		require.Equal(t, "w2", counts[0].Worker)
		require.EqualValues(t, 1, counts[0].Leased)
		requireTime(t, at(3*minute), counts[0].NextExpiry)
		require.Equal(t, q, counts[1].Queue)
		require.Equal(t, "w1", counts[1].Worker)
		require.EqualValues(t, 3, counts[1].Leased)
		requireTime(t, at(minute), counts[1].NextExpiry, "the earliest expiry")

		counts, err = f.s.QueueLeases(f.ctx, at(10*time.Minute))
		require.NoError(t, err)
		require.Empty(t, counts)
	})
}
