package amqp_test

import (
	"context"
	"errors"
	"testing"

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
