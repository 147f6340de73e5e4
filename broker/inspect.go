package broker

import "context"

// QueueInfo is what a broker tells of one queue now.
type QueueInfo struct {
	// Messages is the queue's depth, as Depth measures it.
	Messages int64
	// Consumers counts the consumers attached to the queue: the workers
	// listening to it.
	Consumers int64
}

// Inspector is implemented by brokers that tell more of a queue than its
// depth (RabbitMQ: its consumers).
type Inspector interface {
	// Inspect measures queue, with the errors of Depth.
	Inspect(ctx context.Context, queue string) (QueueInfo, error)
}
