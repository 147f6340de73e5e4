package swhrpc

import (
	"context"

	"github.com/revisit-sched/revisit"
)

// Visit stats, and the queue positions of the visit types.

func (s *Server) visitStatsGet(p *record) call {
	keys := required(p, "ids", each(MaxBatch, asOriginKey))
	return func(ctx context.Context) (any, error) {
		stats, err := s.st.VisitStatsGet(ctx, keys)
		if err != nil {
			return nil, err
		}
		byKey := make(map[revisit.OriginKey]revisit.VisitStats, len(stats))
		for _, st := range stats {
			byKey[st.Key()] = st
		}
		out := make([]any, 0, len(keys))
		for _, k := range keys {
			if st, ok := byKey[k]; ok {
				out = append(out, visitStatsModel(st))
			}
		}
		return out, nil
	}
}

// asOriginKey reads an origin's id: a (url, visit_type) pair.
func asOriginKey(field string, v any) (revisit.OriginKey, error) {
	pair, ok := v.([]any)
	if !ok || len(pair) != 2 {
		return revisit.OriginKey{}, wrongType(field, "a (url, visit_type) pair", v)
	}
	url, err := asStr(field+"[0]", pair[0])
	if err != nil {
		return revisit.OriginKey{}, err
	}
	vt, err := asStr(field+"[1]", pair[1])
	return revisit.OriginKey{URL: url, VisitType: vt}, err
}

func (s *Server) visitStatsUpsert(p *record) call {
	stats := required(p, "origin_visit_stats", each(MaxBatch, readVisitStats))
	return func(ctx context.Context) (any, error) {
		return nil, renamed(s.st.VisitStatsUpsert(ctx, stats), "stats", "origin_visit_stats")
	}
}

func (s *Server) visitSchedulerGet(*record) call {
	return func(ctx context.Context) (any, error) {
		positions, err := s.st.QueuePositions(ctx)
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(positions))
		for vt, p := range positions {
			out[vt] = p
		}
		return out, nil
	}
}

func (s *Server) visitSchedulerSet(p *record) call {
	vt := required(p, "visit_type", asStr)
	position := required(p, "position", asInt)
	return func(ctx context.Context) (any, error) {
		if err := revisit.ValidateVisitType(vt); err != nil {
			return nil, err
		}
		return nil, s.st.QueuePositionSet(ctx, vt, position)
	}
}
