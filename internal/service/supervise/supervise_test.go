package supervise

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/revisit-sched/revisit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func fast() Config {
	return Config{GracePeriod: 100 * time.Millisecond, RestartMin: time.Millisecond, RestartMax: 5 * time.Millisecond,
		UnhealthyAfter: 3}
}

func TestRunReturnsWhenEveryLoopIsDown(t *testing.T) {
	var restarts atomic.Int32
	cfg := fast()
	cfg.OnRestart = func(string) { restarts.Add(1) }
	s := New(cfg)
	failing := func(stop, hard context.Context, healthy func()) error { return errors.New("boom") }
	err := s.Run(context.Background(), map[string]Loop{"a": failing, "b": failing})
	if !errors.Is(err, ErrAllDown) {
		t.Fatalf("Run: %v", err)
	}
	if h := s.Health()["a"]; h.Healthy || h.Failures < 3 || h.LastError != "boom" {
		t.Errorf("health of a: %+v", h)
	}
	if restarts.Load() < 6 {
		t.Errorf("%d restarts", restarts.Load())
	}
}

func TestRunRestartsAndStopsWithinTheGracePeriod(t *testing.T) {
	s := New(fast())
	var runs atomic.Int32
	flaky := func(stop, hard context.Context, healthy func()) error {
		if runs.Add(1) == 1 {
			return errors.New("first run fails")
		}
		healthy()
		<-stop.Done()
		<-hard.Done() // work that only ends with the grace period
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, map[string]Loop{"flaky": flaky}) }()
	for runs.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	for !s.Health()["flaky"].Healthy || s.Health()["flaky"].Failures != 0 {
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if d := time.Since(start); d < 100*time.Millisecond || d > 2*time.Second {
		t.Errorf("stopped after %s, want the 100ms grace period", d)
	}
}

func TestClassify(t *testing.T) {
	for err, reason := range map[error]string{
		revisit.Errorf(revisit.CodeUnavailable, "db down"):            "store_unavailable",
		fmt.Errorf("grab: %w", context.DeadlineExceeded):              "timeout",
		&WaitError{Reason: "publish_failed", Err: errors.New("nope")}: "publish_failed",
	} {
		var werr *WaitError
		if !errors.As(Classify(err), &werr) || werr.Reason != reason {
			t.Errorf("Classify(%v) = %v, want reason %s", err, Classify(err), reason)
		}
	}
	if err := errors.New("bug"); Classify(err) != err || Classify(nil) != nil {
		t.Error("other errors must pass unchanged")
	}
}

func TestBackoffDoublesUpToMaxAndResets(t *testing.T) {
	b := Backoff{Max: 5 * time.Second}
	var got []time.Duration
	for range 5 {
		got = append(got, b.Next())
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	if !slices.Equal(got, want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
	b.Reset()
	if d := b.Next(); d != time.Second {
		t.Fatalf("after Reset: %v, want 1s", d)
	}
}
