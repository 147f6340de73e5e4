package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/browse"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
	"github.com/revisit-sched/revisit/store/internal/urlsearch"
)

// OriginsSearch returns one page of the listed rows whose URL matches the
// search (store/internal/urlsearch pages it). The matching URLs come from
// origin_url (migrations/00022), as URLs says, after the URLs waiting in
// its backlog are indexed, searchCatchUp at most; their rows from the
// listed and pending tables, through their hash indexes on url. Unless
// the search is on (urlsearch.go), it is refused as unavailable.
func (s *Store) OriginsSearch(ctx context.Context, search revisit.OriginSearch) (revisit.OriginSearchPage, error) {
	state, err := urlSearchState(ctx, s.pool)
	if err != nil {
		return revisit.OriginSearchPage{}, translate(wrap(err, "search origins"))
	}
	if err := searchRefusal(state); err != nil {
		return revisit.OriginSearchPage{}, err
	}
	for indexed := 0; indexed < searchCatchUp; {
		n, err := s.IndexOriginURLs(ctx, catchUpBatch)
		if err != nil {
			return revisit.OriginSearchPage{}, err
		}
		if n < catchUpBatch {
			break
		}
		indexed += n
	}
	page, err := urlsearch.Run(ctx, searchEngine{s: s, trigramMatches: trigramMatches, walkLength: walkLength}, search)
	return page, translate(wrap(err, "search origins"))
}

// searchCatchUp is how many URLs waiting to be indexed a search indexes
// at most before it reads, catchUpBatch a transaction (~3 s for 200,000
// at 10M): all of them unless a bulk recording is adding more than
// `revisit serve`'s indexer keeps up with, in which case the newest are
// found by a later search.
const (
	searchCatchUp = 200_000
	catchUpBatch  = 50_000
)

// The bounds of a substring's search (docs/store.md, "Searching origins by
// URL", has the figures at 10M origins).
const (
	// trigramMatches is the most URLs the planner may expect to hold a
	// substring (its trigramWindow) for the search to read them all from
	// the trigram index, check them, sort them and keep the first: ~50 ms
	// for 20,000 at 10M.
	trigramMatches = 20_000
	// walkLength is how many URLs, in order, the search of a more common
	// substring reads at most a call: ~50 ms at 10M. Its matches are
	// usually near (a tenth of the URLs hold it, say); when they are not,
	// the page ends early, where the walk stopped.
	walkLength = 100_000
)

// searchEngine is the store's part of a search, with its bounds.
type searchEngine struct {
	s                          *Store
	trigramMatches, walkLength int
}

// URLs returns the next matching URLs of origin_url: for a prefix, a range
// of its primary key (one descent of the B-tree, then the URLs in order);
// for a substring the planner expects in few URLs, every match from the
// trigram index, sorted; for a more common one, a walk of the primary key
// in order, stopped after walkLength URLs.
func (e searchEngine) URLs(ctx context.Context, search revisit.OriginSearch, from string, inclusive bool, n int) ([]string, string, error) {
	if search.Match != revisit.MatchSubstring {
		sql, args := prefixQuery(search.Query, from, inclusive, n)
		urls, err := e.readURLs(ctx, nil, sql, args...)
		return urls, "", err
	}
	pattern := "%" + urlsearch.Escape(search.Query) + "%"
	window := "%" + urlsearch.Escape(trigramWindow(search.Query)) + "%"
	expected, err := e.expected(ctx, window)
	if err != nil {
		return nil, "", err
	}
	if expected <= float64(e.trigramMatches) {
		sql, args := trigramQuery(window, pattern, from, inclusive, n)
		urls, err := e.readURLs(ctx, trigramOnly, sql, args...)
		return urls, "", err
	}
	sql, args := walkQuery(pattern, from, inclusive, e.walkLength, n)
	urls, err := e.readURLs(ctx, nil, sql, args...)
	if err != nil || len(urls) == n {
		return urls, "", err
	}
	// Fewer than n in the walk: it stopped at its last URL, if it read
	// walkLength of them.
	sql, args = walkEnd(from, inclusive, e.walkLength)
	end, err := e.readURLs(ctx, nil, sql, args...)
	if err != nil || len(end) == 0 {
		return urls, "", err
	}
	return urls, end[0], nil
}

