package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/config"
)

// Task is the JSON form of a revisit.Task; priority is null for a task
// without priority.
type Task struct {
	ID              int64                 `json:"id"`
	Type            string                `json:"type"`
	Arguments       revisit.TaskArguments `json:"arguments"`
	NextRun         time.Time             `json:"next_run"`
	CurrentInterval config.Duration       `json:"current_interval"`
	Status          string                `json:"status"`
	Policy          string                `json:"policy"`
	RetriesLeft     int                   `json:"retries_left"`
	Priority        *string               `json:"priority"`
}

// NewTask returns the JSON form of t.
func NewTask(t revisit.Task) Task {
	out := Task{ID: t.ID, Type: t.Type, Arguments: t.Arguments, NextRun: t.NextRun,
		CurrentInterval: config.Duration(t.CurrentInterval), Status: string(t.Status), Policy: string(t.Policy),
		RetriesLeft: t.RetriesLeft}
	if out.Arguments.Args == nil {
		out.Arguments.Args = []any{}
	}
	if out.Arguments.Kwargs == nil {
		out.Arguments.Kwargs = map[string]any{}
	}
	if t.Priority != revisit.PriorityNone {
		p := string(t.Priority)
		out.Priority = &p
	}
	return out
}

// TaskRun is the JSON form of a revisit.TaskRun.
type TaskRun struct {
	ID        int64          `json:"id"`
	TaskID    int64          `json:"task_id"`
	BackendID string         `json:"backend_id"`
	Scheduled *time.Time     `json:"scheduled"`
	Confirmed *time.Time     `json:"confirmed"`
	Started   *time.Time     `json:"started"`
	Ended     *time.Time     `json:"ended"`
	Metadata  map[string]any `json:"metadata"`
	Status    string         `json:"status"`
}

// NewTaskRun returns the JSON form of r.
func NewTaskRun(r revisit.TaskRun) TaskRun {
	md := r.Metadata
	if md == nil {
		md = map[string]any{}
	}
	return TaskRun{ID: r.ID, TaskID: r.TaskID, BackendID: r.BackendID, Scheduled: r.Scheduled,
		Confirmed: r.Confirmed, Started: r.Started, Ended: r.Ended, Metadata: md, Status: string(r.Status)}
}

// TasksPage is one page of GET /api/v1/tasks, in id order;
// next_page_token is absent on the last page.
type TasksPage struct {
	Tasks         []Task `json:"tasks"`
	NextPageToken string `json:"next_page_token,omitempty"`
}

// TaskDetail is the body of GET /api/v1/tasks/{id}: a task and its runs,
// newest first.
type TaskDetail struct {
	Task Task      `json:"task"`
	Runs []TaskRun `json:"runs"`
}

// taskFilter reads the filters of GET /api/v1/tasks.
func taskFilter(r *http.Request) (revisit.TaskFilter, error) {
	q := r.URL.Query()
	f := revisit.TaskFilter{Type: q.Get("type"), PageToken: q.Get("page_token")}
	var err error
	if v := q.Get("status"); v != "" {
		if f.Status, err = revisit.ParseTaskStatus(v); err != nil {
			return f, err
		}
	}
	if v := q.Get("policy"); v != "" {
		if f.Policy, err = revisit.ParseTaskPolicy(v); err != nil {
			return f, err
		}
	}
	if v := q.Get("priority"); v != "" {
		p, err := revisit.ParseTaskPriority(v)
		if err != nil {
			return f, err
		}
		f.Priority = &p
	}
	f.Limit, err = queryLimit(r, revisit.PageSize)
	return f, err
}

func (s *Server) handleTaskList(w http.ResponseWriter, r *http.Request) {
	f, err := taskFilter(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	page, err := s.st.TasksGet(r.Context(), f)
	s.reply(w, r, TasksPage{Tasks: mapSlice(page.Tasks, NewTask), NextPageToken: page.NextPageToken}, err)
}

func (s *Server) handleTaskGet(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 0 {
		s.writeError(w, r, revisit.Invalidf("id", "want a task id (a whole number), got %q", r.PathValue("id")))
		return
	}
	page, err := s.st.TasksGet(r.Context(), revisit.TaskFilter{IDs: []int64{id}, Limit: 1})
	if err == nil && len(page.Tasks) == 0 {
		err = revisit.Errorf(revisit.CodeNotFound, "task %d not found", id)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	runs, err := s.st.TaskRunsGet(r.Context(), []int64{id})
	detail := TaskDetail{Task: NewTask(page.Tasks[0]), Runs: make([]TaskRun, len(runs))}
	for i, run := range runs {
		detail.Runs[len(runs)-1-i] = NewTaskRun(run)
	}
	s.reply(w, r, detail, err)
}
