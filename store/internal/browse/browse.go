// Package browse pages the listed origins of a visit type in the order of
// a view (revisit.OriginBrowse) for both stores: each view is one range of
// one index of listed_origin, read a bounded number of rows a page, both
// ways, with keyset tokens. A store supplies only the running of a
// statement and the scanning of its rows.
package browse

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
)

// ScanLength is how many index rows a page reads at most: filters the
// index does not hold (the outcome in the scheduled view; the lister and
// the enabled flag in the failures view) cost no more than this a page.
const ScanLength = 2000

// Columns are the columns of a browsed row a store scans, in order: the
// listed origin's, its last visit and status, its last scheduled time and
// its id, then whether it passes the filters (hit) and its place in the
// scan (n).
const Columns = grabsql.OriginColumns + ", last_visit, last_visit_status, last_scheduled, id"

// Row is one row of a browse statement.
type Row struct {
	Origin revisit.BrowsedOrigin
	ID     int64
	// Hit is whether the row passes the filters; N is its place in the
	// read of the index, from 1.
	Hit bool
	N   int64
}

// Querier runs a browse statement and scans its rows: Columns, then hit
// (a boolean) and n (an integer).
type Querier interface {
	BrowseRows(ctx context.Context, sql string, args []any) ([]Row, error)
}

// key is a position in a view's order: the time it orders by (nil where
// it is null) and the row's id.
type key struct {
	At *time.Time
	ID int64
}

// token is the content of a page token: where to resume, which way, and
// the view and order it belongs to.
type token struct {
	View       revisit.BrowseView `json:"v"`
	Descending bool               `json:"d,omitempty"`
	Before     bool               `json:"b,omitempty"`
	At         *int64             `json:"t,omitempty"` // Unix microseconds
	ID         int64              `json:"i"`
}

func encode(b revisit.OriginBrowse, k key, before bool) string {
	t := token{View: b.View, Descending: b.Descending, Before: before, ID: k.ID}
	if k.At != nil {
		us := k.At.UnixMicro()
		t.At = &us
	}
	raw, _ := json.Marshal(t)
	return base64.RawURLEncoding.EncodeToString(raw)
}

