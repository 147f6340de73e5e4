package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/revisit-sched/revisit"
)

// QueueMessagesInsert creates the queue and adds a batch of messages, one
// prepared statement each (front.QueueStatements).
func (x statements) QueueMessagesInsert(ctx context.Context, queue string, msgs []revisit.QueueMessage, now time.Time) ([]string, error) {
	if _, err := x.tx.ExecContext(ctx, "INSERT INTO queue (name, created_at) VALUES (?1, ?2) ON CONFLICT (name) DO NOTHING",
		queue, micro(now)); err != nil {
		return nil, err
	}
	st, err := x.s.stmt(ctx, x.tx, `INSERT INTO queue_message (id, queue, task, headers, body, enqueued_at, priority)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (id) DO NOTHING`)
	if err != nil {
		return nil, err
	}
	var dups []string
	for _, m := range msgs {
		res, err := st.ExecContext(ctx, m.ID, queue, m.Task, string(m.Headers), string(m.Body), micro(now), m.Priority)
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, err
		} else if n == 0 {
			dups = append(dups, m.ID)
		}
	}
	return dups, nil
}

// queueMessageColumns are the columns of a message, in scanQueueMessages
// order.
const queueMessageColumns = "id, seq, queue, task, headers, body, state, attempt, enqueued_at, worker, lease_expires_at, result, " +
	"completed_at, priority"

// The picks of a lease, ?3 the rows to take and ?4 the queue: the expired
// leases (?5 now) in the order they expired, then the ready messages in
// the order of their index, highest priority first, then Seq. The single
// writer serializes leasers, so they never share a message.
const (
	pickExpired = `SELECT id FROM queue_message WHERE queue = ?4 AND state = 'leased' AND lease_expires_at <= ?5
		ORDER BY lease_expires_at, seq LIMIT ?3`
	pickReady = `SELECT id FROM queue_message WHERE queue = ?4 AND state = 'ready'
		ORDER BY priority DESC, seq LIMIT ?3`
)

// leaseStatement leases the messages pick selects: ?1 the worker, ?2 the
// lease's end, then pick's parameters.
func leaseStatement(pick string) string {
	return `UPDATE queue_message SET state = 'leased', attempt = attempt + 1,
		worker = ?1, lease_expires_at = ?2 WHERE id IN (` + pick + `) RETURNING ` + queueMessageColumns
}

// QueueLeaseExpired leases expired leases (front.QueueStatements).
func (x statements) QueueLeaseExpired(ctx context.Context, queue, worker string, now, until time.Time, n int) ([]revisit.QueueMessage, error) {
	return x.lease(ctx, pickExpired, worker, micro(until), n, queue, micro(now))
}

// QueueLeaseReady leases ready messages (front.QueueStatements).
func (x statements) QueueLeaseReady(ctx context.Context, queue, worker string, until time.Time, n int) ([]revisit.QueueMessage, error) {
	return x.lease(ctx, pickReady, worker, micro(until), n, queue)
}

// lease runs leaseStatement(pick), prepared once, with args.
func (x statements) lease(ctx context.Context, pick string, args ...any) ([]revisit.QueueMessage, error) {
	st, err := x.s.stmt(ctx, x.tx, leaseStatement(pick))
	if err != nil {
		return nil, err
	}
	return scanQueueMessages(st.QueryContext(ctx, args...))
}

// QueueMessageLock reads a message; the single writer's transaction keeps
// it (front.QueueStatements).
func (x statements) QueueMessageLock(ctx context.Context, id string) (revisit.QueueMessage, bool, error) {
	return first(scanQueueMessages(x.query(ctx, "SELECT "+queueMessageColumns+" FROM queue_message WHERE id = ?", id)))
}

// QueueLeaseOf reads a message's lease (front.QueueStatements).
func (x statements) QueueLeaseOf(ctx context.Context, id string) (revisit.QueueMessage, bool, error) {
	var (
		state  string
		worker sql.NullString
		m      = revisit.QueueMessage{ID: id}
	)
	err := x.queryRow(ctx, "SELECT state, attempt, worker FROM queue_message WHERE id = ?", []any{id}, &state, &m.Attempt, &worker)
	if err == sql.ErrNoRows {
		return m, false, nil
	}
	m.State, m.Worker = revisit.QueueState(state), worker.String
	return m, err == nil, err
}

// QueueLeaseExtend moves a lease's end (front.QueueStatements).
func (x statements) QueueLeaseExtend(ctx context.Context, id string, until time.Time) error {
	_, err := x.tx.ExecContext(ctx, "UPDATE queue_message SET lease_expires_at = ? WHERE id = ?", micro(until), id)
	return err
}

// QueueMessageDone stores a result (front.QueueStatements).
func (x statements) QueueMessageDone(ctx context.Context, p revisit.QueueCompleteParams) error {
	_, err := x.tx.ExecContext(ctx, `UPDATE queue_message SET state = 'done', worker = ?2, result = ?3,
		completed_at = ?4 WHERE id = ?1`, p.ID, p.Worker, string(p.Result), micro(p.Now))
	return err
}

// QueueMessageReady makes a message ready again (front.QueueStatements).
func (x statements) QueueMessageReady(ctx context.Context, id string, now time.Time) (revisit.QueueMessage, error) {
	m, _, err := first(scanQueueMessages(x.query(ctx, `UPDATE queue_message SET state = 'ready', lease_expires_at = ?2
		WHERE id = ?1 RETURNING `+queueMessageColumns, id, micro(now))))
	return m, err
}

