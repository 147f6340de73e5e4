package sqlite

import (
	"context"
	"io/fs"
	"maps"
	"os"
	"slices"
	"testing"

	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/storetest"
)

func TestMigrateTwiceIsNoop(t *testing.T) {
	s := openTest(t, nil)
	ctx := context.Background()
	for range 2 {
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("migrate: %v", err)
		}
	}
	current, latest, err := s.SchemaVersion(ctx)
	if err != nil {
		t.Fatalf("schema version: %v", err)
	}
	if current == 0 || current != latest {
		t.Fatalf("schema version = %d, latest %d; want the latest", current, latest)
	}
}

func TestMigrationsMirrorPostgres(t *testing.T) {
	// Both engines have the same migration version numbers (docs/store.md).
	names, err := fs.Glob(Migrations(), "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	pg, err := fs.Glob(os.DirFS("../postgres/migrations"), "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names, pg) || len(names) == 0 {
		t.Fatalf("sqlite migrations %v, postgres migrations %v: want the same", names, pg)
	}
}

func TestReopenKeepsData(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/re.db"
	s, err := Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListerGetOrCreate(ctx, "gitlab", "gitlab.com"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.ListerGet(ctx, "gitlab", "gitlab.com"); err != nil {
		t.Fatalf("lister lost on reopen: %v", err)
	}
}

// TestSharedRowsMigration migrates a store back to version 10, lists one
// origin under two listers and another under one, and checks that version
// 11 flags the rows of the first only.
func TestSharedRowsMigration(t *testing.T) {
	s := openTest(t, nil)
	ctx := context.Background()
	a, err := s.ListerGetOrCreate(ctx, "gitlab", "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.ListerGetOrCreate(ctx, "gitlab", "b")
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.provider()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 10); err != nil {
		t.Fatalf("down to 10: %v", err)
	}
	for _, r := range []struct {
		lister any
		url    string
	}{{a.ID, "https://x.example/both"}, {b.ID, "https://x.example/both"}, {a.ID, "https://x.example/one"}} {
		if _, err := s.w.ExecContext(ctx, `INSERT INTO listed_origin (lister_id, url, visit_type, first_seen, last_seen)
			VALUES (?, ?, 'git', 0, 0)`, r.lister, r.url); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := s.w.QueryContext(ctx, "SELECT url, sum(shared), count(*) FROM listed_origin GROUP BY url ORDER BY url")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string][2]int{}
	for rows.Next() {
		var (
			url           string
			shared, count int
		)
		if err := rows.Scan(&url, &shared, &count); err != nil {
			t.Fatal(err)
		}
		got[url] = [2]int{shared, count}
	}
	want := map[string][2]int{"https://x.example/both": {2, 2}, "https://x.example/one": {0, 1}}
	if rows.Err() != nil || !maps.Equal(got, want) {
		t.Fatalf("shared rows, count by URL: %v (%v), want %v", got, rows.Err(), want)
	}
}

// TestRecentResultsMigration: migration 00024 keeps the stats it finds,
// down and up again.
func TestRecentResultsMigration(t *testing.T) {
	s := openTest(t, nil)
	storetest.RecentResultsMigration(t, s, func(ctx context.Context, version int64) error {
		p, err := s.provider()
		if err != nil {
			return err
		}
		_, err = p.DownTo(ctx, version)
		return err
	})
}
