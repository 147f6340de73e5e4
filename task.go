package revisit

import (
	"encoding/json"
	"maps"
	"time"
)

// TaskPolicy says whether a task runs once or again and again.
type TaskPolicy string

// The task policies.
const (
	TaskOneshot   TaskPolicy = "oneshot"
	TaskRecurring TaskPolicy = "recurring"
)

// Valid reports whether p is a known policy.
func (p TaskPolicy) Valid() bool { return p == TaskOneshot || p == TaskRecurring }

// ParseTaskPolicy parses oneshot or recurring.
func ParseTaskPolicy(s string) (TaskPolicy, error) {
	if p := TaskPolicy(s); p.Valid() {
		return p, nil
	}
	return "", Invalidf("policy", "%q is not oneshot or recurring", s)
}

// TaskPriority is the priority of a task; the empty priority ("no
// priority") is the one of ordinary tasks.
type TaskPriority string

// The task priorities. Tasks with a priority are dispatched before the
// others, high before normal before low.
const (
	PriorityNone   TaskPriority = ""
	PriorityHigh   TaskPriority = "high"
	PriorityNormal TaskPriority = "normal"
	PriorityLow    TaskPriority = "low"
)

// Valid reports whether p is a known priority or no priority.
func (p TaskPriority) Valid() bool {
	switch p {
	case PriorityNone, PriorityHigh, PriorityNormal, PriorityLow:
		return true
	}
	return false
}

// Rank orders priorities: high 0, normal 1, low 2, none 3.
func (p TaskPriority) Rank() int {
	switch p {
	case PriorityHigh:
		return 0
	case PriorityNormal:
		return 1
	case PriorityLow:
		return 2
	}
	return 3
}

// ParseTaskPriority parses high, normal, low, or "" and "none" for no
// priority.
func ParseTaskPriority(s string) (TaskPriority, error) {
	if s == "none" {
		return PriorityNone, nil
	}
	if p := TaskPriority(s); p.Valid() {
		return p, nil
	}
	return "", Invalidf("priority", "%q is not high, normal, low or none", s)
}

// TaskStatus is the state of a task.
type TaskStatus string

// The task statuses.
const (
	// TaskNextRunNotScheduled: waiting for next_run, then for dispatch.
	TaskNextRunNotScheduled TaskStatus = "next_run_not_scheduled"
	// TaskNextRunScheduled: dispatched, its run not ended yet.
	TaskNextRunScheduled TaskStatus = "next_run_scheduled"
	// TaskCompleted: a oneshot task whose run succeeded.
	TaskCompleted TaskStatus = "completed"
	// TaskDisabled: never dispatched again (unless respawned).
	TaskDisabled TaskStatus = "disabled"
)

// CheckRespawn says whether a task of status s is respawned from the
// console and the API (due now, its retries back): a disabled or
// completed one is; one waiting or dispatched is a conflict naming the
// action that applies.
func (s TaskStatus) CheckRespawn(id int64) error {
	if s != TaskDisabled && s != TaskCompleted {
		return Errorf(CodeConflict, "task %d is %s: only a disabled or completed task is respawned", id, s)
	}
	return nil
}

// CheckRunNow says whether a task of status s is made due now: one
// waiting for its next run is; one dispatched (its run in flight) is a
// conflict, and so is a disabled or completed one (respawn it).
func (s TaskStatus) CheckRunNow(id int64) error {
	switch s {
	case TaskNextRunNotScheduled:
		return nil
	case TaskNextRunScheduled:
		return Errorf(CodeConflict, "task %d is next_run_scheduled: its run is in flight", id)
	}
	return Errorf(CodeConflict, "task %d is %s: respawn it instead", id, s)
}

// Valid reports whether s is a known task status.
func (s TaskStatus) Valid() bool {
	switch s {
	case TaskNextRunNotScheduled, TaskNextRunScheduled, TaskCompleted, TaskDisabled:
		return true
	}
	return false
}

// Active reports whether a task of status s may still run: it is waiting
// or dispatched.
func (s TaskStatus) Active() bool {
	return s == TaskNextRunNotScheduled || s == TaskNextRunScheduled
}

// ParseTaskStatus parses a task status name.
func ParseTaskStatus(s string) (TaskStatus, error) {
	if st := TaskStatus(s); st.Valid() {
		return st, nil
	}
	return "", Invalidf("status", "%q is not next_run_not_scheduled, next_run_scheduled, completed or disabled", s)
}

// TaskStatusUpdate sets the status of tasks, as Software Heritage's
// set_status_tasks does.
type TaskStatusUpdate struct {
	IDs     []int64
	Status  TaskStatus
	NextRun *time.Time // also set next_run when given
	// ExceptCompleted leaves completed tasks alone.
	ExceptCompleted bool
}

