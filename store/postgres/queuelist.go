package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
)

// The queries of QueueMessagesList: $1 queue, then where the page starts
// and $4 the rows to read. Waiting messages are the expired leases ($2
// now, after the lease end and Seq $3) in the order leases take them,
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

// QueueMessagesList returns one page of a queue's waiting or leased
// messages.
func (s *Store) QueueMessagesList(ctx context.Context, f revisit.QueueMessageFilter) (revisit.QueueMessagePage, error) {
	start, limit, err := batch.QueuePageStart(f)
	if err != nil {
		return revisit.QueueMessagePage{}, err
	}
	now := revisit.Microsecond(f.Now)
	read := func(query string, args ...any) ([]revisit.QueueMessage, error) {
		rows, _ := s.pool.Query(ctx, query, append([]any{f.Queue}, args...)...)
		return pgx.CollectRows(rows, scanQueueMessage)
	}
	var msgs []revisit.QueueMessage
	if f.Listing == revisit.QueueListLeased {
		msgs, err = read(listLeased, now, start.Seq, limit+1)
	} else {
		if !start.Ready {
			msgs, err = read(listExpired, now, start.Seq, limit+1, time.UnixMicro(start.ExpiresAt))
		}
		if err == nil && len(msgs) <= limit {
			var ready []revisit.QueueMessage
			from := batch.ReadyStart(start)
			ready, err = read(listReady, from.Priority, from.Seq, limit+1-len(msgs))
			msgs = append(msgs, ready...)
		}
	}
	if err != nil {
		return revisit.QueueMessagePage{}, translate(wrap(err, "list the messages of %s", f.Queue))
	}
	return batch.QueuePage(msgs, f.Listing, limit), nil
}

// QueueLeases counts the leases held now by queue and worker.
func (s *Store) QueueLeases(ctx context.Context, now time.Time) ([]revisit.QueueLeaseCount, error) {
	rows, _ := s.pool.Query(ctx, `SELECT queue, worker, count(*), min(lease_expires_at) FROM queue_message
		WHERE state = 'leased' AND lease_expires_at > $1 GROUP BY queue, worker ORDER BY queue, worker`,
		revisit.Microsecond(now))
	counts, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (revisit.QueueLeaseCount, error) {
		var c revisit.QueueLeaseCount
		err := row.Scan(&c.Queue, &c.Worker, &c.Leased, &c.NextExpiry)
		c.NextExpiry = c.NextExpiry.UTC()
		return c, err
	})
	return counts, translate(wrap(err, "count the leases"))
}
