package simulate

import (
	"context"

	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/simulate/des"
)

// simBroker is the simulation's broker: one bounded queue of message ids a
// visit type, which the simulated workers take from.
type simBroker struct {
	queues map[string]*des.Queue[string]
}

func (b *simBroker) Publish(_ context.Context, queue string, msgs []celery.Message) ([]broker.Publication, error) {
	q := b.queues[queue]
	pubs := make([]broker.Publication, len(msgs))
	for i, m := range msgs {
		pubs[i] = broker.Publication{ID: m.Headers.ID, Outcome: broker.Confirmed}
		switch {
		case q == nil:
			pubs[i].Outcome, pubs[i].Err = broker.Failed, broker.ErrUnroutable
		case !q.TryPut(m.Headers.ID):
			pubs[i].Outcome, pubs[i].Err = broker.Failed, broker.ErrNacked
		}
	}
	return pubs, nil
}

func (b *simBroker) Depth(_ context.Context, queue string) (int64, error) {
	q := b.queues[queue]
	if q == nil {
		return 0, broker.ErrQueueMissing
	}
	return int64(q.Len()), nil
}

func (b *simBroker) Events(ctx context.Context, _ func(context.Context, []celery.Event) error) error {
	<-ctx.Done()
	return nil
}

func (b *simBroker) Malformed() broker.MalformedCounts { return broker.MalformedCounts{} }

func (b *simBroker) Close() error { return nil }