// Validate checks the status.
func (u TaskStatusUpdate) Validate() error {
	_, err := ParseTaskStatus(string(u.Status))
	return err
}

// TaskRunStatus is the state of a task run.
type TaskRunStatus string

// The task run statuses: scheduled and started are in flight, the others
// are final.
const (
	RunScheduled  TaskRunStatus = "scheduled"
	RunStarted    TaskRunStatus = "started"
	RunEventful   TaskRunStatus = "eventful"
	RunUneventful TaskRunStatus = "uneventful"
	RunFailed     TaskRunStatus = "failed"
	RunPermfailed TaskRunStatus = "permfailed"
	RunLost       TaskRunStatus = "lost"
)

// Final reports whether s ends a run.
func (s TaskRunStatus) Final() bool {
	switch s {
	case RunEventful, RunUneventful, RunFailed, RunPermfailed, RunLost:
		return true
	}
	return false
}

// Valid reports whether s is a known run status.
func (s TaskRunStatus) Valid() bool { return s == RunScheduled || s == RunStarted || s.Final() }

// TaskArguments are the positional and keyword arguments of a task, passed
// to the worker. Nil fields read back as empty.
type TaskArguments struct {
	Args   []any          `json:"args"`
	Kwargs map[string]any `json:"kwargs"`
}

// JSON returns the canonical JSON of a (object keys sorted, nil as empty):
// two equal argument sets have the same JSON.
func (a TaskArguments) JSON() ([]byte, error) {
	if a.Args == nil {
		a.Args = []any{}
	}
	if a.Kwargs == nil {
		a.Kwargs = map[string]any{}
	}
	b, err := json.Marshal(a)
	if err != nil {
		return nil, Invalidf("arguments", "not representable as JSON: %v", err)
	}
	return b, nil
}

// Task is a generic job of a task type, run once or periodically.
type Task struct {
	ID        int64
	Type      string
	Arguments TaskArguments
	// NextRun is when the task is due.
	NextRun time.Time
	// CurrentInterval is the delay between runs of a recurring task.
	CurrentInterval time.Duration
	Status          TaskStatus
	Policy          TaskPolicy
	RetriesLeft     int
	Priority        TaskPriority
}

// NewTask is a task to create.
type NewTask struct {
	Type      string
	Arguments TaskArguments
	NextRun   time.Time
	Policy    TaskPolicy
	Priority  TaskPriority
	// CurrentInterval zero means the task type's default interval.
	CurrentInterval time.Duration
	// RetriesLeft nil means the task type's num_retries.
	RetriesLeft *int
	// Status zero means next_run_not_scheduled, the status of a task to
	// dispatch.
	Status TaskStatus
}

// Task validates n and returns the task it creates, of type tt, with the
// type's defaults applied and status next_run_not_scheduled. Errors name
// the field at fault.
func (n NewTask) Task(tt TaskType) (Task, error) {
	t := Task{Type: n.Type, Arguments: n.Arguments, NextRun: Microsecond(n.NextRun),
		CurrentInterval: n.CurrentInterval, Status: TaskNextRunNotScheduled, Policy: n.Policy,
		Priority: n.Priority, RetriesLeft: tt.NumRetries}
	switch {
	case n.Type == "":
		return t, Invalidf("type", "missing")
	case n.NextRun.IsZero():
		return t, Invalidf("next_run", "missing")
	case !n.Policy.Valid():
		return t, Invalidf("policy", "%q is not oneshot or recurring", n.Policy)
	case !n.Priority.Valid():
		return t, Invalidf("priority", "%q is not high, normal or low", n.Priority)
	case n.CurrentInterval < 0:
		return t, Invalidf("current_interval", "negative (%s)", n.CurrentInterval)
	case n.RetriesLeft != nil && *n.RetriesLeft < 0:
		return t, Invalidf("retries_left", "negative (%d)", *n.RetriesLeft)
	case n.Status != "" && !n.Status.Valid():
		return t, Invalidf("status", "%q is not next_run_not_scheduled, next_run_scheduled, completed or disabled", n.Status)
	}
	if n.Status != "" {
		t.Status = n.Status
	}
	if t.CurrentInterval == 0 {
		t.CurrentInterval = tt.DefaultInterval
	}
	t.CurrentInterval = t.CurrentInterval.Truncate(time.Microsecond)
	if t.Policy == TaskRecurring && t.CurrentInterval <= 0 {
		return t, Invalidf("current_interval", "a recurring task needs an interval, and task type %q has no default_interval", tt.Type)
	}
	if n.RetriesLeft != nil {
		t.RetriesLeft = *n.RetriesLeft
	}
	if _, err := n.Arguments.JSON(); err != nil {
		return t, err
	}
	return t, nil
}

