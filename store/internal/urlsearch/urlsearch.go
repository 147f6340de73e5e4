// Package urlsearch pages an origin search (revisit.OriginSearch) the same
// way on both stores: it takes the URLs that match the query in byte order,
// a page's worth at a time (or the whole budget at once when filters may
// leave matches out), reads their listed rows with the search's filters,
// and stops once it has a page or has read Budget matching URLs.
//
// Reading URLs first keeps each store's part to two plain queries, each
// served by an index: the matching URLs in order (a B-tree range for a
// prefix, a trigram index or a walk of the B-tree for a substring), and the
// rows of a few URLs by equality. The budget bounds the work of a page
// whatever the filters leave out of the matches; an engine may bound its
// own reading further (Engine.URLs).
package urlsearch

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
	"github.com/revisit-sched/revisit/store/internal/pagetoken"
)

// Engine is what a store does for a search.
type Engine interface {
	// URLs returns at most n distinct URLs matching s's query (Match
	// says how), in byte order, from `from` on: after it, or from it
	// included when inclusive. An engine may stop reading before it has
	// n, to bound its work: it then returns the last URL it read,
	// matching or not, as stop, after which the search resumes; stop is
	// empty when fewer than n URLs match from `from` on.
	URLs(ctx context.Context, s revisit.OriginSearch, from string, inclusive bool, n int) (urls []string, stop string, err error)
	// Rows returns the listed rows of urls that pass s's filters
	// (ListerID, VisitType, Enabled), in any order.
	Rows(ctx context.Context, s revisit.OriginSearch, urls []string) ([]revisit.OriginMatch, error)
}

// Budget returns how many matching URLs a page of limit rows reads at
// most.
func Budget(limit int) int { return 10 * max(limit, 100) }

// Run validates the search and returns its page.
func Run(ctx context.Context, e Engine, s revisit.OriginSearch) (revisit.OriginSearchPage, error) {
	if err := s.Validate(); err != nil {
		return revisit.OriginSearchPage{}, err
	}
	if err := checkEnabled(s.Enabled); err != nil {
		return revisit.OriginSearchPage{}, err
	}
	s.Match, _ = revisit.ParseURLMatch(string(s.Match))
	limit, err := batch.PageLimit(s.Limit)
	if err != nil {
		return revisit.OriginSearchPage{}, err
	}
	var start *pagetoken.SearchKey
	if s.PageToken != "" {
		k, err := pagetoken.DecodeSearch(s.PageToken)
		if err != nil {
			return revisit.OriginSearchPage{}, err
		}
		start = &k
	}
	from, inclusive := "", true
	if start != nil {
		from, inclusive = start.URL, !start.WholeURL
	}
	var (
		rows     []revisit.OriginMatch
		read     int
		budget   = Budget(limit)
		filtered = s.ListerID != nil || s.VisitType != "" || s.Enabled != revisit.AnyEnabled
		finished bool
	)
	for read < budget && len(rows) <= limit {
		// Every URL has a row: without filters, a page's worth of URLs
		// fills the page.
		n := budget - read
		if !filtered {
			n = min(limit+1-len(rows), n)
		}
		urls, stop, err := e.URLs(ctx, s, from, inclusive, n)
		if err != nil {
			return revisit.OriginSearchPage{}, err
		}
		read += len(urls)
		if len(urls) > 0 {
			got, err := e.Rows(ctx, s, urls)
			if err != nil {
				return revisit.OriginSearchPage{}, err
			}
			rows = append(rows, after(got, start)...)
			from, inclusive = urls[len(urls)-1], false
		}
		if stop != "" {
			from = stop
			break
		}
		if len(urls) < n {
			finished = true
			break
		}
	}
	slices.SortFunc(rows, compare)
	switch {
	case len(rows) > limit:
		last := rows[limit-1]
		return revisit.OriginSearchPage{Origins: rows[:limit], NextPageToken: pagetoken.EncodeSearch(
			pagetoken.SearchKey{URL: last.URL, VisitType: last.VisitType, ListerID: last.ListerID})}, nil
	case finished:
		return revisit.OriginSearchPage{Origins: rows}, nil
	}
	return revisit.OriginSearchPage{Origins: rows,
		NextPageToken: pagetoken.EncodeSearch(pagetoken.SearchKey{URL: from, WholeURL: true})}, nil
}

// checkEnabled refuses an enabled filter that is none of the known ones.
func checkEnabled(f revisit.EnabledFilter) error {
	switch f {
	case revisit.OnlyEnabled, revisit.OnlyDisabled, revisit.AnyEnabled:
		return nil
	}
	return revisit.Invalidf("enabled", "unknown enabled filter %d", f)
}

// after drops the rows a token resuming inside a URL has already given:
// those of its URL up to its row.
func after(rows []revisit.OriginMatch, start *pagetoken.SearchKey) []revisit.OriginMatch {
	if start == nil || start.WholeURL {
		return rows
	}
	k := revisit.OriginMatch{ListedOrigin: revisit.ListedOrigin{URL: start.URL, VisitType: start.VisitType, ListerID: start.ListerID}}
	return slices.DeleteFunc(rows, func(r revisit.OriginMatch) bool { return compare(r, k) <= 0 })
}

// compare orders rows by (url, visit_type, lister_id), in byte order.
func compare(a, b revisit.OriginMatch) int {
	return cmp.Or(strings.Compare(a.URL, b.URL), strings.Compare(a.VisitType, b.VisitType),
		bytes.Compare(a.ListerID[:], b.ListerID[:]))
}

// Escape returns s with the characters special to LIKE (%, _ and the
// escape character \) escaped with \, so that LIKE matches s literally.
func Escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// PrefixEnd returns the least string greater than every string that starts
// with the non-empty prefix p, in byte order: p with its last byte
// incremented (valid UTF-8 never holds the byte 0xff, so there is no
// carry). The result need not be valid UTF-8.
func PrefixEnd(p string) string {
	b := []byte(p)
	b[len(b)-1]++
	return string(b)
}

// Filters returns the conditions on listed rows of the search's filters
// (lister, visit type, enabled) and args with their arguments appended,
// each argument named by placeholder(its position in args, from 1).
func Filters(s revisit.OriginSearch, args []any, placeholder func(n int) string) ([]string, []any) {
	var where []string
	if s.ListerID != nil {
		args = append(args, *s.ListerID)
		where = append(where, "lister_id = "+placeholder(len(args)))
	}
	if s.VisitType != "" {
		args = append(args, s.VisitType)
		where = append(where, "visit_type = "+placeholder(len(args)))
	}
	switch s.Enabled {
	case revisit.OnlyEnabled:
		where = append(where, "enabled")
	case revisit.OnlyDisabled:
		where = append(where, "NOT enabled")
	}
	return where, args
}
