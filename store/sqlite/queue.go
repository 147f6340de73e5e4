package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

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
	var dups []string
	err := s.write(ctx, "enqueue into "+queue, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "INSERT INTO queue (name, created_at) VALUES (?1, ?2) ON CONFLICT (name) DO NOTHING",
			queue, micro(now)); err != nil {
			return err
		}
		st, err := s.stmt(ctx, tx, `INSERT INTO queue_message (id, queue, task, headers, body, enqueued_at, priority)
			VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (id) DO NOTHING`)
		if err != nil {
			return err
		}
		at := micro(now)
		for _, m := range msgs {
			res, err := st.ExecContext(ctx, m.ID, queue, m.Task, string(m.Headers), string(m.Body), at, m.Priority)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 0 {
				dups = append(dups, m.ID)
			}
		}
		if len(dups) > 0 {
			return revisit.DuplicateMessagesError(dups)
		}
		_, err = markSent(ctx, tx, messageIDs(msgs), now)
		return err
	})
	if err != nil {
		return dups, err
	}
	return nil, nil
}

// queueMessageColumns are the columns of a message, in scanQueueMessage
// order.
const queueMessageColumns = "id, seq, queue, task, headers, body, state, attempt, enqueued_at, worker, lease_expires_at, result, " +
	"completed_at, priority"

// The picks of a lease, ?3 the rows to take and ?4 the queue: the expired
// leases (?5 now) in the order they expired, then the ready messages in
// the order of their index, highest priority first, then Seq.
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

