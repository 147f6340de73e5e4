// Package pgtest gives tests an isolated PostgreSQL schema on the server
// named by REVISIT_TEST_POSTGRES (default: the local test database). A test
// that cannot reach the server is skipped, or fails when CI is set.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultURL is the server tests use when REVISIT_TEST_POSTGRES is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

var (
	adminOnce sync.Once
	admin     *pgxpool.Pool
	adminErr  error
)

// ServerURL returns the URL of the test server.
func ServerURL() string {
	if u := os.Getenv("REVISIT_TEST_POSTGRES"); u != "" {
		return u
	}
	return DefaultURL
}

// URL creates an empty schema for the test, dropped when it ends, and returns
// a URL whose connections use it.
func URL(t testing.TB) string {
	t.Helper()
	pool := adminPool(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "revisit_test_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("pgtest: create schema: %v", err)
	}
	t.Cleanup(func() {
		if _, err := pool.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("pgtest: drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(ServerURL())
	if err != nil {
		t.Fatalf("pgtest: REVISIT_TEST_POSTGRES: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func adminPool(t testing.TB) *pgxpool.Pool {
	adminOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		admin, adminErr = pgxpool.New(ctx, ServerURL())
		if adminErr == nil {
			adminErr = admin.Ping(ctx)
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
