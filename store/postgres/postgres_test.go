package postgres_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/postgres"
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
