package swhrpc

import (
	"context"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/swhwire"
)

// The archive of generic tasks: the runs of finished tasks a client may
// copy elsewhere, then delete.

func (s *Server) taskFilterForArchive(p *record) call {
	f := revisit.TaskArchiveFilter{
		After:     required(p, "after_ts", asArchiveTime),
		Before:    required(p, "before_ts", asArchiveTime),
		Limit:     field(p, "limit", asLimit(revisit.PageSize), 10),
		PageToken: deref(field(p, "page_token", optional(asStr), nil)),
	}
	return func(ctx context.Context) (any, error) {
		page, err := s.st.TaskRunsToArchive(ctx, f)
		if err != nil {
			return nil, err
		}
		ids := make([]int64, len(page.Runs))
		for i, r := range page.Runs {
			ids[i] = r.TaskID
		}
		ids = compact(ids)
		tasks, err := s.tasks(ctx, revisit.TaskFilter{IDs: ids}, len(ids))
		if err != nil {
			return nil, err
		}
		byID := make(map[int64]revisit.Task, len(tasks))
		for _, t := range tasks {
			byID[t.ID] = t
		}
		rows := make([]any, 0, len(page.Runs))
		for _, r := range page.Runs {
			if t, ok := byID[r.TaskID]; ok { // not deleted since the page was read
				rows = append(rows, archiveRow(t, r))
			}
		}
		result := pairs("tasks", rows)
		if page.NextPageToken != "" {
			result = append(result, pairs("next_page_token", page.NextPageToken)...)
		}
		return result, nil
	}
}

// archiveRow is a run and its task as the archive's rows are: the
// arguments' args as a dict by position, their kwargs as JSON text.
func archiveRow(t revisit.Task, r revisit.TaskRun) swhwire.Map {
	args := make(swhwire.Map, len(t.Arguments.Args))
	for i, a := range t.Arguments.Args {
		args[i] = swhwire.Pair{Key: int64(i), Value: wire(a)}
	}
	return pairs(
		"task_id", t.ID, "task_policy", string(t.Policy), "task_status", string(t.Status), "task_run_id", r.ID,
		"arguments", pairs("args", args, "kwargs", pythonJSON(t.Arguments.Kwargs)),
		"type", t.Type, "backend_id", r.BackendID, "metadata", optionalObject(r.Metadata),
		"scheduled", swhwire.Optional(r.Scheduled), "started", swhwire.Optional(r.Started), "ended", swhwire.Optional(r.Ended),
		"task_run_status", string(r.Status),
	)
}

// asArchiveTime reads the bounds of an archive: a datetime, or text that
// is a date (midnight UTC) or an RFC 3339 time with its offset.
func asArchiveTime(field string, v any) (time.Time, error) {
	if t, ok := v.(time.Time); ok {
		return t, nil
	}
	s, err := asStr(field, v)
	if err != nil {
		return time.Time{}, err
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, revisit.ValidateTime(field, t)
	}
	for _, naive := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
		if _, err := time.Parse(naive, s); err == nil {
			return time.Time{}, revisit.Invalidf(field, "%q has no timezone: want a date such as 2026-03-01 or a time such as %s", s, revisit.ExampleTime)
		}
	}
	return revisit.ParseTime(field, s)
}

func (s *Server) taskDeleteArchived(p *record) call {
	archived := required(p, "task_ids", each(MaxBatch, asArchivedRun))
	return func(ctx context.Context) (any, error) {
		runs := make([]int64, len(archived))
		tasks := make([]int64, len(archived))
		for i, a := range archived {
			runs[i], tasks[i] = a.run, a.task
		}
		return nil, s.st.TasksDeleteArchived(ctx, compact(tasks), runs)
	}
}

// archivedRun names a row of the archive: a task and one of its runs.
type archivedRun struct{ task, run int64 }

// asArchivedRun reads {"task_id": int, "task_run_id": int}.
func asArchivedRun(path string, v any) (archivedRun, error) {
	m, ok := v.(swhwire.Map)
	if !ok {
		return archivedRun{}, wrongType(path, `a dict {"task_id": …, "task_run_id": …}`, v)
	}
	r, err := newRecord(path+".", "key", m)
	if err != nil {
		return archivedRun{}, err
	}
	a := archivedRun{task: required(r, "task_id", asInt), run: required(r, "task_run_id", asInt)}
	return a, r.finish()
}
