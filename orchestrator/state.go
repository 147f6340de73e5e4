package orchestrator

import (
	"time"

	"github.com/revisit-sched/revisit/internal/service/leased"
)

// The kinds of the rests of a loop (leased.Rest.Kind).
const (
	restQueueFull = "queue_full"
	restNoOrigins = "no_origins"
)

// LoopStateName is what a visit type's loop is doing, in a word.
type LoopStateName string

// The states of a loop.
const (
	// LoopStarting: the loop has not asked for the visit type's lease yet.
	LoopStarting LoopStateName = "starting"
	// LoopFilling: the loop runs rounds that fill the queue.
	LoopFilling LoopStateName = "filling"
	// LoopQueueFull: the queue has no room for a round; it is measured
	// every CheckEvery, and the next round runs by NextRound at the latest.
	LoopQueueFull LoopStateName = "queue_full"
	// LoopNoOrigins: no origin was eligible; the next round runs by
	// NextRound, or sooner when the store tells of new eligible origins.
	LoopNoOrigins LoopStateName = "no_origins"
	// LoopPaused: an operator paused the visit type (PausedBy, PausedAt):
	// no round runs until it is resumed, which the loop asks the store
	// every CheckEvery.
	LoopPaused LoopStateName = "paused"
	// LoopStandingBy: another process (Holder) drives the visit type; the
	// lease is asked for again by NextRound.
	LoopStandingBy LoopStateName = "standing_by"
	// LoopWaiting: a dependency is unavailable (Reason, Error); the loop
	// tries again by NextRound.
	LoopWaiting LoopStateName = "waiting"
	// LoopUnhealthy: the loop failed repeatedly (Error is the last
	// failure) and is restarted with backoff.
	LoopUnhealthy LoopStateName = "unhealthy"
	// LoopStopped: the loop has stopped.
	LoopStopped LoopStateName = "stopped"
)

// LoopState is the state of one visit type's loop, for the console.
type LoopState struct {
	State LoopStateName
	// Since is when the loop entered the state.
	Since time.Time
	// NextRound is when the loop acts again at the latest (a round, or an
	// attempt to take the lease); zero while a round runs.
	NextRound time.Time
	// CheckEvery is how often a full queue is measured.
	CheckEvery time.Duration
	// Holder is the process that drives the visit type, while standing by.
	Holder string
	// Reason and Error say why the loop waits, or its last failure.
	Reason, Error string
	// PausedBy and PausedAt say who paused the visit type and when, while
	// it is paused.
	PausedBy string
	PausedAt time.Time
}

// LoopStates returns the state of the loop of every visit type this
// orchestrator drives (none before Run).
func (o *Orchestrator) LoopStates() map[string]LoopState {
	o.loopsMu.Lock()
	loops := o.loops
	o.loopsMu.Unlock()
	health := o.Health()
	out := make(map[string]LoopState, len(loops))
	for vt, l := range loops {
		st := stateOf(l.leased.Status())
		if p := l.pause.Load(); st.State == LoopPaused && p != nil {
			st.PausedBy, st.PausedAt = p.By, p.At
		}
		if h, ok := health[vt]; ok && !h.Healthy {
			st.State, st.Error = LoopUnhealthy, h.LastError
		}
		out[vt] = st
	}
	return out
}

// stateOf names the status of a loop's lease loop.
func stateOf(s leased.Status) LoopState {
	st := LoopState{Since: s.Since, NextRound: s.Until, Holder: s.Holder, Reason: s.Reason, Error: s.Err}
	switch s.Activity {
	case leased.Starting, "":
		st.State = LoopStarting
	case leased.Working:
		st.State = LoopFilling
	case leased.Resting:
		switch s.Kind {
		case restQueueFull:
			st.State, st.CheckEvery = LoopQueueFull, s.CheckEvery
		case restNoOrigins:
			st.State = LoopNoOrigins
		case restPaused:
			st.State, st.CheckEvery, st.NextRound = LoopPaused, s.CheckEvery, time.Time{}
		default:
			st.State = LoopFilling
		}
	case leased.StandingBy:
		st.State = LoopStandingBy
	case leased.Waiting:
		st.State = LoopWaiting
	case leased.Stopped:
		st.State = LoopStopped
	}
	return st
}
