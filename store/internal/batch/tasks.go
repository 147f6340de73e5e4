package batch

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/pagetoken"
)

// TaskTypeNames returns the distinct task types of new tasks.
func TaskTypeNames(tasks []revisit.NewTask) []string {
	var names []string
	for _, t := range tasks {
		if !slices.Contains(names, t.Type) {
			names = append(names, t.Type)
		}
	}
	return names
}

// NewTasks validates new tasks against their task types (types, by name)
// and returns the tasks to create with their canonical argument JSON, in
// input order. An unknown type is a not-found error naming tasks[i].type;
// bad input an invalid-input error naming tasks[i].field.
func NewTasks(tasks []revisit.NewTask, types map[string]revisit.TaskType) ([]revisit.Task, [][]byte, error) {
	out := make([]revisit.Task, len(tasks))
	args := make([][]byte, len(tasks))
	for i, n := range tasks {
		tt, ok := types[n.Type]
		if !ok && n.Type != "" {
			return nil, nil, TaskTypeNotFound(fmt.Sprintf("tasks[%d].type", i), n.Type)
		}
		t, err := n.Task(tt)
		if err != nil {
			return nil, nil, indexed(err, "tasks", i)
		}
		if args[i], err = t.Arguments.JSON(); err != nil {
			return nil, nil, indexed(err, "tasks", i)
		}
		out[i] = t
	}
	return out, args, nil
}

// IDs checks that ids holds at least one id, for the methods that act on
// tasks by id.
func IDs(ids []int64) error {
	if len(ids) == 0 {
		return revisit.Invalidf("ids", "no task id")
	}
	return nil
}

// MissingID returns the not-found error of the first of ids that found
// lacks, nil when none is missing.
func MissingID(ids, found []int64) error {
	for _, id := range ids {
		if !slices.Contains(found, id) {
			return revisit.Errorf(revisit.CodeNotFound, "task %d not found", id)
		}
	}
	return nil
}

// SortReady sorts ready tasks in the order peek and grab take them:
// priority rank, next_run, id.
func SortReady(tasks []revisit.Task) {
	slices.SortFunc(tasks, func(a, b revisit.Task) int {
		return cmp.Or(cmp.Compare(a.Priority.Rank(), b.Priority.Rank()), a.NextRun.Compare(b.NextRun), cmp.Compare(a.ID, b.ID))
	})
}

// AfterID decodes the page token of an id-ordered listing: the id to
// resume after, 0 for the first page.
func AfterID(token string) (int64, error) {
	if token == "" {
		return 0, nil
	}
	return pagetoken.DecodeID(token)
}

// IDPage turns up to limit+1 rows read in id order into a page and the
// token of the next one, set exactly when a row follows.
func IDPage[T any](rows []T, limit int, id func(T) int64) ([]T, string) {
	if len(rows) <= limit {
		return rows, ""
	}
	return rows[:limit], pagetoken.EncodeID(id(rows[limit-1]))
}

// TaskPage is IDPage for tasks.
func TaskPage(tasks []revisit.Task, limit int) revisit.TaskPage {
	ts, next := IDPage(tasks, limit, func(t revisit.Task) int64 { return t.ID })
	if ts == nil {
		ts = []revisit.Task{}
	}
	return revisit.TaskPage{Tasks: ts, NextPageToken: next}
}

// TaskRunPage is IDPage for task runs.
func TaskRunPage(runs []revisit.TaskRun, limit int) revisit.TaskRunPage {
	rs, next := IDPage(runs, limit, func(r revisit.TaskRun) int64 { return r.ID })
	if rs == nil {
		rs = []revisit.TaskRun{}
	}
	return revisit.TaskRunPage{Runs: rs, NextPageToken: next}
}

// ValidateRuns checks runs to schedule, naming runs[i].field.
func ValidateRuns(runs []revisit.NewTaskRun) error {
	seen := make(map[string]int, len(runs))
	for i, r := range runs {
		switch {
		case r.TaskID <= 0:
			return revisit.Invalidf(fmt.Sprintf("runs[%d].task_id", i), "missing")
		case r.BackendID == "":
			return revisit.Invalidf(fmt.Sprintf("runs[%d].backend_id", i), "missing")
		}
		if j, dup := seen[r.BackendID]; dup {
			return revisit.Invalidf(fmt.Sprintf("runs[%d].backend_id", i), "%q is also runs[%d]", r.BackendID, j)
		}
		seen[r.BackendID] = i
	}
	return nil
}

