package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/storetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// openTest opens a store on a fresh file of the test's temporary directory,
// closed when the test ends.
func openTest(t *testing.T, clock func() time.Time) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "revisit.db"), store.Options{Clock: clock})
	return closedAtEnd(t, s, err)
}

// closedAtEnd returns the store just opened, which the test's end closes;
// it fails the test if the store did not open.
func closedAtEnd(t *testing.T, s *Store, err error) *Store {
	t.Helper()
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	storetest.Exercise(t, func(t *testing.T, clock func() time.Time) store.Store {
		return openTest(t, clock)
	})
}

// TestConformanceInMemory runs the conformance suite on stores held in
// memory (OpenMemory), whose journal is not the file's WAL.
func TestConformanceInMemory(t *testing.T) {
	var opened atomic.Int64
	storetest.Exercise(t, func(t *testing.T, clock func() time.Time) store.Store {
		return openMemoryTest(t, fmt.Sprintf("conformance-%d", opened.Add(1)), clock)
	})
}

// openMemoryTest opens a store in memory under name, closed when the test
// ends.
func openMemoryTest(t *testing.T, name string, clock func() time.Time) *Store {
	t.Helper()
	s, err := OpenMemory(context.Background(), name, store.Options{Clock: clock})
	return closedAtEnd(t, s, err)
}

// TestMemoryStoresAreApartAndGoneOnceClosed checks that two stores in
// memory under different names hold their own origins, that what one holds
// is gone once it is closed, and that none writes a file.
func TestMemoryStoresAreApartAndGoneOnceClosed(t *testing.T) {
	ctx := context.Background()
	t.Chdir(t.TempDir())
	known := func(s *Store) int64 {
		ms, err := s.MetricsUpdate(ctx, nil, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, m := range ms {
			n += m.OriginsKnown
		}
		return n
	}
	record := func(s *Store, n int) {
		l, err := s.ListerGetOrCreate(ctx, "example", "memory")
		if err != nil {
			t.Fatal(err)
		}
		origins := make([]revisit.ListedOrigin, n)
		for i := range origins {
			origins[i] = revisit.ListedOrigin{ListerID: l.ID, URL: fmt.Sprintf("https://example.com/%d", i),
				VisitType: "git", Enabled: true}
		}
		if _, err := s.ListedOriginsRecord(ctx, origins); err != nil {
			t.Fatal(err)
		}
	}
	a, err := OpenMemory(ctx, "a", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := openMemoryTest(t, "b", nil)
	record(a, 3)
	record(b, 5)
	if got := known(a); got != 3 {
		t.Errorf("store a knows %d origins, want 3", got)
	}
	if got := known(b); got != 5 {
		t.Errorf("store b knows %d origins, want 5", got)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	again := openMemoryTest(t, "a", nil)
	if got := known(again); got != 0 {
		t.Errorf("store a opened again knows %d origins, want none", got)
	}
	if files, _ := os.ReadDir("."); len(files) > 0 {
		t.Errorf("stores in memory wrote %d files, the first %s", len(files), files[0].Name())
	}
	if _, err := OpenMemory(ctx, "", store.Options{}); err == nil || !strings.Contains(err.Error(), "name") {
		t.Errorf("an unnamed store in memory: got %v, want an error naming the name", err)
	}
}
