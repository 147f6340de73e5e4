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
	// RowColumns, when set, are more columns the candidate query returns
	// after Columns, for the store's own use.
	RowColumns string
	// Exclude, when set, is one more condition every candidate row meets:
	// how a store leaves out the origins it holds aside.
	Exclude string
	// StatusCooldown, when set, renders the failed and not-found
	// cooldowns: a row whose last visit ended with status is eligible only
	// if that visit was before bound (a rendered placeholder). A store
	// whose policy indexes hold the expression it renders can then skip
	// the rows in those cooldowns without reading them. By default the
	// cooldown compares last_visit_status, then last_visit.
	StatusCooldown func(status, bound string) string
}

// OriginColumns are the listed_origin columns of a revisit.ListedOrigin, in
// order.
const OriginColumns = "lister_id, url, visit_type, extra_loader_arguments, enabled, first_seen, last_seen, " +
	"last_update, is_fork, forked_from_url"

// OutcomeCounts are the aggregates, over listed rows, of the fields of a
// revisit.VisitOutcomes in order, read from the stats copy the rows carry.
const OutcomeCounts = "count(*), count(*) FILTER (WHERE last_visit_status = 'successful'), " +
	"count(*) FILTER (WHERE last_visit_status = 'failed'), count(*) FILTER (WHERE last_visit_status = 'not_found'), " +
	"count(*) FILTER (WHERE last_visit_status IS NULL)"

// Columns are the listed_origin columns the candidate query returns, in
// order: OriginColumns, then what a Candidate adds.
const Columns = OriginColumns + ", next_visit_queue_position, last_scheduled"

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

// Build renders the candidate query: eligible rows of listed_origin, in the
// policy's order then id, with the limit as the final placeholder.
func (d Dialect) Build(p Params) (Query, error) {
	b := builder{d: d}
	where := []string{
		"visit_type = " + b.arg(p.VisitType),
		"enabled = " + b.arg(!p.Disabled),
	}
	if p.ListerID != nil {
		where = append(where, "lister_id = "+b.arg(p.ListerID))
	}
	var order []string
	switch p.Policy {
	case revisit.OldestScheduledFirst:
		order = []string{d.NullsFirst("last_scheduled")}
	case revisit.NeverVisitedOldestUpdateFirst:
		where = append(where, "last_successful IS NULL", "last_update IS NOT NULL")
		order = []string{"last_update"}
	case revisit.AlreadyVisitedOrderByLag:
		where = append(where, "last_update > last_successful")
		order = []string{d.Lag + " DESC"}
	case revisit.OriginsWithoutLastUpdate:
		where = append(where, "last_update IS NULL")
		order = []string{d.NullsFirst("next_visit_queue_position"), "first_seen"}
	case revisit.StopAfterSuccess:
		where = append(where, "last_visit_status "+d.IsDistinctFrom+" 'successful'")
		order = []string{d.NullsLast("last_update"), "first_seen"}
	case revisit.FirstVisitsAfterListing:
		if p.ListerID == nil {
			return Query{}, revisit.Invalidf("lister", "policy %s needs a lister", p.Policy)
		}
		if p.ListingFinishedAt == nil {
			where = append(where, "last_scheduled IS NULL")
		} else {
			where = append(where, "(last_scheduled IS NULL OR last_scheduled < "+b.time(*p.ListingFinishedAt)+")")
		}
		order = []string{d.NullsFirst("last_scheduled")}
	default:
		_, err := revisit.ParsePolicy(string(p.Policy))
		return Query{}, err
	}
	where = append(where, b.cooldowns(p.Now, p.Cooldowns)...)
	if d.Exclude != "" {
		where = append(where, d.Exclude)
	}
	if p.Sample > 0 {
		where = append(where, d.Random+" < "+b.arg(p.Sample))
	}
	order = append(order, "id")
	columns := Columns
	if d.RowColumns != "" {
		columns += ", " + d.RowColumns
	}
	sql := fmt.Sprintf("SELECT %s FROM listed_origin WHERE %s ORDER BY %s LIMIT %s",
		columns, strings.Join(where, " AND "), strings.Join(order, ", "), d.Placeholder(len(b.args)+1))
	return Query{SQL: sql, Args: b.args}, nil
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

// cooldowns renders semantics.md §3.1; a zero duration renders nothing.
func (b *builder) cooldowns(now time.Time, c revisit.Cooldowns) []string {
	var w []string
	if c.Absolute > 0 {
		w = append(w, "(last_scheduled IS NULL OR last_scheduled < "+b.time(now.Add(-c.Absolute))+")")
	}
	if c.Scheduled > 0 {
		// last_scheduled < GREATEST(now - S, last_visit), a null last_visit
		// counting as no bound.
		w = append(w, "(last_scheduled IS NULL OR last_scheduled < "+b.time(now.Add(-c.Scheduled))+
			" OR last_scheduled < last_visit)")
	}
	if c.Failed > 0 {
		w = append(w, b.statusCooldown("failed", now.Add(-c.Failed)))
	}
	if c.NotFound > 0 {
		w = append(w, b.statusCooldown("not_found", now.Add(-c.NotFound)))
	}
	return w
}

// statusCooldown renders one of the failed and not-found cooldowns: the
// last visit did not end with status, or it was before bound.
func (b *builder) statusCooldown(status string, bound time.Time) string {
	if b.d.StatusCooldown != nil {
		return b.d.StatusCooldown(status, b.time(bound))
	}
	return "(last_visit_status " + b.d.IsDistinctFrom + " '" + status + "' OR last_visit < " + b.time(bound) + ")"
}
