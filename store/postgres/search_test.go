package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/urlsearch"
)

// originURLs returns the URLs of origin_url, in order, after indexing
// every URL of its backlog.
func originURLs(t *testing.T, s *Store) []string {
	t.Helper()
	_, err := s.IndexOriginURLs(context.Background(), 1_000_000)
	require.NoError(t, err)
	return tableURLs(t, s, "origin_url")
}

// tableURLs returns the url column of a table, in order.
func tableURLs(t *testing.T, s *Store, table string) []string {
	t.Helper()
	rows, _ := s.pool.Query(context.Background(), "SELECT url FROM "+table+" ORDER BY url")
	urls, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return urls
}

// TestOriginURLHoldsEveryListedURL: once indexed, origin_url holds the
// URL of each new listed row once, whatever its lister and visit type,
// and migration 00022 copies the URLs of the rows already listed, pending
// ones included.
func TestOriginURLHoldsEveryListedURL(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	recordGitOrigins(t, s, 3)
	l, err := s.ListerGetOrCreate(ctx, "github", "")
	require.NoError(t, err)
	_, err = s.ListedOriginsRecord(ctx, []revisit.ListedOrigin{
		{ListerID: l.ID, URL: "https://forge.example/1", VisitType: "git", Enabled: true},
		{ListerID: l.ID, URL: "https://forge.example/1", VisitType: "hg", Enabled: true},
		{ListerID: l.ID, URL: "https://forge.example/9", VisitType: "hg", Enabled: true}})
	require.NoError(t, err)
	want := []string{"https://forge.example/0", "https://forge.example/1", "https://forge.example/2",
		"https://forge.example/9"}
	require.Equal(t, want, originURLs(t, s))

	// Two of them in flight, in the pending table; then the schema
	// before 00022, and the migration again.
	_, err = s.VisitsDispatch(ctx, revisit.DispatchParams{Owner: "test", Grab: revisit.GrabParams{
		VisitType: "git", Count: 2, Policy: revisit.OldestScheduledFirst, Now: time.Now()}})
	require.NoError(t, err)
	flushAside(t, s)
	var pending int
	require.NoError(t, s.pool.QueryRow(ctx, "SELECT count(DISTINCT url) FROM listed_origin_pending").Scan(&pending))
	require.Equal(t, 2, pending)
	p, db, err := s.provider(ctx)
	require.NoError(t, err)
	defer db.Close()
	_, err = p.DownTo(ctx, 21)
	require.NoError(t, err)
	require.NoError(t, s.Migrate(ctx))
	require.Equal(t, want, originURLs(t, s))
}

// TestRecordingLeavesURLsToIndex: a recording appends the URLs of the rows
// it inserts to origin_url_backlog and writes nothing to origin_url; a
// move indexes at most what it is asked, concurrent moves index every URL
// once, a URL indexed already is not indexed twice, and a search indexes
// what waits before it reads.
func TestRecordingLeavesURLsToIndex(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	recordGitOrigins(t, s, 40)
	require.Empty(t, tableURLs(t, s, "origin_url"))
	require.Len(t, tableURLs(t, s, "origin_url_backlog"), 40)

	moved, err := s.IndexOriginURLs(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, 1, moved)
	require.Len(t, tableURLs(t, s, "origin_url"), 1)

	var g errgroup.Group
	counts := make([]int, 4)
	for i := range counts {
		g.Go(func() error {
			for {
				n, err := s.IndexOriginURLs(ctx, 3)
				counts[i] += n
				if err != nil || n == 0 {
					return err
				}
			}
		})
	}
	require.NoError(t, g.Wait())
	require.Equal(t, 39, counts[0]+counts[1]+counts[2]+counts[3])
	require.Empty(t, tableURLs(t, s, "origin_url_backlog"))
	indexed := tableURLs(t, s, "origin_url")
	require.Len(t, indexed, 40)

	// The same URL listed for another visit type waits again, and is
	// indexed once; a search finds a URL recorded just before it.
	l, err := s.ListerGetOrCreate(ctx, "github", "")
	require.NoError(t, err)
	_, err = s.ListedOriginsRecord(ctx, []revisit.ListedOrigin{
		{ListerID: l.ID, URL: indexed[0], VisitType: "hg", Enabled: true},
		{ListerID: l.ID, URL: "https://forge.example/searched-at-once", VisitType: "git", Enabled: true}})
	require.NoError(t, err)
	page, err := s.OriginsSearch(ctx, revisit.OriginSearch{Query: "searched-at", Match: revisit.MatchSubstring})
	require.NoError(t, err)
	require.Len(t, page.Origins, 1)
	require.Equal(t, "https://forge.example/searched-at-once", page.Origins[0].URL)
	require.Empty(t, tableURLs(t, s, "origin_url_backlog"))
	require.Equal(t, append(indexed, "https://forge.example/searched-at-once"), tableURLs(t, s, "origin_url"))
}

