package feedback

import (
	"context"
	"errors"
	"fmt"

	"github.com/revisit-sched/revisit"
)

// Store is what Process needs of a store; store.Store satisfies it.
type Store interface {
	// VisitStatsGet returns the stats that exist among keys.
	VisitStatsGet(ctx context.Context, keys []revisit.OriginKey) ([]revisit.VisitStats, error)
	// VisitStatsUpsert writes stats; a nil field never overwrites a stored
	// value.
	VisitStatsUpsert(ctx context.Context, stats []revisit.VisitStats) error
	// QueuePositionGet returns the visit type's queue position, 0 if unset.
	QueuePositionGet(ctx context.Context, visitType string) (int64, error)
	// ListedOriginsDisable disables every listed origin of those exact
	// (url, visit_type) keys and returns how many rows it changed.
	ListedOriginsDisable(ctx context.Context, keys []revisit.OriginKey) (int, error)
}

// Process folds a batch of visit statuses into the store: it validates the
// whole batch first (an invalid status is an invalid-input error whose
// field names it, as in statuses[3].date, and nothing is read or written),
// reads the stats of every origin of the batch and the queue position of
// every visit type once, folds the batch (see Fold), disables the origins
// Fold chose, then writes the changed rows in one VisitStatsUpsert.
//
// The two writes are not one transaction, hence their order. Writing a
// visit's result makes its origin eligible again (it leaves the visits in
// flight), so stats written first would let a grab take an origin between
// its third failure and its disabling: a fourth visit. Disabled first, the
// origin stays out of every grab. And if the stats write fails, processing
// the batch again redoes both writes, the stats being unchanged.
func Process(ctx context.Context, st Store, batch []VisitStatus, rnd func() float64) (Result, error) {
	for i, m := range batch {
		if err := m.Validate(); err != nil {
			return Result{}, indexed(err, i)
		}
	}
	var keys []revisit.OriginKey
	var types []string
	seenKey := make(map[revisit.OriginKey]bool)
	seenType := make(map[string]bool)
	for _, m := range batch {
		if !m.final() {
			continue
		}
		if k := m.Key(); !seenKey[k] {
			seenKey[k] = true
			keys = append(keys, k)
		}
		if !seenType[m.VisitType] {
			seenType[m.VisitType] = true
			types = append(types, m.VisitType)
		}
	}
	if len(keys) == 0 {
		return Fold(nil, nil, batch, rnd), nil
	}

	rows, err := st.VisitStatsGet(ctx, keys)
	if err != nil {
		return Result{}, fmt.Errorf("reading visit stats of %d origins: %w", len(keys), err)
	}
	stats := make(map[revisit.OriginKey]revisit.VisitStats, len(rows))
	for _, s := range rows {
		stats[s.Key()] = s
	}
	positions := make(map[string]int64, len(types))
	for _, vt := range types {
		p, err := st.QueuePositionGet(ctx, vt)
		if err != nil {
			return Result{}, fmt.Errorf("reading the queue position of visit type %s: %w", vt, err)
		}
		positions[vt] = p
	}

	res := Fold(stats, positions, batch, rnd)
	if len(res.Disable) > 0 {
		n, err := st.ListedOriginsDisable(ctx, res.Disable)
		if err != nil {
			return Result{}, fmt.Errorf("disabling %d origins: %w", len(res.Disable), err)
		}
		res.Disabled = n
	}
	if len(res.Stats) > 0 {
		if err := st.VisitStatsUpsert(ctx, res.Stats); err != nil {
			return Result{}, fmt.Errorf("writing visit stats of %d origins (%d origins disabled already): %w",
				len(res.Stats), res.Disabled, err)
		}
	}
	return res, nil
}

// indexed names the batch element an invalid-input error comes from in its
// field: statuses[3].url.
func indexed(err error, i int) error {
	var e *revisit.Error
	if !errors.As(err, &e) {
		return fmt.Errorf("statuses[%d]: %w", i, err)
	}
	field := fmt.Sprintf("statuses[%d]", i)
	if e.Field != "" {
		field += "." + e.Field
	}
	return &revisit.Error{Code: e.Code, Field: field, Message: e.Message}
}
