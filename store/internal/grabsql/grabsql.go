// Package grabsql renders the candidate query of grab_next_visits for one
// SQL dialect: the policy's eligibility predicate, the four cooldowns and the
// policy's order, written so that each policy matches one index of the
// listed_origin table (docs/store.md). Both stores use it, so the two cannot
// disagree on what a policy means.
package grabsql

import (
	"fmt"
	"slices"
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
	// NullsLastPair says that the engine's indexes order "nulls last" as
	// the pair ((col IS NULL), col), nulls first within col: the candidate
	// query then orders by that pair and NullsLast is not used.
	NullsLastPair bool
	// Lag is the expression of already_visited_order_by_lag's index, and
	// LagValue the value it takes for a row whose last_update is later than
	// its last_successful by d, as the engine binds it.
	Lag      string
	LagValue func(d time.Duration) any
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
const Columns = OriginColumns + ", next_visit_queue_position, last_scheduled, last_successful, id"

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
	// After, when set, resumes a walk of the policy's order: the query
	// returns the eligible rows that come after this key only (KeyOf).
	After Key
}

// Key is a row's place in a policy's order, as KeyOf reads it from the
// row: the values of the order's terms as the engine binds them, nil for
// a null, the row's id last.
type Key []any

// Build renders the candidate query: eligible rows of listed_origin, in the
// policy's order then id, with the limit as the final placeholder. With
// p.After, only the rows after that key (resume).
func (d Dialect) Build(p Params) (Query, error) {
	b := builder{d: d}
	where := []string{
		"visit_type = " + b.arg(p.VisitType),
		"enabled = " + b.arg(!p.Disabled),
	}
	if p.ListerID != nil {
		where = append(where, "lister_id = "+b.arg(p.ListerID))
	}
	switch p.Policy {
	case revisit.NeverVisitedOldestUpdateFirst:
		where = append(where, "last_successful IS NULL", "last_update IS NOT NULL")
	case revisit.AlreadyVisitedOrderByLag:
		where = append(where, "last_update > last_successful")
	case revisit.OriginsWithoutLastUpdate:
		where = append(where, "last_update IS NULL")
	case revisit.StopAfterSuccess:
		where = append(where, "last_visit_status "+d.IsDistinctFrom+" 'successful'")
	case revisit.FirstVisitsAfterListing:
		if p.ListerID == nil {
			return Query{}, revisit.Invalidf("lister", "policy %s needs a lister", p.Policy)
		}
		if p.ListingFinishedAt == nil {
			where = append(where, "last_scheduled IS NULL")
		} else {
			where = append(where, "(last_scheduled IS NULL OR last_scheduled < "+b.time(*p.ListingFinishedAt)+")")
		}
	}
	terms, err := d.terms(p.Policy)
	if err != nil {
		return Query{}, err
	}
	where = append(where, b.cooldowns(p.Now, p.Cooldowns)...)
	if d.Exclude != "" {
		where = append(where, d.Exclude)
	}
	if p.Sample > 0 {
		where = append(where, d.Random+" < "+b.arg(p.Sample))
	}
	order := make([]string, len(terms))
	for i, t := range terms {
		order[i] = d.orderBy(t)
	}
	columns := Columns
	if d.RowColumns != "" {
		columns += ", " + d.RowColumns
	}
	// selectWhere renders the query of the rows that also meet conds, in
	// the order of the terms but those that equal a value in all of them
	// (fixed), up to a limit that follows.
	selectWhere := func(conds []string, fixed []bool) string {
		var by []string
		for i, o := range order {
			if i >= len(fixed) || !fixed[i] {
				by = append(by, o)
			}
		}
		return fmt.Sprintf("SELECT %s FROM listed_origin WHERE %s ORDER BY %s LIMIT ",
			columns, strings.Join(slices.Concat(where, conds), " AND "), strings.Join(by, ", "))
	}
	if p.After == nil {
		return Query{SQL: selectWhere(nil, nil) + d.Placeholder(len(b.args)+1), Args: b.args}, nil
	}
	if len(p.After) != len(terms) {
		return Query{}, fmt.Errorf("grabsql: a %s key has %d values, not %d", p.Policy, len(terms), len(p.After))
	}
	return resume(&b, terms, p.After, selectWhere), nil
}

