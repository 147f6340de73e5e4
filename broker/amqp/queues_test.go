package amqp_test

import (
	"context"
	"errors"
	"testing"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/broker/amqp"
)

func TestDeclareAndDeleteQueue(t *testing.T) {
	b := openBroker(t, amqp.Config{})
	ctx := context.Background()
	q := testQueue(t, false)
	if _, err := b.Depth(ctx, q); !errors.Is(err, broker.ErrQueueMissing) {
		t.Fatalf("depth before declaring: %v, want ErrQueueMissing", err)
	}
	if err := b.DeclareQueue(ctx, q); err != nil {
		t.Fatal(err)
	}
	if err := b.DeclareQueue(ctx, q); err != nil {
		t.Fatalf("declaring twice: %v", err)
	}
	if n, err := b.Depth(ctx, q); err != nil || n != 0 {
		t.Fatalf("depth of the new queue: %d, %v", n, err)
	}
	if err := b.DeleteQueue(ctx, q); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Depth(ctx, q); !errors.Is(err, broker.ErrQueueMissing) {
		t.Fatalf("depth after deleting: %v, want ErrQueueMissing", err)
	}
	if err := b.DeleteQueue(ctx, q); err != nil {
		t.Fatalf("deleting a missing queue: %v", err)
	}
}

func TestPurgeQueueLeavesDeliveredMessages(t *testing.T) {
	b := openBroker(t, amqp.Config{})
	ctx := context.Background()
	q := testQueue(t, true)
	pubs, err := b.Publish(ctx, q, messages(t, 3))
	if err != nil || countOutcomes(pubs)[broker.Confirmed] != 3 {
		t.Fatalf("publish: %v, %v", pubs, err)
	}
	consumer := admin(t)
	held, ok, err := consumer.Get(q, false)
	if err != nil || !ok {
		t.Fatalf("get one message: %v, %v", ok, err)
	}

	got, err := b.PurgeQueue(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if got.Queue != q || got.Purged != 2 || got.VisitsLost != nil {
		t.Fatalf("purge = %+v, want 2 purged, visits unknown", got)
	}
	if n, err := b.Depth(ctx, q); err != nil || n != 0 {
		t.Fatalf("depth after purge: %d, %v", n, err)
	}
	if err := held.Nack(false, true); err != nil {
		t.Fatal(err)
	}
	// A nack has no answer; a method on the same channel that the queue
	// answers reaches it after the requeue, so the depth read next sees it.
	if _, err := consumer.QueueDeclarePassive(q, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if n, err := b.Depth(ctx, q); err != nil || n != 1 {
		t.Fatalf("depth once the delivered message is back: %d, %v; want 1 (purge left it)", n, err)
	}

	_, err = b.PurgeQueue(ctx, q+".missing")
	if revisit.Code(err) != revisit.CodeNotFound {
		t.Fatalf("purge of a missing queue: %v, want not found", err)
	}
	if _, err := b.Depth(ctx, q); err != nil {
		t.Fatalf("the broker still works after the missing queue's channel error: %v", err)
	}
}
