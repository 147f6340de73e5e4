package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
)

// QueueMessagesEnqueue adds a batch of ready messages to queue, all or
// nothing, and marks the pending visits of its messages sent in the same
// transaction.
func (s *Store) QueueMessagesEnqueue(ctx context.Context, queue string, msgs []revisit.QueueMessage, now time.Time) ([]string, error) {
	if dups, err := revisit.ValidateEnqueue(queue, msgs); err != nil {
		return dups, err
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	ids := make([]string, len(msgs))
	tasks := make([]string, len(msgs))
	headers := make([]string, len(msgs))
	bodies := make([]string, len(msgs))
	priorities := make([]int32, len(msgs))
	for i, m := range msgs {
		ids[i], tasks[i], headers[i], bodies[i], priorities[i] = m.ID, m.Task, string(m.Headers), string(m.Body), int32(m.Priority)
	}
	var dups []string
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO queue (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
			queue, revisit.Microsecond(now)); err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, `INSERT INTO queue_message (id, queue, task, headers, body, priority, enqueued_at)
			SELECT id, $1, task, headers::jsonb, body, priority, $6
			FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $7::int[])
				WITH ORDINALITY AS m(id, task, headers, body, priority, i)
			ORDER BY i ON CONFLICT (id) DO NOTHING RETURNING id`,
			queue, ids, tasks, headers, bodies, revisit.Microsecond(now), priorities)
		inserted, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		if len(inserted) == len(ids) {
			_, err := markSent(ctx, tx, ids, now)
			return err
		}
		dups = batch.Missing(ids, inserted)
		return revisit.DuplicateMessagesError(dups)
	})
	if err != nil {
		return dups, translate(wrap(err, "enqueue into %s", queue))
	}
	return nil, nil
}

// leasedColumns are the columns of a leased message, in scanQueueMessage
// order.
const leasedColumns = "m.id, m.seq, m.queue, m.task, m.headers, m.body, m.state, m.attempt, m.enqueued_at, " +
	"m.worker, m.lease_expires_at, m.result, m.completed_at, m.priority"

// The picks of a lease, $3 the rows to take and $4 the queue: the expired
// leases ($5 now) in the order they expired, then the ready messages in
// the order of their index, highest priority first, then Seq.
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

// QueueMessagesLease leases the first leasable messages of a queue: expired
// leases first, then ready messages by priority and age, each through its
// partial index, with
// FOR UPDATE SKIP LOCKED so that concurrent leasers skip each other's rows.
func (s *Store) QueueMessagesLease(ctx context.Context, p revisit.QueueLeaseParams) ([]revisit.QueueMessage, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	now := revisit.Microsecond(p.Now)
	until := revisit.Microsecond(p.Now.Add(p.LeaseFor))
	var out []revisit.QueueMessage
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		out = out[:0]
		for _, pick := range []struct {
			sql  string
			args []any
		}{
			{pickExpired, []any{p.Queue, now}},
			{pickReady, []any{p.Queue}},
		} {
			left := p.Max - len(out)
			if left == 0 {
				break
			}
			rows, _ := tx.Query(ctx, leaseStatement(pick.sql), append([]any{p.Worker, until, left}, pick.args...)...)
			got, err := pgx.CollectRows(rows, scanQueueMessage)
			if err != nil {
				return err
			}
			out = append(out, got...)
		}
		return nil
	})
	if err != nil {
		return nil, translate(wrap(err, "lease from %s", p.Queue))
	}
	batch.SortLeased(out)
	return out, nil
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

// QueueMessageHeartbeat extends the lease of a message held by p.Worker.
func (s *Store) QueueMessageHeartbeat(ctx context.Context, p revisit.QueueHeartbeatParams) (time.Time, error) {
	if err := p.Validate(); err != nil {
		return time.Time{}, err
	}
	until := revisit.Microsecond(p.Now.Add(p.LeaseFor))
	var (
		state  string
		worker pgtype.Text
	)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, "SELECT state, worker FROM queue_message WHERE id = $1 FOR UPDATE", p.ID).Scan(&state, &worker)
		if errors.Is(err, pgx.ErrNoRows) {
			return revisit.Errorf(revisit.CodeNotFound, "message %s not found", p.ID)
		}
		if err != nil {
			return err
		}
		if err := batch.HeartbeatConflict(p, revisit.QueueState(state), worker.String); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE queue_message SET lease_expires_at = $2 WHERE id = $1", p.ID, until)
		return err
	})
	if err != nil {
		return time.Time{}, translate(wrap(err, "heartbeat %s", p.ID))
	}
	return until, nil
}

