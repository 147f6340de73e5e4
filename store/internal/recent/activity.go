package recent

import (
	"cmp"
	"slices"
	"time"

	"github.com/revisit-sched/revisit"
)

// Activity counts by visit type and minute of a window [since, until)
// what visit stats rows recall for ActivityByMinute: each origin's last
// schedule, and its results: those it keeps (its recent column), and its
// last visit when they do not hold it (a row written before its store kept
// them, or stats written without their results).
type Activity struct {
	since, until time.Time
	counts       map[revisit.MinuteCount]int64
}

// NewActivity returns an empty count of the window [since, until).
func NewActivity(since, until time.Time) *Activity {
	return &Activity{since: since, until: until, counts: map[revisit.MinuteCount]int64{}}
}

// Add counts one origin's visit stats row: its last schedule, its last
// visit and that visit's status, and its stored recent results. A recall
// is the best the store can do: stored results that do not decode (which
// reading the origin's stats reports) count as none, and its last visit
// counts alone.
func (a *Activity) Add(visitType string, lastScheduled, lastVisit *time.Time, lastStatus *revisit.VisitStatus,
	stored []byte) {
	if lastScheduled != nil {
		a.count(visitType, revisit.ActivityScheduled, "", *lastScheduled)
	}
	results, err := Decode(stored)
	if err != nil {
		results = nil
	}
	for _, r := range results {
		a.count(visitType, revisit.ActivityResult, string(r.Status), r.Date)
	}
	if lastVisit != nil && lastStatus != nil && (len(results) == 0 || !results[0].Date.Equal(*lastVisit)) {
		a.count(visitType, revisit.ActivityResult, string(*lastStatus), *lastVisit)
	}
}

// count counts one event of kind at t, if t is in the window.
func (a *Activity) count(visitType string, kind revisit.ActivityKind, label string, t time.Time) {
	if t.Before(a.since) || !t.Before(a.until) {
		return
	}
	a.counts[revisit.MinuteCount{VisitType: visitType, Kind: kind, Label: label,
		Minute: t.UTC().Truncate(time.Minute)}]++
}

// Counts returns the counts added, with others (the store's counts of
// other kinds), ordered by visit type, kind, label and minute.
func (a *Activity) Counts(others []revisit.MinuteCount) []revisit.MinuteCount {
	all := slices.Clone(others)
	for k, n := range a.counts {
		k.Count = n
		all = append(all, k)
	}
	slices.SortFunc(all, func(x, y revisit.MinuteCount) int {
		return cmp.Or(cmp.Compare(x.VisitType, y.VisitType), cmp.Compare(x.Kind, y.Kind),
			cmp.Compare(x.Label, y.Label), x.Minute.Compare(y.Minute))
	})
	return all
}
