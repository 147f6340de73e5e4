package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// fillQueue queues n ready messages into queue in one statement, one in a
// thousand of priority 9, and gathers the statistics the planner reads.
func fillQueue(t testing.TB, ctx context.Context, s *Store, queue string, n int) {
	t.Helper()
	_, err := s.pool.Exec(ctx, `INSERT INTO queue_message (id, queue, task, headers, body, enqueued_at, priority)
		SELECT gen_random_uuid()::text, $1, 'task', '{}', '[[], {}, {}]', now(), CASE WHEN i % 1000 = 0 THEN 9 ELSE 0 END
		FROM generate_series(1, $2) AS i`, queue, n)
	require.NoError(t, err)
	_, err = s.pool.Exec(ctx, `INSERT INTO queue (name, created_at) VALUES ($1, now())`, queue)
	require.NoError(t, err)
	_, err = s.pool.Exec(ctx, `ANALYZE queue_message`)
	require.NoError(t, err)
}

// TestLeasePlansOnALongQueue checks, with the planner's own choices on a
// queue of 100,000 messages, that a lease takes the first ready messages
// of the ready index, highest priority first, without sorting the queue,
// and that a page of the waiting list reads the same index (sorting only
// the two pages it merges).
func TestLeasePlansOnALongQueue(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	const queue = "q"
	fillQueue(t, ctx, s, queue, 100000)
	now := revisit.Microsecond(time.Now())
	for name, c := range map[string]struct {
		sql  string
		args []any
	}{
		"lease ready":   {leaseStatement(pickReady), []any{"w", now, 10, queue}},
		"lease expired": {leaseStatement(pickExpired), []any{"w", now, 10, queue, now}},
		"list ready":    {listReady, []any{queue, 9, int64(500), 101}},
	} {
		t.Run(name, func(t *testing.T) {
			plan := explainWith(t, ctx, s, "", c.sql, c.args...)
			t.Logf("%s", plan)
			index := "queue_message_ready"
			if name == "lease expired" {
				index = "queue_message_leased"
			}
			require.Contains(t, plan, "Index Scan using "+index+" ", "the plan walks %s:\n%s", index, plan)
			if name == "lease expired" {
				return // the expired leases are few: sorting them is what the index is for
			}
			// A sort may only merge the pages read (under a Limit), never
			// order the queue.
			lines := strings.Split(plan, "\n")
			for i, l := range lines {
				if strings.Contains(l, "Sort  (") {
					require.True(t, i+2 < len(lines) && strings.Contains(lines[i+2], "->  Limit"),
						"a sort of the queue:\n%s", plan)
				}
			}
		})
	}
}

// BenchmarkQueueLease leases one message at a time from a queue of
// 100,000 (run with -benchtime=Nx, N well under 100,000).
func BenchmarkQueueLease(b *testing.B) {
	ctx := context.Background()
	s := OpenMigrated(b, nil)
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
