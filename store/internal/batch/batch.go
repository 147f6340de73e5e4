// Package batch prepares the inputs and outputs that both stores share:
// validated and deduplicated batches, page limits and keyset pages.
package batch

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/pagetoken"
	"github.com/revisit-sched/revisit/store/internal/recent"
)

// ListedOrigins validates a batch, naming the first bad origin by its index
// (origins[3].url), and returns it deduplicated on (lister_id, url,
// visit_type), the last duplicate winning, sorted by that key so that
// concurrent writers lock rows in one order. Times are truncated to µs and a
// nil ExtraLoaderArguments becomes an empty object.
func ListedOrigins(origins []revisit.ListedOrigin) ([]revisit.ListedOrigin, error) {
	last := make(map[listedKey]int, len(origins))
	for i, o := range origins {
		if err := o.Validate(); err != nil {
			return nil, indexed(err, "origins", i)
		}
		last[keyOf(o)] = i
	}
	out := make([]revisit.ListedOrigin, 0, len(last))
	for i, o := range origins {
		if last[keyOf(o)] != i {
			continue
		}
		o.LastUpdate = revisit.MicrosecondPtr(o.LastUpdate)
		if o.ExtraLoaderArguments == nil {
			o.ExtraLoaderArguments = map[string]any{}
		}
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b revisit.ListedOrigin) int {
		return cmp.Or(slices.Compare(a.ListerID[:], b.ListerID[:]), cmp.Compare(a.URL, b.URL), cmp.Compare(a.VisitType, b.VisitType))
	})
	return out, nil
}

// InInputOrder returns the rows of stored, the rows as written of a batch
// made from input by ListedOrigins, in the order of their keys' first
// occurrence in input.
func InInputOrder(input, stored []revisit.ListedOrigin) []revisit.ListedOrigin {
	at := make(map[listedKey]int, len(stored))
	for i, o := range stored {
		at[keyOf(o)] = i
	}
	out := make([]revisit.ListedOrigin, 0, len(stored))
	for _, o := range input {
		k := keyOf(o)
		if i, ok := at[k]; ok {
			out = append(out, stored[i])
			delete(at, k)
		}
	}
	return out
}

// listedKey is the key of a listed origin: (lister_id, url, visit_type).
type listedKey struct {
	lister   uuid.UUID
	url, typ string
}

func keyOf(o revisit.ListedOrigin) listedKey { return listedKey{o.ListerID, o.URL, o.VisitType} }

// VisitStatsWrites validates a batch of stats writes, naming the first bad
// one by its index (stats[3].url), and returns it with one write per
// (url, visit_type), the writes of one origin merged in their order
// (thenWrite), sorted by that key so that concurrent writers lock rows in
// one order, with times truncated to µs.
func VisitStatsWrites(writes []revisit.VisitStatsWrite) ([]revisit.VisitStatsWrite, error) {
	merged := make(map[revisit.OriginKey]int, len(writes))
	out := make([]revisit.VisitStatsWrite, 0, len(writes))
	for i, w := range writes {
		if err := validateStats(w.Stats); err != nil {
			return nil, indexed(err, "stats", i)
		}
		if j, ok := merged[w.Stats.Key()]; ok {
			out[j] = thenWrite(out[j], w)
			continue
		}
		merged[w.Stats.Key()] = len(out)
		out = append(out, w)
	}
	for i := range out {
		w := &out[i]
		s := &w.Stats
		s.LastSuccessful = revisit.MicrosecondPtr(s.LastSuccessful)
		s.LastVisit = revisit.MicrosecondPtr(s.LastVisit)
		s.LastScheduled = revisit.MicrosecondPtr(s.LastScheduled)
		w.IfLastVisit = revisit.MicrosecondPtr(w.IfLastVisit)
	}
	slices.SortFunc(out, func(a, b revisit.VisitStatsWrite) int {
		return cmp.Or(cmp.Compare(a.Stats.URL, b.Stats.URL), cmp.Compare(a.Stats.VisitType, b.Stats.VisitType))
	})
	return out, nil
}

