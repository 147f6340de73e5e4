package amqp_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/broker/amqp"
	"github.com/revisit-sched/revisit/internal/testkit/celerytest"
)

// TestInspectCountsConsumers: a passive declare reports the messages
// waiting and the workers consuming the queue.
func TestInspectCountsConsumers(t *testing.T) {
	t.Parallel()
	q := testQueue(t, true)
	b := openBroker(t, amqp.Config{})
	ctx := context.Background()
	pubs, err := b.Publish(ctx, q, messages(t, 3))
	if err != nil || countOutcomes(pubs)[broker.Confirmed] != 3 {
		t.Fatalf("publish: %v %v", pubs, err)
	}
	if got, err := b.Inspect(ctx, q); err != nil || got != (broker.QueueInfo{Messages: 3}) {
		t.Fatalf("before a consumer: %+v, %v", got, err)
	}

	worker := admin(t)
	if err := worker.Qos(1, 0, false); err != nil {
		t.Fatal(err)
	}
	if _, err := worker.Consume(q, "", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	celerytest.WaitFor(t, 10*time.Second, "one consumer holding one message", func() bool {
		got, err := b.Inspect(ctx, q)
		return err == nil && got == broker.QueueInfo{Messages: 2, Consumers: 1}
	})
	if _, err := b.Inspect(ctx, q+".missing"); !errors.Is(err, broker.ErrQueueMissing) {
		t.Fatalf("a missing queue: %v", err)
	}
}
