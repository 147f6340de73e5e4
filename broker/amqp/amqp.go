// Package amqp is the RabbitMQ implementation of broker.Broker, speaking
// Celery's task protocol v2 to Python Celery workers (wire.md §1–§3).
//
// One connection is kept open by a supervisor goroutine: when RabbitMQ
// closes it (restart, network loss), the supervisor redials with
// exponential backoff and jitter, and every channel is re-created on the
// new connection the next time it is needed. Nothing in this package exits
// or panics because RabbitMQ went away: calls made while disconnected wait
// for the connection (bounded by their context) or fail with an error
// wrapping broker.ErrUnavailable, and a publish interrupted by a lost
// connection reports each unconfirmed message Failed.
//
// Channels: each Publish call holds a set of Config.PublishChannels
// publishing channels in confirm mode for its duration, so that calls for
// different queues (the orchestrator's visit types) run side by side and a
// queue slow to confirm never holds up another; a finished call leaves its
// set open for the next one. A call stripes its batch over its channels,
// which publish in parallel, each with its own confirm window and returns
// (so matching returns against confirms stays per channel and simple). One
// cached channel for passive declares (Depth). One channel per running
// Events call.
package amqp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/store"
)

// Defaults of Config.
const (
	DefaultEventsExchange  = "celeryev"
	DefaultEventsQueue     = "revisit.events"
	DefaultConfirmWindow   = 1000
	DefaultPublishChannels = 2
	DefaultConfirmTimeout  = 30 * time.Second
	DefaultMinBackoff      = 100 * time.Millisecond
	DefaultMaxBackoff      = 30 * time.Second
	// The listener closes ~2× as many visits a second with batches of
	// 5000 deliveries as with 200 (docs/performance.md, "Other measures"):
	// each batch costs the store a few statements whatever its size.
	DefaultEventsPrefetch = 10_000
	DefaultEventsBatch    = 5_000
)

// Config configures a Broker. Zero fields take the defaults above.
type Config struct {
	// URL is the AMQP URL, e.g. amqp://guest:guest@127.0.0.1:5672/.
	URL string
	// EventsExchange is the topic exchange workers publish events to.
	EventsExchange string
	// EventsQueue is the durable queue revisit consumes events through.
	EventsQueue string
	// EventsTransient consumes events through a queue of the server's
	// naming, deleted when the connection closes, instead of EventsQueue:
	// for observers (revisit broker events) that must not take events
	// from the durable queue, nor leave a queue behind.
	EventsTransient bool
	// ConfirmWindow bounds how many published messages may await their
	// confirm at once on each publishing channel.
	ConfirmWindow int
	// PublishChannels is how many confirm-mode channels a Publish call
	// spreads its batch over, publishing in parallel.
	PublishChannels int
	// ConfirmTimeout is how long a sent message may wait for its confirm
	// before it is reported Failed.
	ConfirmTimeout time.Duration
	// ManagementURL, when set, makes Depth read the RabbitMQ management
	// API (http://user:pass@host:15672; credentials default to the AMQP
	// URL's) instead of a passive declare.
	ManagementURL string
	// MinBackoff and MaxBackoff bound the delay between reconnection
	// attempts (exponential, with jitter).
	MinBackoff, MaxBackoff time.Duration
	// EventsPrefetch bounds the unacknowledged events deliveries in flight.
	EventsPrefetch int
	// EventsBatch bounds how many deliveries make one batch for the
	// handler of Events.
	EventsBatch int
	// Logger receives connection changes and malformed events; nil
	// discards.
	Logger *slog.Logger
}

