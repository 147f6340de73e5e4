// Package supervise runs the long-lived loops of a service (semantics.md
// §4.2): each loop is restarted with exponential backoff when it fails,
// reported unhealthy after repeated failures, and the whole stops when
// every loop is down, so that a service manager restarts the process. On
// stop, loops get a grace period to finish the work in flight.
package supervise

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/revisit-sched/revisit"
)

// ErrAllDown is returned by Run when every loop is unhealthy at once.
var ErrAllDown = errors.New("every loop is down")

// Loop is one long-lived loop. It runs until stop is done (then it returns
// nil) or it fails (it returns the error). Its work runs under hard, which
// ends only when the grace period after stop has passed, so that the work
// in flight at stop finishes. It calls healthy after every piece of work
// that went well.
type Loop func(stop, hard context.Context, healthy func()) error

// Config configures Run; zero durations and counts take the defaults.
type Config struct {
	// GracePeriod bounds how long the loops may take to finish once the
	// context of Run is done (30 s).
	GracePeriod time.Duration
	// RestartMin and RestartMax bound the exponential backoff between
	// restarts of a failed loop (1 s, 5 min).
	RestartMin, RestartMax time.Duration
	// UnhealthyAfter is how many consecutive failures make a loop
	// unhealthy (5).
	UnhealthyAfter int
	// Logger receives restarts; nil discards.
	Logger *slog.Logger
	// OnRestart, when set, is called each time a loop failed and will be
	// restarted.
	OnRestart func(name string)
	// OnHealth, when set, is called when a loop's health is set: at start,
	// after a failure, and after work that went well.
	OnHealth func(name string, h Health)
}

// Health is the state of one loop.
type Health struct {
	// Healthy is false after UnhealthyAfter consecutive failures, until
	// the loop works again.
	Healthy bool
	// Failures counts consecutive failures.
	Failures int
	// LastError is the last failure, if any.
	LastError string
}

// Supervisor runs named loops; Health reports on them while they run.
type Supervisor struct {
	cfg   Config
	mu    sync.Mutex
	state map[string]Health
}

// New returns a supervisor configured by cfg.
func New(cfg Config) *Supervisor {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&cfg.GracePeriod, 30*time.Second)
	set(&cfg.RestartMin, time.Second)
	set(&cfg.RestartMax, 5*time.Minute)
	if cfg.UnhealthyAfter <= 0 {
		cfg.UnhealthyAfter = 5
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Supervisor{cfg: cfg, state: map[string]Health{}}
}

// Health returns the state of every loop, by name.
func (s *Supervisor) Health() map[string]Health {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]Health, len(s.state))
	for k, v := range s.state {
		out[k] = v
	}
	return out
}

// Run runs the loops until ctx is done, then stops them, waits for them
// (at most the grace period plus what they take to return once their hard
// context ends) and returns nil; or returns ErrAllDown, after stopping the
// others the same way, when every loop is unhealthy at once.
func (s *Supervisor) Run(ctx context.Context, loops map[string]Loop) error {
	hard, cancelHard := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHard()
	stop, cancelStop := context.WithCancel(ctx)
	defer cancelStop()
	go func() {
		<-stop.Done()
		t := time.NewTimer(s.cfg.GracePeriod)
		defer t.Stop()
		select {
		case <-t.C:
			cancelHard()
		case <-hard.Done():
		}
	}()

	names := make([]string, 0, len(loops))
	for name := range loops {
		names = append(names, name)
		s.set(name, func(h *Health) { *h = Health{Healthy: true} })
	}
	down := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	for name, loop := range loops {
		wg.Go(func() {
			s.supervise(stop, hard, name, loop, func() {
				if s.allDown(names) {
					once.Do(func() { close(down) })
				}
			})
		})
	}
	var err error
	select {
	case <-ctx.Done():
	case <-down:
		err = ErrAllDown
	}
	cancelStop()
	wg.Wait()
	return err
}

