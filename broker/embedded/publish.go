package embedded

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/celery"
)

// Publish stores msgs in queue in one transaction: every message is then
// Confirmed, or, when the store refuses the batch, each is Failed with the
// reason (a message whose id is already queued wraps
// broker.ErrDuplicateID, the others broker.ErrNotSent). Inside the batch,
// a repeated id and a message that is not a Celery task message (no task
// header, a body that is not [args, kwargs, embed]) are Failed and not
// stored, as on RabbitMQ. The priority property is the message's
// priority: a lease takes the ready messages of higher priority first, as
// RabbitMQ does from a queue declared with x-max-priority.
func (b *Broker) Publish(ctx context.Context, queue string, msgs []celery.Message) ([]broker.Publication, error) {
	pubs := make([]broker.Publication, len(msgs))
	for i, m := range msgs {
		pubs[i] = broker.Publication{ID: m.Properties.CorrelationID, Outcome: broker.Failed}
	}
	fail := func(err error) ([]broker.Publication, error) {
		for i := range pubs {
			pubs[i].Err = fmt.Errorf("%w: %w", broker.ErrNotSent, err)
		}
		return pubs, err
	}
	switch {
	case b.isClosed():
		return fail(broker.ErrClosed)
	case ctx.Err() != nil:
		return fail(ctx.Err())
	case queue == "":
		return fail(revisit.Invalidf("queue", "must not be empty"))
	}

	batch := make([]revisit.QueueMessage, 0, len(msgs))
	index := make([]int, 0, len(msgs)) // index[j]: the position in msgs of batch[j]
	seen := make(map[string]bool, len(msgs))
	for i, m := range msgs {
		qm, err := queueMessage(m)
		switch {
		case err != nil:
			pubs[i].Err = fmt.Errorf("%w: %w", broker.ErrNotSent, err)
			continue
		case seen[qm.ID]:
			pubs[i].Err = fmt.Errorf("%w: %s", broker.ErrDuplicateID, qm.ID)
			continue
		}
		seen[qm.ID] = true
		batch = append(batch, qm)
		index = append(index, i)
	}
	if len(batch) == 0 {
		return pubs, nil
	}
	dups, err := b.st.QueueMessagesEnqueue(ctx, queue, batch, b.now())
	if err != nil {
		dup := make(map[string]bool, len(dups))
		for _, id := range dups {
			dup[id] = true
		}
		for _, i := range index {
			if dup[pubs[i].ID] {
				pubs[i].Err = fmt.Errorf("%w: %s is already queued", broker.ErrDuplicateID, pubs[i].ID)
			} else {
				pubs[i].Err = fmt.Errorf("%w: the batch was refused: %w", broker.ErrNotSent, err)
			}
		}
		return pubs, nil
	}
	for _, i := range index {
		pubs[i].Outcome, pubs[i].Err = broker.Confirmed, nil
	}
	b.queues.notify(queue)
	return pubs, nil
}

// RecordsVisitsSent makes b a broker.VisitRecorder: the store's enqueue
// marks the visits of the messages sent in the transaction that queues
// them.
func (b *Broker) RecordsVisitsSent() {}

// queueMessage returns the stored form of a Celery task message.
func queueMessage(m celery.Message) (revisit.QueueMessage, error) {
	id := m.Properties.CorrelationID
	if id == "" {
		return revisit.QueueMessage{}, errors.New("no correlation id")
	}
	task := m.Headers.Task
	if task == "" {
		return revisit.QueueMessage{}, fmt.Errorf("message %s: no task header", id)
	}
	if _, _, err := splitBody(m.Body); err != nil {
		return revisit.QueueMessage{}, fmt.Errorf("message %s: %w", id, err)
	}
	headers, err := json.Marshal(m.Headers.Table(nil))
	if err != nil {
		return revisit.QueueMessage{}, fmt.Errorf("message %s: headers: %w", id, err)
	}
	return revisit.QueueMessage{ID: id, Task: task, Headers: headers, Body: m.Body, Priority: int(m.Properties.Priority)}, nil
}

// splitBody returns the args (a JSON list) and kwargs (a JSON object) of a
// Celery protocol v2 body, [args, kwargs, embed].
func splitBody(body []byte) (args, kwargs json.RawMessage, err error) {
	var parts []json.RawMessage
	if err := json.Unmarshal(body, &parts); err != nil || len(parts) < 2 {
		return nil, nil, errors.New("body is not a JSON list [args, kwargs, embed]")
	}
	var (
		list []json.RawMessage
		obj  map[string]json.RawMessage
	)
	if json.Unmarshal(parts[0], &list) != nil || list == nil {
		return nil, nil, errors.New("body: args is not a JSON list")
	}
	if json.Unmarshal(parts[1], &obj) != nil || obj == nil {
		return nil, nil, errors.New("body: kwargs is not a JSON object")
	}
	return parts[0], parts[1], nil
}