// withDefaults returns c with zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.EventsExchange == "" {
		c.EventsExchange = DefaultEventsExchange
	}
	if c.EventsQueue == "" {
		c.EventsQueue = DefaultEventsQueue
	}
	if c.ConfirmWindow <= 0 {
		c.ConfirmWindow = DefaultConfirmWindow
	}
	if c.PublishChannels <= 0 {
		c.PublishChannels = DefaultPublishChannels
	}
	if c.ConfirmTimeout <= 0 {
		c.ConfirmTimeout = DefaultConfirmTimeout
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = DefaultMinBackoff
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	if c.MaxBackoff < c.MinBackoff {
		c.MaxBackoff = c.MinBackoff
	}
	if c.EventsPrefetch <= 0 {
		c.EventsPrefetch = DefaultEventsPrefetch
	}
	if c.EventsBatch <= 0 {
		c.EventsBatch = DefaultEventsBatch
	}
	if c.EventsBatch > c.EventsPrefetch {
		c.EventsBatch = c.EventsPrefetch
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Broker is a RabbitMQ broker.Broker. Make one with Open.
type Broker struct {
	cfg      Config
	log      *slog.Logger
	redacted string // URL without password, for logs and errors
	vhost    string

	mu    sync.Mutex
	conn  *amqp091.Connection // nil while disconnected
	ready chan struct{}       // closed once conn is set; replaced on loss

	closing   chan struct{} // closed by Close
	closeOnce sync.Once
	done      chan struct{} // closed when the supervisor has exited

	pubMu   sync.Mutex
	idlePub []pubSet // publishing channel sets no Publish call holds

	depthMu sync.Mutex
	depthCh *amqp091.Channel

	malformed broker.MalformedCounter
}

var _ broker.Broker = (*Broker)(nil)

// Open connects to RabbitMQ and starts the connection supervisor. It
// retries a failing first connection with backoff until ctx ends.
func Open(ctx context.Context, cfg Config) (*Broker, error) {
	cfg = cfg.withDefaults()
	uri, err := amqp091.ParseURI(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("amqp broker: url: %w", err)
	}
	b := &Broker{
		cfg:      cfg,
		log:      cfg.Logger,
		redacted: store.Redact(cfg.URL),
		vhost:    uri.Vhost,
		ready:    make(chan struct{}),
		closing:  make(chan struct{}),
		done:     make(chan struct{}),
	}
	conn, err := b.dialUntil(ctx)
	if err != nil {
		return nil, fmt.Errorf("amqp broker: connect to %s: %w", b.redacted, err)
	}
	b.setConn(conn)
	go b.supervise(conn)
	return b, nil
}

// Close stops the supervisor and closes the connection; calls in progress
// fail with broker.ErrClosed or report their messages Failed.
func (b *Broker) Close() error {
	b.closeOnce.Do(func() { close(b.closing) })
	<-b.done
	return nil
}

// Malformed returns how many malformed events Events skipped.
func (b *Broker) Malformed() broker.MalformedCounts { return b.malformed.Counts() }

// dialUntil dials until it succeeds, ctx ends or the broker closes.
func (b *Broker) dialUntil(ctx context.Context) (*amqp091.Connection, error) {
	bo := newBackoff(b.cfg.MinBackoff, b.cfg.MaxBackoff)
	for attempt := 1; ; attempt++ {
		conn, err := amqp091.DialConfig(b.cfg.URL, amqp091.Config{
			Heartbeat:  10 * time.Second,
			Locale:     "en_US",
			Properties: amqp091.Table{"connection_name": "revisit"},
			Dial:       dialCoalescing,
		})
		if err == nil {
			if attempt > 1 {
				b.log.Info("amqp connected", "url", b.redacted, "attempt", attempt)
			}
			return conn, nil
		}
		d := bo.next()
		if attempt == 1 || attempt%10 == 0 {
			b.log.Warn("amqp dial failed; retrying", "url", b.redacted, "attempt", attempt, "retry_in", d, "err", err)
		}
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w: %w (last error: %w)", broker.ErrUnavailable, ctx.Err(), err)
		case <-b.closing:
			t.Stop()
			return nil, broker.ErrClosed
		}
	}
}

// dialTimeout bounds connecting to RabbitMQ (amqp091-go's default).
const dialTimeout = 30 * time.Second

// dialCoalescing dials as amqp091-go does and gathers the connection's
// writes (coalescingConn).
func dialCoalescing(network, addr string) (net.Conn, error) {
	conn, err := amqp091.DefaultDial(dialTimeout)(network, addr)
	if err != nil {
		return nil, err
	}
	return newCoalescingConn(conn), nil
}

// supervise watches the connection and replaces it when it closes, until
// the broker is closed.
func (b *Broker) supervise(conn *amqp091.Connection) {
	defer close(b.done)
	for {
		lost := conn.NotifyClose(make(chan *amqp091.Error, 1))
		select {
		case <-b.closing:
			b.clearConn()
			b.closeChannels()
			if err := conn.Close(); err != nil && !errors.Is(err, amqp091.ErrClosed) {
				b.log.Warn("amqp close", "err", err)
			}
			return
		case e := <-lost:
			b.clearConn()
			b.log.Warn("amqp connection lost; reconnecting", "url", b.redacted, "err", e)
		}
		var err error
		conn, err = b.dialUntil(context.Background())
		if err != nil { // only when closing
			b.closeChannels()
			return
		}
		b.setConn(conn)
	}
}

// setConn publishes a live connection to waiters.
func (b *Broker) setConn(c *amqp091.Connection) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.conn = c
	close(b.ready)
}

