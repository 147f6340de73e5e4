package client_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/api/client"
	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/sqlite"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestClientMatchesStore checks that the client returns what the store
// behind the server holds, and the store's error codes.
func TestClientMatchesStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "c.db"), store.Options{})
	require.NoError(t, err)
	defer st.Close()
	srv := httptest.NewServer(api.New(api.Config{Store: st,
		Tokens: []config.Token{{Name: "w", Token: "write-token-0123456789", Scope: "write"}}}))
	defer srv.Close()

	_, err = client.New("ftp://x", "", nil)
	require.Error(t, err)
	anon, err := client.New(srv.URL, "", nil)
	require.NoError(t, err)
	_, err = anon.TaskTypeList(ctx)
	require.Equal(t, revisit.ErrorCode("unauthorized"), revisit.Code(err))

	c, err := client.New(srv.URL+"/", "write-token-0123456789", srv.Client())
	require.NoError(t, err)
	tt := revisit.TaskType{Type: "load-git", BackendName: "b", DefaultInterval: 64 * 24 * time.Hour, MaxQueueLength: 7}
	require.NoError(t, c.TaskTypeCreate(ctx, tt))
	require.ErrorIs(t, c.TaskTypeCreate(ctx, tt), revisit.ErrConflict)
	got, err := c.TaskTypeGet(ctx, "load-git")
	require.NoError(t, err)
	require.Equal(t, tt, got)
	_, err = c.TaskTypeGet(ctx, "load-hg")
	require.ErrorIs(t, err, revisit.ErrNotFound)

	l, err := c.ListerGetOrCreate(ctx, "gitlab", "gitlab.com")
	require.NoError(t, err)
	byName, err := c.ListerGet(ctx, "gitlab", "gitlab.com")
	require.NoError(t, err)
	require.Equal(t, l.ID, byName.ID)
	_, err = c.ListerGet(ctx, "gitlab", "other")
	require.ErrorIs(t, err, revisit.ErrNotFound)
	ls, err := c.ListerGetByIDs(ctx, []uuid.UUID{l.ID, uuid.New()})
	require.NoError(t, err)
	require.Len(t, ls, 1)

	lu := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	res, err := c.ListedOriginsRecord(ctx, []revisit.ListedOrigin{{ListerID: l.ID, URL: "https://gitlab.com/a",
		VisitType: "git", Enabled: true, LastUpdate: &lu, ExtraLoaderArguments: map[string]any{"k": "v"}}})
	require.NoError(t, err)
	require.Equal(t, 1, res.Inserted)
	page, err := c.ListedOriginsGet(ctx, revisit.ListedOriginFilter{ListerID: &l.ID})
	require.NoError(t, err)
	want, err := st.ListedOriginsGet(ctx, revisit.ListedOriginFilter{ListerID: &l.ID})
	require.NoError(t, err)
	require.Equal(t, want, page)

	peek, err := c.GrabNextVisits(ctx, revisit.GrabParams{VisitType: "git", Count: 5,
		Policy: revisit.NeverVisitedOldestUpdateFirst, DryRun: true})
	require.NoError(t, err)
	require.Len(t, peek, 1)
	_, err = c.GrabNextVisits(ctx, revisit.GrabParams{VisitType: "git", Count: 5, Policy: "nope"})
	require.ErrorIs(t, err, revisit.ErrUnknownPolicy)

	ms, err := c.MetricsUpdate(ctx, nil, time.Time{})
	require.NoError(t, err)
	require.Len(t, ms, 1)
	stored, err := c.MetricsGet(ctx, &l.ID, "git")
	require.NoError(t, err)
	require.Equal(t, ms, stored)
	pos, err := c.QueuePositionGet(ctx, "git")
	require.NoError(t, err)
	require.Zero(t, pos)
	grabbed, err := c.GrabNextVisits(ctx, revisit.GrabParams{VisitType: "git", Count: 5,
		Policy: revisit.NeverVisitedOldestUpdateFirst})
	require.NoError(t, err)
	require.Len(t, grabbed, 1)
	stats, err := c.VisitStatsGet(ctx, []revisit.OriginKey{{URL: "https://gitlab.com/a", VisitType: "git"}})
	require.NoError(t, err)
	require.Len(t, stats, 1)
	require.NotNil(t, stats[0].LastScheduled)
	qs, err := c.Queues(ctx)
	require.NoError(t, err)
	require.Len(t, qs, 1)
	require.Nil(t, qs[0].Depth, "no broker: the depth is unknown")
}
