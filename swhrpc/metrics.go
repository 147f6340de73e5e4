package swhrpc

import (
	"context"

	"github.com/revisit-sched/revisit"
)

// The scheduler metrics: computed on demand, per lister and visit type.

func (s *Server) metricsGet(p *record) call {
	lister := field(p, "lister_id", optional(asUUID), nil)
	vt := deref(field(p, "visit_type", optional(asStr), nil))
	return func(ctx context.Context) (any, error) {
		ms, err := s.st.MetricsGet(ctx, lister, vt)
		return metricsModels(ms), err
	}
}

func (s *Server) metricsUpdate(p *record) call {
	lister := field(p, "lister_id", optional(asUUID), nil)
	at := field(p, "timestamp", optional(asTime), nil)
	return func(ctx context.Context) (any, error) {
		now := s.now()
		if at != nil {
			now = *at
		}
		ms, err := s.st.MetricsUpdate(ctx, lister, now)
		return metricsModels(ms), err
	}
}

func metricsModels(ms []revisit.SchedulerMetrics) []any {
	out := make([]any, len(ms))
	for i, m := range ms {
		out[i] = metricsModel(m)
	}
	return out
}
