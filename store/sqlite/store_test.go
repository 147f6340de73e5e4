package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

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
