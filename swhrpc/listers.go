package swhrpc

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/revisit-sched/revisit"
)

// Listers: get, get or create, update (optimistic lock on updated), the
// visit types of a lister's origins, and listings.

func (s *Server) listerGet(p *record) call {
	name := required(p, "name", asStr)
	instance := field(p, "instance_name", asInstanceName, "")
	return func(ctx context.Context) (any, error) {
		l, err := s.st.ListerGet(ctx, name, instance)
		if errors.Is(err, revisit.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return listerModel(l)
	}
}

func (s *Server) listerGetOrCreate(p *record) call {
	name := required(p, "name", asStr)
	instance := field(p, "instance_name", asInstanceName, "")
	prefix := field(p, "first_visits_queue_prefix", optional(asStr), nil)
	return func(ctx context.Context) (any, error) {
		var l revisit.Lister
		var err error
		if prefix != nil {
			l, err = s.st.ListerGetOrCreateForFirstVisits(ctx, name, instance, *prefix)
		} else {
			l, err = s.st.ListerGetOrCreate(ctx, name, instance)
		}
		if err != nil {
			return nil, err
		}
		return listerModel(l)
	}
}

func (s *Server) listerUpdate(p *record) call {
	l := required(p, "lister", readLister)
	return func(ctx context.Context) (any, error) {
		updated, err := s.st.ListerUpdate(ctx, l)
		if err != nil {
			return nil, err
		}
		return listerModel(updated)
	}
}

func (s *Server) listerVisitTypes(p *record) call {
	l := required(p, "lister", readLister)
	return func(ctx context.Context) (any, error) {
		vts, err := s.st.ListerVisitTypes(ctx, l.ID)
		if err != nil {
			return nil, err
		}
		return vts, nil
	}
}

func (s *Server) listersGet(p *record) call {
	toSchedule := field(p, "with_first_visits_to_schedule", asBool, false)
	return func(ctx context.Context) (any, error) {
		ls, err := s.st.ListerList(ctx)
		if err != nil {
			return nil, err
		}
		if toSchedule {
			ls = slices.DeleteFunc(ls, func(l revisit.Lister) bool { return !firstVisitsToSchedule(l) })
		}
		return listerModels(ls)
	}
}

// firstVisitsToSchedule reports whether the first visits of a lister's last
// listing wait to be sent: it has a first-visits queue, finished a listing,
// and its first visits were not scheduled since.
func firstVisitsToSchedule(l revisit.Lister) bool {
	return l.FirstVisitsQueuePrefix != nil && l.LastListingFinishedAt != nil && l.FirstVisitsScheduledAt == nil
}

func (s *Server) listersGetByID(p *record) call {
	ids := required(p, "lister_ids", each(MaxBatch, asUUID))
	return func(ctx context.Context) (any, error) {
		ls, err := s.st.ListerGetByIDs(ctx, ids)
		if err != nil {
			return nil, err
		}
		return listerModels(ls)
	}
}

// listerModels are listers on the wire in creation order (created, then
// id), the order of upstream's table, which listers and tools read.
func listerModels(ls []revisit.Lister) (any, error) {
	ls = slices.Clone(ls)
	slices.SortStableFunc(ls, func(a, b revisit.Lister) int {
		return cmp.Or(a.Created.Compare(b.Created), bytes.Compare(a.ID[:], b.ID[:]))
	})
	out := make([]any, len(ls))
	for i, l := range ls {
		m, err := listerModel(l)
		if err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}
