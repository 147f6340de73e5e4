package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
)

// queueListings are the queries of QueueMessagesList: ?1 queue, ?2 the Seq
// a page starts after, ?3 now, ?4 the rows to read. Waiting messages are
// the ready ones, read in Seq order through their partial index, merged
// with the expired leases; leased ones are few (what workers hold) and
// sorted.
var queueListings = map[revisit.QueueListing]string{
	revisit.QueueListWaiting: `SELECT * FROM (SELECT ` + queueMessageColumns + ` FROM queue_message
			WHERE queue = ?1 AND state = 'ready' AND seq > ?2 ORDER BY seq LIMIT ?4)
		UNION ALL
		SELECT * FROM (SELECT ` + queueMessageColumns + ` FROM queue_message
			WHERE queue = ?1 AND state = 'leased' AND lease_expires_at <= ?3 AND seq > ?2 ORDER BY seq LIMIT ?4)
		ORDER BY seq LIMIT ?4`,
	revisit.QueueListLeased: `SELECT ` + queueMessageColumns + ` FROM queue_message
		WHERE queue = ?1 AND state = 'leased' AND lease_expires_at > ?3 AND seq > ?2 ORDER BY seq LIMIT ?4`,
}

// QueueMessagesList returns one page of a queue's waiting or leased
// messages.
func (s *Store) QueueMessagesList(ctx context.Context, f revisit.QueueMessageFilter) (revisit.QueueMessagePage, error) {
	after, limit, err := batch.QueuePageStart(f)
	if err != nil {
		return revisit.QueueMessagePage{}, err
	}
	msgs, err := query(ctx, s, func(rows *sql.Rows, err error) ([]revisit.QueueMessage, error) {
		if err != nil {
			return nil, err
		}
		return scanQueueMessages(rows)
	}, queueListings[f.Listing], f.Queue, after, micro(f.Now), limit+1)
	if err != nil {
		return revisit.QueueMessagePage{}, translate("list the messages of "+f.Queue, err)
	}
	return batch.QueuePage(msgs, limit), nil
}

// QueueLeases counts the leases held now by queue and worker.
func (s *Store) QueueLeases(ctx context.Context, now time.Time) ([]revisit.QueueLeaseCount, error) {
	counts, err := query(ctx, s, func(rows *sql.Rows, err error) ([]revisit.QueueLeaseCount, error) {
		return collect(rows, err, nil, func(rows *sql.Rows) (revisit.QueueLeaseCount, error) {
			var (
				c      revisit.QueueLeaseCount
				expiry int64
			)
			err := rows.Scan(&c.Queue, &c.Worker, &c.Leased, &expiry)
			c.NextExpiry = fromMicro(expiry)
			return c, err
		})
	}, `SELECT queue, worker, count(*), min(lease_expires_at) FROM queue_message
		WHERE state = 'leased' AND lease_expires_at > ?1 GROUP BY queue, worker ORDER BY queue, worker`, micro(now))
	return counts, translate("count the leases", err)
}