// TaskFilter selects tasks for TasksGet. Zero fields select everything.
type TaskFilter struct {
	IDs    []int64
	Type   string
	Status TaskStatus
	// Priority nil selects any priority; a pointer to PriorityNone selects
	// the tasks without priority.
	Priority *TaskPriority
	Policy   TaskPolicy
	// NextRunAfter and NextRunBefore bound next_run: after <= next_run < before.
	NextRunAfter  *time.Time
	NextRunBefore *time.Time
	// Limit is the page size; zero means 1000.
	Limit int
	// PageToken continues a previous page; empty starts at the beginning.
	PageToken string
}

// Validate checks the filter's enumerations.
func (f TaskFilter) Validate() error {
	switch {
	case f.Status != "" && !f.Status.Valid():
		return Invalidf("status", "%q is not a task status", f.Status)
	case f.Priority != nil && !f.Priority.Valid():
		return Invalidf("priority", "%q is not high, normal or low", *f.Priority)
	case f.Policy != "" && !f.Policy.Valid():
		return Invalidf("policy", "%q is not oneshot or recurring", f.Policy)
	}
	return nil
}

// TaskPage is one page of tasks in id order. NextPageToken is empty exactly
// when no task follows.
type TaskPage struct {
	Tasks         []Task
	NextPageToken string
}

// ReadyTasksParams selects the tasks due for TasksPeekReady and
// TasksGrabReady.
type ReadyTasksParams struct {
	Type string
	// Now is the instant next_run is compared with; zero means the store's
	// clock.
	Now time.Time
	// Limit is the most tasks to return; it must be positive.
	Limit int
	// Priority takes the tasks with a priority (high, then normal, then
	// low, then oldest next_run) instead of those without (oldest next_run
	// first).
	Priority bool
}

// Validate checks the parameters.
func (p ReadyTasksParams) Validate() error {
	if p.Type == "" {
		return Invalidf("type", "missing")
	}
	return ReadyTasksLimit.Check(p.Limit)
}

// ReadyTasksLimit is the rule of the number of ready tasks asked for at
// once.
var ReadyTasksLimit = Limit{Field: "limit", Min: 1, Max: MaxGrabCount, Def: 100}

// TaskRun is one dispatch of a task.
type TaskRun struct {
	ID     int64
	TaskID int64
	// BackendID is the id of the message that dispatched the run.
	BackendID string
	Scheduled *time.Time
	// Confirmed is when the broker confirmed the run's message. It is nil
	// while a run recorded unconfirmed (NewTaskRun.Unconfirmed) waits for
	// its confirm, and stays nil when the message was never confirmed
	// (the run then ends lost) or the run ended before confirms were
	// recorded (runs of earlier versions). A run that starts counts as
	// confirmed: its start sets Confirmed when nil.
	Confirmed *time.Time
	Started   *time.Time
	Ended     *time.Time
	// Metadata is free JSON from the dispatcher and the worker; nil when
	// the run was scheduled without any and has not started.
	Metadata map[string]any
	Status   TaskRunStatus
}

// NewTaskRun is a run to record before its message is published.
type NewTaskRun struct {
	TaskID    int64
	BackendID string
	// Scheduled zero means the store's clock.
	Scheduled time.Time
	// Unconfirmed records the run without confirm: TaskRunsConfirm
	// confirms it once the broker confirmed its message, and until then
	// TaskRunsRecoverUnconfirmed may remove it (its dispatcher died before
	// knowing). False, the default, records it confirmed at Scheduled.
	Unconfirmed bool
	// Metadata nil is none, kept as none until the run starts.
	Metadata map[string]any
}

// TaskRunEnd reports the end of a run.
type TaskRunEnd struct {
	BackendID string
	// Status is eventful, uneventful, failed, permfailed or lost.
	Status TaskRunStatus
	// Ended zero means the store's clock.
	Ended time.Time
	// Metadata is merged into the run's (top-level keys replaced).
	Metadata map[string]any
}

// Validate checks the end event.
func (e TaskRunEnd) Validate() error {
	switch {
	case e.BackendID == "":
		return Invalidf("backend_id", "missing")
	case !e.Status.Final():
		return Invalidf("status", "%q is not eventful, uneventful, failed, permfailed or lost", e.Status)
	}
	return nil
}

// DefaultRetryDelay is the delay before retrying a failed run when the task
// type sets no retry_delay.
const DefaultRetryDelay = time.Hour

// DefaultRunTimeout is how long a run may stay scheduled or started without
// news before it is declared lost, when its task type sets no run_timeout.
// A day: long enough for a loader to wait in a full queue and run a big
// repository, short enough for lost messages to be retried the same week.
const DefaultRunTimeout = 24 * time.Hour

