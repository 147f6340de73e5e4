// Package teststore opens real, migrated, isolated stores for the tests of
// packages built on the store: a SQLite file in the test's temporary
// directory, or a fresh PostgreSQL schema (store/postgres/pgtest).
package teststore

import (
	"context"
	"path/filepath"
	"testing"

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