// TestSearchPlans checks how origin_url answers the URLs of a search, on a
// few thousand URLs with statistics: a prefix is a range of the primary
// key, read in order; a substring the planner expects in few URLs comes
// from the trigram index; a common one from a walk of the primary key in
// order, not from every match sorted.
func TestSearchPlans(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	l, err := s.ListerGetOrCreate(ctx, "gitlab", "")
	require.NoError(t, err)
	origins := make([]revisit.ListedOrigin, 5000)
	for i := range origins {
		origins[i] = revisit.ListedOrigin{ListerID: l.ID, VisitType: "git", Enabled: true,
			URL: fmt.Sprintf("https://forge%d.example/group%d/project-%05d", i%7, i%50, i)}
	}
	_, err = s.ListedOriginsRecord(ctx, origins)
	require.NoError(t, err)
	_, err = s.IndexOriginURLs(ctx, len(origins))
	require.NoError(t, err)
	require.NoError(t, s.Maintain(ctx))
	engine := searchEngine{s: s, trigramMatches: trigramMatches, walkLength: walkLength}
	rare, err := engine.expected(ctx, "%project-01234%")
	require.NoError(t, err)
	common, err := engine.expected(ctx, "%https://%")
	require.NoError(t, err)
	require.Less(t, rare, 50.0, "the planner expects few URLs to hold a rare substring")
	require.Greater(t, common, 4000.0, "and most to hold a common one")

	prefix, prefixArgs := prefixQuery("https://forge3.example/group12/", "", true, 101)
	trigram, trigramArgs := trigramQuery("%project-01234%", "%project-01234%", "", true, 101)
	window, windowArgs := trigramQuery("%p/project-01234%", "%group12/project-01234%", "", true, 101)
	walk, walkArgs := walkQuery("%https://%", "", true, walkLength, 101)
	var some []string
	for i := range 500 {
		some = append(some, fmt.Sprintf("https://forge3.example/group12/project-%05d", i))
	}
	rows, rowsArgs := rowsQuery(revisit.OriginSearch{}, some)
	for _, c := range []struct {
		name, setup, sql string
		args             []any
		want             string
	}{
		{"prefix", "", prefix, prefixArgs, "Index Only Scan using origin_url_pkey"},
		{"rare substring", strings.Join(trigramOnly, "; "), trigram, trigramArgs, "Bitmap Index Scan on origin_url_trigram"},
		{"rare substring's end", strings.Join(trigramOnly, "; "), window, windowArgs,
			"Index Cond: (url ~~ '%p/project-01234%'::text)"},
		{"common substring", "", walk, walkArgs, "Index Only Scan using origin_url_pkey"},
		{"rows of the URLs", rowsSetting, rows, rowsArgs, "Bitmap Index Scan on listed_origin_url"},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan := explainWith(t, ctx, s, c.setup, c.sql, c.args...)
			require.Contains(t, plan, c.want)
			require.NotContains(t, plan, "Seq Scan")
			require.NotContains(t, plan, "Filter: (url = ANY", "a probe of each URL, not a walk of an index")
			if c.name == "prefix" {
				require.Contains(t, plan, "Index Cond: ((url >= ", "the prefix bounds the scan")
			}
			if !strings.HasPrefix(c.name, "rare substring") {
				require.NotContains(t, plan, "Sort", "read in order")
			}
		})
	}
}

// TestSearchWalkStops: the search of a common substring reads at most a
// walk's length of URLs a page; when its matches lie beyond, the page ends
// early where the walk stopped, and the next one goes on from there.
// Followed to the end, the pages hold every match once, in order, as the
// trigram index's search does.
func TestSearchWalkStops(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	l, err := s.ListerGetOrCreate(ctx, "gitlab", "")
	require.NoError(t, err)
	var origins []revisit.ListedOrigin
	for i := range 2000 {
		origins = append(origins, revisit.ListedOrigin{ListerID: l.ID, VisitType: "git", Enabled: true,
			URL: fmt.Sprintf("https://a.example/x-%04d", i)})
	}
	for i := range 120 {
		origins = append(origins, revisit.ListedOrigin{ListerID: l.ID, VisitType: "git", Enabled: true,
			URL: fmt.Sprintf("https://b.example/needle-%04d", i)})
	}
	_, err = s.ListedOriginsRecord(ctx, origins)
	require.NoError(t, err)
	_, err = s.IndexOriginURLs(ctx, len(origins))
	require.NoError(t, err)
	follow := func(e searchEngine) (urls []string, pages int) {
		search := revisit.OriginSearch{Query: "needle", Match: revisit.MatchSubstring, Limit: 50}
		for pages = 1; ; pages++ {
			page, err := urlsearch.Run(ctx, e, search)
			require.NoError(t, err)
			for _, o := range page.Origins {
				urls = append(urls, o.URL)
			}
			if page.NextPageToken == "" {
				return urls, pages
			}
			search.PageToken = page.NextPageToken
		}
	}
	trigram, pages := follow(searchEngine{s: s, trigramMatches: trigramMatches, walkLength: walkLength})
	require.Len(t, trigram, 120)
	require.Equal(t, 3, pages)
	walked, pages := follow(searchEngine{s: s, trigramMatches: 0, walkLength: 500})
	require.Equal(t, trigram, walked)
	require.Equal(t, 7, pages, "4 walks of 500 URLs without a match, then 50, 50 and 20 needles")
}

func TestTrigramWindow(t *testing.T) {
	require.Equal(t, "linux", trigramWindow("linux"))
	require.Equal(t, "rvalds/linux", trigramWindow("github.com/torvalds/linux"))
	require.Equal(t, "/ü/ßtraße-ça", trigramWindow("https://forge/ü/ßtraße-ça"), "characters, not bytes")
}
