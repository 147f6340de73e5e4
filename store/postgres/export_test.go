package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/postgres/pgtest"
)

// OpenMigrated opens a store with clock (nil: the real time) on a fresh
// schema, migrated and closed when t ends; the package's tests and its
// external tests use it.
func OpenMigrated(t testing.TB, clock func() time.Time) *Store {
	t.Helper()
	return openMigratedAt(t, pgtest.URL(t), clock)
}

// openMigratedAt is OpenMigrated on the schema of url, which other stores
// may share.
func openMigratedAt(t testing.TB, url string, clock func() time.Time) *Store {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, url, store.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

// recordGitOrigins records n enabled git origins of one lister into s.
func recordGitOrigins(t *testing.T, s *Store, n int) {
	t.Helper()
	ctx := context.Background()
	l, err := s.ListerGetOrCreate(ctx, "gitlab", "")
	if err != nil {
		t.Fatal(err)
	}
	origins := make([]revisit.ListedOrigin, n)
	for i := range origins {
		origins[i] = revisit.ListedOrigin{ListerID: l.ID, URL: fmt.Sprintf("https://forge.example/%d", i),
			VisitType: "git", Enabled: true}
	}
	if _, err := s.ListedOriginsRecord(ctx, origins); err != nil {
		t.Fatal(err)
	}
}

// flushAside moves the picks that grabs set aside to the pending table, as
// the next statement that looks pending origins up would, so that a test
// can inspect or change the pending rows directly.
func flushAside(t testing.TB, s *Store) {
	t.Helper()
	ctx := context.Background()
	if err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return flushPicks(ctx, tx) }); err != nil {
		t.Fatal(err)
	}
}
