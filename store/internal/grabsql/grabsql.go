// Package grabsql renders the candidate query of grab_next_visits for one
// SQL dialect: the policy's eligibility predicate, the four cooldowns and the
// policy's order, written so that each policy matches one index of the
// listed_origin table (docs/store.md). Both stores use it, so the two cannot
// disagree on what a policy means.
package grabsql

import (
	"fmt"
	"strings"
	"time"

	"github.com/revisit-sched/revisit"
)

// Dialect is what differs between the SQL engines.
type Dialect struct {
	// Placeholder returns the n-th (1-based) bind parameter.
	Placeholder func(n int) string
	// IsDistinctFrom is the null-safe inequality operator.
	IsDistinctFrom string
	// NullsFirst and NullsLast render an ascending order term with nulls
	// first or last, in the form the engine's index matches.
	NullsFirst, NullsLast func(col string) string
	// Lag is the expression of already_visited_order_by_lag's index.
	Lag string
	// Random is an expression uniform in [0, 1).
	Random string
	// Time converts a time to the engine's bind value.
	Time func(time.Time) any
}

// columns are the listed_origin columns of a candidate, but last_scheduled.
const columns = "lo.lister_id, lo.url, lo.visit_type, lo.extra_loader_arguments, lo.enabled, lo.first_seen, " +
	"lo.last_seen, lo.last_update, lo.is_fork, lo.forked_from_url, lo.next_visit_queue_position"

// Columns are the columns of a candidate, unqualified, in the order every
// candidate query returns them.
const Columns = "lister_id, url, visit_type, extra_loader_arguments, enabled, first_seen, " +
	"last_seen, last_update, is_fork, forked_from_url, next_visit_queue_position, last_scheduled"

// markOf matches the grab mark of the listed origin lo.
const markOf = "m.visit_type = lo.visit_type AND m.url = lo.url"

// Query is a rendered candidate query and its arguments but the row limit,
// which is the last placeholder (so callers can widen it and query again).
type Query struct {
	SQL  string
	Args []any
}

// Params are the inputs of Build that the store resolves first.
type Params struct {
	VisitType string
	Policy    revisit.Policy
	Now       time.Time
	Disabled  bool
	// ListerID is the lister filter as the engine binds it; nil for none.
	ListerID any
	// ListingFinishedAt is the filtered lister's last_listing_finished_at
	// (first_visits_after_listing only).
	ListingFinishedAt *time.Time
	Cooldowns         revisit.Cooldowns
	Sample            float64
}

// Effective is the effective last_scheduled of the origin whose
// listed_origin (or visit_stats) row is alias and whose grab mark is m.
func Effective(alias string) string { return "COALESCE(m.scheduled_at, " + alias + ".last_scheduled)" }

// Merged reports whether the policy orders by last_scheduled: its
// candidate query then merges the unmarked origins, in the order of the
// policy's index, with the marked ones, whose grab mark moved them.
func Merged(p revisit.Policy) bool {
	return p == revisit.OldestScheduledFirst || p == revisit.FirstVisitsAfterListing
}

// Build renders the candidate query: eligible rows of listed_origin, in the
// policy's order then id, each with its effective last_scheduled (its grab
// mark if it has one, else the folded value: a mark is never earlier than
// the folded value, docs/store.md), with the limit as the final
// placeholder.
func (d Dialect) Build(p Params) (Query, error) {
	if _, err := revisit.ParsePolicy(string(p.Policy)); err != nil {
		return Query{}, err
	}
	if p.Policy == revisit.FirstVisitsAfterListing && p.ListerID == nil {
		return Query{}, revisit.Invalidf("lister", "policy %s needs a lister", p.Policy)
	}
	b := builder{d: d}
	effective := Effective("lo")
	if !Merged(p.Policy) {
		where, order := b.where(p, effective)
		return b.query(fmt.Sprintf("SELECT %s, %s FROM listed_origin lo LEFT JOIN grab_mark m ON %s WHERE %s ORDER BY %s, lo.id LIMIT %s",
			columns, effective, markOf, where, order, limit)), nil
	}
	// Unmarked origins come in the index's order; marked ones are few (a
	// mark is folded when the visit's result arrives) and sorted.
	where, order := b.where(p, "lo.last_scheduled")
	branches := []string{fmt.Sprintf(
		"SELECT %s, lo.last_scheduled AS last_scheduled, lo.id AS id FROM listed_origin lo WHERE %s AND NOT EXISTS (SELECT 1 FROM grab_mark m WHERE %s) ORDER BY %s, lo.id LIMIT %s",
		columns, where, markOf, order, limit)}
	if p.Policy != revisit.FirstVisitsAfterListing || p.ListingFinishedAt != nil {
		// A marked origin's effective value is its mark: the bounds on
		// it are index conditions, and the index gives the order.
		marks := "m.visit_type = " + b.arg(p.VisitType)
		if p.Cooldowns.Absolute > 0 {
			marks += " AND m.scheduled_at < " + b.time(p.Now.Add(-p.Cooldowns.Absolute))
		}
		if p.Policy == revisit.FirstVisitsAfterListing {
			marks += " AND m.scheduled_at < " + b.time(*p.ListingFinishedAt)
		}
		where, _ := b.where(p, "m.scheduled_at")
		branches = append(branches, fmt.Sprintf(
			"SELECT %s, m.scheduled_at AS last_scheduled, lo.id AS id FROM grab_mark m JOIN listed_origin lo ON %s WHERE %s AND %s ORDER BY m.scheduled_at, lo.id LIMIT %s",
			columns, markOf, marks, where, limit))
	}
	for i, br := range branches {
		branches[i] = fmt.Sprintf("SELECT * FROM (%s) AS b%d", br, i)
	}
	return b.query(fmt.Sprintf("SELECT %s FROM (%s) AS c ORDER BY %s, id LIMIT %s",
		Columns, strings.Join(branches, " UNION ALL "), d.NullsFirst("last_scheduled"), limit)), nil
}

