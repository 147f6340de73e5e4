package amqp

import (
	"context"
	"errors"
	"fmt"
	"time"

	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/celery"
)

// eventsBindingKey selects task events (not worker heartbeats) from the
// events exchange.
const eventsBindingKey = "task.#"

// healthyRun is how long a consumer must run before a failure restarts the
// reconnection backoff from its minimum.
const healthyRun = time.Minute

// gatherWindow is how long a batch of events waits for more deliveries
// once one has arrived, unless it fills first. amqp091-go hands deliveries
// over one at a time from a goroutine of its own: taking only those ready
// at the instant the batch is cut made batches of one or two deliveries
// however long the queue, and the listener closed ~500 visits a second
// (docs/performance.md, "Other measures").
const gatherWindow = 5 * time.Millisecond

// Events consumes task events from Config.EventsQueue, a durable queue bound
// to the Config.EventsExchange topic exchange with "task.#" (both declared
// if missing), with manual acknowledgements and at most
// Config.EventsPrefetch deliveries in flight. The deliveries that arrive
// within a few milliseconds of a batch's first are gathered into it (at
// most Config.EventsBatch); the batch's events
// go to handle and the deliveries are acked when it returns nil. When handle
// fails, the batch is nacked back to the queue and handed again after a
// backoff. Malformed events are counted (see Malformed), logged once per
// kind, and acked with their batch.
//
// A lost connection or channel restarts consumption on the next connection;
// unacked deliveries return to the queue, so handle must tolerate seeing an
// event twice. Events returns nil when ctx ends and broker.ErrClosed when
// the broker is closed. Several Events calls may run at once, each on its
// own channel, sharing the queue.
func (b *Broker) Events(ctx context.Context, handle func(context.Context, []celery.Event) error) error {
	if handle == nil {
		return errors.New("amqp events: nil handler")
	}
	bo := newBackoff(b.cfg.MinBackoff, b.cfg.MaxBackoff)
	for {
		started := time.Now()
		err := b.consume(ctx, handle)
		if b.isClosing() {
			return broker.ErrClosed
		}
		if ctx.Err() != nil {
			return nil
		}
		if time.Since(started) > healthyRun {
			bo.reset()
		}
		d := bo.next()
		b.log.Warn("amqp events consumer stopped; restarting", "queue", b.cfg.EventsQueue, "retry_in", d, "err", err)
		if !b.sleep(ctx, d) {
			if b.isClosing() {
				return broker.ErrClosed
			}
			return nil
		}
	}
}

// consume runs one consumer on one channel until it fails or ctx ends.
func (b *Broker) consume(ctx context.Context, handle func(context.Context, []celery.Event) error) error {
	conn, err := b.connection(ctx)
	if err != nil {
		return err
	}
	ch, queue, err := b.declareEvents(conn)
	if err != nil {
		return err
	}
	defer func() { _ = ch.Close() }() // unacked deliveries go back to the queue
	if err := ch.Qos(b.cfg.EventsPrefetch, 0, false); err != nil {
		return fmt.Errorf("amqp events: qos: %w", err)
	}
	deliveries, err := ch.Consume(queue, "", false, false, false, false, nil)
	if err != nil {
		return fmt.Errorf("amqp events: consume %s: %w", queue, err)
	}
	b.log.Info("amqp events consumer started", "queue", queue, "exchange", b.cfg.EventsExchange)

	handlerBackoff := newBackoff(b.cfg.MinBackoff, b.cfg.MaxBackoff)
	batch := make([]amqp091.Delivery, 0, b.cfg.EventsBatch)
	window := time.NewTimer(gatherWindow)
	defer window.Stop()
	for {
		batch = batch[:0]
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-b.closing:
			return broker.ErrClosed
		case d, ok := <-deliveries:
			if !ok {
				return fmt.Errorf("amqp events: delivery channel closed (connection or channel lost)")
			}
			batch = append(batch, d)
		}
		window.Reset(gatherWindow)
	gather:
		for len(batch) < b.cfg.EventsBatch {
			select {
			case d, ok := <-deliveries:
				if !ok {
					break gather // the next receive reports it
				}
				batch = append(batch, d)
			case <-window.C:
				break gather
			}
		}
		herr, err := b.handleBatch(ctx, ch, batch, handle)
		if err != nil {
			return err
		}
		if herr == nil {
			handlerBackoff.reset()
			continue
		}
		d := handlerBackoff.next()
		b.log.Warn("amqp events handler failed; batch requeued", "deliveries", len(batch), "retry_in", d, "err", herr)
		if !b.sleep(ctx, d) {
			return ctx.Err()
		}
	}
}