// thenWrite is the one write that does what first then next, two writes of
// one origin, do in turn: next's fields, and first's where next has none
// (a write never overwrites a value with none); the condition of the
// first, and the disabling of either.
func thenWrite(first, next revisit.VisitStatsWrite) revisit.VisitStatsWrite {
	a, b := first.Stats, next.Stats
	b.LastSuccessful = cmp.Or(b.LastSuccessful, a.LastSuccessful)
	b.LastVisit = cmp.Or(b.LastVisit, a.LastVisit)
	b.LastVisitStatus = cmp.Or(b.LastVisitStatus, a.LastVisitStatus)
	b.LastScheduled = cmp.Or(b.LastScheduled, a.LastScheduled)
	b.NextVisitQueuePosition = cmp.Or(b.NextVisitQueuePosition, a.NextVisitQueuePosition)
	if b.LastSnapshot == nil {
		b.LastSnapshot = a.LastSnapshot
	}
	if b.Recent == nil {
		b.Recent = a.Recent
	}
	first.Stats, first.Disable = b, first.Disable || next.Disable
	return first
}

// Unguarded returns writes of stats that happen whatever the stored stats.
func Unguarded(stats []revisit.VisitStats) []revisit.VisitStatsWrite {
	writes := make([]revisit.VisitStatsWrite, len(stats))
	for i, s := range stats {
		writes[i].Stats = s
	}
	return writes
}

func validateStats(s revisit.VisitStats) error {
	if err := revisit.ValidateOriginURL(s.URL); err != nil {
		return err
	}
	if err := revisit.ValidateVisitType(s.VisitType); err != nil {
		return err
	}
	if s.LastVisitStatus != nil && !s.LastVisitStatus.Valid() {
		return revisit.Invalidf("last_visit_status", "%q is not successful, failed or not_found", *s.LastVisitStatus)
	}
	if s.NextPositionOffset < 0 || s.NextPositionOffset > 10 {
		return revisit.Invalidf("next_position_offset", "%d is outside [0, 10]", s.NextPositionOffset)
	}
	if s.SuccessiveVisits < 1 {
		return revisit.Invalidf("successive_visits", "%d is less than 1", s.SuccessiveVisits)
	}
	return recent.Validate(s.Recent)
}

// indexed prefixes the field of an invalid-input error with the batch
// element it comes from.
func indexed(err error, name string, i int) error {
	e, ok := err.(*revisit.Error)
	if !ok {
		return err
	}
	field := fmt.Sprintf("%s[%d]", name, i)
	if e.Field != "" {
		field += "." + e.Field
	}
	return &revisit.Error{Code: e.Code, Field: field, Message: e.Message}
}

// ListerIDs returns the distinct lister ids of a batch.
func ListerIDs(origins []revisit.ListedOrigin) []uuid.UUID {
	seen := make(map[uuid.UUID]struct{})
	var ids []uuid.UUID
	for _, o := range origins {
		if _, ok := seen[o.ListerID]; !ok {
			seen[o.ListerID] = struct{}{}
			ids = append(ids, o.ListerID)
		}
	}
	return ids
}

// CheckListersKnown fails with an invalid-input error naming the first
// origin whose lister is not among known.
func CheckListersKnown(origins []revisit.ListedOrigin, known []uuid.UUID) error {
	set := make(map[uuid.UUID]struct{}, len(known))
	for _, id := range known {
		set[id] = struct{}{}
	}
	for i, o := range origins {
		if _, ok := set[o.ListerID]; !ok {
			return revisit.Invalidf(fmt.Sprintf("origins[%d].lister_id", i), "lister %s does not exist", o.ListerID)
		}
	}
	return nil
}

// PageLimit returns the page size to use for a requested limit: its
// default (revisit.PageSize) for 0, the limit itself once checked.
func PageLimit(limit int) (int, error) {
	if limit == 0 {
		return revisit.PageSize.Def, nil
	}
	return limit, revisit.PageSize.Check(limit)
}

// PageStart returns where a page of listed origins f selects starts: after
// the full key of f.PageToken, after every row of f.AfterListerURL, or at
// the beginning (both nil). Both at once is an invalid-input error naming
// page_token.
func PageStart(f revisit.ListedOriginFilter) (*pagetoken.Key, *revisit.ListerURL, error) {
	switch {
	case f.PageToken != "" && f.AfterListerURL != nil:
		return nil, nil, revisit.Invalidf("page_token", "give a page token or a lister and URL to resume after, not both")
	case f.PageToken != "":
		k, err := pagetoken.Decode(f.PageToken)
		if err != nil {
			return nil, nil, err
		}
		return &k, nil, nil
	case f.AfterListerURL != nil:
		if err := revisit.ValidateText("page_token", f.AfterListerURL.URL); err != nil {
			return nil, nil, err
		}
		return nil, f.AfterListerURL, nil
	}
	return nil, nil, nil
}

