package leased

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/revisit-sched/revisit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// leases is one lease in memory.
type leases struct {
	mu       sync.Mutex
	owner    string
	acquires int
}

func (s *leases) LeaseAcquire(_ context.Context, _, owner string, _ time.Duration) (revisit.Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.acquires++
	if s.owner == "" {
		s.owner = owner
	}
	return revisit.Lease{Owner: s.owner}, nil
}

func (s *leases) LeaseRelease(_ context.Context, _, owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.owner == owner {
		s.owner = ""
	}
	return nil
}

func (s *leases) holder() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.owner
}

// work counts recoveries and rounds; round returns the error of each
// round, nil once they are used up.
type work struct {
	mu                sync.Mutex
	recovered, rounds int
	errs              []error
	loop              *Loop
}

func (w *work) Recover(context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.recovered++
	return nil
}

func (w *work) Round(context.Context) (Rest, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rounds++
	if len(w.errs) > 0 {
		err := w.errs[0]
		w.errs = w.errs[1:]
		if err != nil {
			w.loop.MarkDirty()
		}
		return Rest{D: time.Millisecond}, err
	}
	return Rest{D: time.Millisecond}, nil
}

func (w *work) counts() (int, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.recovered, w.rounds
}

func run(t *testing.T, st *leases, w *work, owner string) (stop func() error) {
	t.Helper()
	w.loop = New(Config{Leases: st, Name: "test", Owner: owner, TTL: 30 * time.Millisecond,
		MaxBackoff: 5 * time.Millisecond}, w)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.loop.Run(ctx, context.Background(), func() {}) }()
	return func() error {
		cancel()
		return <-done
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestTakesRecoversRunsAndHandsOver(t *testing.T) {
	st := &leases{}
	w := &work{}
	stop := run(t, st, w, "a")
	waitFor(t, "rounds", func() bool { _, n := w.counts(); return n >= 3 })
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if r, _ := w.counts(); r != 1 {
		t.Errorf("recovered %d times, want once, on taking the lease", r)
	}
	if h := st.holder(); h != "" {
		t.Errorf("lease held by %q after stop, want released", h)
	}
}

func TestStandsByWhileAnotherHolds(t *testing.T) {
	st := &leases{owner: "b"}
	w := &work{}
	stop := run(t, st, w, "a")
	waitFor(t, "asks", func() bool { st.mu.Lock(); defer st.mu.Unlock(); return st.acquires >= 2 })
	if _, n := w.counts(); n != 0 {
		t.Errorf("%d rounds while standing by", n)
	}
	st.mu.Lock()
	st.owner = ""
	st.mu.Unlock()
	waitFor(t, "a round once the lease is free", func() bool { _, n := w.counts(); return n >= 1 })
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestWaitsRecoversAfterAFailedRoundAndFailsOnABug(t *testing.T) {
	st := &leases{}
	bug := errors.New("bug")
	w := &work{errs: []error{revisit.Errorf(revisit.CodeUnavailable, "db down"), nil, bug}}
	stop := run(t, st, w, "a")
	waitFor(t, "three rounds", func() bool { _, n := w.counts(); return n >= 3 })
	if err := stop(); !errors.Is(err, bug) {
		t.Fatalf("Run: %v, want the bug", err)
	}
	if r, _ := w.counts(); r != 2 {
		t.Errorf("recovered %d times, want twice: on taking the lease and after the failed round", r)
	}
}

func TestRenewsTheLeaseDuringALongRound(t *testing.T) {
	st := &leases{}
	w := &slowWork{d: 100 * time.Millisecond}
	l := New(Config{Leases: st, Name: "test", Owner: "a", TTL: 30 * time.Millisecond}, w)
	ctx, cancel := context.WithCancel(context.Background())
	w.done = cancel
	if err := l.Run(ctx, context.Background(), func() {}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.acquires < 3 {
		t.Errorf("%d lease calls during a round of 10 renewal periods", st.acquires)
	}
}

// slowWork runs one round of d, then stops the loop.
type slowWork struct {
	d    time.Duration
	done func()
}

func (w *slowWork) Recover(context.Context) error { return nil }

func (w *slowWork) Round(context.Context) (Rest, error) {
	time.Sleep(w.d)
	w.done()
	return Rest{}, nil
}
