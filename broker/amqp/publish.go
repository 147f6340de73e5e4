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

// pubChannel is the publishing channel, in confirm mode, with its returns.
type pubChannel struct {
	conn *amqp091.Connection
	ch   *amqp091.Channel
	// returns is buffered beyond the confirm window: at most ConfirmWindow
	// messages are unconfirmed, so at most that many returns are pending
	// and amqp091-go never has to drop one (it gives up on a full listener
	// after 5 s).
	returns chan amqp091.Return
}

// usable reports whether the channel and its connection are still open.
func (p *pubChannel) usable() bool {
	return p != nil && !p.ch.IsClosed() && !p.conn.IsClosed()
}

// publishChannel returns the publishing channel, opening one (waiting for
// the connection until ctx ends) if there is none. The caller holds
// b.pubTurn.
func (b *Broker) publishChannel(ctx context.Context) (*pubChannel, error) {
	if b.pub.usable() {
		return b.pub, nil
	}
	b.dropPublishChannel()
	for {
		conn, err := b.connection(ctx)
		if err != nil {
			return nil, err
		}
		ch, err := conn.Channel()
		if err == nil {
			if err = ch.Confirm(false); err == nil {
				returns := ch.NotifyReturn(make(chan amqp091.Return, b.cfg.ConfirmWindow+16))
				b.pub = &pubChannel{conn: conn, ch: ch, returns: returns}
				return b.pub, nil
			}
			_ = ch.Close()
		}
		// The connection died under us: wait for the next one.
		b.log.Debug("amqp open publishing channel", "err", err)
		if !b.sleep(ctx, b.cfg.MinBackoff) {
			if b.isClosing() {
				return nil, broker.ErrClosed
			}
			return nil, fmt.Errorf("%w: open publishing channel: %w (%w)", broker.ErrUnavailable, err, ctx.Err())
		}
	}
}

// dropPublishChannel closes the publishing channel, so confirms and returns
// still due for abandoned messages cannot be mistaken for later ones. The
// caller holds b.pubTurn.
func (b *Broker) dropPublishChannel() {
	if b.pub != nil {
		_ = b.pub.ch.Close()
		b.pub = nil
	}
}

// inflight is a sent message awaiting its confirm.
type inflight struct {
	idx      int // index in msgs
	dc       *amqp091.DeferredConfirmation
	deadline time.Time
}