// QueueMessageComplete stores the first result of a message.
func (s *Store) QueueMessageComplete(ctx context.Context, p revisit.QueueCompleteParams) (bool, error) {
	if err := p.Validate(); err != nil {
		return false, err
	}
	var stored bool
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var (
			state   string
			attempt int
			holder  pgtype.Text
		)
		err := tx.QueryRow(ctx, "SELECT state, attempt, worker FROM queue_message WHERE id = $1 FOR UPDATE", p.ID).Scan(&state, &attempt, &holder)
		if errors.Is(err, pgx.ErrNoRows) {
			return revisit.Errorf(revisit.CodeNotFound, "message %s not found", p.ID)
		}
		if err != nil {
			return err
		}
		if stored, err = batch.Completable(p.ID, revisit.QueueState(state), attempt, holder.String, p.Worker); !stored || err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE queue_message SET state = 'done', worker = $2, result = $3::jsonb,
			completed_at = $4 WHERE id = $1`, p.ID, p.Worker, string(p.Result), revisit.Microsecond(p.Now))
		return err
	})
	if err != nil {
		return false, translate(wrap(err, "complete %s", p.ID))
	}
	return stored, nil
}

// QueueDepth counts the leasable messages of a queue.
func (s *Store) QueueDepth(ctx context.Context, queue string, now time.Time) (int64, error) {
	if queue == "" {
		return 0, revisit.Invalidf("queue", "must not be empty")
	}
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM queue_message WHERE queue = $1 AND state = 'ready') +
		(SELECT count(*) FROM queue_message WHERE queue = $1 AND state = 'leased' AND lease_expires_at <= $2)`,
		queue, revisit.Microsecond(now)).Scan(&n)
	return n, translate(wrap(err, "depth of %s", queue))
}

// QueueResultsNext returns stored results in completion order.
func (s *Store) QueueResultsNext(ctx context.Context, p revisit.QueueResultsParams) ([]revisit.QueueResult, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	const cols = "SELECT id, queue, task, worker, attempt, result, completed_at, body FROM queue_message WHERE state = 'done' AND "
	var rows pgx.Rows
	if p.After == nil {
		rows, _ = s.pool.Query(ctx, cols+"NOT result_acked ORDER BY completed_at, id LIMIT $1", p.Max)
	} else {
		rows, _ = s.pool.Query(ctx, cols+"(completed_at, id) > ($2, $3) ORDER BY completed_at, id LIMIT $1",
			p.Max, revisit.Microsecond(p.After.CompletedAt), p.After.ID)
	}
	rs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (revisit.QueueResult, error) {
		var (
			r      revisit.QueueResult
			result []byte
		)
		err := row.Scan(&r.ID, &r.Queue, &r.Task, &r.Worker, &r.Attempt, &result, &r.CompletedAt, &r.Body)
		r.Result, r.CompletedAt = result, r.CompletedAt.UTC()
		return r, err
	})
	return rs, translate(wrap(err, "read results"))
}

// QueueResultsAck marks results consumed.
func (s *Store) QueueResultsAck(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.pool.Exec(ctx, `UPDATE queue_message SET result_acked = true
		WHERE id = ANY($1) AND state = 'done' AND NOT result_acked`, ids)
	return translate(wrap(err, "ack results"))
}