// where renders the filters and the order of p's policy, reading the
// origin's last_scheduled from the expression lastScheduled.
func (b *builder) where(p Params, lastScheduled string) (where, order string) {
	d := b.d
	w := []string{
		"lo.visit_type = " + b.arg(p.VisitType),
		"lo.enabled = " + b.arg(!p.Disabled),
	}
	if p.ListerID != nil {
		w = append(w, "lo.lister_id = "+b.arg(p.ListerID))
	}
	var o []string
	switch p.Policy {
	case revisit.OldestScheduledFirst:
		o = []string{d.NullsFirst(lastScheduled)}
	case revisit.NeverVisitedOldestUpdateFirst:
		w = append(w, "lo.last_successful IS NULL", "lo.last_update IS NOT NULL")
		o = []string{"lo.last_update"}
	case revisit.AlreadyVisitedOrderByLag:
		w = append(w, "lo.last_update > lo.last_successful")
		o = []string{d.Lag + " DESC"}
	case revisit.OriginsWithoutLastUpdate:
		w = append(w, "lo.last_update IS NULL")
		o = []string{d.NullsFirst("lo.next_visit_queue_position"), "lo.first_seen"}
	case revisit.StopAfterSuccess:
		w = append(w, "lo.last_visit_status "+d.IsDistinctFrom+" 'successful'")
		o = []string{d.NullsLast("lo.last_update"), "lo.first_seen"}
	case revisit.FirstVisitsAfterListing:
		if p.ListingFinishedAt == nil {
			w = append(w, lastScheduled+" IS NULL")
		} else {
			w = append(w, "("+lastScheduled+" IS NULL OR "+lastScheduled+" < "+b.time(*p.ListingFinishedAt)+")")
		}
		o = []string{d.NullsFirst(lastScheduled)}
	}
	w = append(w, b.cooldowns(p.Now, p.Cooldowns, lastScheduled)...)
	if p.Sample > 0 {
		w = append(w, d.Random+" < "+b.arg(p.Sample))
	}
	return strings.Join(w, " AND "), strings.Join(o, ", ")
}

type builder struct {
	d    Dialect
	args []any
}

func (b *builder) arg(v any) string {
	b.args = append(b.args, v)
	return b.d.Placeholder(len(b.args))
}

func (b *builder) time(t time.Time) string { return b.arg(b.d.Time(t)) }

// limit stands for the row limit in a query being built; query replaces it
// with the placeholder after every argument.
const limit = "{limit}"

// query finishes sql with its arguments.
func (b *builder) query(sql string) Query {
	return Query{SQL: strings.ReplaceAll(sql, limit, b.d.Placeholder(len(b.args)+1)), Args: b.args}
}

// cooldowns renders semantics.md §3.1 on an origin whose last_scheduled is
// the expression ls; a zero duration renders nothing.
func (b *builder) cooldowns(now time.Time, c revisit.Cooldowns, ls string) []string {
	var w []string
	if c.Absolute > 0 {
		w = append(w, "("+ls+" IS NULL OR "+ls+" < "+b.time(now.Add(-c.Absolute))+")")
	}
	if c.Scheduled > 0 {
		// last_scheduled < GREATEST(now - S, last_visit), a null last_visit
		// counting as no bound.
		w = append(w, "("+ls+" IS NULL OR "+ls+" < "+b.time(now.Add(-c.Scheduled))+
			" OR "+ls+" < lo.last_visit)")
	}
	if c.Failed > 0 {
		w = append(w, "(lo.last_visit_status "+b.d.IsDistinctFrom+" 'failed' OR lo.last_visit < "+b.time(now.Add(-c.Failed))+")")
	}
	if c.NotFound > 0 {
		w = append(w, "(lo.last_visit_status "+b.d.IsDistinctFrom+" 'not_found' OR lo.last_visit < "+b.time(now.Add(-c.NotFound))+")")
	}
	return w
}