// QueueMessageDelete deletes a message (front.QueueStatements).
func (x statements) QueueMessageDelete(ctx context.Context, id string) error {
	_, err := x.tx.ExecContext(ctx, "DELETE FROM queue_message WHERE id = ?", id)
	return err
}

// QueueLeasable counts the leasable messages of a queue
// (front.QueueStatements).
func (x statements) QueueLeasable(ctx context.Context, queue string, now time.Time) (int64, error) {
	var n int64
	err := x.queryRow(ctx, `SELECT
		(SELECT count(*) FROM queue_message WHERE queue = ?1 AND state = 'ready') +
		(SELECT count(*) FROM queue_message WHERE queue = ?1 AND state = 'leased' AND lease_expires_at <= ?2)`,
		[]any{queue, micro(now)}, &n)
	return n, err
}

// QueueResults reads results in completion order (front.QueueStatements).
func (x statements) QueueResults(ctx context.Context, p revisit.QueueResultsParams) ([]revisit.QueueResult, error) {
	const cols = "SELECT id, queue, task, worker, attempt, result, completed_at, body FROM queue_message WHERE state = 'done' AND "
	if p.After == nil {
		return scanQueueResults(x.query(ctx, cols+"result_acked = 0 ORDER BY completed_at, id LIMIT ?", p.Max))
	}
	return scanQueueResults(x.query(ctx, cols+"(completed_at, id) > (?2, ?3) ORDER BY completed_at, id LIMIT ?1",
		p.Max, micro(p.After.CompletedAt), p.After.ID))
}

// QueueResultsAckOf marks results consumed, one prepared statement each
// (front.QueueStatements).
func (x statements) QueueResultsAckOf(ctx context.Context, ids []string) error {
	st, err := x.s.stmt(ctx, x.tx, "UPDATE queue_message SET result_acked = 1 WHERE id = ? AND state = 'done'")
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := st.ExecContext(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// QueueMessagesDeleteAcked deletes consumed results (front.QueueStatements).
func (x statements) QueueMessagesDeleteAcked(ctx context.Context, before time.Time) (int64, error) {
	return x.changed(ctx, "DELETE FROM queue_message WHERE state = 'done' AND result_acked = 1 AND completed_at < ?", micro(before))
}

// QueueDelete deletes a queue and its messages (front.QueueStatements).
func (x statements) QueueDelete(ctx context.Context, queue string) (int64, error) {
	n, err := x.changed(ctx, "DELETE FROM queue_message WHERE queue = ?", queue)
	if err != nil {
		return 0, err
	}
	_, err = x.tx.ExecContext(ctx, "DELETE FROM queue WHERE name = ?", queue)
	return n, err
}

// QueueNamesAll reads the queues' names (front.QueueStatements).
func (x statements) QueueNamesAll(ctx context.Context) ([]string, error) {
	return scanStrings(x.query(ctx, "SELECT name FROM queue ORDER BY name"))
}

// QueueMessagesDeleteWaiting deletes the waiting messages of a queue
// (front.QueueStatements).
func (x statements) QueueMessagesDeleteWaiting(ctx context.Context, queue string, now time.Time) ([]string, error) {
	return scanStrings(x.query(ctx, `DELETE FROM queue_message WHERE queue = ?1
		AND (state = 'ready' OR (state = 'leased' AND lease_expires_at <= ?2)) RETURNING id`, queue, micro(now)))
}

// scanQueueMessages reads the rows of a query returning
// queueMessageColumns.
func scanQueueMessages(rows *sql.Rows, err error) ([]revisit.QueueMessage, error) {
	return collect(rows, err, nil, func(rows *sql.Rows) (revisit.QueueMessage, error) {
		var (
			m                 revisit.QueueMessage
			headers, body     string
			state             string
			enqueued          int64
			worker, result    sql.NullString
			expires, complete sql.NullInt64
		)
		if err := rows.Scan(&m.ID, &m.Seq, &m.Queue, &m.Task, &headers, &body, &state, &m.Attempt, &enqueued,
			&worker, &expires, &result, &complete, &m.Priority); err != nil {
			return m, err
		}
		m.Headers, m.Body, m.State = []byte(headers), []byte(body), revisit.QueueState(state)
		m.EnqueuedAt, m.Worker = fromMicro(enqueued), worker.String
		if expires.Valid {
			m.LeaseExpiresAt = fromMicro(expires.Int64)
		}
		if result.Valid {
			m.Result = []byte(result.String)
		}
		if complete.Valid {
			m.CompletedAt = fromMicro(complete.Int64)
		}
		return m, nil
	})
}

// scanQueueResults reads the rows of QueueResultsNext's query.
func scanQueueResults(rows *sql.Rows, err error) ([]revisit.QueueResult, error) {
	return collect(rows, err, nil, func(rows *sql.Rows) (revisit.QueueResult, error) {
		var (
			r         revisit.QueueResult
			result    string
			completed int64
		)
		err := rows.Scan(&r.ID, &r.Queue, &r.Task, &r.Worker, &r.Attempt, &result, &completed, &r.Body)
		r.Result, r.CompletedAt = []byte(result), fromMicro(completed)
		return r, err
	})
}
