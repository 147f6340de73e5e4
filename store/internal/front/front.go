// Package front is what the public methods of the two stores do, written
// once: it checks their input and fills its defaults, names the field of
// every error, shapes batches and pages, applies the rules that decide
// what a write does (a lease's holder, a run's end, a lister's freshness),
// and says which of its steps run in one transaction. Below it each store
// supplies a Dialect, which runs that store's SQL and nothing else: one
// method per statement (or per group of statements one step needs), whose
// names say what they read or write.
//
// A store embeds *Front, whose methods then are the store's; the methods
// a store writes itself (grabs, recording, the fold of results, visits in
// flight, searches) are those whose statements and their order differ
// between the engines.
package front

import (
	"context"
	"time"
)

// Dialect runs a store's statements. Every method that runs fn translates
// its error to what callers can act on (a *revisit.Error passes through
// unchanged; a database that cannot answer is revisit.ErrUnavailable; a
// unique key taken is revisit.ErrConflict), naming op otherwise.
type Dialect interface {
	// Now is the store clock's time, to the microsecond.
	Now() time.Time
	// Read runs fn's reads, not necessarily in one snapshot.
	Read(ctx context.Context, op string, fn func(Statements) error) error
	// Write runs fn's statements in one transaction: all of them or none.
	Write(ctx context.Context, op string, fn func(Statements) error) error
	// WriteOne runs fn, whose writes are one statement and so atomic by
	// themselves: outside a transaction where the engine allows it.
	WriteOne(ctx context.Context, op string, fn func(Statements) error) error
	// Notify tells store.Notifier's subscribers that origins of those
	// visit types may have become eligible, after a change committed.
	Notify(visitTypes []string)
}

// Statements are the statements of a store, run on what the Dialect
// method that handed them out holds (a transaction, or a reader).
type Statements interface {
	TaskTypeStatements
	ListerStatements
	TaskStatements
	TaskRunStatements
	QueueStatements
	VisitStatements
	QueuePositionStatements
	PauseStatements
	OperatorActionStatements
}

// Front implements the store methods both stores share over a Dialect.
type Front struct {
	d Dialect
}

// New returns the methods that run their statements through d.
func New(d Dialect) *Front { return &Front{d: d} }

// notified returns err; when it is nil, it tells the subscribers of
// visitTypes first.
func (f *Front) notified(err error, visitTypes []string) error {
	if err == nil && len(visitTypes) > 0 {
		f.d.Notify(visitTypes)
	}
	return err
}

// step is one of a Dialect's ways to run statements: Read, Write or
// WriteOne.
type step func(ctx context.Context, op string, fn func(Statements) error) error

// value runs get as run does, and returns what get returned.
func value[T any](ctx context.Context, run step, op string, get func(Statements) (T, error)) (T, error) {
	var v T
	err := run(ctx, op, func(x Statements) error {
		var err error
		v, err = get(x)
		return err
	})
	return v, err
}

// nonNil returns vs, or an empty slice for none: the answer of a method
// that lists.
func nonNil[T any](vs []T) []T {
	if vs == nil {
		return []T{}
	}
	return vs
}
