package orchestrator

import (
	"context"
	"fmt"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/service/leased"
)

// restPaused is the Kind of the rest of a loop whose visit type an
// operator paused (store.Store.VisitTypePauseSet).
const restPaused = "paused"

// paused reads whether the visit type is paused, and logs when that
// changed since the last round. A paused loop settles the previous
// round's publication and rests until the store says the visit type is
// resumed, asked every QueuePollInterval (NoOriginsBackoff at most, then
// it reads again): no round runs, so no visit is sent nor declared lost.
func (l *loop) paused(ctx context.Context) (leased.Rest, bool, error) {
	p, err := l.pauseOf(ctx)
	if err != nil {
		return leased.Rest{}, false, err
	}
	switch was := l.pause.Swap(p); {
	case p != nil && was == nil:
		l.log.Info("paused: no round until resumed", "by", p.By, "at", p.At)
	case p == nil && was != nil:
		l.log.Info("resumed: rounds run again")
	}
	if p == nil {
		return leased.Rest{}, false, nil
	}
	if err := l.settle(); err != nil {
		return leased.Rest{}, true, err
	}
	return leased.Rest{D: l.o.cfg.NoOriginsBackoff + l.jitter(), Kind: restPaused,
		Ready: l.resumed, ReadyEvery: l.o.cfg.QueuePollInterval}, true, nil
}

// resumed reports whether the visit type is no longer paused; a store
// that cannot tell keeps it paused until the rest ends.
func (l *loop) resumed(ctx context.Context) bool {
	p, err := l.pauseOf(ctx)
	return err == nil && p == nil
}

// pauseOf returns the visit type's pause; nil when it is not paused.
func (l *loop) pauseOf(ctx context.Context) (*revisit.Pause, error) {
	ps, err := l.o.store.VisitTypePauseList(ctx)
	if err != nil {
		return nil, fmt.Errorf("paused visit types: %w", err)
	}
	for _, p := range ps {
		if p.VisitType == l.visitType {
			return &p, nil
		}
	}
	return nil, nil
}
