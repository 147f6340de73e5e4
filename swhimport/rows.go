package swhimport

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// rowStream reads the rows of one query of the source through a cursor, a
// batch at a time, in the order the query gives them: a source lost
// mid-table fails the next batch, and the server holds the rest.
type rowStream[T any] struct {
	ctx  context.Context
	tx   pgx.Tx
	scan func(pgx.Row) (T, error)
	buf  []T
	end  bool
	err  error
}

// query opens a cursor over a query of the source whose rows scan reads;
// its error, if any, comes with the first rows read. A query of the rows
// changed since a time (since not zero) selects few of its table's rows:
// they are read and sorted at once, the server's plan without a cursor,
// rather than found along the whole key in order, which suits a whole
// table better (no sort, nor its space on the server).
func query[T any](ctx context.Context, s *source, scan func(pgx.Row) (T, error), since time.Time, sql string,
	args ...any) *rowStream[T] {
	r := &rowStream[T]{ctx: ctx, scan: scan}
	if r.tx, r.err = s.conn.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly}); r.err != nil {
		return r
	}
	if !since.IsZero() {
		_, r.err = r.tx.Exec(ctx, "SET LOCAL cursor_tuple_fraction = 1")
	}
	if r.err == nil {
		_, r.err = r.tx.Exec(ctx, "DECLARE rows NO SCROLL CURSOR FOR "+sql, args...)
	}
	return r
}

// batch returns the next n rows, fewer only at the end.
func (r *rowStream[T]) batch(n int) ([]T, error) {
	if r.err != nil || r.end {
		return nil, r.err
	}
	// Described anew each time: the rows of a FETCH are those of the
	// cursor, which another query of the same text named differently.
	rows, _ := r.tx.Query(r.ctx, fmt.Sprintf("FETCH %d FROM rows", n), pgx.QueryExecModeDescribeExec)
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (T, error) { return r.scan(row) })
	r.end, r.err = len(out) < n, err
	return out, err
}

// next returns the next row, nil at the end.
func (r *rowStream[T]) next() (*T, error) {
	if len(r.buf) == 0 {
		var err error
		if r.buf, err = r.batch(DefaultBatch); err != nil || len(r.buf) == 0 {
			return nil, err
		}
	}
	v := r.buf[0]
	r.buf = r.buf[1:]
	return &v, nil
}

// all returns every row.
func (r *rowStream[T]) all() ([]T, error) {
	defer r.close()
	var out []T
	for {
		b, err := r.batch(DefaultBatch)
		out = append(out, b...)
		if err != nil || len(b) < DefaultBatch {
			return out, err
		}
	}
}

// close ends the cursor's transaction.
func (r *rowStream[T]) close() {
	if r.tx != nil {
		_ = r.tx.Rollback(context.Background())
	}
}