// BackendIDs checks the backend ids of runs to confirm, naming
// backend_ids[i].
func BackendIDs(ids []string) error {
	for i, id := range ids {
		if id == "" {
			return revisit.Invalidf(fmt.Sprintf("backend_ids[%d]", i), "missing")
		}
	}
	return nil
}

// TaskType checks the task type a method acts on, naming task_type.
func TaskType(name string) error {
	if name == "" {
		return revisit.Invalidf("task_type", "missing")
	}
	return nil
}

// DecodeArguments reads stored task arguments; nil fields become empty.
func DecodeArguments(b []byte) (revisit.TaskArguments, error) {
	var a revisit.TaskArguments
	if err := json.Unmarshal(b, &a); err != nil {
		return a, fmt.Errorf("task arguments: %w", err)
	}
	if a.Args == nil {
		a.Args = []any{}
	}
	if a.Kwargs == nil {
		a.Kwargs = map[string]any{}
	}
	return a, nil
}

// DecodeMetadata reads stored run metadata; JSON null is none (nil).
func DecodeMetadata(b []byte) (map[string]any, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("task run metadata: %w", err)
	}
	return m, nil
}

// EncodeMetadata returns the JSON of run metadata, null for none (nil),
// naming field when it is not representable.
func EncodeMetadata(field string, m map[string]any) ([]byte, error) {
	if m == nil {
		return []byte("null"), nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, revisit.Invalidf(field, "not representable as JSON: %v", err)
	}
	return b, nil
}

// TaskTypeNotFound is the error of a task naming an unknown task type.
func TaskTypeNotFound(field, name string) error {
	return &revisit.Error{Code: revisit.CodeNotFound, Field: field, Message: fmt.Sprintf("task type %q not found", name)}
}

// DistinctTasks is tasks in id order, each once.
func DistinctTasks(tasks []revisit.Task) []revisit.Task {
	slices.SortFunc(tasks, func(a, b revisit.Task) int { return cmp.Compare(a.ID, b.ID) })
	tasks = slices.CompactFunc(tasks, func(a, b revisit.Task) bool { return a.ID == b.ID })
	if tasks == nil {
		tasks = []revisit.Task{}
	}
	return tasks
}

// TaskArchivePage checks a filter of the runs to archive and returns its
// page size and the (task, run) ids it resumes after.
func TaskArchivePage(f revisit.TaskArchiveFilter) (limit int, task, run int64, err error) {
	if err := f.Validate(); err != nil {
		return 0, 0, 0, err
	}
	if limit, err = PageLimit(f.Limit); err != nil {
		return 0, 0, 0, err
	}
	if f.PageToken == "" {
		return limit, 0, 0, nil
	}
	task, run, err = pagetoken.DecodeIDPair(f.PageToken)
	return limit, task, run, err
}

// TaskArchiveRuns turns up to limit+1 runs read in (task, run id) order
// into a page and the token of the next one.
func TaskArchiveRuns(runs []revisit.TaskRun, limit int) revisit.TaskRunPage {
	if runs == nil {
		runs = []revisit.TaskRun{}
	}
	if len(runs) <= limit {
		return revisit.TaskRunPage{Runs: runs}
	}
	last := runs[limit-1]
	return revisit.TaskRunPage{Runs: runs[:limit], NextPageToken: pagetoken.EncodeIDPair(last.TaskID, last.ID)}
}

