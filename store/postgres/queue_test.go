package postgres_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/postgres"
	"github.com/revisit-sched/revisit/store/postgres/pgtest"
	"github.com/revisit-sched/revisit/store/storetest"
)

func TestQueueSurvivesReopen(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	storetest.QueueDurability(t, func(t *testing.T) store.Store {
		ctx := context.Background()
		s, err := postgres.Open(ctx, url, store.Options{})
		require.NoError(t, err)
		require.NoError(t, s.Migrate(ctx))
		return s
	})
}
