// Package livequeue measures the queues of the visit types as they are
// now: their depth, the visits in flight and the free slots. The
// orchestrator's gauges, the API's /queues and the dashboard read the same
// measure, so that they show the same figures; a measure is shared for a
// second between readers, so that many readers do not hammer the store and
// the broker.
package livequeue

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/internal/service/inflight"
)

// shareFor is how long a measure of the queues is shared between readers.
const shareFor = time.Second

// countsReuse bounds the time spent counting the visits in flight: a
// count serves for countsReuse times as long as it took (and at least
// shareFor), so that a large backlog polled every second keeps the database
// counting a tenth of the time at most, while queue depths are measured
// again every second.
const countsReuse = 10

// depthTimeout bounds the measure of one queue's depth.
const depthTimeout = 2 * time.Second

// Queue is the state of one visit type's queue.
type Queue struct {
	VisitType      string `json:"visit_type"`
	TaskType       string `json:"task_type"`
	Queue          string `json:"queue"`
	MaxQueueLength int    `json:"max_queue_length"`
	// Depth is how many messages wait in the queue; nil when it cannot be
	// measured, DepthError then says why.
	Depth      *int64 `json:"depth"`
	DepthError string `json:"depth_error,omitempty"`
	// Publishing counts the messages this process is publishing that the
	// broker has not confirmed yet: not in the depth, but taking slots.
	Publishing int64 `json:"publishing"`
	// FreeSlots is what the queue still takes: its length limit less its
	// depth and the messages publishing; nil when the depth is unknown.
	FreeSlots *int64 `json:"free_slots"`
	// Pending, Sent and Lost count the visits in flight by state
	// (semantics.md §6).
	Pending int64 `json:"pending"`
	Sent    int64 `json:"sent"`
	Lost    int64 `json:"lost"`
}

// Store is what Live needs of a store: the load-* task types, whose
// queues it measures, and the visits in flight.
type Store interface {
	inflight.Store
	// TaskTypeList returns every task type, by name.
	TaskTypeList(ctx context.Context) ([]revisit.TaskType, error)
}

// Live measures the queues of every load-* task type of a store. It is
// safe for concurrent use.
type Live struct {
	st     Store
	broker broker.Broker
	now    func() time.Time
	counts inflight.Counts

	mu     sync.Mutex
	at     time.Time
	queues []Queue
	// measuring is set while a reader measures the queues again; the
	// others meanwhile get the last measure.
	measuring bool

	pubMu      sync.Mutex
	publishing map[string]int64 // by queue
}

// New returns the measure of st's queues in b (nil: depths unknown), at
// the time now gives (nil: time.Now).
func New(st Store, b broker.Broker, now func() time.Time) *Live {
	if now == nil {
		now = time.Now
	}
	return &Live{st: st, broker: b, now: now, counts: inflight.Counts{MinAge: shareFor, Reuse: countsReuse},
		publishing: map[string]int64{}}
}

// Publishing adds n (negative: removes) to the messages being published
// into queue and not confirmed yet.
func (l *Live) Publishing(queue string, n int) {
	l.pubMu.Lock()
	defer l.pubMu.Unlock()
	l.publishing[queue] += int64(n)
	if l.publishing[queue] == 0 {
		delete(l.publishing, queue)
	}
}

// Queues returns the state of every load-* task type's queue, measured at
// most shareFor ago, or, while another reader measures it again, the last
// measure (the visits in flight: see countsReuse). Under load a measure
// waits for the store behind every other read: the readers that came
// meanwhile no longer wait for it. The first measure is waited for.
func (l *Live) Queues(ctx context.Context) ([]Queue, error) {
	l.mu.Lock()
	if l.queues == nil {
		defer l.mu.Unlock()
		qs, err := l.measure(ctx)
		if err == nil {
			l.queues, l.at = qs, l.now()
		}
		return qs, err
	}
	if l.measuring || l.now().Sub(l.at) < shareFor {
		qs := l.queues
		l.mu.Unlock()
		return qs, nil
	}
	l.measuring = true
	l.mu.Unlock()
	qs, err := l.measure(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.measuring = false
	if err != nil {
		return nil, err
	}
	l.queues, l.at = qs, l.now()
	return qs, nil
}

// measure measures the queue of every load-* task type.
func (l *Live) measure(ctx context.Context) ([]Queue, error) {
	tts, err := l.st.TaskTypeList(ctx)
	if err != nil {
		return nil, err
	}
	byType, err := l.counts.Get(ctx, l.st, l.now())
	if err != nil {
		return nil, err
	}
	qs := []Queue{}
	for _, tt := range tts {
		vt, ok := tt.VisitType()
		if !ok {
			continue
		}
		n := byType[vt]
		q := Queue{VisitType: vt, TaskType: tt.Type, Queue: tt.BackendName, MaxQueueLength: tt.MaxQueueLengthOrDefault(),
			Pending: n.Pending, Sent: n.Sent, Lost: n.Lost}
		d, err := Depth(ctx, l.broker, tt.BackendName)
		q.Publishing = l.publishingInto(tt.BackendName)
		if err != nil {
			q.DepthError = err.Error()
		} else {
			q.Depth = &d
			free := revisit.FreeSlots(tt.MaxQueueLengthOrDefault(), d+q.Publishing)
			q.FreeSlots = &free
		}
		qs = append(qs, q)
	}
	return qs, nil
}

// publishingInto returns the messages being published into queue.
func (l *Live) publishingInto(queue string) int64 {
	l.pubMu.Lock()
	defer l.pubMu.Unlock()
	return l.publishing[queue]
}

// Depth measures a queue's depth in b, within a bound; a queue that does
// not exist is empty.
func Depth(ctx context.Context, b broker.Broker, queue string) (int64, error) {
	if b == nil {
		return 0, errors.New("no broker in this process")
	}
	ctx, cancel := context.WithTimeout(ctx, depthTimeout)
	defer cancel()
	d, err := b.Depth(ctx, queue)
	if errors.Is(err, broker.ErrQueueMissing) {
		return 0, nil
	}
	return d, err
}