// CreateUnlessWaiting is the rule of Software Heritage's create_tasks
// (store.TaskStore.TasksCreateUnlessWaiting) over a store's statements:
// identical(i, sameNextRun) reads the tasks identical to ts[i] (with its
// next_run too when sameNextRun), insert(i) creates ts[i]. Every input is
// looked up before any is created, so that identical inputs each create
// one.
func CreateUnlessWaiting(ts []revisit.Task, identical func(i int, sameNextRun bool) ([]revisit.Task, error),
	insert func(i int) error) ([]revisit.Task, error) {
	create := make([]bool, len(ts))
	for i := range ts {
		found, err := identical(i, false)
		if err != nil {
			return nil, err
		}
		create[i] = len(found) == 0
	}
	for i := range ts {
		if create[i] {
			if err := insert(i); err != nil {
				return nil, err
			}
		}
	}
	var out []revisit.Task
	for i := range ts {
		found, err := identical(i, true)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	return DistinctTasks(out), nil
}

// ImportedTasks checks tasks to import as they are, ids included, naming
// the first bad one by its index (tasks[2].status), and returns the JSON of
// their arguments.
func ImportedTasks(ts []revisit.Task) ([][]byte, error) {
	args := make([][]byte, len(ts))
	for i, t := range ts {
		var err error
		switch {
		case t.ID <= 0:
			err = revisit.Invalidf("id", "missing")
		case t.Type == "":
			err = revisit.Invalidf("type", "missing")
		case t.NextRun.IsZero():
			err = revisit.Invalidf("next_run", "missing")
		case !t.Status.Valid():
			err = revisit.Invalidf("status", "%q is not a task status", t.Status)
		case !t.Policy.Valid():
			err = revisit.Invalidf("policy", "%q is not oneshot or recurring", t.Policy)
		case !t.Priority.Valid():
			err = revisit.Invalidf("priority", "%q is not high, normal or low", t.Priority)
		case t.RetriesLeft < 0:
			err = revisit.Invalidf("retries_left", "negative (%d)", t.RetriesLeft)
		default:
			args[i], err = t.Arguments.JSON()
		}
		if err != nil {
			return nil, indexed(err, "tasks", i)
		}
	}
	return args, nil
}

// ImportedRuns checks task runs to import as they are, ids included,
// naming the first bad one by its index (runs[2].backend_id), and returns
// the JSON of their metadata.
func ImportedRuns(runs []revisit.TaskRun) ([][]byte, error) {
	metadata := make([][]byte, len(runs))
	seen := make(map[string]int, len(runs))
	for i, r := range runs {
		var err error
		switch j, dup := seen[r.BackendID]; {
		case r.ID <= 0:
			err = revisit.Invalidf("id", "missing")
		case r.TaskID <= 0:
			err = revisit.Invalidf("task_id", "missing")
		case r.BackendID == "":
			err = revisit.Invalidf("backend_id", "missing")
		case dup:
			err = &revisit.Error{Code: revisit.CodeConflict, Field: "backend_id",
				Message: fmt.Sprintf("%q is runs[%d]'s too", r.BackendID, j)}
		case !r.Status.Valid():
			err = revisit.Invalidf("status", "%q is not a task run status", r.Status)
		default:
			metadata[i], err = EncodeMetadata("metadata", r.Metadata)
		}
		if err != nil {
			return nil, indexed(err, "runs", i)
		}
		seen[r.BackendID] = i
	}
	return metadata, nil
}

// MissingTask returns the not-found error of the first run whose task,
// among taskIDs (the runs' tasks, in order), is not among found, nil when
// none.
func MissingTask(taskIDs, found []int64) error {
	for i, id := range taskIDs {
		if !slices.Contains(found, id) {
			return &revisit.Error{Code: revisit.CodeNotFound, Field: fmt.Sprintf("runs[%d].task_id", i),
				Message: fmt.Sprintf("task %d not found", id)}
		}
	}
	return nil
}

// BackendIDTaken is the error of importing the i-th run r where another run
// holds its backend id.
func BackendIDTaken(i int, r revisit.TaskRun) error {
	return &revisit.Error{Code: revisit.CodeConflict, Field: fmt.Sprintf("runs[%d].backend_id", i),
		Message: fmt.Sprintf("backend id %q is another run's", r.BackendID)}
}

// TypesOfTasks returns the distinct task types of tasks.
func TypesOfTasks(ts []revisit.Task) []string {
	var names []string
	for _, t := range ts {
		if !slices.Contains(names, t.Type) {
			names = append(names, t.Type)
		}
	}
	return names
}

// UnknownTaskType returns the not-found error of the first of ts whose type
// is not among known, nil when none.
func UnknownTaskType(ts []revisit.Task, known map[string]revisit.TaskType) error {
	for i, t := range ts {
		if _, ok := known[t.Type]; !ok {
			return TaskTypeNotFound(fmt.Sprintf("tasks[%d].type", i), t.Type)
		}
	}
	return nil
}
