package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// originURLs returns the URLs of origin_url, in order.
func originURLs(t *testing.T, s *Store) []string {
	t.Helper()
	rows, _ := s.pool.Query(context.Background(), "SELECT url FROM origin_url ORDER BY url")
	urls, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return urls
}

// TestOriginURLHoldsEveryListedURL: recording puts the URL of each new
// listed row in origin_url once, whatever its lister and visit type, and
// migration 00022 copies the URLs of the rows already listed, pending
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

// TestSearchPlans checks how origin_url answers the URLs of a search, on a
// few thousand URLs with statistics: a prefix is a range of the primary
// key, read in order; a rare substring comes from the trigram index; a
// substring most URLs hold, from a walk of the primary key in order that
// stops at the page's end, not from every match sorted.
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
	require.NoError(t, s.Maintain(ctx))
	for _, c := range []struct {
		name   string
		search revisit.OriginSearch
		want   string
	}{
		{"prefix", revisit.OriginSearch{Query: "https://forge3.example/group12/"}, "Index Only Scan using origin_url_pkey"},
		{"rare substring", revisit.OriginSearch{Query: "project-01234", Match: revisit.MatchSubstring},
			"Bitmap Index Scan on origin_url_trigram"},
		{"common substring", revisit.OriginSearch{Query: "https://", Match: revisit.MatchSubstring},
			"Index Only Scan using origin_url_pkey"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sql, args := urlsQuery(c.search, "", true, 101)
			plan := explainWith(t, ctx, s, "", sql, args...)
			require.Contains(t, plan, c.want)
			if c.search.Match == revisit.MatchPrefix {
				require.Contains(t, plan, "Index Cond: ((url >= ", "the prefix bounds the scan")
			}
			if !strings.Contains(c.want, "Bitmap") {
				require.NotContains(t, plan, "Sort", "read in order")
			}
		})
	}
}
