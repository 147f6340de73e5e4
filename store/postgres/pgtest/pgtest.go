// Package pgtest gives tests an isolated PostgreSQL schema on the server
// named by TEST_POSTGRES_URL (default: the local test database). A test
// that cannot reach the server is skipped, or fails when CI is set.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultURL is the server tests use when TEST_POSTGRES_URL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

var (
	adminOnce sync.Once
	admin     *pgxpool.Pool
	adminErr  error
	// extensionsSchema holds the extensions of the test database, on the
	// search_path of every test's schema after it.
	extensionsSchema string
)

// ServerURL returns the URL of the test server.
func ServerURL() string {
	if u := os.Getenv("TEST_POSTGRES_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// URL creates an empty schema for the test, dropped when it ends, and returns
// a URL whose connections use it (and find the database's extensions after
// it).
func URL(t testing.TB) string {
	t.Helper()
	pool := adminPool(t)
	schema := schemaName()
	ctx := context.Background()
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("pgtest: create schema: %v", err)
	}
	t.Cleanup(func() {
		if err := dropSchema(pool, schema); err != nil {
			t.Errorf("pgtest: drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(ServerURL())
	if err != nil {
		t.Fatalf("pgtest: TEST_POSTGRES_URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema+","+extensionsSchema)
	u.RawQuery = q.Encode()
	return u.String()
}

// schemaName returns a new test schema's name, random.
func schemaName() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "revisit_test_" + hex.EncodeToString(b[:])
}

// dropSchema drops a test's schema. The server sessions of a process the
// test stopped or killed can still be finishing a statement on the schema
// (the server notices a dead client only when it next writes to it); when
// one of them deadlocks with the drop, the drop is tried again, for up to
// ten seconds.
func dropSchema(pool *pgxpool.Pool, schema string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := pool.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "40P01" ||
			time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func adminPool(t testing.TB) *pgxpool.Pool {
	adminOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		admin, adminErr = pgxpool.New(ctx, ServerURL())
		if adminErr == nil {
			adminErr = admin.Ping(ctx)
		}
		if adminErr == nil {
			extensionsSchema, adminErr = createExtensions(ctx, admin)
		}
	})
	if adminErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("pgtest: PostgreSQL at %s is required in CI: %v", ServerURL(), adminErr)
		}
		t.Skipf("pgtest: PostgreSQL at %s unreachable, skipping: %v", ServerURL(), adminErr)
	}
	return admin
}

// createExtensions creates the extensions the migrations need, once per
// database, in a schema of their own, and returns the schema that holds
// them. A database has an extension once, in one schema: created by the
// first test's migration in that test's schema, it would be dropped with
// it, and with it the indexes of the other tests that use it. Test
// processes running at once take turns (an advisory lock).
func createExtensions(ctx context.Context, pool *pgxpool.Pool) (string, error) {
	var schema string
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		for _, sql := range []string{
			"SELECT pg_advisory_xact_lock(hashtextextended('revisit.pgtest.extensions', 0))",
			"CREATE SCHEMA IF NOT EXISTS revisit_test_extensions",
			"CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA revisit_test_extensions",
		} {
			if _, err := tx.Exec(ctx, sql); err != nil {
				return err
			}
		}
		return tx.QueryRow(ctx, `SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
			WHERE e.extname = 'pg_trgm'`).Scan(&schema)
	})
	if err != nil {
		return "", fmt.Errorf("creating the extensions: %w", err)
	}
	return schema, nil
}
