package grabsql

import (
	"time"

	"github.com/revisit-sched/revisit"
)

// Candidate is one row of the candidate query.
type Candidate struct {
	Origin revisit.ListedOrigin
	// QueuePosition is the origin's next_visit_queue_position, if known.
	QueuePosition *int64
	// LastScheduled is the origin's last_scheduled before this grab.
	LastScheduled *time.Time
	// LastSuccessful is the row's last_successful; ID is its id.
	LastSuccessful *time.Time
	ID             int64
}

// Row is a row of the candidate query as a store scans it: a Candidate,
// or a store's own type embedding one with more of the row (PostgreSQL
// adds its address).
type Row interface {
	Base() Candidate
}

// Base returns c: a Candidate is a Row.
func (c Candidate) Base() Candidate { return c }

// Pick returns the first count candidates of distinct URLs in the order
// fetch returns them (the policy's order), so that an origin listed by
// several listers is returned once, from the lister whose row comes first;
// with everyRow, the first count rows, whatever their URLs. fetch(limit)
// must return the first limit rows of the candidate query.
//
// Pick asks for count rows first: only the rows of origins that several
// listers list can repeat a URL, and they are few, so a margin on every
// grab (it asked for 1/8 more, ~0.6 ms of a 1000-origin grab on the 10M
// set) would be paid for nothing almost always. When repeated URLs leave
// it short, it asks again for twice as many more rows as it lacks, until
// it has count origins or the rows run out.
func Pick[R Row](count int, everyRow bool, fetch func(limit int) ([]R, error)) ([]R, error) {
	if everyRow {
		return fetch(count)
	}
	limit := count
	for {
		rows, err := fetch(limit)
		if err != nil {
			return nil, err
		}
		picked := make([]R, 0, min(count, len(rows)))
		seen := make(map[string]struct{}, len(rows))
		for _, c := range rows {
			url := c.Base().Origin.URL
			if _, dup := seen[url]; dup {
				continue
			}
			seen[url] = struct{}{}
			picked = append(picked, c)
			if len(picked) == count {
				return picked, nil
			}
		}
		if len(rows) < limit {
			return picked, nil
		}
		limit += 2*(count-len(picked)) + 16
	}
}

// QueuePositionOf returns the queue position an origins_without_last_update
// grab of rows leaves its visit type at (at least): the largest known
// position among rows, 0 when none is known (origins never visited). It
// returns false when there are no rows: such a grab writes no position.
func QueuePositionOf[R Row](rows []R) (int64, bool) {
	var best *int64
	for _, r := range rows {
		if pos := r.Base().QueuePosition; pos != nil && (best == nil || *pos > *best) {
			best = pos
		}
	}
	if best == nil {
		return 0, len(rows) > 0
	}
	return *best, true
}
