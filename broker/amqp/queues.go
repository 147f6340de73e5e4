package amqp

import (
	"context"
	"fmt"

	amqp091 "github.com/rabbitmq/amqp091-go"
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
