package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/store"
)

// maxMetadataText bounds the worker-provided text (a result repr, an
// exception line) kept in a run's metadata.
const maxMetadataText = 2000

// HandleEvents applies worker events to the task runs their uuid names
// (the backend id recorded at dispatch), and returns, in their order, the
// events it did not apply: those whose uuid matches no run (the caller
// tries them against in-flight visits) and those of types that never touch
// a run (task-received, task-retried, task-revoked…).
//
//   - task-started starts the run (worker name in its metadata);
//   - task-result ends it with the status of its result: eventful,
//     uneventful, failed (not_found too: a run has no such status, the
//     result in the metadata says it), eventful or uneventful by truth value
//     when the result has no status (VisitResult.Inferred);
//   - task-succeeded ends it likewise from the returned value
//     (celery.ParseTaskResult), uneventful when that does not parse;
//   - task-failed ends it failed, with the exception's last line in its
//     metadata.
//
// The events of one uuid are folded first: at most one start and one end
// per run and batch, the end of a task-result preferred to the task's
// succeeded or failed event (Software Heritage workers send both). Across
// batches the store keeps the first end and ignores later ones, so
// redelivered or duplicate events change nothing. Start and end times are
// the events' timestamps. A store failure returns the error and no events:
// the caller should retry the whole batch, which is safe.
func HandleEvents(ctx context.Context, st store.TaskStore, events []celery.Event) (unmatched []celery.Event, err error) {
	runs, order := foldEvents(events)
	known := make(map[string]bool, len(runs))
	for _, id := range order {
		ok, err := applyRun(ctx, st, runs[id])
		if err != nil {
			return nil, err
		}
		known[id] = ok
	}
	for _, ev := range events {
		if !runEvent(ev.Type) || !known[ev.UUID] {
			unmatched = append(unmatched, ev)
		}
	}
	return unmatched, nil
}

// runUpdate is what a batch says about one run.
type runUpdate struct {
	backendID string
	start     *celery.Event
	end       *revisit.TaskRunEnd
	// endRank orders candidate ends: a task-result beats the others.
	endRank int
}

// runEvent reports whether events of type typ change a run.
func runEvent(typ string) bool {
	switch typ {
	case celery.TypeStarted, celery.TypeResult, celery.TypeSucceeded, celery.TypeFailed:
		return true
	}
	return false
}

// foldEvents groups the run events of a batch by uuid, in order of first
// appearance.
func foldEvents(events []celery.Event) (map[string]*runUpdate, []string) {
	runs := map[string]*runUpdate{}
	var order []string
	for i := range events {
		ev := &events[i]
		if !runEvent(ev.Type) {
			continue
		}
		u := runs[ev.UUID]
		if u == nil {
			u = &runUpdate{backendID: ev.UUID}
			runs[ev.UUID] = u
			order = append(order, ev.UUID)
		}
		if ev.Type == celery.TypeStarted {
			if u.start == nil {
				u.start = ev
			}
			continue
		}
		rank := 1
		if ev.Type == celery.TypeResult {
			rank = 2
		}
		if rank > u.endRank {
			end := runEnd(*ev)
			u.end, u.endRank = &end, rank
		}
	}
	return runs, order
}

// runEnd turns an end event into the end of its run.
func runEnd(ev celery.Event) revisit.TaskRunEnd {
	e := revisit.TaskRunEnd{BackendID: ev.UUID, Ended: ev.Timestamp, Metadata: map[string]any{}}
	if ev.Hostname != "" {
		e.Metadata["worker"] = ev.Hostname
	}
	switch ev.Type {
	case celery.TypeResult:
		if ev.VisitResult == nil { // not from DecodeEvents
			e.Status, e.Metadata["result_error"] = revisit.RunUneventful, "task-result without a decoded result"
			break
		}
		e.Status = runStatus(*ev.VisitResult)
		e.Metadata["result"] = resultMetadata(*ev.VisitResult)
	case celery.TypeSucceeded:
		e.Metadata["result"] = clip(ev.Result)
		vr, err := celery.ParseTaskResult(ev.Result)
		if err != nil {
			e.Status = revisit.RunUneventful
			e.Metadata["result_error"] = clip(err.Error())
			break
		}
		e.Status = runStatus(vr)
	case celery.TypeFailed:
		e.Status = revisit.RunFailed
		e.Metadata["exception"] = clip(exceptionLine(ev))
	}
	return e
}

// runStatus maps a worker's result to the status of its run.
func runStatus(vr celery.VisitResult) revisit.TaskRunStatus {
	switch vr.Status {
	case celery.VisitEventful:
		return revisit.RunEventful
	case celery.VisitUneventful:
		return revisit.RunUneventful
	}
	return revisit.RunFailed // failed, not_found
}

// resultMetadata is what a run keeps of a task-result: the result object
// itself, or its status when it was not an object.
func resultMetadata(vr celery.VisitResult) any {
	if vr.Raw != nil {
		return vr.Raw
	}
	return map[string]any{"status": string(vr.Status)}
}

// exceptionLine returns the last line of a failure: the traceback's last
// line names the exception and its message even when the exception field
// holds only a wrapper (Celery's solo pool sends "ExceptionWithTraceback()").
func exceptionLine(ev celery.Event) string {
	for _, s := range []string{ev.Traceback, ev.Exception} {
		if l := lastLine(s); l != "" {
			return l
		}
	}
	return "(no exception reported)"
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[i+1:])
	}
	return s
}

// clip bounds worker-provided text kept in metadata, cutting on a rune
// boundary.
func clip(s string) string {
	if len(s) <= maxMetadataText {
		return s
	}
	cut := maxMetadataText
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// applyRun starts and ends one run as the batch says, and reports whether
// the run exists.
func applyRun(ctx context.Context, st store.TaskStore, u *runUpdate) (bool, error) {
	if u.start != nil {
		var md map[string]any
		if u.start.Hostname != "" {
			md = map[string]any{"worker": u.start.Hostname}
		}
		_, err := st.TaskRunStart(ctx, u.backendID, u.start.Timestamp, md)
		if errors.Is(err, revisit.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("start task run %s: %w", u.backendID, err)
		}
	}
	if u.end != nil {
		_, err := st.TaskRunEnd(ctx, *u.end)
		if errors.Is(err, revisit.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("end task run %s (%s): %w", u.backendID, u.end.Status, err)
		}
	}
	return true, nil
}
