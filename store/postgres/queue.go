package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
)

// QueueMessagesInsert creates the queue and adds a batch of messages in
// one statement each (front.QueueStatements).
func (x statements) QueueMessagesInsert(ctx context.Context, queue string, msgs []revisit.QueueMessage, now time.Time) ([]string, error) {
	ids := make([]string, len(msgs))
	tasks := make([]string, len(msgs))
	headers := make([]string, len(msgs))
	bodies := make([]string, len(msgs))
	priorities := make([]int32, len(msgs))
	for i, m := range msgs {
		ids[i], tasks[i], headers[i], bodies[i], priorities[i] = m.ID, m.Task, string(m.Headers), string(m.Body), int32(m.Priority)
	}
	if _, err := x.q.Exec(ctx, "INSERT INTO queue (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
		queue, now); err != nil {
		return nil, err
	}
	rows, _ := x.q.Query(ctx, `INSERT INTO queue_message (id, queue, task, headers, body, priority, enqueued_at)
		SELECT id, $1, task, headers::jsonb, body, priority, $6
		FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $7::int[])
			WITH ORDINALITY AS m(id, task, headers, body, priority, i)
		ORDER BY i ON CONFLICT (id) DO NOTHING RETURNING id`,
		queue, ids, tasks, headers, bodies, now, priorities)
	inserted, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(inserted) == len(ids) {
		return nil, err
	}
	return batch.Missing(ids, inserted), nil
}

// leasedColumns are the columns of a leased message, in scanQueueMessage
// order.
const leasedColumns = "m.id, m.seq, m.queue, m.task, m.headers, m.body, m.state, m.attempt, m.enqueued_at, " +
	"m.worker, m.lease_expires_at, m.result, m.completed_at, m.priority"

// The picks of a lease, $3 the rows to take and $4 the queue: the expired
// leases ($5 now) in the order they expired, then the ready messages in
// the order of their index, highest priority first, then Seq. FOR UPDATE
// SKIP LOCKED makes concurrent leasers skip each other's rows.
const (
	pickExpired = `SELECT id FROM queue_message WHERE queue = $4 AND state = 'leased' AND lease_expires_at <= $5
		ORDER BY lease_expires_at, seq LIMIT $3 FOR UPDATE SKIP LOCKED`
	pickReady = `SELECT id FROM queue_message WHERE queue = $4 AND state = 'ready'
		ORDER BY priority DESC, seq LIMIT $3 FOR UPDATE SKIP LOCKED`
)

// leaseStatement leases the messages pick selects: $1 the worker, $2 the
// lease's end, then pick's parameters.
func leaseStatement(pick string) string {
	return `WITH picked AS (` + pick + `)
		UPDATE queue_message m SET state = 'leased', attempt = attempt + 1, worker = $1, lease_expires_at = $2
		FROM picked WHERE m.id = picked.id RETURNING ` + leasedColumns
}

// QueueLeaseExpired leases expired leases (front.QueueStatements).
func (x statements) QueueLeaseExpired(ctx context.Context, queue, worker string, now, until time.Time, n int) ([]revisit.QueueMessage, error) {
	return x.messages(ctx, leaseStatement(pickExpired), worker, until, n, queue, now)
}

// QueueLeaseReady leases ready messages (front.QueueStatements).
func (x statements) QueueLeaseReady(ctx context.Context, queue, worker string, until time.Time, n int) ([]revisit.QueueMessage, error) {
	return x.messages(ctx, leaseStatement(pickReady), worker, until, n, queue)
}

// messages runs a query returning leasedColumns.
func (x statements) messages(ctx context.Context, query string, args ...any) ([]revisit.QueueMessage, error) {
	rows, _ := x.q.Query(ctx, query, args...)
	return pgx.CollectRows(rows, scanQueueMessage)
}

func scanQueueMessage(row pgx.CollectableRow) (revisit.QueueMessage, error) {
	var (
		m                 revisit.QueueMessage
		state             string
		worker            pgtype.Text
		expires, complete pgtype.Timestamptz
		headers, result   []byte
		body              string
	)
	err := row.Scan(&m.ID, &m.Seq, &m.Queue, &m.Task, &headers, &body, &state, &m.Attempt, &m.EnqueuedAt,
		&worker, &expires, &result, &complete, &m.Priority)
	m.Headers, m.Body, m.Result = headers, []byte(body), result
	m.State, m.Worker = revisit.QueueState(state), worker.String
	m.EnqueuedAt = m.EnqueuedAt.UTC()
	if expires.Valid {
		m.LeaseExpiresAt = expires.Time.UTC()
	}
	if complete.Valid {
		m.CompletedAt = complete.Time.UTC()
	}
	return m, err
}

// QueueMessageLock reads and locks a message (front.QueueStatements).
func (x statements) QueueMessageLock(ctx context.Context, id string) (revisit.QueueMessage, bool, error) {
	rows, _ := x.q.Query(ctx, "SELECT "+leasedColumns+" FROM queue_message m WHERE id = $1 FOR UPDATE", id)
	return one(rows, scanQueueMessage)
}

