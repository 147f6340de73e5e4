package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/browse"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
	"github.com/revisit-sched/revisit/store/internal/urlsearch"
)

// OriginsSearch returns one page of the listed rows whose URL matches the
// search (store/internal/urlsearch pages it). The matching URLs come from
// listed_origin's B-tree on (url, visit_type), in byte order: a range of it
// for a prefix, a walk of it for a substring; their rows through the same
// index.
func (s *Store) OriginsSearch(ctx context.Context, search revisit.OriginSearch) (revisit.OriginSearchPage, error) {
	page, err := urlsearch.Run(ctx, searchEngine{s}, search)
	return page, translate("search origins", err)
}

// searchEngine is the store's part of a search.
type searchEngine struct{ s *Store }

// URLs returns the next matching URLs of listed_origin. A substring
// search reads the index to its end if need be: ~0.3 s at 1M origins
// (docs/store.md).
func (e searchEngine) URLs(ctx context.Context, search revisit.OriginSearch, from string, inclusive bool, n int) ([]string, string, error) {
	q, args := urlsQuery(search, from, inclusive, n)
	urls, err := query(ctx, e.s, scanStrings, q, args...)
	return urls, "", err
}

// urlsQuery returns the statement of URLs and its arguments.
func urlsQuery(search revisit.OriginSearch, from string, inclusive bool, n int) (string, []any) {
	op := ">"
	if inclusive {
		op = ">="
	}
	prefix := search.Match != revisit.MatchSubstring && search.Query != ""
	if prefix && from < search.Query {
		// One lower bound: given two, SQLite bounds the walk by either.
		from, op = search.Query, ">="
	}
	q := "SELECT DISTINCT url FROM listed_origin WHERE url " + op + " ?1"
	args := []any{from}
	switch {
	case prefix:
		q += " AND url < ?2"
		args = append(args, urlsearch.PrefixEnd(search.Query))
	case search.Match == revisit.MatchSubstring:
		q += " AND instr(url, ?2) > 0"
		args = append(args, search.Query)
	}
	args = append(args, n)
	return q + fmt.Sprintf(" ORDER BY url LIMIT ?%d", len(args)), args
}

// Rows returns the listed rows of urls that pass the search's filters.
func (e searchEngine) Rows(ctx context.Context, search revisit.OriginSearch, urls []string) ([]revisit.OriginMatch, error) {
	filters, args := urlsearch.Filters(search, []any{jsonArray(urls)}, func(n int) string { return fmt.Sprintf("?%d", n) })
	where := append([]string{"url IN (SELECT value FROM json_each(?1))"}, filters...)
	return query(ctx, e.s, scanMatches, "SELECT "+grabsql.OriginColumns+", last_visit, last_visit_status FROM listed_origin WHERE "+
		strings.Join(where, " AND "), args...)
}

// scanMatches reads rows of grabsql.OriginColumns, last_visit and
// last_visit_status.
func scanMatches(rows *sql.Rows, err error) ([]revisit.OriginMatch, error) {
	var or originRow
	return collect(rows, err, nil, func(rows *sql.Rows) (m revisit.OriginMatch, err error) {
		var status sql.NullString
		err = rows.Scan(append(or.dests(&m.ListedOrigin), timePtrCol{&m.LastVisit}, &status)...)
		or.finish(&m.ListedOrigin)
		m.LastVisitStatus = visitStatus(status)
		return m, err
	})
}

// visitStatus converts a last_visit_status column.
func visitStatus(s sql.NullString) *revisit.VisitStatus {
	if !s.Valid {
		return nil
	}
	st := revisit.VisitStatus(s.String)
	return &st
}

// OriginsBrowse returns one page of a browse (store/internal/browse pages
// it), leaving out the marked origins, those with a visit in flight.
func (s *Store) OriginsBrowse(ctx context.Context, b revisit.OriginBrowse) (revisit.OriginBrowsePage, error) {
	page, err := browse.Run(ctx, browser{s}, dialect, b)
	return page, translate("browse origins", err)
}

// browser runs a browse's statements.
type browser struct{ s *Store }

func (b browser) BrowseRows(ctx context.Context, q string, args []any) ([]browse.Row, error) {
	return query(ctx, b.s, func(rows *sql.Rows, err error) ([]browse.Row, error) {
		var or originRow
		return collect(rows, err, nil, func(rows *sql.Rows) (r browse.Row, err error) {
			var status sql.NullString
			o := &r.Origin
			err = rows.Scan(append(or.dests(&o.ListedOrigin), timePtrCol{&o.LastVisit}, &status,
				timePtrCol{&o.LastScheduled}, &r.ID, &r.Hit, &r.N)...)
			or.finish(&o.ListedOrigin)
			o.LastVisitStatus = visitStatus(status)
			return r, err
		})
	}, q, args...)
}
