package grabsql

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/revisit-sched/revisit"
)

// Walks remembers where the last grab of each set of parameters stopped in
// its policy's order, so that the next one starts after the rows the last
// one took instead of stepping over them (docs/store.md, "Grabs back to
// back"). A store keeps one. Before a grab, it finds the walk to resume
// (Find) and, under the visit type's grab lock, checks that nothing may
// have put an eligible row ahead of where it stopped: no write to listed
// rows (its write token, the same) and no row whose cooldown ended
// meanwhile (Flips). After the grab commits, it records where the grab
// stopped (Record).
//
// A write token is any comparable value that every write adding or
// changing listed rows changes.
type Walks struct {
	mu      sync.Mutex
	walks   map[walkKey]Walk
	resumed atomic.Int64
}

// maxWalks bounds the walks a Walks remembers: each set of grab
// parameters that took a full count keeps one, and callers choose the
// lister and the cooldowns. Past it, the walks are forgotten, and the
// next grabs start from the head.
const maxWalks = 4096

// Walk is where a grab stopped: after the row of After, at the time At,
// with Writes as the write token; finished is the filtered lister's last
// listing then.
type Walk struct {
	After    Key
	At       time.Time
	Writes   any
	finished time.Time
}

// Holds tells whether the walk's lister filter is still p's: the lister's
// last listing has not changed since (first_visits_after_listing reads it).
func (w Walk) Holds(p Params) bool { return w.finished.Equal(finishedOf(p)) }

// walkKey is what two grabs must share to be one walk: Params but Now,
// After and the lister filter's resolution, and the lister filter as the
// caller gave it (revisit.GrabParams.ListerFilter).
type walkKey struct {
	visitType string
	policy    revisit.Policy
	disabled  bool
	lister    string
	cooldowns revisit.Cooldowns
}

func keyOf(p Params, lister string) walkKey {
	return walkKey{visitType: p.VisitType, policy: p.Policy, disabled: p.Disabled, lister: lister, cooldowns: p.Cooldowns}
}

func finishedOf(p Params) time.Time {
	if p.ListingFinishedAt == nil {
		return time.Time{}
	}
	return *p.ListingFinishedAt
}

// Find returns the walk that the grab g, its candidate query rendered from
// p, may resume: the last grab of the same parameters stopped there, no
// later than p.Now. p's lister need not be resolved yet: the caller checks
// Holds once it is. A dry run or a sampled grab resumes nothing.
func (w *Walks) Find(g revisit.GrabParams, p Params) (Walk, bool) {
	if g.DryRun || p.Sample != 0 {
		return Walk{}, false
	}
	w.mu.Lock()
	last, ok := w.walks[keyOf(p, g.ListerFilter())]
	w.mu.Unlock()
	return last, ok && !p.Now.Before(last.At)
}

// Resume returns where walk stopped, for the candidate query of a grab
// that resumes it (Params.After), and counts that grab (Resumed).
func (w *Walks) Resume(walk Walk) Key {
	w.resumed.Add(1)
	return walk.After
}

// Resumed counts the grabs that resumed a walk (Resume).
func (w *Walks) Resumed() int64 { return w.resumed.Load() }

// Record records where the committed grab g, its candidate query
// rendered from p (its lister resolved), which read writes as its write
// token and took picked, stopped: after its last pick, when it took a full
// count. A grab that took fewer, or none (picked nil), ends the walk; a
// dry run or a sampled grab changes nothing.
func Record[R Row](w *Walks, d Dialect, g revisit.GrabParams, p Params, picked []R, writes any) {
	if g.DryRun || p.Sample != 0 {
		return
	}
	var after Key
	if len(picked) > 0 && len(picked) == g.Count {
		after, _ = d.KeyOf(p.Policy, picked[len(picked)-1].Base())
	}
	lister := g.ListerFilter()
	w.mu.Lock()
	defer w.mu.Unlock()
	if after == nil {
		delete(w.walks, keyOf(p, lister))
		return
	}
	if w.walks == nil || len(w.walks) >= maxWalks {
		w.walks = make(map[walkKey]Walk)
	}
	w.walks[keyOf(p, lister)] = Walk{After: after, At: p.Now, Writes: writes, finished: finishedOf(p)}
}

// Flips renders a query of one boolean: whether a listed row of p's visit
// type may have become eligible, or stopped being eligible, for p between
// since and p.Now (since not later). The cooldowns are the only conditions
// of the candidate query that depend on the time, each a bound that a
// row's time crosses: the query looks for a row whose time lies between
// the bound at since and the bound at p.Now, through the indexes on
// last_scheduled and on the last failures. It returns false when p has no
// cooldown: then eligibility does not depend on the time.
func (d Dialect) Flips(p Params, since time.Time) (Query, bool) {
	b := builder{d: d}
	visitType, enabled := b.arg(p.VisitType), b.arg(!p.Disabled)
	var probes []string
	crossed := func(col string, gap time.Duration) string {
		return col + " >= " + b.time(since.Add(-gap)) + " AND " + col + " < " + b.time(p.Now.Add(-gap))
	}
	for _, gap := range []time.Duration{p.Cooldowns.Absolute, p.Cooldowns.Scheduled} {
		if gap > 0 {
			probes = append(probes, "visit_type = "+visitType+" AND enabled = "+enabled+" AND "+crossed("last_scheduled", gap))
		}
	}
	for _, c := range []struct {
		status string
		gap    time.Duration
	}{{"failed", p.Cooldowns.Failed}, {"not_found", p.Cooldowns.NotFound}} {
		if c.gap > 0 {
			// The IN term is listed_origin_failures' own condition, which
			// SQLite uses the index for only when the query says it.
			probes = append(probes, "visit_type = "+visitType+" AND last_visit_status IN ('failed', 'not_found') AND last_visit_status = '"+
				c.status+"' AND "+crossed("last_visit", c.gap))
		}
	}
	if len(probes) == 0 {
		return Query{}, false
	}
	for i, w := range probes {
		probes[i] = "EXISTS (SELECT 1 FROM listed_origin WHERE " + w + ")"
	}
	return Query{SQL: "SELECT " + strings.Join(probes, " OR "), Args: b.args}, true
}