// readURLs runs a query of one text column, after the settings given, one
// statement each, in the same transaction.
func (e searchEngine) readURLs(ctx context.Context, settings []string, sql string, args ...any) ([]string, error) {
	if len(settings) == 0 {
		rows, _ := e.s.pool.Query(ctx, sql, args...)
		return pgx.CollectRows(rows, pgx.RowTo[string])
	}
	var out []string
	err := e.s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, strings.Join(settings, "; ")); err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, sql, args...)
		var err error
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	return out, err
}

// expected returns how many URLs of origin_url the planner expects to
// match a LIKE pattern, from its statistics.
func (e searchEngine) expected(ctx context.Context, pattern string) (float64, error) {
	var plan []struct {
		Plan struct {
			Rows float64 `json:"Plan Rows"`
		}
	}
	err := e.s.pool.QueryRow(ctx, "EXPLAIN (FORMAT JSON) SELECT url FROM origin_url WHERE url LIKE $1", pattern).Scan(&plan)
	if err != nil || len(plan) == 0 {
		return 0, fmt.Errorf("estimating the matches of %q: %w", pattern, err)
	}
	return plan[0].Plan.Rows, nil
}

// trigramOnly makes the planner read the trigram index, whatever its
// estimate: left to choose, it may walk the primary key in order for a
// LIMIT, which reads every URL when the matches are few.
var trigramOnly = []string{"SET LOCAL enable_indexscan = off", "SET LOCAL enable_indexonlyscan = off",
	"SET LOCAL enable_seqscan = off"}

// fromCondition is the condition on url of the URLs after the first
// argument (it included when inclusive).
func fromCondition(inclusive bool) string {
	if inclusive {
		return "url >= $1"
	}
	return "url > $1"
}

// prefixQuery returns the statement of the n next URLs that start with
// prefix, and its arguments. With the "C" collation, the planner makes a
// LIKE prefix a range of the key.
func prefixQuery(prefix, from string, inclusive bool, n int) (string, []any) {
	if prefix == "" {
		return "SELECT url FROM origin_url WHERE " + fromCondition(inclusive) + " ORDER BY url LIMIT $2", []any{from, n}
	}
	return likeQuery(urlsearch.Escape(prefix)+"%", from, inclusive, n)
}

// likeQuery returns the statement of the n next URLs matching a LIKE
// pattern, and its arguments.
func likeQuery(pattern, from string, inclusive bool, n int) (string, []any) {
	return "SELECT url FROM origin_url WHERE " + fromCondition(inclusive) + " AND url LIKE $2 ORDER BY url LIMIT $3",
		[]any{from, pattern, n}
}

// trigramWindowLength is how many characters of a substring the trigram
// index looks up (trigramWindow).
const trigramWindowLength = 12

// trigramWindow returns the part of a substring that the trigram index
// looks up: its last trigramWindowLength characters. The index reads the
// list of URLs of each three-character run it looks up, and those of a
// host or of a common word hold millions: the end of what one searches
// (a repository's name, say) has the rarest runs. At 10M origins, the
// whole of "github.com/user/project-name" took ~0.7 s, its end ~15 ms.
func trigramWindow(q string) string {
	runes := []rune(q)
	return string(runes[max(0, len(runes)-trigramWindowLength):])
}

// trigramQuery returns the statement of the n next URLs matching pattern,
// read from the trigram index (under trigramOnly) by window, a pattern of
// a part of it (trigramWindow), and its arguments. pattern is checked on
// each URL found, as a condition the index cannot take: given both, the
// planner would look up every run of pattern in the index.
func trigramQuery(window, pattern, from string, inclusive bool, n int) (string, []any) {
	if window == pattern {
		return likeQuery(pattern, from, inclusive, n)
	}
	return "SELECT url FROM origin_url WHERE " + fromCondition(inclusive) +
		" AND url LIKE $2 AND (url || '') LIKE $3 ORDER BY url LIMIT $4", []any{from, window, pattern, n}
}

