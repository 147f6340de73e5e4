package swhrpc

import (
	"context"
	"errors"

	"github.com/revisit-sched/revisit"
)

// Task runs: scheduling them, their start and end (None for an unknown
// backend id), and reading them.

func (s *Server) taskRunScheduleOne(p *record) call {
	run := revisit.NewTaskRun{
		TaskID:    required(p, "task_id", asInt),
		BackendID: required(p, "backend_id", asStr),
		Metadata:  deref(field(p, "metadata", optional(asObject), nil)),
		Scheduled: deref(field(p, "timestamp", optional(asTime), nil)),
	}
	return func(ctx context.Context) (any, error) {
		if run.Scheduled.IsZero() {
			run.Scheduled = s.now()
		}
		if run.Metadata == nil { // as upstream: a run scheduled alone has {}
			run.Metadata = map[string]any{}
		}
		runs, err := s.st.TaskRunsSchedule(ctx, []revisit.NewTaskRun{run})
		if err != nil {
			return nil, renamed(err, "runs[0]", "")
		}
		return taskRunModel(runs[0]), nil
	}
}

func (s *Server) taskRunSchedule(p *record) call {
	runs := required(p, "task_runs", each(MaxBatch, readTaskRun(s.now())))
	return func(ctx context.Context) (any, error) {
		if len(runs) == 0 {
			return nil, nil
		}
		_, err := s.st.TaskRunsSchedule(ctx, runs)
		return nil, renamed(err, "runs", "task_runs")
	}
}

func (s *Server) taskRunStart(p *record) call {
	backendID := required(p, "backend_id", asStr)
	metadata := deref(field(p, "metadata", optional(asObject), nil))
	at := deref(field(p, "timestamp", optional(asTime), nil))
	return func(ctx context.Context) (any, error) {
		if at.IsZero() {
			at = s.now()
		}
		return taskRunOrNil(s.st.TaskRunStart(ctx, backendID, at, metadata))
	}
}

func (s *Server) taskRunEnd(p *record) call {
	e := revisit.TaskRunEnd{
		BackendID: required(p, "backend_id", asStr),
		Status:    revisit.TaskRunStatus(required(p, "status", asStr)),
		Metadata:  deref(field(p, "metadata", optional(asObject), nil)),
		Ended:     deref(field(p, "timestamp", optional(asTime), nil)),
	}
	return func(ctx context.Context) (any, error) {
		if err := e.Validate(); err != nil {
			return nil, err
		}
		if e.Ended.IsZero() {
			e.Ended = s.now()
		}
		return taskRunOrNil(s.st.TaskRunEnd(ctx, e))
	}
}

// taskRunOrNil is a run on the wire, None when its backend id is unknown.
func taskRunOrNil(r revisit.TaskRun, err error) (any, error) {
	switch {
	case errors.Is(err, revisit.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return taskRunModel(r), nil
}

func (s *Server) taskRunGet(p *record) call {
	ids := required(p, "task_ids", each(MaxBatch, asInt))
	limit := field(p, "limit", optional(asRange(0, maxSearch)), nil)
	return func(ctx context.Context) (any, error) {
		runs, err := s.st.TaskRunsGet(ctx, ids)
		if err != nil {
			return nil, err
		}
		if limit != nil && len(runs) > *limit {
			runs = runs[:*limit]
		}
		out := make([]any, len(runs))
		for i, r := range runs {
			out[i] = taskRunModel(r)
		}
		return out, nil
	}
}
