package sqlite

import (
	"context"
	"database/sql"
)

// collect reads every row of rows with one and appends it to out (nil or
// empty, as the caller wants an empty answer), closing rows; err, the
// query's error, comes back as is.
func collect[T any](rows *sql.Rows, err error, out []T, one func(*sql.Rows) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		v, err := one(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// read runs fn in turn; fn may use one of s.r's connections at a time,
// which the pool then always has free.
func (s *Store) read(ctx context.Context, fn func() error) error {
	if err := s.readTurns.take(ctx); err != nil {
		return err
	}
	defer s.readTurns.give()
	return fn()
}

// query runs q on a read-only connection, taken in turn, and reads its
// rows with scan. q is prepared once for the store's life (parsing a
// query took a tenth of a page of origins' time).
func query[T any](ctx context.Context, s *Store, scan func(*sql.Rows, error) (T, error), q string, args ...any) (T, error) {
	var out T
	err := s.read(ctx, func() error {
		var err error
		if st := s.readStmt(ctx, q); st != nil {
			out, err = scan(st.QueryContext(ctx, args...))
		} else {
			out, err = scan(s.r.QueryContext(ctx, q, args...))
		}
		return err
	})
	return out, err
}

// queryRow runs q as query does and scans its one row into dest.
func (s *Store) queryRow(ctx context.Context, q string, args []any, dest ...any) error {
	return s.read(ctx, func() error {
		if st := s.readStmt(ctx, q); st != nil {
			return st.QueryRowContext(ctx, args...).Scan(dest...)
		}
		return s.r.QueryRowContext(ctx, q, args...).Scan(dest...)
	})
}

// readStmt returns q prepared on the read-only pool, preparing it the
// first time; nil when it cannot be prepared or the cache is full (the
// query then runs unprepared, and reports its own error).
func (s *Store) readStmt(ctx context.Context, q string) *sql.Stmt {
	s.mu.Lock()
	st, ok := s.readStmts[q]
	full := s.readStmts == nil || len(s.readStmts) >= maxCachedStatements
	s.mu.Unlock()
	if ok || full {
		return st
	}
	st, err := s.r.PrepareContext(ctx, q)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, dup := s.readStmts[q]; dup || s.readStmts == nil {
		_ = st.Close()
		return prev
	}
	s.readStmts[q] = st
	return st
}
