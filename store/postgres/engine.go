package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/front"
)

// engine runs front.Front's statements on PostgreSQL: reads and
// single-statement writes on the pool, transactions retried when
// PostgreSQL aborts them (inTx).
type engine struct{ s *Store }

var _ front.Dialect = engine{}

func (d engine) Now() time.Time { return d.s.now() }

func (d engine) Read(ctx context.Context, op string, fn func(front.Statements) error) error {
	return translateOp(op, fn(statements{s: d.s, q: d.s.pool}))
}

func (d engine) Write(ctx context.Context, op string, fn func(front.Statements) error) error {
	return translateOp(op, d.s.inTx(ctx, func(tx pgx.Tx) error {
		return fn(statements{s: d.s, q: tx, tx: tx})
	}))
}

func (d engine) WriteOne(ctx context.Context, op string, fn func(front.Statements) error) error {
	return translateOp(op, fn(statements{s: d.s, q: d.s.pool}))
}

func (d engine) Notify(visitTypes []string) { _ = d.s.notified(nil, visitTypes) }

// translateOp is translate for the errors of front.Dialect's methods: a
// *revisit.Error passes through as it is, a unique key taken is
// ErrConflict, and the others name op.
func translateOp(op string, err error) error {
	var rerr *revisit.Error
	switch {
	case err == nil || errors.As(err, &rerr):
		return err
	case isUniqueViolation(err):
		return revisit.Errorf(revisit.CodeConflict, "%s: already exists", op)
	}
	return translate(wrap(err, "%s", op))
}

// statements are front.Statements on a transaction (tx), or on the pool
// (tx nil).
type statements struct {
	s  *Store
	q  querier
	tx pgx.Tx
}

// one reads the one row of rows with scan; false when there is none.
func one[T any](rows pgx.Rows, scan pgx.RowToFunc[T]) (T, bool, error) {
	v, err := pgx.CollectExactlyOneRow(rows, scan)
	if errors.Is(err, pgx.ErrNoRows) {
		return v, false, nil
	}
	return v, err == nil, err
}

// pairs reads rows of two columns into a map from the first to the second.
func pairs[K comparable, V any](rows pgx.Rows) (map[K]V, error) {
	m := make(map[K]V)
	var (
		k K
		v V
	)
	_, err := pgx.ForEachRow(rows, []any{&k, &v}, func() error {
		m[k] = v
		return nil
	})
	return m, err
}
