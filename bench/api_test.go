package bench_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/bench"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
)

// TestConsoleReads runs P11's reads against an API over a small store:
// every group is read, without error, and the searches and origin pages
// name origins the store lists.
func TestConsoleReads(t *testing.T) {
	ctx := context.Background()
	st := teststore.SQLite(t)
	l, err := st.ListerGetOrCreate(ctx, "forge", "forge.example")
	require.NoError(t, err)
	var origins []revisit.ListedOrigin
	for i := range 30 {
		origins = append(origins, revisit.ListedOrigin{ListerID: l.ID, URL: fmt.Sprintf("https://forge.example/team/repo-%04d", i),
			VisitType: "git", Enabled: true})
	}
	_, err = st.ListedOriginsRecord(ctx, origins)
	require.NoError(t, err)
	srv := httptest.NewServer(api.New(api.Config{Store: st}))
	defer srv.Close()

	groups, err := bench.ConsoleGroups(ctx, srv.URL, "", 10)
	require.NoError(t, err)
	require.Equal(t, []string{"overview", "origin page", "URL search", "origins browse"},
		[]string{groups[0].Name, groups[1].Name, groups[2].Name, groups[3].Name})
	require.Len(t, groups[1].Paths, 10, "one origin page for each origin sampled")
	require.Contains(t, groups[2].Paths, "/api/v1/origins/search?limit=50&match=substring&q=epo-0003")
	require.Contains(t, groups[3].Paths, "/api/v1/origins/browse?limit=50&visit_type=git")
	require.Len(t, groups[3].Paths, 6, "one page of each view: none has a second among 30 origins")

	rep, err := bench.RunAPI(ctx, bench.APIConfig{Server: srv.URL, Clients: 3, Duration: 500 * time.Millisecond, Groups: groups})
	require.NoError(t, err)
	for _, g := range rep.Groups {
		require.Positive(t, g.Requests, g.Name)
		require.Zero(t, g.Errors, "%s: %s", g.Name, g.FirstError)
	}

	empty := httptest.NewServer(api.New(api.Config{Store: teststore.SQLite(t)}))
	defer empty.Close()
	_, err = bench.ConsoleGroups(ctx, empty.URL, "", 10)
	require.ErrorContains(t, err, "the server lists no origin")
}