// clearConn marks the broker disconnected.
func (b *Broker) clearConn() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conn != nil {
		b.conn = nil
		b.ready = make(chan struct{})
	}
}

// closeChannels closes the cached depth channel and the idle publishing
// channels (those that Publish calls hold die with the connection).
func (b *Broker) closeChannels() {
	b.pubMu.Lock()
	for _, set := range b.idlePub {
		set.close()
	}
	b.idlePub = nil
	b.pubMu.Unlock()
	b.depthMu.Lock()
	defer b.depthMu.Unlock()
	if b.depthCh != nil {
		_ = b.depthCh.Close()
		b.depthCh = nil
	}
}

// connection returns the live connection, waiting for one until ctx ends.
func (b *Broker) connection(ctx context.Context) (*amqp091.Connection, error) {
	for {
		b.mu.Lock()
		c, ready := b.conn, b.ready
		b.mu.Unlock()
		if c != nil && !c.IsClosed() {
			return c, nil
		}
		if c != nil { // closed but the supervisor has not noticed yet
			b.clearConnIf(c)
			continue
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: not connected to %s: %w", broker.ErrUnavailable, b.redacted, ctx.Err())
		case <-b.closing:
			return nil, broker.ErrClosed
		}
	}
}

// connectionNow returns the live connection without waiting.
func (b *Broker) connectionNow() (*amqp091.Connection, error) {
	select {
	case <-b.closing:
		return nil, broker.ErrClosed
	default:
	}
	b.mu.Lock()
	c := b.conn
	b.mu.Unlock()
	if c == nil || c.IsClosed() {
		return nil, fmt.Errorf("%w: not connected to %s", broker.ErrUnavailable, b.redacted)
	}
	return c, nil
}

// clearConnIf marks the broker disconnected if c is still its connection.
func (b *Broker) clearConnIf(c *amqp091.Connection) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conn == c {
		b.conn = nil
		b.ready = make(chan struct{})
	}
}

// isClosing reports whether Close was called.
func (b *Broker) isClosing() bool {
	select {
	case <-b.closing:
		return true
	default:
		return false
	}
}

// backoff yields exponentially growing delays with full jitter in
// [d/2, d].
type backoff struct {
	min, max, cur time.Duration
}

func newBackoff(min, max time.Duration) *backoff { return &backoff{min: min, max: max} }

// next returns the next delay.
func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.min
	} else {
		b.cur *= 2
		if b.cur > b.max {
			b.cur = b.max
		}
	}
	half := b.cur / 2
	return half + rand.N(half+1)
}

// reset starts over from the minimum delay.
func (b *backoff) reset() { b.cur = 0 }

// sleep waits d or until ctx ends or the broker closes; it reports whether
// the full delay elapsed.
func (b *Broker) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-b.closing:
		return false
	}
}

// amqpCode returns the AMQP reply code of err, or 0.
func amqpCode(err error) int {
	var e *amqp091.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}
