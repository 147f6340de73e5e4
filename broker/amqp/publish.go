package amqp

import (
	"context"
	"errors"
	"fmt"
	"sync"
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

// pubSet is the publishing channels one Publish call holds; a nil entry
// is a channel not open (yet, or any more).
type pubSet []*pubChannel

// close closes the set's channels.
func (s pubSet) close() {
	for _, p := range s {
		if p != nil {
			_ = p.ch.Close()
		}
	}
}

// maxIdlePubSets bounds the channel sets kept open between Publish calls:
// as many as there were calls at once, up to this (a process publishes
// for a few visit types and task types at a time).
const maxIdlePubSets = 8

// takePublishChannels returns a set of Config.PublishChannels open
// publishing channels for one Publish call: an idle set, its closed
// channels reopened, or a new one (waiting for the connection until ctx
// ends). The caller gives it back with givePublishChannels.
func (b *Broker) takePublishChannels(ctx context.Context) (pubSet, error) {
	b.pubMu.Lock()
	var set pubSet
	if n := len(b.idlePub); n > 0 {
		set, b.idlePub = b.idlePub[n-1], b.idlePub[:n-1]
	}
	b.pubMu.Unlock()
	if set == nil {
		set = make(pubSet, b.cfg.PublishChannels)
	}
	for k, p := range set {
		if p.usable() {
			continue
		}
		if p != nil {
			_ = p.ch.Close()
			set[k] = nil
		}
		np, err := b.openPublishChannel(ctx)
		if err != nil {
			b.givePublishChannels(set)
			return nil, err
		}
		set[k] = np
	}
	return set, nil
}

// givePublishChannels makes set idle again for the next Publish call,
// dropping its closed channels, or closes it when enough sets are idle or
// the broker is closing.
func (b *Broker) givePublishChannels(set pubSet) {
	for k, p := range set {
		if p != nil && !p.usable() {
			_ = p.ch.Close()
			set[k] = nil
		}
	}
	b.pubMu.Lock()
	keep := len(b.idlePub) < maxIdlePubSets && !b.isClosing()
	if keep {
		b.idlePub = append(b.idlePub, set)
	}
	b.pubMu.Unlock()
	if !keep {
		set.close()
	}
}

// openPublishChannel opens a confirm-mode channel with its returns,
// waiting for the connection until ctx ends.
func (b *Broker) openPublishChannel(ctx context.Context) (*pubChannel, error) {
	for {
		conn, err := b.connection(ctx)
		if err != nil {
			return nil, err
		}
		ch, err := conn.Channel()
		if err == nil {
			if err = ch.Confirm(false); err == nil {
				returns := ch.NotifyReturn(make(chan amqp091.Return, b.cfg.ConfirmWindow+16))
				return &pubChannel{conn: conn, ch: ch, returns: returns}, nil
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

// inflight is a sent message awaiting its confirm.
type inflight struct {
	idx      int // index in msgs
	dc       *amqp091.DeferredConfirmation
	deadline time.Time
}

// Publish sends msgs to queue through the default exchange (routing key =
// queue, mandatory) on the confirm-mode publishing channels, keeping at
// most Config.ConfirmWindow messages unconfirmed on each. Each message is
// Confirmed when the broker acks it, Returned when the broker returned it
// as unroutable (even though it then acks it), and Failed when nacked, not
// confirmed within Config.ConfirmTimeout, left unconfirmed by a lost
// connection or channel or an ended ctx, or never sent. A second message
// with the same correlation id in one batch is not sent
// (broker.ErrDuplicateID): returns are matched to messages by that id,
// carried in the MessageId property too.
//
// The batch is striped over the Config.PublishChannels channels (message
// i of the messages to send goes to channel i mod n), which publish in
// parallel: RabbitMQ works on each channel in a process of its own. So
// messages keep their order within a channel, and the queue holds the
// batch in nearly, not exactly, its order. A channel that fails stops
// alone: its unconfirmed messages are Failed, its unsent ones not sent,
// the other channels go on.
//
// Concurrent calls run side by side, each on channels of its own. A call
// made while disconnected waits for the connection until ctx ends; a
// connection lost during the call fails the rest of the batch instead of
// waiting.
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
	pcs, err := b.takePublishChannels(ctx)
	if err != nil {
		return failAll(err)
	}
	defer b.givePublishChannels(pcs)

	// Which messages to send: not duplicates.
	toSend := make([]int, 0, len(msgs))
	seen := make(map[string]bool, len(msgs))
	for i := range msgs {
		id := res[i].ID
		if seen[id] {
			res[i].Err = fmt.Errorf("publish %s to %s: %w", id, queue, broker.ErrDuplicateID)
			continue
		}
		seen[id] = true
		toSend = append(toSend, i)
	}
	if len(toSend) == 0 {
		return res, nil
	}

	// Stripe the batch over the channels; each lane writes only its own
	// entries of res.
	n := min(len(pcs), len(toSend))
	lanes := make([]lane, n)
	for k := range lanes {
		idxs := make([]int, 0, (len(toSend)+n-1)/n)
		for j := k; j < len(toSend); j += n {
			idxs = append(idxs, toSend[j])
		}
		lanes[k] = lane{b: b, pc: pcs[k], queue: queue, msgs: msgs, idxs: idxs, res: res}
	}
	if n == 1 {
		lanes[0].run(ctx)
	} else {
		var wg sync.WaitGroup
		for k := range lanes {
			wg.Go(func() { lanes[k].run(ctx) })
		}
		wg.Wait()
	}
	var (
		sent    int
		stopErr error
	)
	for k := range lanes {
		sent += lanes[k].sent
		if stopErr == nil {
			stopErr = lanes[k].stopErr
		}
	}
	if sent == 0 && stopErr != nil {
		return res, fmt.Errorf("amqp publish to %s: nothing sent: %w", queue, stopErr)
	}
	return res, nil
}

// lane publishes its share of a batch on one publishing channel.
type lane struct {
	b     *Broker
	pc    *pubChannel
	queue string
	msgs  []celery.Message
	idxs  []int // indices in msgs (and res) this lane sends, in order
	res   []broker.Publication

	sent    int   // messages handed to the channel
	stopErr error // why the rest of the lane was not sent
	// headers is the header table of the message being sent, reused: the
	// channel encodes it before PublishWithDeferredConfirm returns.
	headers amqp091.Table
}

// run sends the lane's messages, keeping at most Config.ConfirmWindow
// unconfirmed, and settles each one's outcome in l.res.
func (l *lane) run(ctx context.Context) {
	var (
		b, pc, queue, res = l.b, l.pc, l.queue, l.res
		pending           []inflight // FIFO, in publish order
		returned          = make(map[string]amqp091.Return)
		returns           = pc.returns
		next              int // index in l.idxs of the next message to send
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
	// abandon fails the unconfirmed messages and closes the channel, so
	// confirms and returns still due for them cannot be mistaken for
	// later ones.
	abandon := func(why error) {
		for _, p := range pending {
			res[p.idx].Err = fmt.Errorf("publish %s to %s: %w: %w", res[p.idx].ID, queue, broker.ErrUnconfirmed, why)
		}
		pending = nil
		l.stopErr = why
		_ = pc.ch.Close()
	}

	timer := time.NewTimer(b.cfg.ConfirmTimeout)
	defer timer.Stop()
	for {
		for l.stopErr == nil && next < len(l.idxs) && len(pending) < b.cfg.ConfirmWindow {
			i := l.idxs[next]
			l.headers = l.msgs[i].Headers.Table(l.headers)
			dc, err := pc.ch.PublishWithDeferredConfirmWithContext(ctx, "", queue, true, false, publishing(l.msgs[i], l.headers))
			if err != nil {
				if ctx.Err() != nil {
					err = ctx.Err()
				} else {
					err = fmt.Errorf("channel: %w", err)
				}
				l.stopErr = err
				break
			}
			pending = append(pending, inflight{idx: i, dc: dc, deadline: time.Now().Add(b.cfg.ConfirmTimeout)})
			next++
			l.sent++
		}
		if l.stopErr != nil && next < len(l.idxs) {
			for _, i := range l.idxs[next:] {
				res[i].Err = fmt.Errorf("publish %s to %s: %w: %w", res[i].ID, queue, broker.ErrNotSent, l.stopErr)
			}
			next = len(l.idxs)
		}
		if len(pending) == 0 {
			return
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

// publishing maps a Celery message, with its header table, to AMQP
// properties and body.
func publishing(m celery.Message, headers amqp091.Table) amqp091.Publishing {
	mode := m.Properties.DeliveryMode
	if mode == 0 {
		mode = amqp091.Persistent
	}
	return amqp091.Publishing{
		Headers:         headers,
		ContentType:     m.Properties.ContentType,
		ContentEncoding: m.Properties.ContentEncoding,
		DeliveryMode:    mode,
		Priority:        m.Properties.Priority,
		CorrelationId:   m.Properties.CorrelationID,
		MessageId:       m.Properties.CorrelationID,
		Body:            m.Body,
	}
}
