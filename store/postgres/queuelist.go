package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
)

// queueListings are the queries of QueueMessagesList: $1 queue, $2 the Seq
// a page starts after, $3 now, $4 the rows to read. Waiting messages are
// the ready ones, read in Seq order through their partial index, merged
// with the expired leases; leased ones are few (what workers hold) and
// sorted.
var queueListings = map[revisit.QueueListing]string{
	revisit.QueueListWaiting: `(SELECT ` + leasedColumns + ` FROM queue_message m
			WHERE queue = $1 AND state = 'ready' AND seq > $2 ORDER BY seq LIMIT $4)
		UNION ALL
		(SELECT ` + leasedColumns + ` FROM queue_message m
			WHERE queue = $1 AND state = 'leased' AND lease_expires_at <= $3 AND seq > $2 ORDER BY seq LIMIT $4)
		ORDER BY seq LIMIT $4`,
	revisit.QueueListLeased: `SELECT ` + leasedColumns + ` FROM queue_message m
		WHERE queue = $1 AND state = 'leased' AND lease_expires_at > $3 AND seq > $2 ORDER BY seq LIMIT $4`,
}

// QueueMessagesList returns one page of a queue's waiting or leased
// messages.
func (s *Store) QueueMessagesList(ctx context.Context, f revisit.QueueMessageFilter) (revisit.QueueMessagePage, error) {
	after, limit, err := batch.QueuePageStart(f)
	if err != nil {
		return revisit.QueueMessagePage{}, err
	}
	rows, _ := s.pool.Query(ctx, queueListings[f.Listing], f.Queue, after, revisit.Microsecond(f.Now), limit+1)
	msgs, err := pgx.CollectRows(rows, scanQueueMessage)
	if err != nil {
		return revisit.QueueMessagePage{}, translate(wrap(err, "list the messages of %s", f.Queue))
	}
	return batch.QueuePage(msgs, limit), nil
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