func decode(b revisit.OriginBrowse) (k *key, before bool, err error) {
	if b.PageToken == "" {
		return nil, false, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(b.PageToken)
	var t token
	if err != nil || json.Unmarshal(raw, &t) != nil || t.View == "" {
		return nil, false, revisit.Invalidf("page_token", "%q is not a page token of a browse", b.PageToken)
	}
	if t.View != b.View || t.Descending != b.Descending {
		return nil, false, revisit.Invalidf("page_token", "the token is of another view or order than this browse's: start from its first page")
	}
	k = &key{ID: t.ID}
	if t.At != nil {
		at := time.UnixMicro(*t.At).UTC()
		k.At = &at
	}
	return k, t.Before, nil
}

// view is what a revisit.BrowseView reads: the column it orders by,
// whether that column may be null, and that column's value in a row.
type view struct {
	column   string
	nullable bool
	at       func(revisit.BrowsedOrigin) *time.Time
}

var views = map[revisit.BrowseView]view{
	revisit.ViewScheduled: {column: "last_scheduled", nullable: true,
		at: func(o revisit.BrowsedOrigin) *time.Time { return o.LastScheduled }},
	revisit.ViewFailures: {column: "last_visit", at: func(o revisit.BrowsedOrigin) *time.Time { return o.LastVisit }},
}

// failuresCondition is the predicate of the failures view's partial index.
const failuresCondition = "last_visit_status IN ('failed', 'not_found')"

// Run returns the page of b. Its statements read listed_origin through
// the index of b's view, leaving out the rows d.Exclude leaves out (the
// origins with a visit in flight).
func Run(ctx context.Context, q Querier, d grabsql.Dialect, b revisit.OriginBrowse) (revisit.OriginBrowsePage, error) {
	if b.View == "" {
		b.View = revisit.ViewScheduled
	}
	if err := b.Validate(); err != nil {
		return revisit.OriginBrowsePage{}, err
	}
	if b.Limit == 0 {
		b.Limit = revisit.BrowsePageSize.Def
	}
	from, before, err := decode(b)
	if err != nil {
		return revisit.OriginBrowsePage{}, err
	}
	r := reader{q: q, d: d, b: b, v: views[b.View], descending: b.Descending != before}
	hits, stop, err := r.read(ctx, from, b.Limit+1)
	if err != nil {
		return revisit.OriginBrowsePage{}, err
	}
	more := len(hits) > b.Limit
	if more {
		hits = hits[:b.Limit]
		last := r.keyOf(hits[len(hits)-1])
		stop = &last
	}
	var page revisit.OriginBrowsePage
	ahead, back := "", ""
	if stop != nil {
		ahead = encode(b, *stop, before)
	}
	switch {
	case len(hits) > 0 && from != nil:
		back = encode(b, r.keyOf(hits[0]), !before)
	case from != nil:
		back = encode(b, *from, !before)
	}
	for _, h := range hits {
		page.Origins = append(page.Origins, h.Origin)
	}
	page.NextPageToken, page.PrevPageToken = ahead, back
	if before {
		slices.Reverse(page.Origins)
		page.NextPageToken, page.PrevPageToken = back, ahead
	}
	return page, nil
}

// reader reads a browse's rows in one direction.
type reader struct {
	q          Querier
	d          grabsql.Dialect
	b          revisit.OriginBrowse
	v          view
	descending bool
}

// keyOf is the key of a row in the reader's view.
func (r reader) keyOf(row Row) key { return key{At: r.v.at(row.Origin), ID: row.ID} }

// read returns up to want rows that pass the filters after from (from the
// start when nil), in the reader's direction, and, when it stopped
// because its scan reached ScanLength, the key of the last row it read.
// A nullable column's rows are read in two ranges, the null ones (first
// in ascending order) and the others, each in index order.
func (r reader) read(ctx context.Context, from *key, want int) ([]Row, *key, error) {
	ranges := []bool{false} // whether the range is the null one
	if r.v.nullable {
		ranges = []bool{true, false}
	}
	if r.descending {
		slices.Reverse(ranges)
	}
	if from != nil && r.v.nullable {
		// Start in the range of from.
		for len(ranges) > 1 && ranges[0] != (from.At == nil) {
			ranges = ranges[1:]
		}
	}
	var hits []Row
	for i, null := range ranges {
		var after *key
		if i == 0 {
			after = from
		}
		sql, args := r.statement(null, after, want-len(hits))
		rows, err := r.q.BrowseRows(ctx, sql, args)
		if err != nil {
			return nil, nil, err
		}
		for _, row := range rows {
			if row.Hit {
				hits = append(hits, row)
			}
		}
		if n := len(rows); n > 0 && rows[n-1].N == ScanLength && len(hits) < want {
			last := r.keyOf(rows[n-1])
			return hits, &last, nil
		}
		if len(hits) == want {
			break
		}
	}
	return hits, nil, nil
}

// statement renders the read of one range (the null one or the other)
// after `after`, for up to want rows that pass the filters.
func (r reader) statement(null bool, after *key, want int) (string, []any) {
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return r.d.Placeholder(len(args))
	}
	col := r.v.column
	where := []string{"visit_type = " + arg(r.b.VisitType)}
	var filters []string
	enabled := r.b.Enabled != revisit.OnlyDisabled
	switch r.b.View {
	case revisit.ViewScheduled:
		if r.b.ListerID != nil {
			where = append(where, "lister_id = "+arg(*r.b.ListerID))
		}
		where = append(where, "enabled = "+arg(enabled))
	case revisit.ViewFailures:
		where = append(where, failuresCondition)
		if r.b.ListerID != nil {
			filters = append(filters, "lister_id = "+arg(*r.b.ListerID))
		}
		if r.b.Enabled != revisit.AnyEnabled {
			filters = append(filters, "enabled = "+arg(enabled))
		}
	}
	switch r.b.Outcome {
	case "":
	case revisit.OutcomeNever:
		filters = append(filters, "last_visit_status IS NULL")
	default:
		filters = append(filters, "last_visit_status = "+arg(string(r.b.Outcome)))
	}
	cmp, dir := ">", ""
	if r.descending {
		cmp, dir = "<", " DESC"
	}
	switch {
	case null:
		where = append(where, col+" IS NULL")
		if after != nil {
			where = append(where, "id "+cmp+" "+arg(after.ID))
		}
	case r.v.nullable:
		where = append(where, col+" IS NOT NULL")
		fallthrough
	default:
		if after != nil && after.At != nil {
			where = append(where, fmt.Sprintf("(%s, id) %s (%s, %s)", col, cmp, arg(r.d.Time(*after.At)), arg(after.ID)))
		}
	}
	if r.d.Exclude != "" {
		where = append(where, r.d.Exclude)
	}
	order := col + dir
	if r.v.nullable && r.d.NullsFirst(col) != col {
		// The engine needs the nulls' place said to match the index.
		order = r.d.NullsFirst(col)
		if r.descending {
			order = col + " DESC NULLS LAST"
		}
	}
	hit := "TRUE"
	if len(filters) > 0 {
		hit = "(" + strings.Join(filters, " AND ") + ") IS TRUE"
	}
	scan := arg(ScanLength)
	return "SELECT * FROM (SELECT *, row_number() OVER () AS n FROM (SELECT " + Columns + ", " + hit + " AS hit " +
		"FROM listed_origin WHERE " + strings.Join(where, " AND ") + " ORDER BY " + order + ", id" + dir +
		" LIMIT " + scan + ") scan) numbered WHERE hit OR n = " + scan + " LIMIT " + arg(want), args
}
