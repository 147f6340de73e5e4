package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/postgres/pgtest"
)

// OpenMigrated opens a store with clock (nil: the real time) on a fresh
// schema, migrated and closed when t ends; the package's tests and its
// external tests use it.
func OpenMigrated(t testing.TB, clock func() time.Time) *Store {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, pgtest.URL(t), store.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}
