package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/revisit-sched/revisit"
)

// translate turns a driver error into what callers of the store can act on,
// once, at the store's boundary: *revisit.Error values pass through
// unchanged; constraint violations, a busy or locked database and missing
// rows become *revisit.Error values; anything else is wrapped with op.
func translate(op string, err error) error {
	if err == nil {
		return nil
	}
	var re *revisit.Error
	if errors.As(err, &re) {
		return err
	}
	if errors.Is(err, sql.ErrNoRows) {
		return revisit.Errorf(revisit.CodeNotFound, "%s: not found", op)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return revisit.Errorf(revisit.CodeUnavailable, "%s: database busy: %v", op, se)
		case sqlite3.SQLITE_CONSTRAINT:
			switch se.Code() {
			case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
				return revisit.Errorf(revisit.CodeConflict, "%s: already exists", op)
			default:
				return revisit.Errorf(revisit.CodeInvalid, "%s: %v", op, se)
			}
		case sqlite3.SQLITE_INTERRUPT:
			return fmt.Errorf("sqlite: %s: interrupted: %w", op, err)
		}
	}
	return fmt.Errorf("sqlite: %s: %w", op, err)
}

// notFound returns the not-found error of one named object.
func notFound(format string, args ...any) error {
	return revisit.Errorf(revisit.CodeNotFound, format, args...)
}

// isUniqueViolation reports whether err is a unique-constraint violation.
func isUniqueViolation(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && (se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
}
