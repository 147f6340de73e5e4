package sqlite

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
)

// fillQueue queues n ready messages into queue in one statement, one in a
// thousand of priority 9, and gathers the statistics the planner reads.
func fillQueue(t testing.TB, ctx context.Context, s *Store, queue string, n int) {
	t.Helper()
	_, err := s.w.ExecContext(ctx, `INSERT INTO queue_message (id, queue, task, headers, body, enqueued_at, priority)
		WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM i WHERE n < ?2)
		SELECT printf('m%08d', n), ?1, 'task', '{}', '[[], {}, {}]', 0, CASE WHEN n % 1000 = 0 THEN 9 ELSE 0 END FROM i`,
		queue, n)
	require.NoError(t, err)
	_, err = s.w.ExecContext(ctx, `INSERT INTO queue (name, created_at) VALUES (?, 0)`, queue)
	require.NoError(t, err)
	_, err = s.w.ExecContext(ctx, `ANALYZE`)
	require.NoError(t, err)
}

// TestLeasePlansOnALongQueue checks, on a queue of 100,000 messages, that
// a lease searches the ready index in its order, highest priority first,
// without sorting the queue, and that a page of the waiting list reads the
// same index (sorting only the two pages it merges).
func TestLeasePlansOnALongQueue(t *testing.T) {
	s := openTest(t, nil)
	ctx := context.Background()
	fillQueue(t, ctx, s, "q", 100000)
	now := micro(time.Now())
	for name, c := range map[string]struct {
		sql, index string
		args       []any
	}{
		"lease ready":   {leaseStatement(pickReady), "queue_message_ready", []any{"w", now, 10, "q"}},
		"lease expired": {leaseStatement(pickExpired), "queue_message_leased", []any{"w", now, 10, "q", now}},
		"list ready":    {listReady, "queue_message_ready", []any{"q", 9, 500, 101}},
	} {
		t.Run(name, func(t *testing.T) {
			plan := explainSQL(t, ctx, s, c.sql, c.args...)
			t.Logf("%s", plan)
			require.Contains(t, plan, "USING INDEX "+c.index+" ", "the plan searches %s:\n%s", c.index, plan)
			// A sort may only merge the pages read (a subquery's rows),
			// never order the queue.
			lines := strings.Split(plan, "\n")
			for i, l := range lines {
				if strings.Contains(l, "TEMP B-TREE") {
					require.True(t, i > 0 && strings.HasPrefix(lines[i-1], "SCAN (subquery"), "a sort of the queue:\n%s", plan)
				}
			}
		})
	}
}

// BenchmarkQueueLease leases one message at a time from a queue of
// 100,000 (run with -benchtime=Nx, N well under 100,000).
func BenchmarkQueueLease(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, b.TempDir()+"/bench.db", store.Options{})
	require.NoError(b, err)
	b.Cleanup(func() { s.Close() })
	fillQueue(b, ctx, s, "q", 100000)
	p := revisit.QueueLeaseParams{Queue: "q", Worker: "w", Max: 1, LeaseFor: time.Hour, Now: time.Now()}
	b.ResetTimer()
	for range b.N {
		got, err := s.QueueMessagesLease(ctx, p)
		if err != nil || len(got) != 1 {
			b.Fatalf("lease: %v, %v", got, err)
		}
	}
}
