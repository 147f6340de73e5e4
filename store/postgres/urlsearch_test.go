package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
)

// originURLIndexes returns the definition of each index of origin_url
// (its storage parameters included), by name.
func originURLIndexes(t *testing.T, s *Store) map[string]string {
	t.Helper()
	rows, _ := s.pool.Query(context.Background(), `SELECT c.relname::text, pg_get_indexdef(c.oid)
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = to_regclass('origin_url')`)
	defs := map[string]string{}
	var name, def string
	_, err := pgx.ForEachRow(rows, []any{&name, &def}, func() error {
		defs[name] = def
		return nil
	})
	require.NoError(t, err)
	return defs
}

// recordURLs records enabled origins of lister l, of visitType, at urls.
func recordURLs(t *testing.T, s *Store, l revisit.Lister, visitType string, urls ...string) {
	t.Helper()
	origins := make([]revisit.ListedOrigin, len(urls))
	for i, u := range urls {
		origins[i] = revisit.ListedOrigin{ListerID: l.ID, URL: u, VisitType: visitType, Enabled: true}
	}
	_, err := s.ListedOriginsRecord(context.Background(), origins)
	require.NoError(t, err)
}

// TestURLSearchOffAndOn: off, the trigram index is gone, origin_url and
// its backlog are empty, and their space freed; recordings append nothing
// to the backlog, which IndexOriginURLs leaves alone, and Maintain still
// runs. On again, origin_url holds every listed URL, pending ones
// included, and its indexes are as the migrations left them.
func TestURLSearchOffAndOn(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	recordGitOrigins(t, s, 500)
	_, err := s.IndexOriginURLs(ctx, 1000)
	require.NoError(t, err)
	recordGitOrigins(t, s, 510) // ten more, waiting in the backlog
	require.Len(t, tableURLs(t, s, "origin_url_backlog"), 10)
	indexes := originURLIndexes(t, s)
	require.Len(t, indexes, 2)
	require.Contains(t, indexes["origin_url_pkey"], "USING btree (url)")
	require.Contains(t, indexes["origin_url_trigram"], "USING gin (url gin_trgm_ops) WITH (gin_pending_list_limit='131072')")
	on, err := s.URLSearchStatus(ctx)
	require.NoError(t, err)
	require.Equal(t, store.URLSearchStatus{State: store.URLSearchOn, Own: true, Bytes: on.Bytes}, on)

	changed, err := s.SetURLSearch(ctx, false)
	require.NoError(t, err)
	require.True(t, changed)
	off, err := s.URLSearchStatus(ctx)
	require.NoError(t, err)
	require.Equal(t, store.URLSearchOff, off.State)
	require.Less(t, off.Bytes, on.Bytes/4, "off frees most of the space: %d of %d bytes left", off.Bytes, on.Bytes)
	require.NotContains(t, originURLIndexes(t, s), "origin_url_trigram", "the trigram index is dropped")
	require.Empty(t, tableURLs(t, s, "origin_url"))
	require.Empty(t, tableURLs(t, s, "origin_url_backlog"))

	recordGitOrigins(t, s, 520)
	l, err := s.ListerGetOrCreate(ctx, "github", "")
	require.NoError(t, err)
	recordURLs(t, s, l, "hg", "https://forge.example/pending-while-off")
	require.Empty(t, tableURLs(t, s, "origin_url_backlog"), "recordings leave no URL to index")
	moved, err := s.IndexOriginURLs(ctx, 1000)
	require.NoError(t, err)
	require.Zero(t, moved)
	require.NoError(t, s.Maintain(ctx))
	got, err := s.GrabNextVisits(ctx, revisit.GrabParams{VisitType: "hg", Count: 1, Policy: revisit.OldestScheduledFirst})
	require.NoError(t, err)
	require.Len(t, got, 1)
	flushAside(t, s)
	require.Equal(t, []string{"https://forge.example/pending-while-off"}, tableURLs(t, s, "listed_origin_pending"))

	changed, err = s.SetURLSearch(ctx, true)
	require.NoError(t, err)
	require.True(t, changed)
	require.Len(t, tableURLs(t, s, "origin_url"), 521, "every listed URL, the pending one included")
	require.Empty(t, tableURLs(t, s, "origin_url_backlog"))
	require.Equal(t, indexes, originURLIndexes(t, s), "the indexes the migrations leave")
	page, err := s.OriginsSearch(ctx, revisit.OriginSearch{Query: "pending-while", Match: revisit.MatchSubstring})
	require.NoError(t, err)
	require.Len(t, page.Origins, 1)
	status, err := s.URLSearchStatus(ctx)
	require.NoError(t, err)
	require.Equal(t, store.URLSearchOn, status.State)
	require.Greater(t, status.Bytes, off.Bytes)
}