// Publish sends msgs to queue through the default exchange (routing key =
// queue, mandatory) on the confirm-mode publishing channel, keeping at most
// Config.ConfirmWindow messages unconfirmed. Each message is Confirmed when
// the broker acks it, Returned when the broker returned it as unroutable
// (even though it then acks it), and Failed when nacked, not confirmed
// within Config.ConfirmTimeout, left unconfirmed by a lost connection or an
// ended ctx, or never sent. A second message with the same correlation id in
// one batch is not sent (broker.ErrDuplicateID): returns are matched to
// messages by that id, carried in the MessageId property too.
//
// Concurrent calls take turns. A call made while disconnected waits for
// the connection until ctx ends; a connection lost during the call fails
// the rest of the batch instead of waiting.
func (b *Broker) Publish(ctx context.Context, queue string, msgs []celery.Message) ([]broker.Publication, error) {
	res := make([]broker.Publication, len(msgs))
	for i, m := range msgs {
		res[i] = broker.Publication{ID: m.Properties.CorrelationID, Outcome: broker.Failed}
	}
	failAll := func(err error) ([]broker.Publication, error) {
		err = fmt.Errorf("amqp publish to %s: %w", queue, err)
		for i := range res {
			res[i].Err = fmt.Errorf("%w: %w", broker.ErrNotSent, err)
		}
		return res, err
	}
	if len(msgs) == 0 {
		return res, nil
	}
	if queue == "" {
		return failAll(errors.New("empty queue name"))
	}
	if b.isClosing() {
		return failAll(broker.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return failAll(err)
	}
	select {
	case <-b.pubTurn:
	case <-ctx.Done():
		return failAll(ctx.Err())
	case <-b.closing:
		return failAll(broker.ErrClosed)
	}
	defer func() { b.pubTurn <- struct{}{} }()

	pc, err := b.publishChannel(ctx)
	if err != nil {
		return failAll(err)
	}

	// Which messages to send: not duplicates, valid headers.
	toSend := make([]int, 0, len(msgs))
	seen := make(map[string]bool, len(msgs))
	for i, m := range msgs {
		id := res[i].ID
		if seen[id] {
			res[i].Err = fmt.Errorf("publish %s to %s: %w", id, queue, broker.ErrDuplicateID)
			continue
		}
		if err := amqp091.Table(m.Headers).Validate(); err != nil {
			res[i].Err = fmt.Errorf("publish %s to %s: %w: headers: %w", id, queue, broker.ErrNotSent, err)
			continue
		}
		seen[id] = true
		toSend = append(toSend, i)
	}

	var (
		pending  []inflight // FIFO, in publish order
		returned = make(map[string]amqp091.Return)
		returns  = pc.returns
		next     int   // index in toSend of the next message to send
		sent     int   // messages handed to the channel
		stopErr  error // why the rest of the batch is not sent
	)
	takeReturn := func(r amqp091.Return) { returned[r.MessageId] = r }
	drainReturns := func() {
		for returns != nil {
			select {
			case r, ok := <-returns:
				if !ok {
					returns = nil
					return
				}
				takeReturn(r)
			default:
				return
			}
		}
	}
	settle := func(p inflight) {
		id := res[p.idx].ID
		if r, ok := returned[id]; ok {
			delete(returned, id)
			res[p.idx].Outcome = broker.Returned
			res[p.idx].Err = fmt.Errorf("publish %s to %s: %w: %d %s", id, queue, broker.ErrUnroutable, r.ReplyCode, r.ReplyText)
			return
		}
		switch {
		case p.dc.Acked():
			res[p.idx].Outcome, res[p.idx].Err = broker.Confirmed, nil
		case pc.ch.IsClosed():
			res[p.idx].Err = fmt.Errorf("publish %s to %s: %w: connection or channel lost", id, queue, broker.ErrUnconfirmed)
		default:
			res[p.idx].Err = fmt.Errorf("publish %s to %s: %w", id, queue, broker.ErrNacked)
		}
	}
	abandon := func(why error) {
		for _, p := range pending {
			res[p.idx].Err = fmt.Errorf("publish %s to %s: %w: %w", res[p.idx].ID, queue, broker.ErrUnconfirmed, why)
		}
		pending = nil
		stopErr = why
		b.dropPublishChannel()
	}

	timer := time.NewTimer(b.cfg.ConfirmTimeout)
	defer timer.Stop()
	for {
		for stopErr == nil && next < len(toSend) && len(pending) < b.cfg.ConfirmWindow {
			i := toSend[next]
			dc, err := pc.ch.PublishWithDeferredConfirmWithContext(ctx, "", queue, true, false, publishing(msgs[i]))
			if err != nil {
				if ctx.Err() != nil {
					err = ctx.Err()
				} else {
					err = fmt.Errorf("channel: %w", err)
				}
				stopErr = err
				break
			}
			pending = append(pending, inflight{idx: i, dc: dc, deadline: time.Now().Add(b.cfg.ConfirmTimeout)})
			next++
			sent++
		}
		if stopErr != nil && next < len(toSend) {
			for _, i := range toSend[next:] {
				res[i].Err = fmt.Errorf("publish %s to %s: %w: %w", res[i].ID, queue, broker.ErrNotSent, stopErr)
			}
			next = len(toSend)
		}
		if len(pending) == 0 {
			break
		}

		head := pending[0]
		timer.Reset(time.Until(head.deadline))
		select {
		case <-head.dc.Done():
			// A message's return precedes its ack, and amqp091-go hands
			// the return to our buffered channel before it processes the
			// ack. So count the settled messages first, then drain: the
			// drain holds the returns of every message counted (a message
			// settling after the count waits for the next round).
			n := 1
			for n < len(pending) && isDone(pending[n].dc) {
				n++
			}
			drainReturns()
			for _, p := range pending[:n] {
				settle(p)
			}
			pending = pending[n:]
		case r, ok := <-returns:
			if !ok {
				returns = nil
				continue
			}
			takeReturn(r)
		case <-ctx.Done():
			abandon(ctx.Err())
		case <-timer.C:
			abandon(fmt.Errorf("no confirm within %s", b.cfg.ConfirmTimeout))
		case <-b.closing:
			abandon(broker.ErrClosed)
		}
	}
	if pc.ch.IsClosed() && b.pub == pc {
		b.dropPublishChannel()
	}
	if sent == 0 && stopErr != nil {
		return res, fmt.Errorf("amqp publish to %s: nothing sent: %w", queue, stopErr)
	}
	return res, nil
}

// isDone reports whether a deferred confirmation has settled.
func isDone(dc *amqp091.DeferredConfirmation) bool {
	select {
	case <-dc.Done():
		return true
	default:
		return false
	}
}

// publishing maps a Celery message to AMQP properties and body.
func publishing(m celery.Message) amqp091.Publishing {
	mode := m.Properties.DeliveryMode
	if mode == 0 {
		mode = amqp091.Persistent
	}
	return amqp091.Publishing{
		Headers:         amqp091.Table(m.Headers),
		ContentType:     m.Properties.ContentType,
		ContentEncoding: m.Properties.ContentEncoding,
		DeliveryMode:    mode,
		Priority:        m.Properties.Priority,
		CorrelationId:   m.Properties.CorrelationID,
		MessageId:       m.Properties.CorrelationID,
		Body:            m.Body,
	}
}
