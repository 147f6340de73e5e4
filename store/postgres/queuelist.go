package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit"
)

// The queries of a queue's listing: $1 queue, then where the page starts
// and $4 the rows to read. Waiting messages are the expired leases ($2
// now, after the lease end $5 and Seq $3) in the order leases take them,
// sorted (they are few), then the ready ones ($2 and $3 the priority and
// Seq a page starts after), read in lease order through their partial
// index: the rest of the priority level, then the lower levels. Leased
// ones ($2 now, after the Seq $3) are few (what workers hold) and sorted.
const (
	listExpired = `SELECT ` + leasedColumns + ` FROM queue_message m
		WHERE queue = $1 AND state = 'leased' AND lease_expires_at <= $2 AND (lease_expires_at, seq) > ($5, $3)
		ORDER BY lease_expires_at, seq LIMIT $4`
	listReady = `(SELECT ` + leasedColumns + ` FROM queue_message m
			WHERE queue = $1 AND state = 'ready' AND priority = $2 AND seq > $3 ORDER BY seq LIMIT $4)
		UNION ALL
		(SELECT ` + leasedColumns + ` FROM queue_message m
			WHERE queue = $1 AND state = 'ready' AND priority < $2 ORDER BY priority DESC, seq LIMIT $4)
		ORDER BY priority DESC, seq LIMIT $4`
	listLeased = `SELECT ` + leasedColumns + ` FROM queue_message m
		WHERE queue = $1 AND state = 'leased' AND lease_expires_at > $2 AND seq > $3 ORDER BY seq LIMIT $4`
)

// QueueListExpired reads a page of a queue's expired leases
// (front.QueueStatements).
func (x statements) QueueListExpired(ctx context.Context, queue string, now time.Time, expiresAt, seq int64, n int) ([]revisit.QueueMessage, error) {
	return x.messages(ctx, listExpired, queue, now, seq, n, time.UnixMicro(expiresAt))
}

// QueueListReady reads a page of a queue's ready messages
// (front.QueueStatements).
func (x statements) QueueListReady(ctx context.Context, queue string, priority int, seq int64, n int) ([]revisit.QueueMessage, error) {
	return x.messages(ctx, listReady, queue, priority, seq, n)
}

// QueueListLeased reads a page of a queue's leased messages
// (front.QueueStatements).
func (x statements) QueueListLeased(ctx context.Context, queue string, now time.Time, seq int64, n int) ([]revisit.QueueMessage, error) {
	return x.messages(ctx, listLeased, queue, now, seq, n)
}

// QueueLeaseCounts counts the leases held now by queue and worker
// (front.QueueStatements).
func (x statements) QueueLeaseCounts(ctx context.Context, now time.Time) ([]revisit.QueueLeaseCount, error) {
	rows, _ := x.q.Query(ctx, `SELECT queue, worker, count(*), min(lease_expires_at) FROM queue_message
		WHERE state = 'leased' AND lease_expires_at > $1 GROUP BY queue, worker ORDER BY queue, worker`, now)
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (revisit.QueueLeaseCount, error) {
		var c revisit.QueueLeaseCount
		err := row.Scan(&c.Queue, &c.Worker, &c.Leased, &c.NextExpiry)
		c.NextExpiry = c.NextExpiry.UTC()
		return c, err
	})
}
