package feedback

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/revisit-sched/revisit"
)

// Store is what Process needs of a store; store.Store satisfies it.
type Store interface {
	// VisitStatsGet returns the stats that exist among keys.
	VisitStatsGet(ctx context.Context, keys []revisit.OriginKey) ([]revisit.VisitStats, error)
	// VisitStatsWrite writes stats, each only if its guard holds, with the
	// disabling they ask for, in one transaction; it returns the keys of
	// the writes skipped because their stats changed since they were read.
	VisitStatsWrite(ctx context.Context, writes []revisit.VisitStatsWrite) (revisit.VisitStatsWriteResult, error)
	// QueuePositionGet returns the visit type's queue position, 0 if unset.
	QueuePositionGet(ctx context.Context, visitType string) (int64, error)
	// VisitsCloseByOrigin closes the sent and lost visits of each result's
	// origin scheduled at or before its date, and returns them.
	VisitsCloseByOrigin(ctx context.Context, results []revisit.OriginResult) ([]revisit.Visit, error)
}

// maxRounds bounds how many times Process folds the results of an origin
// that other writers keep changing under it.
const maxRounds = 20

// Process folds a batch of visit statuses into the store: it validates the
// whole batch first, dates against the horizon h (an invalid status is an
// invalid-input error whose field names it, as in statuses[3].date, and
// nothing is read or written),
// reads the stats of every origin of the batch and the queue position of
// every visit type once, folds the batch (see Fold), and writes the changed
// rows, disabling the origins Fold chose, in one VisitStatsWrite. Then it
// closes the visits in flight that the batch's final statuses end (see
// closeVisits).
//
// Process takes no lock: each write is guarded by the last_visit its fold
// read, so that several Process calls (API requests, event consumers, other
// replicas) can run at once. The origins another writer changed in between
// are read and folded again, with only their own statuses, until their
// writes hold; no result is lost or applied twice.
func Process(ctx context.Context, st Store, batch []VisitStatus, rnd func() float64, h Horizon) (Result, error) {
	statuses := batch
	for i, m := range batch {
		if err := m.Validate(h); err != nil {
			return Result{}, indexed(err, i)
		}
	}
	var total Result
	for round := 1; ; round++ {
		res, stale, err := processOnce(ctx, st, batch, rnd)
		if err != nil {
			return Result{}, err
		}
		total.add(res)
		if len(stale) == 0 {
			if total.Closed, err = closeVisits(ctx, st, statuses); err != nil {
				return Result{}, err
			}
			return total, nil
		}
		if round == maxRounds {
			return Result{}, revisit.Errorf(revisit.CodeConflict,
				"the stats of %d origins changed under each of %d attempts to fold their results", len(stale), round)
		}
		batch = ofKeys(batch, stale)
	}
}

// processOnce reads, folds and writes the batch once; it returns the result
// of the origins written and the keys of those whose stats had changed
// since they were read (none of their statuses is counted).
func processOnce(ctx context.Context, st Store, batch []VisitStatus, rnd func() float64) (Result, map[revisit.OriginKey]bool, error) {
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
		return Fold(nil, nil, batch, rnd), nil, nil
	}

	rows, err := st.VisitStatsGet(ctx, keys)
	if err != nil {
		return Result{}, nil, fmt.Errorf("reading visit stats of %d origins: %w", len(keys), err)
	}
	stats := make(map[revisit.OriginKey]revisit.VisitStats, len(rows))
	for _, s := range rows {
		stats[s.Key()] = s
	}
	positions := make(map[string]int64, len(types))
	for _, vt := range types {
		p, err := st.QueuePositionGet(ctx, vt)
		if err != nil {
			return Result{}, nil, fmt.Errorf("reading the queue position of visit type %s: %w", vt, err)
		}
		positions[vt] = p
	}

	res := Fold(stats, positions, batch, rnd)
	if len(res.Stats) == 0 {
		return res, nil, nil
	}
	disable := make(map[revisit.OriginKey]bool, len(res.Disable))
	for _, k := range res.Disable {
		disable[k] = true
	}
	writes := make([]revisit.VisitStatsWrite, len(res.Stats))
	for i, s := range res.Stats {
		writes[i] = revisit.VisitStatsWrite{Stats: s, Guarded: true, IfLastVisit: stats[s.Key()].LastVisit,
			Disable: disable[s.Key()]}
	}
	w, err := st.VisitStatsWrite(ctx, writes)
	if err != nil {
		return Result{}, nil, fmt.Errorf("writing visit stats of %d origins: %w", len(writes), err)
	}
	res.Disabled = w.Disabled
	if len(w.Stale) == 0 {
		return res, nil, nil
	}
	stale := make(map[revisit.OriginKey]bool, len(w.Stale))
	for _, k := range w.Stale {
		stale[k] = true
	}
	return res.without(stale, Fold(stats, positions, ofKeys(batch, stale), rnd)), stale, nil
}

// closeVisits closes the visits in flight that final statuses without a
// MessageID end: of each origin, those scheduled at or before its latest
// such status (store.VisitStore.VisitsCloseByOrigin), at most
// revisit.MaxOriginResults origins a call. It returns how many it closed.
//
// Every final status closes, folded or ignored as late or duplicate: a
// status already folded still ends the visits dispatched before it (its
// batch replayed after a failure between the write of the stats and this
// close, or the same result come by two paths), and a late one is the end
// of an older visit all the same. A status with a MessageID leaves the
// visits to its path, which closes that one by its id: no other visit of
// the origin is closed for it.
func closeVisits(ctx context.Context, st Store, batch []VisitStatus) (int, error) {
	latest := make(map[revisit.OriginKey]int)
	var results []revisit.OriginResult
	for _, m := range batch {
		if !m.final() || m.MessageID != "" {
			continue
		}
		i, seen := latest[m.Key()]
		switch {
		case !seen:
			latest[m.Key()] = len(results)
			results = append(results, revisit.OriginResult{Key: m.Key(), Date: m.Date})
		case m.Date.After(results[i].Date):
			results[i].Date = m.Date
		}
	}
	closed := 0
	for chunk := range slices.Chunk(results, revisit.MaxOriginResults) {
		visits, err := st.VisitsCloseByOrigin(ctx, chunk)
		if err != nil {
			return closed, fmt.Errorf("closing the visits in flight of %d origins: %w", len(chunk), err)
		}
		closed += len(visits)
	}
	return closed, nil
}

// ofKeys returns the statuses of the batch whose origin is among keys.
func ofKeys(batch []VisitStatus, keys map[revisit.OriginKey]bool) []VisitStatus {
	var out []VisitStatus
	for _, m := range batch {
		if keys[m.Key()] {
			out = append(out, m)
		}
	}
	return out
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