// TestURLSearchOnWaitsForRecordingsUnderWay: turning the search on waits
// for the recordings under way, which saw it off and append nothing to
// the backlog, and the copy then holds their URLs; a recording that
// waited for the switch sees the search on and appends its URLs.
func TestURLSearchOnWaitsForRecordingsUnderWay(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	recordGitOrigins(t, s, 1)
	l, err := s.ListerGetOrCreate(ctx, "gitlab", "")
	require.NoError(t, err)
	_, err = s.SetURLSearch(ctx, false)
	require.NoError(t, err)

	// A recording under way: its transaction holds the backlog, as the
	// recording statement's does, and has inserted a listed row.
	underWay, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	defer underWay.Rollback(ctx)
	_, err = underWay.Exec(ctx, "LOCK TABLE origin_url_backlog IN ROW EXCLUSIVE MODE")
	require.NoError(t, err)
	_, err = underWay.Exec(ctx, `INSERT INTO listed_origin (lister_id, url, visit_type, first_seen, last_seen)
		VALUES ($1, 'https://forge.example/under-way', 'git', now(), now())`, l.ID)
	require.NoError(t, err)

	turnedOn := make(chan error, 1)
	go func() {
		_, err := s.SetURLSearch(ctx, true)
		turnedOn <- err
	}()
	waitForLockWaits(t, s, "origin_url_backlog", 1)
	// Meanwhile a recording waits for the switch.
	recorded := make(chan error, 1)
	go func() {
		_, err := s.ListedOriginsRecord(ctx, []revisit.ListedOrigin{
			{ListerID: l.ID, URL: "https://forge.example/waited", VisitType: "git", Enabled: true}})
		recorded <- err
	}()
	waitForLockWaits(t, s, "origin_url_backlog", 2)
	select {
	case err := <-turnedOn:
		t.Fatalf("on did not wait for the recording under way: %v", err)
	default:
	}
	require.NoError(t, underWay.Commit(ctx))
	require.NoError(t, <-turnedOn)
	require.NoError(t, <-recorded)

	require.Contains(t, tableURLs(t, s, "origin_url"), "https://forge.example/under-way")
	require.Equal(t, []string{"https://forge.example/waited"}, tableURLs(t, s, "origin_url_backlog"),
		"the recording that waited appended its URL")
	for _, u := range []string{"https://forge.example/under-way", "https://forge.example/waited"} {
		page, err := s.OriginsSearch(ctx, revisit.OriginSearch{Query: u})
		require.NoError(t, err)
		require.Len(t, page.Origins, 1, u)
	}
}

// waitForLockWaits waits until n sessions wait for a lock on table.
func waitForLockWaits(t *testing.T, s *Store, table string, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		var waiting int
		err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_locks
			WHERE relation = to_regclass($1) AND NOT granted`, table).Scan(&waiting)
		require.NoError(t, err)
		return waiting >= n
	}, 10*time.Second, 10*time.Millisecond, "%d sessions waiting for a lock on %s", n, table)
}

// TestURLSearchBuildingIsFinishedByTheNextOn: a search left building (its
// `on` interrupted after its first step) refuses searches, saying so, and
// indexes nothing, while recordings append to the backlog; the next `on`
// finishes it.
func TestURLSearchBuildingIsFinishedByTheNextOn(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	_, err := s.SetURLSearch(ctx, false)
	require.NoError(t, err)
	_, err = s.pool.Exec(ctx, "UPDATE origin_url_search SET state = 'building'")
	require.NoError(t, err)
	recordGitOrigins(t, s, 3)
	require.Len(t, tableURLs(t, s, "origin_url_backlog"), 3)
	moved, err := s.IndexOriginURLs(ctx, 10)
	require.NoError(t, err)
	require.Zero(t, moved)
	_, err = s.OriginsSearch(ctx, revisit.OriginSearch{})
	require.ErrorIs(t, err, revisit.ErrUnavailable)
	require.Contains(t, err.Error(), "being turned on")

	changed, err := s.SetURLSearch(ctx, true)
	require.NoError(t, err)
	require.True(t, changed)
	require.Len(t, tableURLs(t, s, "origin_url"), 3)
	page, err := s.OriginsSearch(ctx, revisit.OriginSearch{Query: "forge.example/2", Match: revisit.MatchSubstring})
	require.NoError(t, err)
	require.Len(t, page.Origins, 1)
}

// TestMigrationDownRebuildsTheURLSearch: going back to the schema before
// the switch, which has none, builds a search that was off again.
func TestMigrationDownRebuildsTheURLSearch(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	recordGitOrigins(t, s, 5)
	indexes := originURLIndexes(t, s)
	_, err := s.SetURLSearch(ctx, false)
	require.NoError(t, err)
	p, db, err := s.provider(ctx)
	require.NoError(t, err)
	defer db.Close()
	_, err = p.DownTo(ctx, 29)
	require.NoError(t, err)
	require.Equal(t, indexes, originURLIndexes(t, s))
	require.Len(t, tableURLs(t, s, "origin_url"), 5)
	require.NoError(t, s.Migrate(ctx))
	status, err := s.URLSearchStatus(ctx)
	require.NoError(t, err)
	require.Equal(t, store.URLSearchOn, status.State)
	page, err := s.OriginsSearch(ctx, revisit.OriginSearch{Query: "https://forge.example/4"})
	require.NoError(t, err)
	require.Len(t, page.Origins, 1)
}
