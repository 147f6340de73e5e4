package bench

import (
	"context"
	"testing"

	"github.com/revisit-sched/revisit/store"
)

// maintainedStore counts the calls to Maintain of a store.Store.
type maintainedStore struct {
	store.Store
	calls int
}

func (m *maintainedStore) Maintain(context.Context) error { m.calls++; return nil }

// The session embeds only the store.Store interface: asking the session
// itself whether it is a store.Maintainer says no, and the orchestrator
// bench's second VACUUM never ran.
func TestSessionMaintainReachesTheStore(t *testing.T) {
	st := &maintainedStore{}
	se := &session{Store: st}
	if err := se.maintain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st.calls != 1 {
		t.Fatalf("Maintain called %d times, want 1", st.calls)
	}
}
