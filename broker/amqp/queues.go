package amqp

import (
	"context"
	"fmt"

	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
)

// DeclareQueue makes sure a durable queue of that name exists, as Celery
// workers declare theirs (so a later worker's declaration agrees with it).
// It waits for a connection until ctx ends.
func (b *Broker) DeclareQueue(ctx context.Context, queue string) error {
	return b.DeclareQueueArgs(ctx, queue, nil)
}

// DeclareQueueArgs is DeclareQueue with queue arguments (x-queue-mode,
// x-queue-version, ...), e.g. for a benchmark to try what a policy would
// set: workers declare their queues, so in production such settings come
// from policies, not from revisit.
func (b *Broker) DeclareQueueArgs(ctx context.Context, queue string, args map[string]any) error {
	return b.withChannel(ctx, func(ch *amqp091.Channel) error {
		_, err := ch.QueueDeclare(queue, true, false, false, false, amqp091.Table(args))
		return err
	}, "declare queue %s", queue)
}

// DeleteQueue deletes a queue and the messages in it; a missing queue is
// not an error.
func (b *Broker) DeleteQueue(ctx context.Context, queue string) error {
	return b.withChannel(ctx, func(ch *amqp091.Channel) error {
		_, err := ch.QueueDelete(queue, false, false, false)
		return err
	}, "delete queue %s", queue)
}

var _ broker.Purger = (*Broker)(nil)

// PurgeQueue deletes the messages of queue that wait for a consumer
// (queue.purge: those delivered and not acknowledged stay) and returns
// how many. revisit does not know which visits they carried: VisitsLost is
// nil, and the visits stay in flight until their visit type's timeout (or
// an operator's requeue-lost). A queue that does not exist is an
// ErrNotFound.
func (b *Broker) PurgeQueue(ctx context.Context, queue string) (revisit.QueuePurge, error) {
	if queue == "" {
		return revisit.QueuePurge{}, revisit.Invalidf("queue", "must not be empty")
	}
	var n int
	err := b.withChannel(ctx, func(ch *amqp091.Channel) error {
		var err error
		n, err = ch.QueuePurge(queue, false)
		return err
	}, "purge queue %s", queue)
	if amqpCode(err) == amqp091.NotFound {
		return revisit.QueuePurge{}, revisit.Errorf(revisit.CodeNotFound,
			"queue %q does not exist in RabbitMQ (no worker declared it yet)", queue)
	}
	if err != nil {
		return revisit.QueuePurge{}, err
	}
	return revisit.QueuePurge{Queue: queue, Purged: int64(n)}, nil
}

// withChannel runs fn on a channel of its own, closed afterwards.
func (b *Broker) withChannel(ctx context.Context, fn func(*amqp091.Channel) error, format string, args ...any) error {
	conn, err := b.connection(ctx)
	if err != nil {
		return fmt.Errorf(format+": %w", append(args, err)...)
	}
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf(format+": open channel: %w", append(args, err)...)
	}
	defer ch.Close()
	if err := fn(ch); err != nil {
		return fmt.Errorf(format+": %w", append(args, err)...)
	}
	return nil
}
