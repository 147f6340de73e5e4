package feedback

import (
	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/celery"
)

// FromEvent turns a worker's final event about a dispatched visit into the
// visit status it reports, dated when the worker sent the event, with the
// event's task id as its MessageID. It
// returns false for events that end nothing (started, received…) and for
// task-succeeded events whose result says no status (the visit is over but
// its outcome unknown).
func FromEvent(v revisit.Visit, e celery.Event) (VisitStatus, bool) {
	st := VisitStatus{Origin: v.Origin.URL, VisitType: v.Origin.VisitType, Date: e.Timestamp, MessageID: e.UUID}
	var r *celery.VisitResult
	switch e.Type {
	case celery.TypeResult:
		r = e.VisitResult
	case celery.TypeSucceeded:
		parsed, err := celery.ParseSucceededResult(e.Result)
		if err != nil {
			return st, false
		}
		r = &parsed
	case celery.TypeFailed, celery.TypeResultException:
		st.Status = StatusFailed
		return st, true
	default:
		return st, false
	}
	if r == nil {
		return st, false
	}
	switch r.Status {
	case celery.VisitEventful, celery.VisitUneventful:
		eventful := r.Status == celery.VisitEventful
		st.Status, st.Eventful, st.Snapshot = StatusFull, &eventful, r.SnapshotID
	case celery.VisitFailed:
		st.Status = StatusFailed
	case celery.VisitNotFound:
		st.Status = StatusNotFound
	default:
		return st, false
	}
	return st, true
}

// Final reports whether an event ends a task: its outcome is known.
func Final(e celery.Event) bool {
	switch e.Type {
	case celery.TypeResult, celery.TypeSucceeded, celery.TypeFailed, celery.TypeResultException:
		return true
	}
	return false
}
