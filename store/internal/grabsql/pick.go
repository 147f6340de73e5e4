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
}

// Pick returns the first count candidates of distinct URLs in the order
// fetch returns them (the policy's order), so that an origin listed by
// several listers is returned once, from the lister whose row comes first.
// fetch(limit) must return the first limit rows of the candidate query;
// Pick widens the limit until it has count origins or the rows run out.
func Pick(count int, fetch func(limit int) ([]Candidate, error)) ([]Candidate, error) {
	limit := count + count/8 + 16
	for {
		rows, err := fetch(limit)
		if err != nil {
			return nil, err
		}
		picked := make([]Candidate, 0, min(count, len(rows)))
		seen := make(map[string]struct{}, len(rows))
		for _, c := range rows {
			if _, dup := seen[c.Origin.URL]; dup {
				continue
			}
			seen[c.Origin.URL] = struct{}{}
			picked = append(picked, c)
			if len(picked) == count {
				return picked, nil
			}
		}
		if len(rows) < limit {
			return picked, nil
		}
		limit *= 2
	}
}

// MaxQueuePosition returns the largest known queue position among cs.
func MaxQueuePosition(cs []Candidate) (int64, bool) {
	var best int64
	found := false
	for _, c := range cs {
		if c.QueuePosition != nil && (!found || *c.QueuePosition > best) {
			best, found = *c.QueuePosition, true
		}
	}
	return best, found
}