// QueueLeaseOf reads and locks a message's lease (front.QueueStatements).
func (x statements) QueueLeaseOf(ctx context.Context, id string) (revisit.QueueMessage, bool, error) {
	rows, _ := x.q.Query(ctx, "SELECT state, attempt, worker FROM queue_message WHERE id = $1 FOR UPDATE", id)
	return one(rows, func(row pgx.CollectableRow) (revisit.QueueMessage, error) {
		var (
			m      revisit.QueueMessage
			state  string
			worker pgtype.Text
		)
		err := row.Scan(&state, &m.Attempt, &worker)
		m.ID, m.State, m.Worker = id, revisit.QueueState(state), worker.String
		return m, err
	})
}

// QueueLeaseExtend moves a lease's end (front.QueueStatements).
func (x statements) QueueLeaseExtend(ctx context.Context, id string, until time.Time) error {
	_, err := x.q.Exec(ctx, "UPDATE queue_message SET lease_expires_at = $2 WHERE id = $1", id, until)
	return err
}

// QueueMessageDone stores a result (front.QueueStatements).
func (x statements) QueueMessageDone(ctx context.Context, p revisit.QueueCompleteParams) error {
	_, err := x.q.Exec(ctx, `UPDATE queue_message SET state = 'done', worker = $2, result = $3::jsonb,
		completed_at = $4 WHERE id = $1`, p.ID, p.Worker, string(p.Result), p.Now)
	return err
}

// QueueMessageReady makes a message ready again (front.QueueStatements).
func (x statements) QueueMessageReady(ctx context.Context, id string, now time.Time) (revisit.QueueMessage, error) {
	rows, _ := x.q.Query(ctx, `UPDATE queue_message m SET state = 'ready', lease_expires_at = $2
		WHERE id = $1 RETURNING `+leasedColumns, id, now)
	return pgx.CollectExactlyOneRow(rows, scanQueueMessage)
}

// QueueMessageDelete deletes a message (front.QueueStatements).
func (x statements) QueueMessageDelete(ctx context.Context, id string) error {
	_, err := x.q.Exec(ctx, "DELETE FROM queue_message WHERE id = $1", id)
	return err
}

// QueueLeasable counts the leasable messages of a queue
// (front.QueueStatements).
func (x statements) QueueLeasable(ctx context.Context, queue string, now time.Time) (int64, error) {
	var n int64
	err := x.q.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM queue_message WHERE queue = $1 AND state = 'ready') +
		(SELECT count(*) FROM queue_message WHERE queue = $1 AND state = 'leased' AND lease_expires_at <= $2)`,
		queue, now).Scan(&n)
	return n, err
}

// QueueResults reads results in completion order (front.QueueStatements).
func (x statements) QueueResults(ctx context.Context, p revisit.QueueResultsParams) ([]revisit.QueueResult, error) {
	const cols = "SELECT id, queue, task, worker, attempt, result, completed_at, body FROM queue_message WHERE state = 'done' AND "
	var rows pgx.Rows
	if p.After == nil {
		rows, _ = x.q.Query(ctx, cols+"NOT result_acked ORDER BY completed_at, id LIMIT $1", p.Max)
	} else {
		rows, _ = x.q.Query(ctx, cols+"(completed_at, id) > ($2, $3) ORDER BY completed_at, id LIMIT $1",
			p.Max, p.After.CompletedAt, p.After.ID)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (revisit.QueueResult, error) {
		var (
			r      revisit.QueueResult
			result []byte
		)
		err := row.Scan(&r.ID, &r.Queue, &r.Task, &r.Worker, &r.Attempt, &result, &r.CompletedAt, &r.Body)
		r.Result, r.CompletedAt = result, r.CompletedAt.UTC()
		return r, err
	})
}

// QueueResultsAckOf marks results consumed (front.QueueStatements).
func (x statements) QueueResultsAckOf(ctx context.Context, ids []string) error {
	_, err := x.q.Exec(ctx, `UPDATE queue_message SET result_acked = true
		WHERE id = ANY($1) AND state = 'done' AND NOT result_acked`, ids)
	return err
}

// QueueMessagesDeleteAcked deletes consumed results (front.QueueStatements).
func (x statements) QueueMessagesDeleteAcked(ctx context.Context, before time.Time) (int64, error) {
	tag, err := x.q.Exec(ctx, `DELETE FROM queue_message
		WHERE state = 'done' AND result_acked AND completed_at < $1`, before)
	return tag.RowsAffected(), err
}

// QueueDelete deletes a queue and its messages (front.QueueStatements).
func (x statements) QueueDelete(ctx context.Context, queue string) (int64, error) {
	tag, err := x.q.Exec(ctx, "DELETE FROM queue_message WHERE queue = $1", queue)
	if err != nil {
		return 0, err
	}
	_, err = x.q.Exec(ctx, "DELETE FROM queue WHERE name = $1", queue)
	return tag.RowsAffected(), err
}

// QueueNamesAll reads the queues' names (front.QueueStatements).
func (x statements) QueueNamesAll(ctx context.Context) ([]string, error) {
	rows, _ := x.q.Query(ctx, "SELECT name FROM queue ORDER BY name")
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// QueueMessagesDeleteWaiting deletes the waiting messages of a queue
// (front.QueueStatements).
func (x statements) QueueMessagesDeleteWaiting(ctx context.Context, queue string, now time.Time) ([]string, error) {
	rows, _ := x.q.Query(ctx, `DELETE FROM queue_message WHERE queue = $1
		AND (state = 'ready' OR (state = 'leased' AND lease_expires_at <= $2)) RETURNING id`, queue, now)
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
