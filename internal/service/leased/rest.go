package leased

import (
	"context"
	"time"
)

// Rest is how the loop waits before its next round: D at most, less when
// what it waits for comes first. While it holds the lease, the loop renews
// it as it waits.
type Rest struct {
	// D is the longest wait.
	D time.Duration
	// Kind names what the loop rests for, in its Status (as the
	// orchestrator's "queue_full"); "" for a pause between rounds.
	Kind string
	// Wake, when set, ends the wait when it receives, though not sooner
	// than WakeSpacing after the wait began.
	Wake <-chan struct{}
	// Ready, when set, ends the wait once it reports true while the loop
	// holds the lease. It is asked every ReadyEvery, and soon after
	// Nudged's channel closes (NudgeSpacing after the previous ask at the
	// soonest); Nudged, when set, is called again before each ask, so that
	// no nudge goes unseen.
	Ready      func(context.Context) bool
	ReadyEvery time.Duration
	Nudged     func() <-chan struct{}
}

// WakeSpacing is the least time between two rounds that a Rest's Wake
// starts: a large import or a stream of results wakes a loop many times,
// and one round serves them all.
const WakeSpacing = time.Second

// NudgeSpacing is the least time between two asks of a Rest's Ready that
// nudges start: workers take messages every few milliseconds, and one
// measure serves them all.
const NudgeSpacing = 100 * time.Millisecond

// nudged returns the channel of the next nudge; nil when none comes.
func (r Rest) nudged() <-chan struct{} {
	if r.Nudged == nil {
		return nil
	}
	return r.Nudged()
}

// pause waits as r says or until stop is done, renewing the lease when due
// (renewDue) as it goes.
func (l *Loop) pause(stop context.Context, r Rest) {
	began := time.Now()
	deadline := began.Add(r.D)
	wake := r.Wake
	var nudged <-chan struct{}
	var asked, askAt time.Time // Ready
	if r.Ready != nil {
		nudged = r.nudged()
		asked, askAt = began, began.Add(r.ReadyEvery)
	}
	for {
		now := time.Now()
		if !now.Before(deadline) || stop.Err() != nil {
			return
		}
		step := deadline.Sub(now)
		if l.owning {
			step = min(step, max(l.renewDue().Sub(now), 0))
		}
		if r.Ready != nil {
			step = min(step, max(askAt.Sub(now), 0))
		}
		t := time.NewTimer(step)
		select {
		case <-stop.Done():
			t.Stop()
			return
		case <-wake:
			t.Stop()
			wake = nil
			deadline = earliest(deadline, began.Add(WakeSpacing))
			continue
		case <-nudged:
			t.Stop()
			nudged = nil
			askAt = earliest(askAt, asked.Add(NudgeSpacing))
			continue
		case <-t.C:
		}
		if l.owning && !time.Now().Before(l.renewDue()) {
			l.renewLease(stop, l.acquire)
		}
		if r.Ready != nil && !time.Now().Before(askAt) {
			nudged = r.nudged() // before the ask: no nudge goes unseen
			if l.owning && r.Ready(stop) {
				return
			}
			asked = time.Now()
			askAt = asked.Add(r.ReadyEvery)
		}
	}
}

// earliest returns the earlier of two times.
func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
