package embedded_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/store/storetest"
)

// TestMessagesAndLeases: an operator sees, at the broker's time, the
// messages waiting and leased with the origin each visits, and the leases
// each worker holds.
func TestMessagesAndLeases(t *testing.T) {
	engines(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		clock := storetest.NewClock(time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC))
		b := embedded.New(open(t), embedded.Config{Clock: clock.Now})
		defer b.Close()
		publish(t, b, message(t, "https://github.com/a/1"), message(t, "https://github.com/a/2"),
			message(t, "https://github.com/a/3"))
		held := lease(t, b, "w1", 1, time.Minute)

		page, err := b.Messages(ctx, revisit.QueueMessageFilter{Queue: queue, Listing: revisit.QueueListLeased})
		require.NoError(t, err)
		require.Len(t, page.Messages, 1)
		m := page.Messages[0]
		require.Equal(t, embedded.QueuedMessage{ID: held[0].ID, Queue: queue, Task: queue, URL: "https://github.com/a/1", Attempt: 1,
			EnqueuedAt: clock.Now(), Worker: "w1", LeaseExpiresAt: clock.Now().Add(time.Minute)}, m)

		page, err = b.Messages(ctx, revisit.QueueMessageFilter{Queue: queue, Listing: revisit.QueueListWaiting, Limit: 1})
		require.NoError(t, err)
		require.Len(t, page.Messages, 1)
		require.Equal(t, "https://github.com/a/2", page.Messages[0].URL)
		require.Empty(t, page.Messages[0].Worker, "never leased")
		require.NotEmpty(t, page.NextPageToken)

		leases, err := b.Leases(ctx)
		require.NoError(t, err)
		require.Equal(t, []revisit.QueueLeaseCount{{Queue: queue, Worker: "w1", Leased: 1,
			NextExpiry: clock.Now().Add(time.Minute)}}, leases)

		clock.Advance(time.Minute) // the broker's clock, not the wall's, says the lease expired
		leases, err = b.Leases(ctx)
		require.NoError(t, err)
		require.Empty(t, leases)
		page, err = b.Messages(ctx, revisit.QueueMessageFilter{Queue: queue, Listing: revisit.QueueListWaiting})
		require.NoError(t, err)
		require.Len(t, page.Messages, 3)
	})
}
