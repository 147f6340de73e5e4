package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDropSchemaOutlivesADeadlock drops a schema that another session
// uses, with that session then creating a table in it: the drop, waiting
// for the session's lock on a table while the session waits for the
// drop's lock on the schema, is the deadlock's victim. The drop is tried
// again and succeeds once the session has ended.
func TestDropSchemaOutlivesADeadlock(t *testing.T) {
	pool := adminPool(t)
	ctx := context.Background()
	schema := schemaName()
	_, err := pool.Exec(ctx, "CREATE SCHEMA "+schema+"; CREATE TABLE "+schema+".t (x int)")
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE") })

	other, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer other.Release()
	tx, err := other.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "SELECT * FROM "+schema+".t")
	require.NoError(t, err)
	created := make(chan error, 1)
	go func() {
		// The drop waits for the table from now; the deadlock check runs
		// in the session that has waited deadlock_timeout (1 s) first.
		time.Sleep(300 * time.Millisecond)
		_, err := tx.Exec(ctx, "CREATE TABLE "+schema+".u (x int)")
		created <- err
		time.Sleep(300 * time.Millisecond)
		_ = tx.Rollback(ctx)
	}()

	require.NoError(t, dropSchema(pool, schema))
	require.NoError(t, <-created, "the other session, not the drop, was the deadlock's victim")
	var left bool
	require.NoError(t, pool.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_namespace WHERE nspname = $1)", schema).
		Scan(&left))
	require.False(t, left)
}
