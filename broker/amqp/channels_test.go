package amqp_test

import (
	"context"
	"errors"
	"testing"
	"time"

	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/broker/amqp"
)

// A queue that refuses publishes beyond its length limit nacks them: over
// several channels, exactly the messages that got in are Confirmed, each
// other one is Failed with ErrNacked, and the outcomes stay in the order
// of the batch.
func TestParallelChannelsReportEachMessageExactly(t *testing.T) {
	t.Parallel()
	const limit, total = 100, 600
	b := openBroker(t, amqp.Config{ConfirmWindow: 20, PublishChannels: 3})
	q := testQueue(t, false)
	if _, err := admin(t).QueueDeclare(q, true, false, false, false, amqp091.Table{
		"x-max-length": int32(limit), "x-overflow": "reject-publish",
	}); err != nil {
		t.Fatal(err)
	}
	msgs := messages(t, total)
	pubs, err := b.Publish(context.Background(), q, msgs)
	if err != nil {
		t.Fatal(err)
	}
	confirmed := map[string]bool{}
	for i, p := range pubs {
		if p.ID != msgs[i].Properties.CorrelationID {
			t.Fatalf("publication %d is for %s, want %s", i, p.ID, msgs[i].Properties.CorrelationID)
		}
		switch {
		case p.Outcome == broker.Confirmed && p.Err == nil:
			confirmed[p.ID] = true
		case p.Outcome == broker.Failed && errors.Is(p.Err, broker.ErrNacked):
		default:
			t.Fatalf("publication %d: %+v, want confirmed or nacked", i, p)
		}
	}
	if len(confirmed) != limit {
		t.Fatalf("%d confirmed, want %d (the queue's limit)", len(confirmed), limit)
	}
	inQueue := drain(t, q)
	if len(inQueue) != limit {
		t.Fatalf("%d messages in the queue, want %d", len(inQueue), limit)
	}
	for id := range inQueue {
		if !confirmed[id] {
			t.Fatalf("message %s is in the queue but was not reported confirmed", id)
		}
	}

	// The channels stay usable for the next batch.
	if _, err := admin(t).QueuePurge(q, false); err != nil {
		t.Fatal(err)
	}
	pubs, err = b.Publish(context.Background(), q, msgs[:limit])
	if err != nil || countOutcomes(pubs)[broker.Confirmed] != limit {
		t.Fatalf("next batch: %v, %v", err, countOutcomes(pubs))
	}
}

// Returns are matched per channel: every message of a batch sent to a
// missing queue over several channels comes back Returned, and a queue
// deleted while a batch is in flight yields returned messages among
// confirmed ones, never a confirmed one for a returned one.
func TestParallelChannelsMatchReturns(t *testing.T) {
	t.Parallel()
	b := openBroker(t, amqp.Config{ConfirmWindow: 7, PublishChannels: 3})
	ctx := context.Background()

	missing := testQueue(t, false)
	msgs := messages(t, 50)
	pubs, err := b.Publish(ctx, missing, msgs)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pubs {
		if p.Outcome != broker.Returned || !errors.Is(p.Err, broker.ErrUnroutable) || p.ID != msgs[i].Properties.CorrelationID {
			t.Fatalf("publication %d: %+v, want returned", i, p)
		}
	}

	// Delete the queue while a large batch is in flight. Which messages
	// are confirmed depends on timing, so try a few times to see both.
	big := messages(t, 5000)
	for attempt := 1; ; attempt++ {
		q := testQueue(t, true)
		deleted := make(chan struct{})
		go func() {
			defer close(deleted)
			time.Sleep(time.Duration(attempt) * 15 * time.Millisecond)
			_, _ = admin(t).QueueDelete(q, false, false, false)
		}()
		pubs, err := b.Publish(ctx, q, big)
		<-deleted
		if err != nil {
			t.Fatal(err)
		}
		n := countOutcomes(pubs)
		if n[broker.Confirmed]+n[broker.Returned] != len(big) {
			t.Fatalf("attempt %d: %v, want every message confirmed or returned", attempt, n)
		}
		for i, p := range pubs {
			if p.Outcome == broker.Returned && !errors.Is(p.Err, broker.ErrUnroutable) {
				t.Fatalf("publication %d: %+v", i, p)
			}
		}
		t.Logf("attempt %d: %v", attempt, n)
		if n[broker.Confirmed] > 0 && n[broker.Returned] > 0 {
			return
		}
		if attempt == 5 {
			t.Skipf("the deletion never fell inside the batch: %v", n)
		}
		big = messages(t, 5000)
	}
}

// A batch smaller than the number of channels uses as many channels as it
// has messages.
func TestParallelChannelsSmallBatches(t *testing.T) {
	t.Parallel()
	b := openBroker(t, amqp.Config{PublishChannels: 4})
	q := testQueue(t, true)
	for n := 1; n <= 5; n++ {
		pubs, err := b.Publish(context.Background(), q, messages(t, n))
		if err != nil || countOutcomes(pubs)[broker.Confirmed] != n {
			t.Fatalf("%d messages: %v, %v", n, err, countOutcomes(pubs))
		}
	}
	if d, err := b.Depth(context.Background(), q); err != nil || d != 15 {
		t.Fatalf("depth %d, %v; want 15", d, err)
	}
}
