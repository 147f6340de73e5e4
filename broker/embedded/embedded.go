// Package embedded is the database-backed implementation of broker.Broker,
// revisit's default: task messages wait in the store (PostgreSQL or SQLite,
// store.QueueStore) and workers in any language lease them over HTTP
// (package api, wire.md §4), so no RabbitMQ is needed.
//
// Queues exist implicitly: publishing into a queue creates it, and an
// unknown queue has depth 0 (never broker.ErrQueueMissing). Workers may
// lease from a queue that exists or that a task type names; leasing from
// any other is an error naming the queues that exist. A message
// leased by a worker is invisible to other workers until its lease expires,
// then it is leased again with its attempt count incremented. Results are
// stored durably with their message and become task-result events (see
// Events). Queued messages and unconsumed results survive restarts.
//
// Several processes may share one store: leasing is race-free in the
// store. The in-process wake-ups (a lease waiting for messages, Events
// waiting for results) only see this process's publications and
// completions; other processes' are seen at the next poll.
package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/store"
)

// Defaults of Config.
const (
	DefaultPollInterval = 500 * time.Millisecond
	DefaultEventsBatch  = 200
	// DefaultKeepDone is how long a done message whose result was
	// consumed stays in the store, for operators to inspect recent
	// results.
	DefaultKeepDone = time.Hour
)

// Config configures a Broker. Zero fields take the defaults.
type Config struct {
	// Clock returns the current time; nil means time.Now.
	Clock revisit.Clock
	// PollInterval is how often a waiting Lease or Events looks at the
	// store for what other processes published or completed.
	PollInterval time.Duration
	// EventsBatch bounds how many results make one batch for the handler
	// of Events.
	EventsBatch int
	// EventsObserve makes Events follow the results completed from the
	// moment it starts without consuming them (for observers such as
	// revisit broker events, which must not take results from revisit's
	// own consumer).
	EventsObserve bool
	// KeepDone is how long a done message stays in the store once Events
	// consumed its result (DefaultKeepDone). The consuming Events deletes
	// older ones about every minute; results not yet consumed are never
	// deleted.
	KeepDone time.Duration
	// Logger receives store errors and malformed results; nil discards.
	Logger *slog.Logger
}

// Store is what the embedded broker needs of a store: its queues, and the
// task types that name the queues workers may lease from.
type Store interface {
	store.QueueStore
	// TaskTypeList returns every task type, by name.
	TaskTypeList(ctx context.Context) ([]revisit.TaskType, error)
}

// Broker is the embedded broker. It does not own the store: Close leaves
// it open.
type Broker struct {
	st        Store
	cfg       Config
	queues    notifier // keyed by queue: something was published
	leased    notifier // keyed by queue: workers took messages
	results   notifier // key "": something was completed
	malformed broker.MalformedCounter

	closeOnce sync.Once
	closed    chan struct{}
}

var (
	_ broker.Broker      = (*Broker)(nil)
	_ broker.TakeWatcher = (*Broker)(nil)
)

// New returns a broker whose queues live in st.
func New(st Store, cfg Config) *Broker {
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.EventsBatch <= 0 {
		cfg.EventsBatch = DefaultEventsBatch
	}
	if cfg.KeepDone <= 0 {
		cfg.KeepDone = DefaultKeepDone
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Broker{st: st, cfg: cfg, closed: make(chan struct{})}
}

// Close makes calls in progress and later ones fail with broker.ErrClosed.
// It does not close the store.
func (b *Broker) Close() error {
	b.closeOnce.Do(func() { close(b.closed) })
	return nil
}

func (b *Broker) isClosed() bool {
	select {
	case <-b.closed:
		return true
	default:
		return false
	}
}

func (b *Broker) now() time.Time { return revisit.Microsecond(b.cfg.Clock.Now()) }

// Depth returns how many messages of queue can be leased now: ready ones
// and those whose lease expired. Like RabbitMQ's message_count (a passive
// declare), it excludes messages leased to workers. An unknown queue has
// depth 0. A store failure wraps broker.ErrDepthUnknown.
func (b *Broker) Depth(ctx context.Context, queue string) (int64, error) {
	if b.isClosed() {
		return 0, broker.ErrClosed
	}
	n, err := b.st.QueueDepth(ctx, queue, b.now())
	if err != nil {
		return 0, fmt.Errorf("embedded depth of %s: %w: %w", queue, broker.ErrDepthUnknown, err)
	}
	return n, nil
}

// DeleteQueue deletes every message of queue, whatever its state, results
// not yet consumed included.
func (b *Broker) DeleteQueue(ctx context.Context, queue string) error {
	_, err := b.st.QueueMessagesDelete(ctx, queue)
	return err
}

// Malformed returns how many stored results could not be turned into
// events (counted as BadResult) so far.
func (b *Broker) Malformed() broker.MalformedCounts { return b.malformed.Counts() }

// wait blocks until ch is closed, d elapses, ctx ends or the broker closes,
// and reports whether the caller should go on (false: ctx done or closed).
func (b *Broker) wait(ctx context.Context, ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
		return false
	case <-b.closed:
		return false
	}
	return true
}

// notifier wakes up the goroutines waiting for news of a key.
type notifier struct {
	mu    sync.Mutex
	chans map[string]chan struct{}
}

// wait returns a channel closed at the next notify of key. Take it before
// looking at the store, so that no notification falls in between.
func (n *notifier) wait(key string) <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.chans == nil {
		n.chans = make(map[string]chan struct{})
	}
	ch, ok := n.chans[key]
	if !ok {
		ch = make(chan struct{})
		n.chans[key] = ch
	}
	return ch
}

// notify wakes up the waiters of key.
func (n *notifier) notify(key string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if ch, ok := n.chans[key]; ok {
		close(ch)
		delete(n.chans, key)
	}
}

// jsonObject is a decoded JSON object whose numbers are json.Number.
type jsonObject = map[string]any

// decodeObject decodes a JSON object, numbers as json.Number.
func decodeObject(raw []byte) (jsonObject, error) {
	var m jsonObject
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	return m, nil
}
