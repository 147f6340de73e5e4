// Package teststore opens real, migrated, isolated stores for the tests of
// packages built on the store: a SQLite file in the test's temporary
// directory, or a fresh PostgreSQL schema (store/postgres/pgtest).
package teststore

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/postgres"
	"github.com/revisit-sched/revisit/store/postgres/pgtest"
	"github.com/revisit-sched/revisit/store/sqlite"
)

// SQLite opens a store on a new file, closed when the test ends.
func SQLite(t testing.TB) store.Store {
	t.Helper()
	return SQLiteWith(t, store.Options{})
}

// SQLiteWith is SQLite with options (a clock, say).
func SQLiteWith(t testing.TB, opts store.Options) store.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "revisit.db"), opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// Postgres opens a migrated store in a new schema, closed when the test
// ends, and returns it with its URL (for subprocesses). Without PostgreSQL
// the test skips, or fails under CI.
func Postgres(t testing.TB) (store.Store, string) {
	t.Helper()
	return PostgresWith(t, store.Options{})
}

// PostgresWith is Postgres with options (a clock, say).
func PostgresWith(t testing.TB, opts store.Options) (store.Store, string) {
	t.Helper()
	url := pgtest.URL(t)
	s, err := postgres.Open(context.Background(), url, opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	require.NoError(t, s.Migrate(context.Background()))
	return s, url
}

// EmptyPostgres empties the store at url (made by Postgres or
// PostgresWith) as it was just migrated: every row is deleted, but the
// record of migrations and the state of the URL search, and every
// sequence starts again. It is faster than a
// new schema, for tests that need many empty stores; open a new store on it
// (OpenPostgres) rather than keep one that knew what is gone.
func EmptyPostgres(t testing.TB, url string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT quote_ident(tablename) FROM pg_tables
		WHERE schemaname = current_schema() AND tablename NOT IN ('goose_db_version', 'origin_url_search')`)
	require.NoError(t, err)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	// A table that others still reference waits for a later round.
	for round := 0; len(tables) > 0; round++ {
		require.Less(t, round, 100, "tables that reference each other: %v", tables)
		var left []string
		for _, table := range tables {
			if _, err := conn.Exec(ctx, "DELETE FROM "+table); err != nil {
				left = append(left, table)
			}
		}
		tables = left
	}
	_, err = conn.Exec(ctx, `SELECT setval(format('%I.%I', schemaname, sequencename), 1, false)
		FROM pg_sequences WHERE schemaname = current_schema()`)
	require.NoError(t, err)
}

// OpenPostgres opens, with opts, another store on the schema of url (made by
// Postgres or PostgresWith), closed when the test ends.
func OpenPostgres(t testing.TB, url string, opts store.Options) store.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), url, opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// Engines runs body, in parallel subtests, on a store of each engine.
func Engines(t *testing.T, body func(t *testing.T, st store.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		body(t, SQLite(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		st, _ := Postgres(t)
		body(t, st)
	})
}
