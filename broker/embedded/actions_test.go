package embedded_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/celery"
)

// urgent returns a visit message for url with a priority, as visit now
// sends it.
func urgent(t *testing.T, url string, priority uint8) celery.Message {
	t.Helper()
	m, err := celery.NewMessage(celery.Task{Name: queue, ID: uuid.NewString(), Origin: "test@host",
		Kwargs: map[string]any{"url": url}, Priority: &priority})
	require.NoError(t, err)
	return m
}

func TestPublishedPriorityLeasedFirst(t *testing.T) {
	engines(t, func(t *testing.T, open opener) {
		b := embedded.New(open(t), embedded.Config{})
		defer b.Close()
		for i := range 50 {
			publish(t, b, message(t, "https://github.com/a/"+string(rune('a'+i%26))))
		}
		now := urgent(t, "https://github.com/urgent", 9)
		publish(t, b, now)
		got := lease(t, b, "w", 1, time.Minute)
		require.Equal(t, now.Properties.CorrelationID, got[0].ID, "the AMQP priority puts it ahead of the queue")

		page, err := b.Messages(context.Background(), revisit.QueueMessageFilter{Queue: queue,
			Listing: revisit.QueueListLeased})
		require.NoError(t, err)
		require.Equal(t, 9, page.Messages[0].Priority)
		require.Equal(t, queue, page.Messages[0].Queue)
	})
}

func TestPurgeDropRequeue(t *testing.T) {
	engines(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		b := embedded.New(open(t), embedded.Config{PollInterval: time.Hour})
		defer b.Close()
		_, err := b.PurgeQueue(ctx, queue)
		require.ErrorIs(t, err, revisit.ErrNotFound, "no such queue yet")
		require.ErrorContains(t, err, `queue "`+queue+`" does not exist`)

		msgs := []celery.Message{message(t, "https://github.com/a/1"), message(t, "https://github.com/a/2"),
			message(t, "https://github.com/a/3")}
		publish(t, b, msgs...)
		held := lease(t, b, "w", 1, time.Minute)[0]

		p, err := b.PurgeQueue(ctx, queue)
		require.NoError(t, err)
		require.EqualValues(t, 2, p.Purged)
		require.NotNil(t, p.VisitsLost)
		require.Zero(t, *p.VisitsLost, "these messages carry no visit in flight")

		// A lease waiting on the queue is woken up by a requeue.
		done := make(chan []embedded.Task)
		go func() {
			got, _ := b.Lease(ctx, embedded.LeaseParams{Queue: queue, Worker: "w2", Max: 1, LeaseFor: time.Minute,
				Wait: 30 * time.Second})
			done <- got
		}()
		time.Sleep(100 * time.Millisecond)
		m, err := b.RequeueMessage(ctx, held.ID)
		require.NoError(t, err)
		require.Equal(t, "w", m.Worker)
		select {
		case got := <-done:
			require.Len(t, got, 1)
			require.Equal(t, held.ID, got[0].ID)
			require.Equal(t, 2, got[0].Attempt)
		case <-time.After(10 * time.Second):
			t.Fatal("the waiting lease was not woken up by the requeue")
		}

		dropped, lost, err := b.DropMessage(ctx, held.ID)
		require.NoError(t, err)
		require.False(t, lost)
		require.Equal(t, "w2", dropped.Worker)
		_, err = b.Heartbeat(ctx, held.ID, "w2", time.Minute)
		require.ErrorIs(t, err, revisit.ErrNotFound, "the worker of a dropped message hears that it is gone")
		_, err = b.RequeueMessage(ctx, held.ID)
		require.ErrorIs(t, err, revisit.ErrNotFound)
	})
}