// EndRun applies the end-of-run rules to a task whose run ended with status
// at ended, and returns the task as it must be stored:
//
//   - permfailed: the task is disabled;
//   - eventful or uneventful: a oneshot task is completed; a recurring one
//     gets its interval divided (eventful) or multiplied (uneventful) by the
//     type's backoff factor, clamped to [min_interval, max_interval], runs
//     next at ended + interval, and gets the type's retries back;
//   - failed or lost: with retries left, the task runs again at ended +
//     retry_delay (DefaultRetryDelay if unset) with one retry less;
//     otherwise a oneshot task is disabled and a recurring one runs next at
//     ended + interval with the type's retries back.
//
// A task no longer active (completed, disabled) is returned unchanged.
func EndRun(t Task, tt TaskType, status TaskRunStatus, ended time.Time) Task {
	if !t.Status.Active() {
		return t
	}
	ended = Microsecond(ended)
	switch status {
	case RunPermfailed:
		t.Status = TaskDisabled
	case RunEventful, RunUneventful:
		if t.Policy == TaskOneshot {
			t.Status = TaskCompleted
			return t
		}
		t.CurrentInterval = backoff(t.CurrentInterval, tt, status == RunEventful)
		t.Status, t.NextRun, t.RetriesLeft = TaskNextRunNotScheduled, ended.Add(t.CurrentInterval), tt.NumRetries
	case RunFailed, RunLost:
		switch {
		case t.RetriesLeft > 0:
			delay := tt.RetryDelay
			if delay <= 0 {
				delay = DefaultRetryDelay
			}
			t.Status, t.NextRun, t.RetriesLeft = TaskNextRunNotScheduled, ended.Add(delay), t.RetriesLeft-1
		case t.Policy == TaskOneshot:
			t.Status = TaskDisabled
		default:
			t.Status, t.NextRun, t.RetriesLeft = TaskNextRunNotScheduled, ended.Add(t.CurrentInterval), tt.NumRetries
		}
	}
	return t
}

// backoff returns the interval after a successful run: divided by the
// type's backoff factor when eventful, multiplied when not, clamped to the
// type's bounds (unset bounds do not bound, an unset factor is 1), at
// microsecond precision.
func backoff(d time.Duration, tt TaskType, eventful bool) time.Duration {
	if f := tt.BackoffFactor; f > 0 {
		next := float64(d) * f
		if eventful {
			next = float64(d) / f // not d × (1/f): 1/2.5 is inexact in binary
		}
		d = maxDuration
		if next < float64(maxDuration) { // float64(maxDuration) is 2⁶³: no overflow below it
			d = time.Duration(next)
		}
	}
	if tt.MinInterval > 0 && d < tt.MinInterval {
		d = tt.MinInterval
	}
	if tt.MaxInterval > 0 && d > tt.MaxInterval {
		d = tt.MaxInterval
	}
	return d.Truncate(time.Microsecond)
}

// maxDuration is the longest time.Duration.
const maxDuration = time.Duration(1<<63 - 1)

// EndTaskRun applies an end event to a run that is still in flight and
// returns the ended run: status, end time and merged metadata.
func EndTaskRun(r TaskRun, e TaskRunEnd) TaskRun {
	ended := Microsecond(e.Ended)
	r.Status, r.Ended = e.Status, &ended
	r.Metadata = MergeMetadata(r.Metadata, e.Metadata)
	return r
}

// MergeMetadata returns the keys of base replaced and completed by those
// of update, without changing either.
func MergeMetadata(base, update map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(update))
	maps.Copy(out, base)
	maps.Copy(out, update)
	return out
}

// ArchiveFilter pages through what retention may remove: finished runs
// ended before Before, and finished oneshot tasks none of whose runs is
// newer.
type ArchiveFilter struct {
	Before time.Time
	// Limit is the page size; zero means 1000.
	Limit int
	// PageToken continues a previous page; empty starts at the beginning.
	PageToken string
}

// Validate checks the filter.
func (f ArchiveFilter) Validate() error {
	if f.Before.IsZero() {
		return Invalidf("before", "missing")
	}
	return nil
}

// TaskArchiveFilter pages through the runs of archived tasks, as Software
// Heritage's filter_task_to_archive does: oneshot tasks completed or
// disabled and recurring tasks disabled, whose runs started in [After,
// Before), or did not start and were scheduled then.
type TaskArchiveFilter struct {
	After, Before time.Time
	// Limit is the page size; zero means 1000.
	Limit int
	// PageToken continues a previous page; empty starts at the beginning.
	PageToken string
}

// Validate checks the filter.
func (f TaskArchiveFilter) Validate() error {
	switch {
	case f.After.IsZero():
		return Invalidf("after_ts", "missing")
	case f.Before.IsZero():
		return Invalidf("before_ts", "missing")
	}
	return nil
}

// TaskRunPage is one page of task runs in id order. NextPageToken is empty
// exactly when no run follows.
type TaskRunPage struct {
	Runs          []TaskRun
	NextPageToken string
}
