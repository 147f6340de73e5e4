package broker

import (
	"errors"
	"sync"

	"github.com/revisit-sched/revisit/celery"
)

// MalformedCounts counts skipped malformed events by kind (the kinds of
// celery.EventError).
type MalformedCounts struct {
	BadJSON      uint64 // not JSON, or not an object
	UnknownType  uint64 // an event type revisit does not know
	MissingField uint64 // a required field is absent
	BadField     uint64 // a field has the wrong type or range
	BadResult    uint64 // a task-result event's result is unusable
	Other        uint64 // an error of no known kind
}

// Total returns the number of malformed events of every kind.
func (c MalformedCounts) Total() uint64 {
	return c.BadJSON + c.UnknownType + c.MissingField + c.BadField + c.BadResult + c.Other
}

// MalformedCounter counts malformed events and tells which kinds are seen
// for the first time, so each kind is logged once. The zero value is ready
// to use; it is safe for concurrent use.
type MalformedCounter struct {
	mu     sync.Mutex
	counts MalformedCounts
	seen   map[string]bool
}

// Record counts every bad event described by err, an error returned by
// celery.DecodeEvents (an *celery.EventError or *celery.BatchError; any
// other non-nil error counts once as Other). It returns, for logging, the
// errors whose kind had never been seen before.
func (m *MalformedCounter) Record(err error) (firstOfKind []error) {
	if err == nil {
		return nil
	}
	var list []error
	var batch *celery.BatchError
	if errors.As(err, &batch) {
		for _, e := range batch.Errors {
			list = append(list, e)
		}
	} else {
		list = []error{err}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = make(map[string]bool)
	}
	for _, e := range list {
		kind := m.count(e)
		if !m.seen[kind] {
			m.seen[kind] = true
			firstOfKind = append(firstOfKind, e)
		}
	}
	return firstOfKind
}

// count adds e to its kind's counter and returns the kind's name.
func (m *MalformedCounter) count(e error) string {
	switch {
	case errors.Is(e, celery.ErrBadJSON):
		m.counts.BadJSON++
		return "bad_json"
	case errors.Is(e, celery.ErrUnknownType):
		m.counts.UnknownType++
		return "unknown_type"
	case errors.Is(e, celery.ErrMissingField):
		m.counts.MissingField++
		return "missing_field"
	case errors.Is(e, celery.ErrBadField):
		m.counts.BadField++
		return "bad_field"
	case errors.Is(e, celery.ErrBadResult):
		m.counts.BadResult++
		return "bad_result"
	}
	m.counts.Other++
	return "other"
}

// Counts returns the counts so far.
func (m *MalformedCounter) Counts() MalformedCounts {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counts
}