// resume renders the rows after key in the order of terms: one range of
// the policy's index a branch, each branch all the rows whose first terms
// equal the key's and whose next term comes after the key's, deepest term
// first, so that the branches follow each other in the order. A branch
// is not ordered by the terms it sets equal to a value: SQLite would sort
// its rows otherwise; PostgreSQL walks the index either way, but only
// with the terms it sets null kept. Each reads
// only what the branches before it left of the limit; a materialized
// CTE's rows come out in the order they went in, and so do UNION ALL's
// branches, one after the other.
func resume(b *builder, terms []term, key Key, selectWhere func(conds []string, fixed []bool) string) Query {
	values := make([]string, len(key))
	for i, v := range key {
		if v != nil {
			values[i] = b.arg(v)
		}
	}
	type branch struct {
		conds []string
		fixed []bool
	}
	var branches []branch
	for j := len(terms) - 1; j >= 0; j-- {
		var same []string
		fixed := make([]bool, j)
		for i, t := range terms[:j] {
			if key[i] == nil {
				same = append(same, t.expr+" IS NULL")
			} else {
				same, fixed[i] = append(same, t.expr+" = "+values[i]), true
			}
		}
		for _, after := range terms[j].after(values[j]) {
			branches = append(branches, branch{append(slices.Clip(same), after), fixed})
		}
	}
	limit := b.d.Placeholder(len(b.args) + 1)
	var ctes, union, taken []string
	for i, br := range branches {
		name := fmt.Sprintf("after%d", i)
		ctes = append(ctes, name+" AS MATERIALIZED ("+selectWhere(br.conds, br.fixed)+strings.Join(append([]string{limit}, taken...), " - ")+")")
		union = append(union, "SELECT * FROM "+name)
		taken = append(taken, "(SELECT count(*) FROM "+name+")")
	}
	return Query{SQL: "WITH " + strings.Join(ctes, ", ") + " " + strings.Join(union, " UNION ALL "), Args: b.args}
}

// term is one term of a policy's order.
type term struct {
	expr string
	desc bool
	// nullable terms sort their nulls first, or last with nullsLast.
	nullable, nullsLast bool
	// value returns the term's value in a row, nil for a null.
	value func(c Candidate) any
}

// after renders the conditions of the rows whose term comes after value
// (a rendered placeholder, "" for a null), one a branch in their order.
func (t term) after(value string) []string {
	switch {
	case !t.nullable && t.desc:
		return []string{t.expr + " < " + value}
	case !t.nullable:
		return []string{t.expr + " > " + value}
	case value == "" && t.nullsLast:
		return nil
	case value == "":
		return []string{t.expr + " IS NOT NULL"}
	case t.nullsLast:
		return []string{t.expr + " > " + value, t.expr + " IS NULL"}
	default:
		return []string{t.expr + " > " + value}
	}
}

// orderBy renders t as an ORDER BY term that the engine's index matches.
func (d Dialect) orderBy(t term) string {
	switch {
	case t.desc:
		return t.expr + " DESC"
	case t.nullable && t.nullsLast:
		return d.NullsLast(t.expr)
	case t.nullable:
		return d.NullsFirst(t.expr)
	default:
		return t.expr
	}
}

// terms returns the terms of policy's order, id last.
func (d Dialect) terms(policy revisit.Policy) ([]term, error) {
	timeOf := func(f func(c Candidate) *time.Time) func(Candidate) any {
		return func(c Candidate) any {
			if t := f(c); t != nil {
				return d.Time(*t)
			}
			return nil
		}
	}
	lastScheduled := term{expr: "last_scheduled", nullable: true,
		value: timeOf(func(c Candidate) *time.Time { return c.LastScheduled })}
	lastUpdate := term{expr: "last_update", value: timeOf(func(c Candidate) *time.Time { return c.Origin.LastUpdate })}
	firstSeen := term{expr: "first_seen", value: func(c Candidate) any { return d.Time(c.Origin.FirstSeen) }}
	var ts []term
	switch policy {
	case revisit.OldestScheduledFirst, revisit.FirstVisitsAfterListing:
		ts = []term{lastScheduled}
	case revisit.NeverVisitedOldestUpdateFirst:
		ts = []term{lastUpdate}
	case revisit.AlreadyVisitedOrderByLag:
		ts = []term{{expr: d.Lag, desc: true, value: func(c Candidate) any {
			if c.Origin.LastUpdate == nil || c.LastSuccessful == nil {
				return nil
			}
			return d.LagValue(c.Origin.LastUpdate.Sub(*c.LastSuccessful))
		}}}
	case revisit.OriginsWithoutLastUpdate:
		ts = []term{{expr: "next_visit_queue_position", nullable: true, value: func(c Candidate) any {
			if c.QueuePosition == nil {
				return nil
			}
			return *c.QueuePosition
		}}, firstSeen}
	case revisit.StopAfterSuccess:
		lastUpdate.nullable, lastUpdate.nullsLast = true, true
		ts = []term{lastUpdate, firstSeen}
		if d.NullsLastPair {
			lastUpdate.nullsLast = false
			ts = []term{{expr: "(last_update IS NULL)", value: func(c Candidate) any { return c.Origin.LastUpdate == nil }},
				lastUpdate, firstSeen}
		}
	default:
		_, err := revisit.ParsePolicy(string(policy))
		return nil, err
	}
	return append(ts, term{expr: "id", value: func(c Candidate) any { return c.ID }}), nil
}

// KeyOf returns the key of row c in policy's order, which a later
// candidate query of the same policy resumes after (Params.After).
func (d Dialect) KeyOf(policy revisit.Policy, c Candidate) (Key, error) {
	terms, err := d.terms(policy)
	if err != nil {
		return nil, err
	}
	key := make(Key, len(terms))
	for i, t := range terms {
		if key[i] = t.value(c); key[i] == nil && !t.nullable {
			return nil, fmt.Errorf("grabsql: row %d has no %s, which orders %s", c.ID, t.expr, policy)
		}
	}
	return key, nil
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
