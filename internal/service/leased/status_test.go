package leased

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/revisit-sched/revisit/internal/service/supervise"
)

// restWork rests for an hour after each round, asking every 50 ms whether
// to end early (never), once its first rounds' errors are used up.
type restWork struct{ work }

func (w *restWork) Round(ctx context.Context) (Rest, error) {
	if _, err := w.work.Round(ctx); err != nil {
		return Rest{}, err
	}
	return Rest{D: time.Hour, Kind: "queue_full", Ready: func(context.Context) bool { return false },
		ReadyEvery: 50 * time.Millisecond}, nil
}

func TestStatusSaysWhatTheLoopDoes(t *testing.T) {
	st := &leases{owner: "b"}
	w := &restWork{work{errs: []error{&supervise.WaitError{Reason: "depth_unknown", Err: errors.New("no broker")}}}}
	l := New(Config{Leases: st, Name: "test", Owner: "a", TTL: 30 * time.Millisecond, MaxBackoff: time.Hour}, w)
	w.loop = l
	if s := l.Status(); s.Activity != "" {
		t.Errorf("status before Run: %+v", s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx, context.Background(), func() {}) }()

	waitFor(t, "standing by", func() bool { return l.Status().Activity == StandingBy })
	if s := l.Status(); s.Holder != "b" || time.Until(s.Until) > 10*time.Millisecond {
		t.Errorf("standing by: %+v, want holder b and the next ask within TTL/3", s)
	}

	if err := st.LeaseRelease(ctx, "test", "b"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "waiting", func() bool { return l.Status().Activity == Waiting })
	if s := l.Status(); s.Reason != "depth_unknown" || s.Err != "no broker" || time.Until(s.Until) > 2*time.Second {
		t.Errorf("waiting: %+v, want its reason, error and the end of its one-second backoff", s)
	}

	waitFor(t, "resting", func() bool { return l.Status().Activity == Resting })
	s := l.Status()
	if s.Kind != "queue_full" || s.CheckEvery != 50*time.Millisecond || time.Until(s.Until) < 59*time.Minute {
		t.Errorf("resting: %+v, want the rest's kind, its checks and its end in an hour", s)
	}
	if s.Since.IsZero() || time.Since(s.Since) > time.Minute {
		t.Errorf("resting since %s", s.Since)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s := l.Status(); s.Activity != Stopped {
		t.Errorf("after Run: %+v", s)
	}
}
