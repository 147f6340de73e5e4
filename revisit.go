// Package revisit holds the domain of the revisit scheduler: listers, listed
// origins, visit statistics, task types, the scheduling policies of
// grab_next_visits, and the errors every layer shares.
//
// The store (package store and its drivers) persists these types; the CLI, the
// orchestrator and the HTTP API only speak in them.
package revisit

import "time"

// Microsecond truncates t to the microsecond precision that every store keeps,
// in UTC, so that values read back compare equal to values written.
func Microsecond(t time.Time) time.Time {
	return t.UTC().Truncate(time.Microsecond)
}

// MicrosecondPtr is Microsecond for optional times.
func MicrosecondPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := Microsecond(*t)
	return &v
}

// Clock tells the time. Every role that reads the time takes one in the
// Clock field of its configuration, so that tests set the time; a nil
// Clock is time.Now.
type Clock func() time.Time

// Now returns the time c tells, or time.Now() when c is nil.
func (c Clock) Now() time.Time {
	if c == nil {
		return time.Now()
	}
	return c()
}
