// Package des is a discrete-event simulation kernel: a clock that jumps
// from one scheduled event to the next, timers that can be cancelled, and
// bounded FIFO queues whose takers and putters wait their turn. Events
// run one at a time, in the order of their time and, at the same time, of
// their scheduling, so that a simulation is a deterministic function of
// its inputs.
package des

import (
	"container/heap"
	"time"
)

// Sim is a simulation: its clock and its pending events. It is not safe
// for concurrent use; events run on the goroutine that calls Run.
type Sim struct {
	now       time.Time
	seq       uint64
	events    eventHeap
	processed int64
}

// New returns a simulation whose clock reads start.
func New(start time.Time) *Sim { return &Sim{now: start} }

// Now returns the simulated time.
func (s *Sim) Now() time.Time { return s.now }

// Processed returns how many events have run.
func (s *Sim) Processed() int64 { return s.processed }

// Timer is a scheduled event; Stop cancels it.
type Timer struct {
	at      time.Time
	seq     uint64
	fn      func()
	stopped bool
}

// Stop cancels the event if it has not run yet.
func (t *Timer) Stop() { t.stopped = true }

// At schedules fn at t, or now when t has passed.
func (s *Sim) At(t time.Time, fn func()) *Timer {
	if t.Before(s.now) {
		t = s.now
	}
	s.seq++
	e := &Timer{at: t, seq: s.seq, fn: fn}
	heap.Push(&s.events, e)
	return e
}

// After schedules fn d from now.
func (s *Sim) After(d time.Duration, fn func()) *Timer { return s.At(s.now.Add(d), fn) }

// Run runs the events due up to until, in order, then sets the clock to
// until. Events may schedule others; those due by until run too.
func (s *Sim) Run(until time.Time) {
	for len(s.events) > 0 && !s.events[0].at.After(until) {
		e := heap.Pop(&s.events).(*Timer)
		if e.stopped {
			continue
		}
		s.now = e.at
		s.processed++
		e.fn()
	}
	if until.After(s.now) {
		s.now = until
	}
}

type eventHeap []*Timer

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(*Timer)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}
