package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/postgres"
	"github.com/revisit-sched/revisit/store/postgres/pgtest"
	"github.com/revisit-sched/revisit/store/storetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/jackc/pgx/v5/pgxpool.(*Pool).backgroundHealthCheck"))
}

func TestConformance(t *testing.T) {
	storetest.Exercise(t, func(t *testing.T, clock func() time.Time) store.Store { return postgres.OpenMigrated(t, clock) })
}

func TestMigrations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := postgres.OpenMigrated(t, nil)
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("second migrate: %v", err)
	}
	cur, latest, err := s.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cur != latest || latest < 1 {
		t.Fatalf("schema version %d, latest %d", cur, latest)
	}
}

// TestMigrationLockIsTheSchemas holds a schema's migration lock: migrating
// that schema waits for it, migrating another schema does not.
func TestMigrationLockIsTheSchemas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	open := func() (*postgres.Store, string) {
		url := pgtest.URL(t)
		s, err := postgres.Open(ctx, url, store.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		return s, url
	}
	held, heldURL := open()
	free, _ := open()

	holder, err := pgx.Connect(ctx, heldURL)
	require.NoError(t, err)
	defer holder.Close(ctx)
	_, err = holder.Exec(ctx, "SELECT pg_advisory_lock(hashtextextended('revisit.migrate.' || current_schema(), 0))")
	require.NoError(t, err)

	start := time.Now()
	require.NoError(t, free.Migrate(ctx))
	require.Less(t, time.Since(start), 5*time.Second, "another schema's lock does not hold this one's migration")

	done := make(chan error, 1)
	go func() { done <- held.Migrate(ctx) }()

	select {
	case err := <-done:
		t.Fatalf("migrated while its lock was held (err %v)", err)
	case <-time.After(1500 * time.Millisecond):
	}
	_, err = holder.Exec(ctx, "SELECT pg_advisory_unlock_all()")
	require.NoError(t, err)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("migration still waiting 10 s after its lock was released")
	}
	cur, latest, err := held.SchemaVersion(ctx)
	require.NoError(t, err)
	require.Equal(t, latest, cur)
}

// Closing a store twice returns at once, whether its listener of
// store.Notifier started or not.
func TestCloseTwice(t *testing.T) {
	t.Parallel()
	for _, listening := range []bool{false, true} {
		s := postgres.OpenMigrated(t, nil)
		if listening {
			_, cancel := s.SubscribeEligible("git")
			defer cancel()
		}
		closed := make(chan struct{})
		go func() {
			defer close(closed)
			s.Close()
			s.Close()
		}()
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			t.Fatalf("closing twice (listening: %v) did not return", listening)
		}
	}
}