// Page turns up to limit+1 rows read in key order into a page whose token is
// set exactly when a row follows.
func Page(origins []revisit.ListedOrigin, limit int) revisit.ListedOriginPage {
	if len(origins) <= limit {
		return revisit.ListedOriginPage{Origins: origins}
	}
	last := origins[limit-1]
	return revisit.ListedOriginPage{
		Origins:       origins[:limit],
		NextPageToken: pagetoken.Encode(pagetoken.Key{ListerID: last.ListerID, URL: last.URL, VisitType: last.VisitType}),
	}
}

// MessageIDs returns the ids that are UUIDs, parsed, dropping the others: no
// stored visit has such an id, so they match nothing.
func MessageIDs(ids []string) []uuid.UUID {
	out := make([]uuid.UUID, 0, len(ids))
	for _, s := range ids {
		if id, err := uuid.Parse(s); err == nil {
			out = append(out, id)
		}
	}
	return out
}

// OriginResults validates the results of a VisitsCloseByOrigin call,
// naming the first bad one by its index (results[3].date), refuses more
// than revisit.MaxOriginResults, and returns one result per origin, the
// latest, dated to the µs, sorted by key so that concurrent callers close
// rows in one order.
func OriginResults(results []revisit.OriginResult) ([]revisit.OriginResult, error) {
	if len(results) > revisit.MaxOriginResults {
		return nil, revisit.Invalidf("results", "at most %d origins a call, not %d", revisit.MaxOriginResults, len(results))
	}
	latest := make(map[revisit.OriginKey]time.Time, len(results))
	for i, r := range results {
		if err := validateOriginResult(r); err != nil {
			return nil, indexed(err, "results", i)
		}
		if d, seen := latest[r.Key]; !seen || r.Date.After(d) {
			latest[r.Key] = r.Date
		}
	}
	out := make([]revisit.OriginResult, 0, len(latest))
	for k, d := range latest {
		out = append(out, revisit.OriginResult{Key: k, Date: revisit.Microsecond(d)})
	}
	slices.SortFunc(out, func(a, b revisit.OriginResult) int {
		return cmp.Or(cmp.Compare(a.Key.URL, b.Key.URL), cmp.Compare(a.Key.VisitType, b.Key.VisitType))
	})
	return out, nil
}

// validateOriginResult checks a result's origin key and date.
func validateOriginResult(r revisit.OriginResult) error {
	if err := revisit.ValidateOriginURL(r.Key.URL); err != nil {
		return err
	}
	if err := revisit.ValidateVisitType(r.Key.VisitType); err != nil {
		return err
	}
	if r.Date.IsZero() {
		return revisit.Invalidf("date", "missing")
	}
	return nil
}

// ImportedListers checks listers to import as they are: each names itself
// (id, name) and holds a JSON object as its state; the first bad one is
// named by its index (listers[2].current_state).
func ImportedListers(ls []revisit.Lister) error {
	for i, l := range ls {
		var err error
		switch {
		case l.ID == uuid.Nil:
			err = revisit.Invalidf("id", "missing")
		case l.Name == "":
			err = revisit.Invalidf("name", "missing")
		case l.Created.IsZero() || l.Updated.IsZero():
			err = revisit.Invalidf("updated", "created and updated are needed")
		default:
			var state map[string]json.RawMessage
			if json.Unmarshal(l.CurrentState, &state) != nil || state == nil {
				err = revisit.Invalidf("current_state", "must be a JSON object")
			}
		}
		if err == nil {
			err = revisit.ValidateFirstVisitsQueuePrefix(l.FirstVisitsQueuePrefix)
		}
		if err != nil {
			return indexed(err, "listers", i)
		}
	}
	return nil
}

// ListerTaken is the error of importing the i-th lister l where another
// lister of its name and instance has another id.
func ListerTaken(i int, l revisit.Lister) error {
	return &revisit.Error{Code: revisit.CodeConflict, Field: fmt.Sprintf("listers[%d]", i),
		Message: fmt.Sprintf("lister %s/%s exists with another id than %s", l.Name, l.InstanceName, l.ID)}
}