// supervise runs one loop, restarting it with exponential backoff when it
// fails; unhealthy is called when it turns unhealthy.
func (s *Supervisor) supervise(stop, hard context.Context, name string, loop Loop, unhealthy func()) {
	for {
		err := loop(stop, hard, func() { s.set(name, func(h *Health) { *h = Health{Healthy: true} }) })
		if err == nil || stop.Err() != nil {
			return
		}
		var h Health
		s.set(name, func(hp *Health) {
			hp.Failures++
			hp.LastError = err.Error()
			hp.Healthy = hp.Failures < s.cfg.UnhealthyAfter
			h = *hp
		})
		if s.cfg.OnRestart != nil {
			s.cfg.OnRestart(name)
		}
		backoff := min(s.cfg.RestartMin<<min(h.Failures-1, 20), s.cfg.RestartMax)
		backoff += time.Duration(rand.Int64N(int64(backoff)/4 + 1))
		s.cfg.Logger.Error("loop failed; restarting", "loop", name, "err", err, "failures", h.Failures,
			"restart_in", backoff.Round(time.Millisecond))
		if !h.Healthy {
			s.cfg.Logger.Error("loop unhealthy", "loop", name, "failures", h.Failures)
			unhealthy()
		}
		if !Sleep(stop, backoff) {
			return
		}
	}
}

func (s *Supervisor) set(name string, change func(*Health)) {
	s.mu.Lock()
	h := s.state[name]
	change(&h)
	s.state[name] = h
	s.mu.Unlock()
	if s.cfg.OnHealth != nil {
		s.cfg.OnHealth(name, h)
	}
}

func (s *Supervisor) allDown(names []string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !slices.ContainsFunc(names, func(n string) bool { return s.state[n].Healthy })
}

// Sleep waits d or until ctx is done, and reports whether it waited d.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Jitter returns a random wait below d, to spread the waits of loops; 0
// when d is not positive.
func Jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return rand.N(d)
}

// WaitError is work that could not be done because a dependency is
// unavailable or a queue's depth unknown: the loop waits and tries again,
// it does not fail.
type WaitError struct {
	// Reason is a short label for metrics: queue_missing, depth_unknown,
	// broker_unavailable, store_unavailable, timeout, publish_failed…
	Reason string
	Err    error
}

func (e *WaitError) Error() string { return e.Reason + ": " + e.Err.Error() }
func (e *WaitError) Unwrap() error { return e.Err }

// Waiter is an error that says which dependency is unavailable (the
// broker's errors: a missing queue, an unknown depth, a broker that cannot
// be reached): a loop meeting it waits rather than fails. WaitReason is a
// short label for metrics.
type Waiter interface {
	error
	WaitReason() string
}

// Classify returns err as a *WaitError when it says a dependency is
// unavailable (a Waiter, a store that cannot be reached, a timeout), and
// err unchanged otherwise.
func Classify(err error) error {
	var reason string
	var w Waiter
	switch {
	case err == nil:
		return nil
	case errors.As(err, new(*WaitError)):
		return err
	case errors.As(err, &w):
		reason = w.WaitReason()
	case revisit.Code(err) == revisit.CodeUnavailable:
		reason = "store_unavailable"
	case errors.Is(err, context.DeadlineExceeded):
		reason = "timeout"
	default:
		return err
	}
	return &WaitError{Reason: reason, Err: err}
}

// Backoff spaces the retries of a loop that waits for a dependency: one
// second, doubling at each consecutive wait, up to Max.
type Backoff struct {
	// Max bounds a wait.
	Max time.Duration
	n   int
}

// Next returns the next wait and counts it.
func (b *Backoff) Next() time.Duration {
	d := time.Second << min(b.n, 16)
	b.n++
	return min(d, b.Max)
}

// Reset starts again from one second, after work that went well.
func (b *Backoff) Reset() { b.n = 0 }

// Outage follows the failures in a row of the calls to one dependency: it
// spaces the retries, doubling from Min up to Max, plus up to Jitter, and
// tells when to log, so that an unreachable dependency costs a line when it
// goes and a line when it comes back, not one a retry.
type Outage struct {
	Min, Max, Jitter time.Duration
	count            int
	since            time.Time
}

// Failed records a failed call at now, and returns how long to wait
// before the next and whether the failure begins an outage (log it).
func (o *Outage) Failed(now time.Time) (wait time.Duration, began bool) {
	began = o.count == 0
	if began {
		o.since = now
	}
	wait = min(o.Min<<min(o.count, 16), o.Max) + Jitter(o.Jitter)
	o.count++
	return wait, began
}

// Ended records a call that went well at now, and returns the failed
// calls of the outage it ends and how long it lasted; no failures when
// none was going on.
func (o *Outage) Ended(now time.Time) (failures int, lasted time.Duration) {
	failures, lasted = o.count, now.Sub(o.since)
	*o = Outage{Min: o.Min, Max: o.Max, Jitter: o.Jitter}
	return failures, lasted
}

// Going reports whether the last call failed.
func (o *Outage) Going() bool { return o.count > 0 }
