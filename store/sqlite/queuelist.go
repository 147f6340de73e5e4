package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
)

// The queries of QueueMessagesList: ?1 queue, then where the page starts
// and ?4 the rows to read. Waiting messages are the expired leases (?2
// now, after the lease end ?5 and Seq ?3) in the order leases take them,
// sorted (they are few), then the ready ones (?2 and ?3 the priority and
// Seq a page starts after), read in lease order through their partial
// index: the rest of the priority level, then the lower levels. Leased
// ones (?2 now, after the Seq ?3) are few (what workers hold) and sorted.
const (
	listExpired = `SELECT ` + queueMessageColumns + ` FROM queue_message
		WHERE queue = ?1 AND state = 'leased' AND lease_expires_at <= ?2 AND (lease_expires_at, seq) > (?5, ?3)
		ORDER BY lease_expires_at, seq LIMIT ?4`
	listReady = `SELECT * FROM (SELECT ` + queueMessageColumns + ` FROM queue_message
			WHERE queue = ?1 AND state = 'ready' AND priority = ?2 AND seq > ?3 ORDER BY seq LIMIT ?4)
		UNION ALL
		SELECT * FROM (SELECT ` + queueMessageColumns + ` FROM queue_message
			WHERE queue = ?1 AND state = 'ready' AND priority < ?2 ORDER BY priority DESC, seq LIMIT ?4)
		ORDER BY priority DESC, seq LIMIT ?4`
	listLeased = `SELECT ` + queueMessageColumns + ` FROM queue_message
		WHERE queue = ?1 AND state = 'leased' AND lease_expires_at > ?2 AND seq > ?3 ORDER BY seq LIMIT ?4`
)

// QueueMessagesList returns one page of a queue's waiting or leased
// messages.
func (s *Store) QueueMessagesList(ctx context.Context, f revisit.QueueMessageFilter) (revisit.QueueMessagePage, error) {
	start, limit, err := batch.QueuePageStart(f)
	if err != nil {
		return revisit.QueueMessagePage{}, err
	}
	read := func(q string, args ...any) ([]revisit.QueueMessage, error) {
		return query(ctx, s, func(rows *sql.Rows, err error) ([]revisit.QueueMessage, error) {
			if err != nil {
				return nil, err
			}
			return scanQueueMessages(rows)
		}, q, append([]any{f.Queue}, args...)...)
	}
	var msgs []revisit.QueueMessage
	if f.Listing == revisit.QueueListLeased {
		msgs, err = read(listLeased, micro(f.Now), start.Seq, limit+1)
	} else {
		if !start.Ready {
			msgs, err = read(listExpired, micro(f.Now), start.Seq, limit+1, start.ExpiresAt)
		}
		if err == nil && len(msgs) <= limit {
			var ready []revisit.QueueMessage
			from := batch.ReadyStart(start)
			ready, err = read(listReady, from.Priority, from.Seq, limit+1-len(msgs))
			msgs = append(msgs, ready...)
		}
	}
	if err != nil {
		return revisit.QueueMessagePage{}, translate("list the messages of "+f.Queue, err)
	}
	return batch.QueuePage(msgs, f.Listing, limit), nil
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
