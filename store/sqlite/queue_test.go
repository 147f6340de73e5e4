package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/storetest"
)

func TestQueueSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "queue.db")
	storetest.QueueDurability(t, func(t *testing.T) store.Store {
		s, err := Open(context.Background(), path, store.Options{})
		require.NoError(t, err)
		return s
	})
}
