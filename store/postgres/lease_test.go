package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/store/postgres/pgtest"
)

// TestLeaseOfAStoreGoneIsTakenOverAtOnce: a lease whose holder's store
// closed its connections, as a process that dies on any host does, is
// taken over at once rather than when it expires; the lease of a holder
// whose store is open stays with it.
func TestLeaseOfAStoreGoneIsTakenOverAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	a := openMigratedAt(t, url, nil)
	b := openMigratedAt(t, url, nil)
	// A holder of another host: its PID tells nothing here.
	const elsewhere = "elsewhere.example:4242:beef"
	acquire := func(s *Store, owner string) string {
		t.Helper()
		l, err := s.LeaseAcquire(ctx, "orchestrator:git", owner, time.Hour)
		require.NoError(t, err)
		return l.Owner
	}
	require.Equal(t, elsewhere, acquire(a, elsewhere))
	require.Equal(t, elsewhere, acquire(b, "b"), "a holder whose store is open keeps its lease")
	require.Equal(t, elsewhere, acquire(a, elsewhere), "and renews it")

	a.Close()
	require.Eventually(t, func() bool { return acquire(b, "b") == "b" }, 10*time.Second, 50*time.Millisecond,
		"the lease of a holder whose connections are gone is taken over at once, not in an hour")
	require.Equal(t, "b", acquire(b, "b"))
}
