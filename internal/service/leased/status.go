package leased

import (
	"sync"
	"time"
)

// Activity is what a loop is doing.
type Activity string

// The activities of a loop.
const (
	// Starting: the loop has not asked for the lease yet.
	Starting Activity = "starting"
	// Working: a round runs.
	Working Activity = "round"
	// Resting: the loop waits between rounds as the last round asked
	// (Status.Kind names why).
	Resting Activity = "resting"
	// StandingBy: another process holds the lease.
	StandingBy Activity = "standing_by"
	// Waiting: a dependency is unavailable; the loop backs off.
	Waiting Activity = "waiting"
	// Stopped: the loop has returned.
	Stopped Activity = "stopped"
)

// Status is what a loop is doing, for the people who watch it.
type Status struct {
	Activity Activity
	// Since is when the loop began doing it.
	Since time.Time
	// Until is the latest end of a rest, a wait or a stand-by: when the
	// loop runs its next round, or asks for the lease again, at the latest.
	Until time.Time
	// Kind is the Kind of the Rest the loop rests for.
	Kind string
	// CheckEvery is how often a rest asks whether to end early (its
	// ReadyEvery); 0 when it does not ask.
	CheckEvery time.Duration
	// Holder is who holds the lease while the loop stands by.
	Holder string
	// Reason and Err say why the loop waits.
	Reason, Err string
}

// statusBox holds a loop's status for readers of other goroutines.
type statusBox struct {
	mu sync.Mutex
	s  Status
}

// set records s, begun now.
func (b *statusBox) set(s Status) {
	s.Since = time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.s = s
}

// get returns the status.
func (b *statusBox) get() Status {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.s
}

// Status returns what the loop is doing; it is safe to call from any
// goroutine.
func (l *Loop) Status() Status { return l.status.get() }

// rests records that the loop rests as r says after a round.
func (l *Loop) rests(r Rest) {
	s := Status{Activity: Resting, Until: time.Now().Add(r.D), Kind: r.Kind}
	if r.Ready != nil {
		s.CheckEvery = r.ReadyEvery
	}
	l.status.set(s)
}
