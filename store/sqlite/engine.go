package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/revisit-sched/revisit/store/internal/front"
)

// engine runs front.Front's statements on SQLite: reads on a read-only
// connection taken in turn, every write in a transaction of the single
// writer (write).
type engine struct{ s *Store }

var _ front.Dialect = engine{}

func (d engine) Now() time.Time { return d.s.now() }

func (d engine) Read(ctx context.Context, op string, fn func(front.Statements) error) error {
	return translate(op, d.s.read(ctx, func() error { return fn(statements{s: d.s}) }))
}

func (d engine) Write(ctx context.Context, op string, fn func(front.Statements) error) error {
	return d.s.write(ctx, op, func(tx *sql.Tx) error { return fn(statements{s: d.s, tx: tx}) })
}

// WriteOne is Write: SQLite's one writer runs every write in a
// transaction.
func (d engine) WriteOne(ctx context.Context, op string, fn func(front.Statements) error) error {
	return d.Write(ctx, op, fn)
}

func (d engine) Notify(visitTypes []string) { d.s.eligible.Notify(visitTypes...) }

// statements are front.Statements in a write transaction (tx), or on the
// read-only connection a read holds (tx nil).
type statements struct {
	s  *Store
	tx *sql.Tx
}

// query runs q in the transaction, or on the reader, where it is prepared
// once for the store's life.
func (x statements) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if x.tx != nil {
		return x.tx.QueryContext(ctx, q, args...)
	}
	if st := x.s.readStmt(ctx, q); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return x.s.r.QueryContext(ctx, q, args...)
}

// queryRow runs q as query does and scans its one row into dest.
func (x statements) queryRow(ctx context.Context, q string, args []any, dest ...any) error {
	rows, err := x.query(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := rows.Scan(dest...); err != nil {
		return err
	}
	return rows.Close()
}

// changed runs q, a write, in the transaction and returns how many rows it
// changed.
func (x statements) changed(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := x.tx.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// first returns the first of vs; false when there is none.
func first[T any](vs []T, err error) (T, bool, error) {
	var v T
	if err != nil || len(vs) == 0 {
		return v, false, err
	}
	return vs[0], true, nil
}
