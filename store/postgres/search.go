package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
	"github.com/revisit-sched/revisit/store/internal/urlsearch"
)

// OriginsSearch returns one page of the listed rows whose URL matches the
// search (store/internal/urlsearch pages it). The matching URLs come from
// origin_url (migrations/00022): a range of its primary key for a prefix,
// its trigram index or a walk of its key in order for a substring, as the
// planner judges from the query; their rows come from the listed and
// pending tables through their hash indexes on url.
func (s *Store) OriginsSearch(ctx context.Context, search revisit.OriginSearch) (revisit.OriginSearchPage, error) {
	page, err := urlsearch.Run(ctx, searchEngine{s}, search)
	return page, translate(wrap(err, "search origins"))
}

// searchEngine is the store's part of a search.
type searchEngine struct{ s *Store }

// URLs returns the next matching URLs of origin_url.
func (e searchEngine) URLs(ctx context.Context, search revisit.OriginSearch, from string, inclusive bool, n int) ([]string, error) {
	sql, args := urlsQuery(search, from, inclusive, n)
	rows, _ := e.s.pool.Query(ctx, sql, args...)
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// urlsQuery returns the statement of URLs and its arguments.
func urlsQuery(search revisit.OriginSearch, from string, inclusive bool, n int) (string, []any) {
	op := ">"
	if inclusive {
		op = ">="
	}
	sql := "SELECT url FROM origin_url WHERE url " + op + " $1"
	args := []any{from}
	switch {
	case search.Match == revisit.MatchSubstring:
		sql += " AND url LIKE $2"
		args = append(args, "%"+urlsearch.Escape(search.Query)+"%")
	case search.Query != "":
		// With the "C" collation, the planner makes a LIKE prefix a range
		// of the key: one B-tree descent, then the URLs in order.
		sql += " AND url LIKE $2"
		args = append(args, urlsearch.Escape(search.Query)+"%")
	}
	args = append(args, n)
	return sql + fmt.Sprintf(" ORDER BY url LIMIT $%d", len(args)), args
}

// Rows returns the listed rows, pending ones included, of urls that pass
// the search's filters, each URL probed in the hash indexes on url
// (withIndexScans: a bitmap of a few hundred probes would read as many
// pages all the same, and statistics taken on a small table would pick a
// sequential scan).
func (e searchEngine) Rows(ctx context.Context, search revisit.OriginSearch, urls []string) ([]revisit.OriginMatch, error) {
	where := []string{"url = ANY($1)"}
	args := []any{urls}
	if search.ListerID != nil {
		args = append(args, *search.ListerID)
		where = append(where, fmt.Sprintf("lister_id = $%d", len(args)))
	}
	if search.VisitType != "" {
		args = append(args, search.VisitType)
		where = append(where, fmt.Sprintf("visit_type = $%d", len(args)))
	}
	switch search.Enabled {
	case revisit.OnlyEnabled:
		where = append(where, "enabled")
	case revisit.OnlyDisabled:
		where = append(where, "NOT enabled")
	}
	sql := "SELECT " + grabsql.OriginColumns + ", last_visit, last_visit_status FROM listed_origin_all WHERE " +
		strings.Join(where, " AND ")
	var found []revisit.OriginMatch
	err := e.s.inTx(ctx, func(tx pgx.Tx) error {
		return withIndexScans(ctx, tx, func() error {
			rows, _ := tx.Query(ctx, sql, args...)
			var err error
			found, err = pgx.CollectRows(rows, scanMatch)
			return err
		})
	})
	return found, err
}

// scanMatch scans grabsql.OriginColumns, last_visit and last_visit_status.
func scanMatch(row pgx.CollectableRow) (revisit.OriginMatch, error) {
	var (
		m      revisit.OriginMatch
		status *string
	)
	err := row.Scan(append(originDests(&m.ListedOrigin), &m.LastVisit, &status)...)
	normalizeOrigin(&m.ListedOrigin)
	m.LastVisit = utcPtr(m.LastVisit)
	if status != nil {
		st := revisit.VisitStatus(*status)
		m.LastVisitStatus = &st
	}
	return m, err
}