// QueueMessagesDeleteDone deletes consumed results completed before before.
func (s *Store) QueueMessagesDeleteDone(ctx context.Context, before time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM queue_message
		WHERE state = 'done' AND result_acked AND completed_at < $1`, revisit.Microsecond(before))
	if err != nil {
		return 0, translate(wrap(err, "delete done messages"))
	}
	return tag.RowsAffected(), nil
}

// QueueMessagesDelete deletes a queue and every message of it.
func (s *Store) QueueMessagesDelete(ctx context.Context, queue string) (int64, error) {
	if queue == "" {
		return 0, revisit.Invalidf("queue", "must not be empty")
	}
	var n int64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "DELETE FROM queue_message WHERE queue = $1", queue)
		if err != nil {
			return err
		}
		n = tag.RowsAffected()
		_, err = tx.Exec(ctx, "DELETE FROM queue WHERE name = $1", queue)
		return err
	})
	if err != nil {
		return 0, translate(wrap(err, "delete queue %s", queue))
	}
	return n, nil
}

// QueueNames returns the queues that exist, sorted.
func (s *Store) QueueNames(ctx context.Context) ([]string, error) {
	rows, _ := s.pool.Query(ctx, "SELECT name FROM queue ORDER BY name")
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return names, translate(wrap(err, "list queues"))
}

// QueueMessagesPurge deletes the waiting messages of a queue and declares
// their visits lost, in one transaction.
func (s *Store) QueueMessagesPurge(ctx context.Context, queue string, now time.Time) (int64, int, error) {
	if queue == "" {
		return 0, 0, revisit.Invalidf("queue", "must not be empty")
	}
	var (
		purged     []string
		lost       int
		visitTypes []string
	)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, `DELETE FROM queue_message WHERE queue = $1
			AND (state = 'ready' OR (state = 'leased' AND lease_expires_at <= $2)) RETURNING id`,
			queue, revisit.Microsecond(now))
		var err error
		if purged, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return err
		}
		lost, visitTypes, err = s.loseVisits(ctx, tx, purged, now)
		return err
	})
	if err != nil {
		return 0, 0, translate(wrap(err, "purge queue %s", queue))
	}
	return int64(len(purged)), lost, s.notified(nil, visitTypes)
}

// QueueMessageDrop deletes one message that is not done and declares its
// visit lost, in one transaction.
func (s *Store) QueueMessageDrop(ctx context.Context, id string, now time.Time) (revisit.QueueDrop, error) {
	var (
		drop       revisit.QueueDrop
		visitTypes []string
	)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		m, err := lockMessage(ctx, tx, id)
		if err != nil {
			return err
		}
		if m.State == revisit.QueueDone {
			return revisit.Errorf(revisit.CodeConflict, "message %s is done: its result is stored", id)
		}
		if _, err := tx.Exec(ctx, "DELETE FROM queue_message WHERE id = $1", id); err != nil {
			return err
		}
		var lost int
		lost, visitTypes, err = s.loseVisits(ctx, tx, []string{id}, now)
		drop = revisit.QueueDrop{Message: m, VisitLost: lost > 0}
		return err
	})
	if err != nil {
		return revisit.QueueDrop{}, translate(wrap(err, "drop message %s", id))
	}
	return drop, s.notified(nil, visitTypes)
}

// QueueMessageRequeue makes a leased message ready again.
func (s *Store) QueueMessageRequeue(ctx context.Context, id string, now time.Time) (revisit.QueueMessage, error) {
	var m revisit.QueueMessage
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		if m, err = lockMessage(ctx, tx, id); err != nil {
			return err
		}
		if err := batch.RequeueConflict(m); err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, `UPDATE queue_message m SET state = 'ready', lease_expires_at = $2
			WHERE id = $1 RETURNING `+leasedColumns, id, revisit.Microsecond(now))
		m, err = pgx.CollectExactlyOneRow(rows, scanQueueMessage)
		return err
	})
	if err != nil {
		return revisit.QueueMessage{}, translate(wrap(err, "requeue message %s", id))
	}
	return m, nil
}

// lockMessage reads one message and locks it until tx ends; ErrNotFound
// if it does not exist.
func lockMessage(ctx context.Context, tx pgx.Tx, id string) (revisit.QueueMessage, error) {
	if id == "" {
		return revisit.QueueMessage{}, revisit.Invalidf("id", "must not be empty")
	}
	rows, _ := tx.Query(ctx, "SELECT "+leasedColumns+" FROM queue_message m WHERE id = $1 FOR UPDATE", id)
	m, err := pgx.CollectExactlyOneRow(rows, scanQueueMessage)
	if errors.Is(err, pgx.ErrNoRows) {
		return m, revisit.Errorf(revisit.CodeNotFound, "message %s not found", id)
	}
	return m, err
}

// loseVisits declares lost at now, in tx, the sent visits among ids (the
// ids of messages taken out of their queue) and gives their origins their
// eligibility back; it returns how many, and their visit types for the
// store's subscribers.
func (s *Store) loseVisits(ctx context.Context, tx pgx.Tx, ids []string, now time.Time) (int, []string, error) {
	visits := batch.MessageIDs(ids)
	if len(visits) == 0 {
		return 0, nil, nil
	}
	rows, _ := tx.Query(ctx, `SELECT DISTINCT visit_type FROM visit_in_flight WHERE id = ANY($1) AND state = 'sent'`, visits)
	visitTypes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(visitTypes) == 0 {
		return 0, nil, err
	}
	var n int
	err = s.withIndexLookups(ctx, tx, func() error {
		n, err = restore(ctx, tx, `UPDATE visit_in_flight SET state = 'lost', lost_at = $2
			WHERE id = ANY($1) AND state = 'sent'`, visits, revisit.Microsecond(now))
		return err
	})
	return n, visitTypes, err
}
