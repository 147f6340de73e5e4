package swhrpc

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/revisit-sched/revisit"
)

// Generic tasks: creating, reading, searching, the ready ones, and their
// archive.

// maxSearch bounds the tasks one search returns, limit or not, so that a
// response stays a bounded size.
const maxSearch = revisit.MaxGrabCount

// maxSearchFilters bounds the combinations of task types, statuses and
// priorities of one search: each is one query.
const maxSearchFilters = 64

func (s *Server) taskCreate(p *record) call {
	policy := field(p, "policy", asTaskPolicy, revisit.TaskRecurring)
	tasks := required(p, "tasks", each(MaxBatch, readTask(policy)))
	return func(ctx context.Context) (any, error) {
		created, err := s.st.TasksCreateUnlessWaiting(ctx, tasks)
		return taskModels(created), err
	}
}

func (s *Server) taskGet(p *record) call {
	ids := required(p, "task_ids", each(MaxBatch, asInt))
	return func(ctx context.Context) (any, error) {
		if len(ids) == 0 {
			return []any{}, nil
		}
		tasks, err := s.tasks(ctx, revisit.TaskFilter{IDs: ids}, len(ids))
		return taskModels(tasks), err
	}
}

func (s *Server) taskSearch(p *record) call {
	ids := field(p, "task_id", optional(oneOrMany(MaxBatch, asInt)), nil)
	types := field(p, "task_type", optional(oneOrMany(maxSearchFilters, asStr)), nil)
	statuses := field(p, "status", optional(oneOrMany(maxSearchFilters, asTaskStatus)), nil)
	priorities := field(p, "priority", optional(oneOrMany(maxSearchFilters, asPriority)), nil)
	policy := field(p, "policy", optional(asTaskPolicy), nil)
	before := field(p, "before", optional(asTime), nil)
	after := field(p, "after", optional(asTime), nil)
	limit := field(p, "limit", optional(asRange(1, maxSearch)), nil)
	return func(ctx context.Context) (any, error) {
		base := revisit.TaskFilter{Policy: deref(policy), NextRunAfter: after}
		if ids != nil {
			if len(*ids) == 0 {
				return []any{}, nil
			}
			base.IDs = *ids
		}
		if before != nil {
			inclusive := before.Add(time.Microsecond) // next_run <= before
			base.NextRunBefore = &inclusive
		}
		filters := searchFilters(base, types, statuses, priorities)
		if len(filters) > maxSearchFilters {
			return nil, revisit.Invalidf("task_type", "%d combinations of task_type, status and priority, at most %d",
				len(filters), maxSearchFilters)
		}
		n := maxSearch + 1 // None: all, refused beyond maxSearch
		if limit != nil {
			n = *limit
		}
		var found []revisit.Task
		for _, f := range filters {
			tasks, err := s.tasks(ctx, f, n)
			if err != nil {
				return nil, err
			}
			found = append(found, tasks...)
		}
		slices.SortFunc(found, func(a, b revisit.Task) int { return cmp.Compare(a.ID, b.ID) })
		found = slices.CompactFunc(found, func(a, b revisit.Task) bool { return a.ID == b.ID })
		if len(found) > n {
			found = found[:n]
		}
		if len(found) > maxSearch {
			return nil, revisit.Invalidf("limit", "more than %d tasks match: give a limit", maxSearch)
		}
		return taskModels(found), nil
	}
}

// searchFilters is one filter per combination of the given task types,
// statuses and priorities (nil: any).
func searchFilters(base revisit.TaskFilter, types *[]string, statuses *[]revisit.TaskStatus, priorities *[]revisit.TaskPriority) []revisit.TaskFilter {
	filters := []revisit.TaskFilter{base}
	expand := func(n int, set func(f *revisit.TaskFilter, i int)) {
		var out []revisit.TaskFilter
		for _, f := range filters {
			for i := range n {
				g := f
				set(&g, i)
				out = append(out, g)
			}
		}
		filters = out
	}
	if types != nil {
		ts := compact(*types)
		expand(len(ts), func(f *revisit.TaskFilter, i int) { f.Type = ts[i] })
	}
	if statuses != nil {
		ss := compact(*statuses)
		expand(len(ss), func(f *revisit.TaskFilter, i int) { f.Status = ss[i] })
	}
	if priorities != nil {
		ps := compact(*priorities)
		expand(len(ps), func(f *revisit.TaskFilter, i int) { f.Priority = &ps[i] })
	}
	return filters
}

