package sqlite

import (
	"context"
	"io/fs"
	"os"
	"slices"
	"testing"

	"github.com/revisit-sched/revisit/store"
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
	if current != 2 || latest != 2 {
		t.Fatalf("schema version = %d, latest %d; want 2, 2", current, latest)
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
