package postgres

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestObjectDest(t *testing.T) {
	t.Parallel()
	s := OpenMigrated(t, nil)
	for _, c := range []struct {
		sql  string
		want map[string]any
		bad  bool
	}{
		{sql: "SELECT NULL::jsonb", want: map[string]any{}},
		{sql: "SELECT '{}'::jsonb", want: map[string]any{}},
		{sql: "SELECT 'null'::jsonb", want: map[string]any{}},
		{sql: `SELECT '{"branch": "main", "depth": 2, "opts": {"x": [1, null]}}'::jsonb`,
			want: map[string]any{"branch": "main", "depth": 2.0, "opts": map[string]any{"x": []any{1.0, nil}}}},
		{sql: `SELECT '{"a": 1}'::json`, want: map[string]any{"a": 1.0}},
		{sql: "SELECT '[1, 2]'::jsonb", bad: true},
	} {
		m := map[string]any{"left": "over"}
		err := s.pool.QueryRow(context.Background(), c.sql).Scan(objectDest{&m})
		if c.bad {
			require.Error(t, err, c.sql)
			continue
		}
		require.NoError(t, err, c.sql)
		require.Equal(t, c.want, m, c.sql)
	}
}

func TestUUIDDest(t *testing.T) {
	t.Parallel()
	s := OpenMigrated(t, nil)
	want := uuid.New()
	var got uuid.UUID
	require.NoError(t, s.pool.QueryRow(context.Background(), "SELECT $1::uuid", want).Scan(uuidDest{&got}))
	require.Equal(t, want, got)
	err := s.pool.QueryRow(context.Background(), "SELECT NULL::uuid").Scan(uuidDest{&got})
	require.ErrorContains(t, err, "NULL")
}