// QueueMessagesLease leases the first leasable messages of a queue: expired
// leases first, then ready messages by priority and age, each through its
// partial index. The
// single writer serializes leasers, so they never share a message.
func (s *Store) QueueMessagesLease(ctx context.Context, p revisit.QueueLeaseParams) ([]revisit.QueueMessage, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	var out []revisit.QueueMessage
	err := s.write(ctx, "lease from "+p.Queue, func(tx *sql.Tx) error {
		for _, pick := range []struct {
			sql  string
			args []any
		}{
			{pickExpired, []any{p.Queue, micro(p.Now)}},
			{pickReady, []any{p.Queue}},
		} {
			left := p.Max - len(out)
			if left == 0 {
				break
			}
			st, err := s.stmt(ctx, tx, leaseStatement(pick.sql))
			if err != nil {
				return err
			}
			rows, err := st.QueryContext(ctx, append([]any{p.Worker, micro(p.Now.Add(p.LeaseFor)), left}, pick.args...)...)
			if err != nil {
				return err
			}
			got, err := scanQueueMessages(rows)
			if err != nil {
				return err
			}
			out = append(out, got...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	batch.SortLeased(out)
	return out, nil
}

// scanQueueMessages reads and closes rows of queueMessageColumns.
func scanQueueMessages(rows *sql.Rows) ([]revisit.QueueMessage, error) {
	return collect(rows, nil, nil, func(rows *sql.Rows) (revisit.QueueMessage, error) {
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

// QueueMessageHeartbeat extends the lease of a message held by p.Worker.
func (s *Store) QueueMessageHeartbeat(ctx context.Context, p revisit.QueueHeartbeatParams) (time.Time, error) {
	if err := p.Validate(); err != nil {
		return time.Time{}, err
	}
	until := revisit.Microsecond(p.Now.Add(p.LeaseFor))
	err := s.write(ctx, "heartbeat "+p.ID, func(tx *sql.Tx) error {
		var (
			state  string
			worker sql.NullString
		)
		err := tx.QueryRowContext(ctx, "SELECT state, worker FROM queue_message WHERE id = ?", p.ID).Scan(&state, &worker)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("message %s not found", p.ID)
		}
		if err != nil {
			return err
		}
		if err := batch.HeartbeatConflict(p, revisit.QueueState(state), worker.String); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "UPDATE queue_message SET lease_expires_at = ? WHERE id = ?", micro(until), p.ID)
		return err
	})
	if err != nil {
		return time.Time{}, err
	}
	return until, nil
}

// QueueMessageComplete stores the first result of a message.
func (s *Store) QueueMessageComplete(ctx context.Context, p revisit.QueueCompleteParams) (bool, error) {
	if err := p.Validate(); err != nil {
		return false, err
	}
	var stored bool
	err := s.write(ctx, "complete "+p.ID, func(tx *sql.Tx) error {
		var (
			state   string
			attempt int
			holder  sql.NullString
		)
		err := tx.QueryRowContext(ctx, "SELECT state, attempt, worker FROM queue_message WHERE id = ?", p.ID).Scan(&state, &attempt, &holder)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("message %s not found", p.ID)
		}
		if err != nil {
			return err
		}
		if stored, err = batch.Completable(p.ID, revisit.QueueState(state), attempt, holder.String, p.Worker); !stored || err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE queue_message SET state = 'done', worker = ?2, result = ?3,
			completed_at = ?4 WHERE id = ?1`, p.ID, p.Worker, string(p.Result), micro(p.Now))
		return err
	})
	if err != nil {
		return false, err
	}
	return stored, nil
}

// QueueDepth counts the leasable messages of a queue.
func (s *Store) QueueDepth(ctx context.Context, queue string, now time.Time) (int64, error) {
	if queue == "" {
		return 0, revisit.Invalidf("queue", "must not be empty")
	}
	var n int64
	err := s.queryRow(ctx, `SELECT
		(SELECT count(*) FROM queue_message WHERE queue = ?1 AND state = 'ready') +
		(SELECT count(*) FROM queue_message WHERE queue = ?1 AND state = 'leased' AND lease_expires_at <= ?2)`,
		[]any{queue, micro(now)}, &n)
	return n, translate("depth of "+queue, err)
}

// QueueResultsNext returns stored results in completion order.
func (s *Store) QueueResultsNext(ctx context.Context, p revisit.QueueResultsParams) ([]revisit.QueueResult, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	const cols = "SELECT id, queue, task, worker, attempt, result, completed_at, body FROM queue_message WHERE state = 'done' AND "
	var (
		out []revisit.QueueResult
		err error
	)
	if p.After == nil {
		out, err = query(ctx, s, scanQueueResults, cols+"result_acked = 0 ORDER BY completed_at, id LIMIT ?", p.Max)
	} else {
		out, err = query(ctx, s, scanQueueResults, cols+"(completed_at, id) > (?2, ?3) ORDER BY completed_at, id LIMIT ?1",
			p.Max, micro(p.After.CompletedAt), p.After.ID)
	}
	return out, translate("read results", err)
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

// QueueResultsAck marks results consumed.
func (s *Store) QueueResultsAck(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	return s.write(ctx, "ack results", func(tx *sql.Tx) error {
		st, err := s.stmt(ctx, tx, "UPDATE queue_message SET result_acked = 1 WHERE id = ? AND state = 'done'")
		if err != nil {
			return err
		}
		for _, id := range ids {
			if _, err := st.ExecContext(ctx, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// QueueMessagesDeleteDone deletes consumed results completed before before.
func (s *Store) QueueMessagesDeleteDone(ctx context.Context, before time.Time) (int64, error) {
	return s.deleteMessages(ctx, "delete done messages",
		"DELETE FROM queue_message WHERE state = 'done' AND result_acked = 1 AND completed_at < ?", micro(before))
}

// QueueMessagesDelete deletes every message of a queue.
func (s *Store) QueueMessagesDelete(ctx context.Context, queue string) (int64, error) {
	if queue == "" {
		return 0, revisit.Invalidf("queue", "must not be empty")
	}
	var n int64
	err := s.write(ctx, "delete queue "+queue, func(tx *sql.Tx) error {
		var err error
		if n, err = deleteRows(ctx, tx, "DELETE FROM queue_message WHERE queue = ?", queue); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "DELETE FROM queue WHERE name = ?", queue)
		return err
	})
	return n, err
}

// QueueNames returns the queues that exist, sorted.
func (s *Store) QueueNames(ctx context.Context) ([]string, error) {
	names, err := query(ctx, s, scanStrings, "SELECT name FROM queue ORDER BY name")
	return names, translate("list queues", err)
}

// deleteMessages runs one DELETE and returns how many rows it deleted.
func (s *Store) deleteMessages(ctx context.Context, op, query string, args ...any) (int64, error) {
	var n int64
	err := s.write(ctx, op, func(tx *sql.Tx) error {
		var err error
		n, err = deleteRows(ctx, tx, query, args...)
		return err
	})
	return n, err
}

// deleteRows runs one DELETE in tx and returns how many rows it deleted.
func deleteRows(ctx context.Context, tx *sql.Tx, query string, args ...any) (int64, error) {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// messageIDs returns the ids of msgs.
func messageIDs(msgs []revisit.QueueMessage) []string {
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	return ids
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
	err := s.write(ctx, "purge queue "+queue, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `DELETE FROM queue_message WHERE queue = ?1
			AND (state = 'ready' OR (state = 'leased' AND lease_expires_at <= ?2)) RETURNING id`, queue, micro(now))
		if err != nil {
			return err
		}
		if purged, err = scanStrings(rows, nil); err != nil {
			return err
		}
		lost, visitTypes, err = s.loseVisits(ctx, tx, purged, now)
		return err
	})
	if err != nil {
		return 0, 0, err
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
	err := s.write(ctx, "drop message "+id, func(tx *sql.Tx) error {
		m, err := readMessage(ctx, tx, id)
		if err != nil {
			return err
		}
		if m.State == revisit.QueueDone {
			return revisit.Errorf(revisit.CodeConflict, "message %s is done: its result is stored", id)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM queue_message WHERE id = ?", id); err != nil {
			return err
		}
		var lost int
		lost, visitTypes, err = s.loseVisits(ctx, tx, []string{id}, now)
		drop = revisit.QueueDrop{Message: m, VisitLost: lost > 0}
		return err
	})
	if err != nil {
		return revisit.QueueDrop{}, err
	}
	return drop, s.notified(nil, visitTypes)
}

// QueueMessageRequeue makes a leased message ready again.
func (s *Store) QueueMessageRequeue(ctx context.Context, id string, now time.Time) (revisit.QueueMessage, error) {
	var m revisit.QueueMessage
	err := s.write(ctx, "requeue message "+id, func(tx *sql.Tx) error {
		var err error
		if m, err = readMessage(ctx, tx, id); err != nil {
			return err
		}
		if err := batch.RequeueConflict(m); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `UPDATE queue_message SET state = 'ready', lease_expires_at = ?2
			WHERE id = ?1 RETURNING `+queueMessageColumns, id, micro(now))
		if err != nil {
			return err
		}
		got, err := scanQueueMessages(rows)
		if err == nil {
			m = got[0]
		}
		return err
	})
	return m, err
}

// readMessage reads one message in tx (the single writer's: nobody
// changes it meanwhile); ErrNotFound if it does not exist.
func readMessage(ctx context.Context, tx *sql.Tx, id string) (revisit.QueueMessage, error) {
	if id == "" {
		return revisit.QueueMessage{}, revisit.Invalidf("id", "must not be empty")
	}
	rows, err := tx.QueryContext(ctx, "SELECT "+queueMessageColumns+" FROM queue_message WHERE id = ?", id)
	if err != nil {
		return revisit.QueueMessage{}, err
	}
	got, err := scanQueueMessages(rows)
	if err != nil {
		return revisit.QueueMessage{}, err
	}
	if len(got) == 0 {
		return revisit.QueueMessage{}, notFound("message %s not found", id)
	}
	return got[0], nil
}

// loseVisits declares lost at now, in tx, the sent visits among ids (the
// ids of messages taken out of their queue) and gives their origins their
// eligibility back; it returns how many, and their visit types for the
// store's subscribers.
func (s *Store) loseVisits(ctx context.Context, tx *sql.Tx, ids []string, now time.Time) (int, []string, error) {
	visits := jsonArray(batch.MessageIDs(ids))
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT visit_type FROM visit_in_flight
		WHERE id IN (SELECT value FROM json_each(?1)) AND state = 'sent'`, visits)
	if err != nil {
		return 0, nil, err
	}
	visitTypes, err := scanStrings(rows, nil)
	if err != nil || len(visitTypes) == 0 {
		return 0, nil, err
	}
	n, err := s.restoreTx(ctx, tx, `UPDATE visit_in_flight SET state = 'lost', lost_at = ?2
		WHERE id IN (SELECT value FROM json_each(?1)) AND state = 'sent'`, visits, micro(now))
	return n, visitTypes, err
}
