package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
)

// QueueDurability checks that queued and leased messages survive closing
// the store: reopen must return a new, migrated store on the same
// database each time it is called.
func QueueDurability(t *testing.T, reopen func(t *testing.T) store.Store) {
	t.Helper()
	ctx := context.Background()
	lease := func(s store.Store, worker string, max int, now time.Time) []revisit.QueueMessage {
		got, err := s.QueueMessagesLease(ctx, revisit.QueueLeaseParams{Queue: "q", Worker: worker, Max: max,
			LeaseFor: time.Minute, Now: now})
		require.NoError(t, err)
		return got
	}
	s := reopen(t)
	_, err := s.QueueMessagesEnqueue(ctx, "q", qmsgs(0, 2), base)
	require.NoError(t, err)
	require.Len(t, lease(s, "w", 1, base), 1)
	require.NoError(t, s.Close())

	s = reopen(t)
	defer s.Close()
	n, err := s.QueueDepth(ctx, "q", base)
	require.NoError(t, err)
	require.EqualValues(t, 1, n, "the ready message survived")
	got := lease(s, "w2", 10, base.Add(time.Minute))
	require.Equal(t, []string{qid(0), qid(1)}, ids(got), "the lease survived, and expired")
	require.Equal(t, 2, got[0].Attempt)
}