// walkQuery returns the statement of the n next URLs matching pattern
// among the length next URLs, and its arguments.
func walkQuery(pattern, from string, inclusive bool, length, n int) (string, []any) {
	return "SELECT url FROM (SELECT url FROM origin_url WHERE " + fromCondition(inclusive) +
		" ORDER BY url LIMIT $2) walk WHERE url LIKE $3 LIMIT $4", []any{from, length, pattern, n}
}

// walkEnd returns the statement of the length-th URL from `from`, and its
// arguments: none when fewer follow.
func walkEnd(from string, inclusive bool, length int) (string, []any) {
	return "SELECT url FROM origin_url WHERE " + fromCondition(inclusive) + " ORDER BY url OFFSET $2 LIMIT 1",
		[]any{from, length - 1}
}

// Rows returns the listed rows, pending ones included, of urls that pass
// the search's filters, each URL probed in the hash indexes on url. Only
// sequential scans are turned off (statistics taken on a small table
// would pick one): a hash index serves url = ANY(…) through a bitmap scan
// alone, and without it the planner walks a whole index instead.
func (e searchEngine) Rows(ctx context.Context, search revisit.OriginSearch, urls []string) ([]revisit.OriginMatch, error) {
	sql, args := rowsQuery(search, urls)
	var found []revisit.OriginMatch
	err := e.s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, rowsSetting); err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, sql, args...)
		var err error
		found, err = pgx.CollectRows(rows, scanMatch)
		return err
	})
	return found, err
}

// rowsSetting is the setting of Rows' transaction.
const rowsSetting = "SET LOCAL enable_seqscan = off"

// rowsQuery returns the statement of Rows.
func rowsQuery(search revisit.OriginSearch, urls []string) (string, []any) {
	filters, args := urlsearch.Filters(search, []any{urls}, func(n int) string { return fmt.Sprintf("$%d", n) })
	where := append([]string{"url = ANY($1)"}, filters...)
	return "SELECT " + grabsql.OriginColumns + ", last_visit, last_visit_status FROM listed_origin_all WHERE " +
		strings.Join(where, " AND "), args
}

// scanMatch scans grabsql.OriginColumns, last_visit and last_visit_status.
func scanMatch(row pgx.CollectableRow) (revisit.OriginMatch, error) {
	var (
		m      revisit.OriginMatch
		status *string
	)
	err := row.Scan(append(originDests(&m.ListedOrigin), &m.LastVisit, &status)...)
	normalizeOrigin(&m.ListedOrigin)
	m.LastVisit, m.LastVisitStatus = utcPtr(m.LastVisit), visitStatus(status)
	return m, err
}

// visitStatus converts a last_visit_status column.
func visitStatus(s *string) *revisit.VisitStatus {
	if s == nil {
		return nil
	}
	st := revisit.VisitStatus(*s)
	return &st
}

// OriginsBrowse returns one page of a browse (store/internal/browse pages
// it), leaving out the picks set aside; the origins pending a result are
// not in listed_origin.
func (s *Store) OriginsBrowse(ctx context.Context, b revisit.OriginBrowse) (revisit.OriginBrowsePage, error) {
	page, err := browse.Run(ctx, browser{s}, dialectAside, b)
	return page, translate(wrap(err, "browse origins"))
}

// browser runs a browse's statements.
type browser struct{ s *Store }

func (b browser) BrowseRows(ctx context.Context, sql string, args []any) ([]browse.Row, error) {
	rows, _ := b.s.pool.Query(ctx, sql, args...)
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (browse.Row, error) {
		var (
			r      browse.Row
			status *string
		)
		o := &r.Origin
		err := row.Scan(append(originDests(&o.ListedOrigin), &o.LastVisit, &status, &o.LastScheduled, &r.ID, &r.Hit, &r.N)...)
		normalizeOrigin(&o.ListedOrigin)
		o.LastVisit, o.LastScheduled, o.LastVisitStatus = utcPtr(o.LastVisit), utcPtr(o.LastScheduled), visitStatus(status)
		return r, err
	})
}