// compact is s sorted, without repeats.
func compact[T cmp.Ordered](s []T) []T {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

// tasks reads up to limit tasks of f, page after page, in id order.
func (s *Server) tasks(ctx context.Context, f revisit.TaskFilter, limit int) ([]revisit.Task, error) {
	var out []revisit.Task
	for len(out) < limit {
		f.Limit = min(limit-len(out), revisit.PageSize.Max)
		page, err := s.st.TasksGet(ctx, f)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Tasks...)
		if page.NextPageToken == "" {
			break
		}
		f.PageToken = page.NextPageToken
	}
	return out, nil
}

// readyTasks binds the four calls on ready tasks: peek or grab, the tasks
// without priority or those with one.
func readyTasks(grab, priority bool) func(*Server, *record) call {
	return func(s *Server, p *record) call {
		r := revisit.ReadyTasksParams{
			Type:     required(p, "task_type", asStr),
			Now:      deref(field(p, "timestamp", optional(asTime), nil)),
			Priority: priority,
		}
		limit := field(p, "num_tasks", optional(asRange(0, revisit.ReadyTasksLimit.Max)), nil)
		return func(ctx context.Context) (any, error) {
			r.Limit = revisit.ReadyTasksLimit.Max // None: all, up to the most at once
			if limit != nil {
				r.Limit = *limit
			}
			if r.Limit == 0 {
				return []any{}, nil
			}
			if r.Now.IsZero() {
				r.Now = s.now()
			}
			ready := s.st.TasksPeekReady
			if grab {
				ready = s.st.TasksGrabReady
			}
			tasks, err := ready(ctx, r)
			return taskModels(tasks), err
		}
	}
}

func taskModels(tasks []revisit.Task) []any {
	out := make([]any, len(tasks))
	for i, t := range tasks {
		out[i] = taskModel(t)
	}
	return out
}

func (s *Server) taskSetStatus(p *record) call {
	u := revisit.TaskStatusUpdate{
		IDs:             required(p, "task_ids", each(MaxBatch, asInt)),
		Status:          field(p, "status", asTaskStatus, revisit.TaskDisabled),
		NextRun:         field(p, "next_run", optional(asTime), nil),
		ExceptCompleted: field(p, "except_completed_tasks", asBool, false),
	}
	return func(ctx context.Context) (any, error) {
		if u.ExceptCompleted {
			ids, err := s.withoutCompletedRun(ctx, u.IDs)
			if err != nil {
				return nil, err
			}
			u.IDs = ids
		}
		_, err := s.st.TasksUpdateStatus(ctx, u)
		return nil, err
	}
}

// withoutCompletedRun is ids without the tasks whose last run ended: a
// worker that finished before its dispatcher marked its task scheduled has
// already moved the task on, as upstream's except_completed_tasks keeps.
func (s *Server) withoutCompletedRun(ctx context.Context, ids []int64) ([]int64, error) {
	runs, err := s.st.TaskRunsGet(ctx, ids)
	if err != nil {
		return nil, err
	}
	ended := map[int64]bool{}
	for _, r := range runs { // by task, then run: the last run of a task comes last
		ended[r.TaskID] = r.Ended != nil
	}
	return slices.DeleteFunc(slices.Clone(ids), func(id int64) bool { return ended[id] }), nil
}

func (s *Server) taskDisable(p *record) call {
	u := revisit.TaskStatusUpdate{IDs: required(p, "task_ids", each(MaxBatch, asInt)), Status: revisit.TaskDisabled}
	return func(ctx context.Context) (any, error) {
		_, err := s.st.TasksUpdateStatus(ctx, u)
		return nil, err
	}
}