// handleBatch decodes a batch, hands its good events to handle, and acks
// the batch (or nacks it with requeue when handle fails: herr). err is an
// AMQP failure that ends the consumer.
func (b *Broker) handleBatch(ctx context.Context, ch *amqp091.Channel, batch []amqp091.Delivery, handle func(context.Context, []celery.Event) error) (herr, err error) {
	var events []celery.Event
	for _, d := range batch {
		evs, derr := celery.DecodeEvents(d.RoutingKey, d.Body)
		events = append(events, evs...)
		b.log.Debug("amqp event delivery", "routing_key", d.RoutingKey, "events", len(evs), "bad", derr != nil)
		if derr != nil {
			for _, e := range b.malformed.Record(derr) {
				b.log.Warn("malformed worker event skipped (first of its kind; later ones are only counted)", "routing_key", d.RoutingKey, "err", e)
			}
		}
	}
	last := batch[len(batch)-1].DeliveryTag
	if len(events) > 0 {
		if herr = handle(ctx, events); herr != nil {
			if err := ch.Nack(last, true, true); err != nil {
				return herr, fmt.Errorf("amqp events: nack: %w", err)
			}
			return herr, nil
		}
	}
	if err := ch.Ack(last, true); err != nil {
		return nil, fmt.Errorf("amqp events: ack: %w", err)
	}
	return nil, nil
}

// declareEvents opens a channel and makes sure the events exchange, the
// durable events queue and their binding exist. The exchange is declared
// passively first: workers declare it themselves, and whatever they chose
// wins. When it is missing it is declared as Celery 5.2 declares it (kombu
// Exchange defaults: topic, durable, not auto-delete), so that workers
// redeclaring it get no PRECONDITION_FAILED.
func (b *Broker) declareEvents(conn *amqp091.Connection) (*amqp091.Channel, string, error) {
	ex, q := b.cfg.EventsExchange, b.cfg.EventsQueue
	ch, err := conn.Channel()
	if err != nil {
		return nil, "", fmt.Errorf("amqp events: open channel: %w", err)
	}
	if err := ch.ExchangeDeclarePassive(ex, "topic", true, false, false, false, nil); err != nil {
		if amqpCode(err) != amqp091.NotFound {
			_ = ch.Close()
			return nil, "", fmt.Errorf("amqp events: check exchange %s: %w", ex, err)
		}
		// The failed passive declare closed the channel.
		if ch, err = conn.Channel(); err != nil {
			return nil, "", fmt.Errorf("amqp events: open channel: %w", err)
		}
		if err := ch.ExchangeDeclare(ex, "topic", true, false, false, false, nil); err != nil {
			_ = ch.Close()
			return nil, "", fmt.Errorf("amqp events: declare exchange %s: %w", ex, err)
		}
	}
	durable, exclusive := true, false
	if b.cfg.EventsTransient {
		q, durable, exclusive = "", false, true
	}
	declared, err := ch.QueueDeclare(q, durable, false, exclusive, false, nil)
	if err != nil {
		_ = ch.Close()
		return nil, "", fmt.Errorf("amqp events: declare queue %s: %w", q, err)
	}
	q = declared.Name
	if err := ch.QueueBind(q, eventsBindingKey, ex, false, nil); err != nil {
		_ = ch.Close()
		return nil, "", fmt.Errorf("amqp events: bind %s to %s with %s: %w", q, ex, eventsBindingKey, err)
	}
	return ch, q, nil
}
